"""Reading the RAG outputs to judge, with every problem reported as ``file:line: field: problem``.

A dataset is JSON Lines (one case per line), a JSON or YAML document holding a list of cases (or a
mapping with a ``cases`` list), or CSV (a header row, then one case per row). Its cases may use
RagaliQ's field names or those of RAGAS or DeepEval; the shape is detected from the field names,
or set with ``dataset_format`` in the config, and :class:`DatasetInfo` says which was used. A
shape without ids gets ids derived from the query. The whole file is checked before anything is
judged, within bounded memory.

The modules, in the order a file goes through them:

- :mod:`~ragaliq.dataset.formats`: the formats, their size limits, and how a dataset was read;
- :mod:`~ragaliq.dataset.records` (JSON Lines, JSON, YAML) and
  :mod:`~ragaliq.dataset.csv_records` (CSV): a file's records with their line numbers;
- :mod:`~ragaliq.dataset.shapes` and :mod:`~ragaliq.dataset.fields`: RagaliQ's, RAGAS's and
  DeepEval's fields, their types and limits;
- :mod:`~ragaliq.dataset.checker`: each record checked and turned into a case;
- :mod:`~ragaliq.dataset.reader`: a whole file read and checked (:func:`load_dataset`);
- :mod:`~ragaliq.dataset.cases`: a checked file's cases, read again as they are judged;
- :mod:`~ragaliq.dataset.writer`: a pipeline writing a dataset case by case
  (:class:`~ragaliq.dataset.writer.DatasetWriter`, exported as ``ragaliq.DatasetWriter``).
"""

from __future__ import annotations

from ragaliq.dataset.cases import DatasetCases
from ragaliq.dataset.fields import MAX_FIELD_CHARS
from ragaliq.dataset.formats import (
    MAX_DOCUMENT_BYTES,
    MAX_LINE_BYTES,
    MAX_STREAM_BYTES,
    MAX_YAML_BYTES,
    DatasetFormat,
    DatasetInfo,
)
from ragaliq.dataset.reader import (
    Dataset,
    DatasetReader,
    cases_from_records,
    load_dataset,
    read_dataset,
)

__all__ = [
    "MAX_DOCUMENT_BYTES",
    "MAX_FIELD_CHARS",
    "MAX_LINE_BYTES",
    "MAX_STREAM_BYTES",
    "MAX_YAML_BYTES",
    "Dataset",
    "DatasetCases",
    "DatasetFormat",
    "DatasetInfo",
    "DatasetReader",
    "cases_from_records",
    "load_dataset",
    "read_dataset",
]

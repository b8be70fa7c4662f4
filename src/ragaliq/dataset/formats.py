"""The formats a dataset comes in, their size limits, and how a dataset was read.

The format (JSON Lines, JSON, YAML or CSV) follows from the file's name, or from
``dataset_format: csv`` in the config; the shape of its fields is detected from the records
(:func:`~ragaliq.dataset.shapes.detect_shape`) unless ``dataset_format`` names one.
:class:`DatasetInfo` says which were used, and what a run should say about it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ragaliq._ids import visible
from ragaliq._reading import describe_size
from ragaliq.dataset.shapes import NATIVE
from ragaliq.text.counts import plural

__all__ = [
    "LIMITS",
    "MAX_DOCUMENT_BYTES",
    "MAX_LINE_BYTES",
    "MAX_STREAM_BYTES",
    "MAX_YAML_BYTES",
    "Container",
    "DatasetFormat",
    "DatasetInfo",
    "container_of",
    "how_to_add",
    "too_big",
]

DatasetFormat = Literal["auto", "ragaliq", "ragas", "deepeval", "csv"]
"""``dataset_format`` in the config: detect, force a shape of fields, or force CSV."""
Container = Literal["jsonl", "json", "yaml", "csv"]

MAX_STREAM_BYTES = 2 * 1024**3
"""The size limit of a JSON Lines or CSV dataset, which is read as a stream."""
MAX_DOCUMENT_BYTES = 64 * 1024**2
"""The size limit of a JSON dataset, which is parsed whole."""
MAX_YAML_BYTES = 8 * 1024**2
"""The size limit of a YAML dataset: parsed whole, by a parser that needs ~60 bytes per byte."""
MAX_LINE_BYTES = 8 * 1024**2
"""The longest line of a JSON Lines or CSV dataset."""

_CONTAINER_LABELS = {"jsonl": "JSON Lines", "json": "JSON", "yaml": "YAML", "csv": "CSV"}
LIMITS: dict[Container, int] = {
    "jsonl": MAX_STREAM_BYTES,
    "csv": MAX_STREAM_BYTES,
    "json": MAX_DOCUMENT_BYTES,
    "yaml": MAX_YAML_BYTES,
}
"""The size limit of each format."""

_ONE_CASE = '{"id": ..., "query": ..., "context": [...], "response": ...}'


def container_of(path: Path, dataset_format: DatasetFormat) -> Container:
    """The format of the file at ``path``: by its suffix, unless ``dataset_format`` says CSV."""
    suffix = path.suffix.lower()
    if dataset_format == "csv" or suffix == ".csv":
        return "csv"
    if suffix == ".json":
        return "json"
    if suffix in {".yaml", ".yml"}:
        return "yaml"
    return "jsonl"


def too_big(container: Container) -> str:
    """How to fix a dataset over its size limit."""
    if container in {"json", "yaml"}:
        return (
            f"a {_CONTAINER_LABELS[container]} dataset is parsed whole, so write JSON Lines "
            f"instead (.jsonl, one case per line), which is read as a stream up to "
            f"{describe_size(MAX_STREAM_BYTES)}"
        )
    return "judge a smaller suite, or split it into several datasets, one per gate"


def how_to_add(container: Container) -> str:
    """How to add a case to an empty dataset of this format."""
    if container == "csv":
        return "add a header row (id,query,context,response) and one case per row"
    if container == "jsonl":
        return f"add one case per line as {_ONE_CASE}"
    return f"add a list of cases, each as {_ONE_CASE}"


@dataclass(frozen=True, kw_only=True)
class DatasetInfo:
    """How a dataset was read: its format, its shape of fields, its cases and derived ids."""

    path: str
    container: Container
    shape: str
    """The shape's label: ``RagaliQ``, ``RAGAS``, ``RAGAS (names before 0.2)``, ``DeepEval``."""
    mapping: str = ""
    """How the shape's fields map to RagaliQ's, when they differ."""
    forced: bool = False
    """Whether ``dataset_format`` chose the format (else it was detected)."""
    cases: int = 0
    derived_ids: int = 0
    """Cases given an id derived from their query, having none."""
    derived_example: str | None = None
    no_response: int = 0
    """Cases without a response, read because no evaluator of the run judges one."""
    no_response_line: int = 0
    """The line of the first of them."""
    with_facts: int = 0
    """Cases that name what retrieval had to bring (``expected_facts`` or an
    ``expected_answer``): the cases context recall can score."""
    with_labels: int = 0
    """Cases that name what retrieval should find (``relevant_chunks`` or
    ``relevant_sources``): the cases the retrieval metrics score."""
    unmatched_labels: int = 0
    """Relevant labelled ids that match no retrieved chunk's id (or source) in any case."""
    unmatched_example: str | None = None

    @property
    def description(self) -> str:
        """``JSON Lines`` or ``CSV, RAGAS fields``."""
        label = _CONTAINER_LABELS[self.container]
        return label if self.shape == NATIVE.label else f"{label}, {self.shape} fields"

    @property
    def notices(self) -> tuple[str, ...]:
        """What a run should say about how the dataset was read (nothing for RagaliQ's JSON)."""
        out = []
        if self.shape != NATIVE.label or self.container == "csv":
            how = (
                "as dataset_format in the config says"
                if self.forced
                else "detected from its name and fields"
            )
            mapping = f" ({self.mapping})" if self.mapping else ""
            out.append(
                f"The dataset {self.path} was read as {_CONTAINER_LABELS[self.container]} with "
                f"{self.shape} fields{mapping}, {how}."
            )
        if self.derived_ids:
            out.append(
                f"{self._some_cases_have(self.derived_ids)} no id, so each got one derived from "
                f"its query (such as {visible(self.derived_example or '')}); the baseline "
                "matches cases by id, so a case whose query changes counts as a new case. Give "
                "each case an id to keep it matched."
            )
        if self.no_response:
            out.append(
                f"{self._some_cases_have(self.no_response)} no response (the first on line "
                f"{self.no_response_line}): an empty answer is never scored, so only what "
                "retrieval brought is judged (context precision and recall, the retrieval metrics)."
            )
        if self.unmatched_labels:
            count = self.unmatched_labels
            out.append(
                f"{plural(count, 'labelled id')} (such as "
                f"{visible(self.unmatched_example or '')}) {'matches' if count == 1 else 'match'} "
                "no retrieved chunk in any case: either the retrieval no longer brings it, or "
                "its chunk's id or text changed and the labels may no longer fit the chunking "
                "(against a baseline, the gate says which). Label by document with "
                "relevant_sources (it survives a re-chunking), or give the chunks the ids the "
                "labels name."
            )
        return tuple(out)

    def _some_cases_have(self, count: int) -> str:
        """``Its cases have``, ``1 of its cases has`` or ``3 of its cases have``."""
        if count == self.cases:
            return "Its cases have" if count > 1 else "Its case has"
        return f"{count:,} of its cases {'has' if count == 1 else 'have'}"

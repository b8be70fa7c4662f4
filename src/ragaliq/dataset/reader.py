"""Reading a whole dataset file and checking every case, as a stream of cases.

The whole file is checked before anything is judged. Memory stays bounded: JSON Lines and CSV
are read as a stream (:class:`DatasetReader` yields the cases one by one and keeps only what
finding duplicate ids needs), JSON and YAML documents are parsed whole under a tighter size
limit, and special files (``/dev/zero``, a FIFO, a folder) are refused before a byte is read.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragaliq._reading import numbered_lines, open_regular
from ragaliq.dataset.checker import RESPONSE_JUDGED_BY, CaseChecker, to_case
from ragaliq.dataset.csv_records import CsvTable
from ragaliq.dataset.formats import (
    LIMITS,
    MAX_LINE_BYTES,
    Container,
    DatasetFormat,
    DatasetInfo,
    container_of,
    how_to_add,
    too_big,
)
from ragaliq.dataset.records import document_records, jsonl_records
from ragaliq.dataset.shapes import NATIVE, SHAPES, Shape, shape_named
from ragaliq.errors import DatasetError
from ragaliq.models import TestCase

__all__ = ["Dataset", "DatasetReader", "NumberedCase", "load_dataset", "read_dataset"]

_MISSING = "pass --dataset or set 'dataset' in the config"


@dataclass(frozen=True)
class Dataset:
    """A dataset read whole: its cases, and how it was read."""

    cases: list[TestCase]
    info: DatasetInfo


NumberedCase = tuple[int, TestCase]
"""A case and the line it starts on."""


class DatasetReader:
    """Reads and validates a dataset, yielding its cases one at a time.

    Nothing may be judged until the whole file is valid, so iteration stops yielding at the first
    problem, goes on to find the others, and raises them all at the end. A caller that must not
    act on any case of an invalid file reads it twice: :meth:`check` first (memory bounded by the
    ids), then the cases::

        reader = DatasetReader(path)
        reader.check()           # raises DatasetError listing every problem
        for line, case in reader:
            ...

    A case is refused when it has neither a response nor a retrieved chunk (nothing the RAG
    system produced: a DeepEval golden, a RAGAS sample before the system answered it), and when
    it has no response while ``response_judged_by`` names evaluators that judge one; without
    them (retrieval data) it is read, counted in :attr:`DatasetInfo.no_response`.
    """

    def __init__(
        self,
        path: Path,
        *,
        dataset_format: DatasetFormat = "auto",
        missing: str = _MISSING,
        response_judged_by: str | None = RESPONSE_JUDGED_BY,
    ) -> None:
        self.path = path
        self.dataset_format = dataset_format
        self.missing = missing
        """How to fix a missing file, in the words of the caller (a command line option ...)."""
        self.response_judged_by = response_judged_by
        """The evaluators that judge a case's response, for which a case without one is refused;
        None when none of the run does (retrieval data: a case without a response is read)."""
        self.container: Container = container_of(path, dataset_format)
        self._info: DatasetInfo | None = None

    @property
    def info(self) -> DatasetInfo:
        """How the dataset was read; complete once it has been read to the end."""
        if self._info is None:
            raise RuntimeError("the dataset has not been read yet")
        return self._info

    def __iter__(self) -> Iterator[NumberedCase]:
        for line, case in self._read(keep=True):
            assert case is not None
            yield line, case

    def check(self) -> DatasetInfo:
        """Validate the whole dataset, keeping no case; return how it was read.

        Raises:
            DatasetError: every problem found, as ``file:line: field: problem``.
        """
        for _ in self._read(keep=False):
            pass
        return self.info

    # --- reading ------------------------------------------------------------------------------

    def _read(self, *, keep: bool) -> Iterator[tuple[int, TestCase | None]]:
        name = str(self.path)
        limit = LIMITS[self.container]
        with open_regular(
            self.path,
            limit=limit,
            error=DatasetError,
            missing=self.missing,
            too_big=too_big(self.container),
        ) as handle:
            if self.container in {"jsonl", "csv"}:
                lines = numbered_lines(
                    handle, name=name, max_line_bytes=MAX_LINE_BYTES, error=DatasetError
                )
                yield from self._validated(lines, keep=keep)
                return
            raw = handle.read()
        items = document_records(raw, name, self.container)
        del raw  # the parsed document is all that is needed now
        yield from self._validated(items, keep=keep)

    def _shapes(self) -> tuple[Shape, ...]:
        return _shapes_for(self.dataset_format)

    def _validated(
        self, source: Iterator[tuple[int, Any]], *, keep: bool
    ) -> Iterator[tuple[int, TestCase | None]]:
        """Validate numbered lines (JSON Lines, CSV) or numbered records (JSON, YAML)."""
        name = str(self.path)
        checker = CaseChecker(name, self._shapes(), response_judged_by=self.response_judged_by)
        table: CsvTable | None = None
        items: Iterator[tuple[int, Any]]
        if self.container == "csv":
            table = CsvTable(source, name=name, shapes=checker.shapes)
            items = iter(table.rows())
        elif self.container == "jsonl":
            items = jsonl_records(source, name)
        else:
            items = source
        for line, item in items:
            if table is not None and checker.shape is None:
                checker.use_table(table)
            valid = checker.check(line, item)
            if valid is not None and checker.problems.count == 0:
                yield line, to_case(*valid) if keep else None
        if table is not None and checker.shape is None:
            checker.use_table(table)
        if checker.cases == 0 and checker.problems.count == 0:
            raise DatasetError(f"{name}: the dataset has no cases; {how_to_add(self.container)}")
        checker.problems.raise_if_any()
        shape = checker.shape or NATIVE
        unmatched, example = checker.labels.unmatched()
        self._info = DatasetInfo(
            path=name,
            container=self.container,
            shape=shape.label,
            mapping=shape.mapping,
            forced=self.dataset_format != "auto",
            cases=checker.cases,
            derived_ids=checker.derived,
            derived_example=checker.example,
            no_response=checker.no_response,
            no_response_line=checker.no_response_line,
            with_facts=checker.with_facts,
            with_labels=checker.labels.cases,
            unmatched_labels=unmatched,
            unmatched_example=example,
        )


def _shapes_for(dataset_format: DatasetFormat) -> tuple[Shape, ...]:
    """The shapes a record may have: the one ``dataset_format`` names, or any (``auto``, csv)."""
    if dataset_format in {"ragaliq", "ragas", "deepeval"}:
        return shape_named(dataset_format)
    return SHAPES


def cases_from_records(
    records: Iterable[Any],
    *,
    name: str = "cases",
    dataset_format: DatasetFormat = "auto",
    response_judged_by: str | None = RESPONSE_JUDGED_BY,
) -> list[TestCase]:
    """Cases from records held in memory, checked as a file's records are.

    Each record is a :class:`TestCase`, or a mapping of a dataset record's fields (RagaliQ's,
    RAGAS's or DeepEval's). A problem names the record by its position from 1:
    ``cases:2: query: missing``.

    Raises:
        DatasetError: every problem found, or no case at all.
    """
    checker = CaseChecker(name, _shapes_for(dataset_format), response_judged_by=response_judged_by)
    cases: list[TestCase] = []
    for position, record in enumerate(records, start=1):
        if isinstance(record, TestCase):
            clash = checker.registry.add(record.id, position)
            if clash is not None:
                checker.problems.add(f"{name}:{position}: id: {clash}")
            cases.append(record)
            continue
        if isinstance(record, Mapping):
            record = dict(record)
        elif not isinstance(record, dict):
            checker.problems.add(
                f"{name}:{position}: a case must be a ragaliq.TestCase or a mapping of a "
                f"dataset record's fields (got {type(record).__name__})"
            )
            continue
        valid = checker.check(position, record)
        if valid is not None:
            cases.append(to_case(*valid))
    checker.problems.raise_if_any()
    if not cases:
        raise DatasetError(f"{name}: no cases to judge")
    return cases


def read_dataset(
    path: Path,
    *,
    dataset_format: DatasetFormat = "auto",
    missing: str | None = None,
    response_judged_by: str | None = RESPONSE_JUDGED_BY,
) -> Dataset:
    """Read and validate a whole dataset; return its cases and how it was read.

    ``missing`` says how to fix a missing file; by default, where a relative path was looked for.
    ``response_judged_by`` names the evaluators a case's response is read for; None reads cases
    without a response too (retrieval data; see :class:`DatasetReader`).

    Raises:
        DatasetError: the file is missing, not a regular file, too large, not UTF-8, cannot be
            parsed, is empty, or has invalid cases; the message lists every problem found.
    """
    if missing is None:
        missing = f"check the path (a relative path is read from the current folder, {Path.cwd()})"
    reader = DatasetReader(
        path, dataset_format=dataset_format, missing=missing, response_judged_by=response_judged_by
    )
    cases = [case for _, case in reader]
    return Dataset(cases=cases, info=reader.info)


def load_dataset(
    path: Path,
    *,
    dataset_format: DatasetFormat = "auto",
    missing: str | None = None,
    response_judged_by: str | None = RESPONSE_JUDGED_BY,
) -> list[TestCase]:
    """Read and validate a dataset file (see :func:`read_dataset`).

    Raises:
        DatasetError: the file is missing, is not UTF-8, cannot be parsed, is empty, or has
            invalid cases; the message lists every problem found, one per line.
    """
    return read_dataset(
        path, dataset_format=dataset_format, missing=missing, response_judged_by=response_judged_by
    ).cases

"""A checked dataset's cases, read from the file again each time they are judged.

A suite of any size is judged as it is read: :meth:`DatasetCases.read` checks the whole file
first (memory bounded by the ids), then every pass over the cases reads the file again, holding
one case at a time. A shard keeps its own cases (:meth:`DatasetCases.where`), and a report's
cases are matched to the dataset's by id (:meth:`DatasetCases.by_id`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

from ragaliq.dataset.checker import RESPONSE_JUDGED_BY
from ragaliq.dataset.formats import DatasetFormat, DatasetInfo
from ragaliq.dataset.reader import DatasetReader
from ragaliq.models import TestCase

__all__ = ["DatasetCases"]


class DatasetCases:
    """A validated dataset's cases, read from its file again each time they are iterated.

    :meth:`read` validates the whole file first (memory bounded by the ids), so that nothing is
    judged from an invalid file; iterating then holds one case at a time, which lets a suite of
    any size be judged as it is read.
    """

    def __init__(
        self,
        path: Path,
        *,
        dataset_format: DatasetFormat,
        info: DatasetInfo,
        keep: Callable[[TestCase], bool] | None = None,
        judged_by: str | None = RESPONSE_JUDGED_BY,
    ) -> None:
        self.path = path
        self.dataset_format = dataset_format
        self.info = info
        self._keep = keep
        self._judged_by = judged_by
        self._count: int | None = None if keep is not None else info.cases

    @classmethod
    def read(
        cls,
        path: Path,
        *,
        dataset_format: DatasetFormat = "auto",
        response_judged_by: str | None = RESPONSE_JUDGED_BY,
    ) -> DatasetCases:
        """Validate the dataset at ``path`` and return its cases, to be read when iterated.

        ``response_judged_by`` names the evaluators that judge a response (a case without one
        is refused for them), or is None when none does (see :class:`DatasetReader`).

        Raises:
            DatasetError: every problem of the file (see :class:`DatasetReader`).
        """
        reader = DatasetReader(
            path, dataset_format=dataset_format, response_judged_by=response_judged_by
        )
        return cls(
            path, dataset_format=dataset_format, info=reader.check(), judged_by=response_judged_by
        )

    def where(self, keep: Callable[[TestCase], bool]) -> DatasetCases:
        """The cases ``keep`` accepts (a shard's), in the dataset's order."""
        return DatasetCases(
            self.path,
            dataset_format=self.dataset_format,
            info=self.info,
            keep=keep,
            judged_by=self._judged_by,
        )

    def __iter__(self) -> Iterator[TestCase]:
        reader = DatasetReader(
            self.path, dataset_format=self.dataset_format, response_judged_by=self._judged_by
        )
        for _, case in reader:
            if self._keep is None or self._keep(case):
                yield case

    def __len__(self) -> int:
        if self._count is None:
            self._count = sum(1 for _ in self)
        return self._count

    def by_id(self) -> Callable[[str], TestCase | None]:
        """A lookup of cases by id, for a reader that asks in (roughly) the dataset's order.

        Cases asked for in order are found by reading on, holding a bounded window of the cases
        passed over; a case asked for further back is found by reading from the start again, so
        a reader in the dataset's order (or a few shards' orders one after another) reads the
        file a few times at most and holds a few thousand cases at most.
        """
        stream = iter(self)
        passed: dict[str, TestCase] = {}
        known: set[str] | None = None

        def find(case_id: str) -> TestCase | None:
            nonlocal stream, known
            if case_id in passed:
                return passed.pop(case_id)
            if known is not None and case_id not in known:
                return None
            for case in stream:
                if case.id == case_id:
                    return case
                passed[case.id] = case
                if len(passed) > _WINDOW:
                    del passed[next(iter(passed))]
            stream, seen = iter(self), set()
            for case in stream:
                seen.add(case.id)
                if case.id == case_id:
                    return case
            known = seen
            return None

        return find


_WINDOW = 2000
"""Cases :meth:`DatasetCases.by_id` keeps of those it read past."""

"""The cases the job summary's per-case table shows, kept as a run goes."""

from __future__ import annotations

from ragaliq.models import CaseResult

__all__ = ["SUMMARY_CASES", "CaseDigest"]

SUMMARY_CASES = 1000
"""Cases the job summary's per-case table can show, errors and failures first."""


def _case_rank(case: CaseResult) -> int:
    if case.status == "error":
        return 0
    if any(r.passed is False for r in case.results.values()):
        return 1
    return 2 if case.status == "ok" else 3


class CaseDigest:
    """The cases the job summary shows, kept as a run goes: errors and failures first.

    Holds at most :data:`SUMMARY_CASES` cases of each rank, however long the run.
    """

    def __init__(self, limit: int = SUMMARY_CASES) -> None:
        self.limit = limit
        self.total = 0
        self._ranked: tuple[list[CaseResult], ...] = ([], [], [], [])

    def add(self, case: CaseResult) -> None:
        """Count one case, keeping it if it is among the first of its rank."""
        self.total += 1
        kept = self._ranked[_case_rank(case)]
        if len(kept) < self.limit:
            kept.append(case)

    @property
    def cases(self) -> list[CaseResult]:
        """The cases kept, errors and failures first, at most ``limit`` in all."""
        return [case for kept in self._ranked for case in kept][: self.limit]

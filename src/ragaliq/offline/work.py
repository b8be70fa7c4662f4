"""The offline judge's work on one case, counted against a bound linear in the case's size.

Every step that compares a claim with the context counts what it visits: the context's words
as it is indexed, the candidate sentences a claim is looked up in, the words compared with
them, the record fields and short names a claim is checked against. Each of those steps is
capped on its own (see :mod:`.context`), so that a case costs time linear in its size whatever
its text; the counter is the guard behind the caps: a case that would spend more than
:data:`WORK_PER_CHAR` units per character of its claims and context (plus :data:`WORK_FLOOR`)
stops with :class:`~ragaliq.errors.JudgeWorkError`, an error for that case, never a stall.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

from ragaliq.errors import JudgeWorkError

__all__ = ["WORK_FLOOR", "WORK_PER_CHAR", "Work", "collection_paused"]

WORK_PER_CHAR = 200
"""Units a case may spend per character of its claims, context and query. A claim compared
with the most candidate sentences spends about 70 units per character of its own; a context
about one unit per character as it is indexed."""
WORK_FLOOR = 100_000
"""Units any case may spend, however short."""


class Work:
    """The units one case has spent, and the most it may."""

    __slots__ = ("limit", "spent")

    def __init__(self, size: int) -> None:
        self.limit = WORK_FLOOR + WORK_PER_CHAR * size
        self.spent = 0

    def spend(self, units: int) -> None:
        """Count ``units`` more.

        Raises:
            JudgeWorkError: the case has passed its bound.
        """
        self.spent += units
        if self.spent > self.limit:
            raise JudgeWorkError(
                f"the offline judge stopped on this case after {self.spent:,} units of work "
                f"(its bound is {self.limit:,}, linear in the case's size): its context is "
                "built so that every sentence, field or name matches its claims; split the "
                "context into smaller chunks, or judge the case with Claude"
            )


@contextlib.contextmanager
def collection_paused() -> Iterator[None]:
    """Python's cycle collector held off while one case is judged, and let run after it.

    Judging a case allocates an index of the whole context (hundreds of thousands of small
    objects on the largest case), none of them in reference cycles; left on, the collector
    walks them again and again as they are made, about a third of the case's time. What the
    case leaves is freed as it goes; any cycle among it is collected once the case is done, so
    memory stays bounded by the case, whose size is bounded. The collector is only turned back
    on if it was on, so that a caller that turned it off keeps it off.
    """
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()

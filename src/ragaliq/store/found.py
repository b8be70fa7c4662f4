"""What a gate gets from a baseline store: the baseline of its base, and where it came from."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from ragaliq.baseline import Baseline

if TYPE_CHECKING:
    from ragaliq.config import BaselinesConfig

__all__ = ["BaselineFinder", "FoundBaseline"]


@dataclass(frozen=True, kw_only=True)
class FoundBaseline:
    """A baseline read from a store, checked for where it came from."""

    baseline: Baseline
    commit: str
    """The commit it was recorded on: the base commit, or its nearest first-parent ancestor."""
    description: str
    """Where it was read and how it was checked, for the log and the comment's notes."""
    answers: Callable[[], bytes | None] = lambda: None
    """The judge answers the baseline's run recorded (signed rows), read when asked for."""


class BaselineFinder(Protocol):
    """Finds the baseline of one base commit in the store a trusted config names."""

    @property
    def hint(self) -> str:
        """How to get a baseline when none is found (empty: re-run the baseline workflow)."""
        ...

    def find(self, settings: BaselinesConfig) -> FoundBaseline | None:
        """The baseline of the base commit, or of its nearest first-parent ancestor.

        Ancestors are searched within ``settings.ancestors``; None when the store has no
        baseline for any of them.

        Raises:
            BaselineError: a baseline is there but is unreadable, or could not be shown to
                come from a ``push`` run of the baseline workflow on the base branch.
            RepositoryError: the store cannot be read for certain.
        """
        ...

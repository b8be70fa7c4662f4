"""Findings: what an evaluator lists about a case beside its score, and what a baseline keeps.

An evaluator declares the kinds of finding it lists (``Evaluator.findings``): newly hallucinated
claims, needed facts lost, relevant chunks a change stopped retrieving. A kind says what the
baseline keeps of each recorded case (:meth:`FindingKind.keep`), what it lists about a case of
a later run against what was kept (:meth:`FindingKind.find`), and, where the bar it keeps
changes a score, the case as the gate decides on it (:meth:`FindingKind.as_decided`). The
comparison (:mod:`ragaliq.gate.compare`), the gate decision, the baseline's index and the report
are built from these declarations, so an evaluator that lists findings is its own module and a
line in the registry.

Each list a kind fills has a name (``new_hallucinations``, ``lost_chunks``) and an entry model, a
:class:`Finding` subclass: the decision keeps each list under its name, and a template shows a
list that has no block of its own through the entries' :attr:`Finding.headline` and
:attr:`Finding.text`.
"""

from __future__ import annotations

import functools
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, TypeAdapter

from ragaliq.models import CaseResult, Status

__all__ = ["Before", "Emit", "Finding", "FindingKind"]


class Finding(BaseModel):
    """One entry of a decision's list, about one case."""

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    title: ClassVar[str] = ""
    """How the list is headed where no block of its own shows it: ``Relevant chunks lost``."""
    noun: ClassVar[str] = "finding"
    """What one entry is, for counts: ``lost relevant chunk``."""
    worst_first: ClassVar[bool] = False
    """Whether a list keeps its worst entries (:meth:`severity`) when it is longer than a
    decision keeps, and shows them first; otherwise entries come in the cases' order."""
    weight: ClassVar[int] = 1
    """How much the list tells: when a comment is too long, lists of lower weight are cut
    first."""

    case_id: str
    query: str

    def severity(self) -> tuple[Any, ...]:
        """The sort key of a worst-first list: lower is worse."""
        return (self.case_id,)

    @property
    def headline(self) -> str:
        """The entry's first words, shown bold: a verdict, ``lost``."""
        return ""

    @property
    def text(self) -> str:
        """The entry in one line of plain text, after its headline."""
        return ""


@dataclass(frozen=True, kw_only=True)
class Before:
    """A case as the baseline recorded it, as one kind of finding reads it."""

    input_hash: str
    status: Status
    kept: Any
    """What this kind kept of the case; None when it kept nothing (it was not judged by the
    kind's evaluators then, or the baseline is older than the kind)."""


Emit = Callable[[str, Finding], None]
"""Adds one finding to the decision's list of that name."""


class FindingKind(ABC):
    """A kind of finding: what the baseline keeps of a case, and what a later run lists.

    One instance serves one comparison, so a kind may gather what it says at the end
    (:meth:`notices`). The evaluators that declare the same kind share it.
    """

    name: ClassVar[str]
    """Its key in a baseline case's ``kept``."""
    lists: ClassVar[Mapping[str, type[Finding]]]
    """The decision's lists it fills, and their entry models."""
    kept: ClassVar[Any] = None
    """The type of what the baseline keeps (validated when a baseline is read); None when the
    kind keeps nothing."""

    @classmethod
    def keep(cls, case: CaseResult) -> Any:
        """What the baseline keeps of a judged case; None to keep nothing of it."""
        return None

    @classmethod
    def read_kept(cls, value: Any) -> Any:
        """What a baseline file holds for this kind, validated as :attr:`kept`.

        Raises:
            pydantic.ValidationError: it is not what this kind keeps.
        """
        return _adapter(cls).validate_python(value)

    def as_decided(
        self, case: CaseResult, before: Before, thresholds: Mapping[str, float]
    ) -> CaseResult:
        """The case as the gate decides on it, held to what the baseline kept.

        By default as judged. ``thresholds`` are the thresholds in force, for results scored
        again.
        """
        return case

    @abstractmethod
    def find(self, case: CaseResult, before: Before | None, *, first_run: bool, emit: Emit) -> None:
        """List what this kind finds in one case of a run, against ``before``.

        ``before`` is None for a case new since the baseline, and without a baseline
        (``first_run``).
        """

    def notices(self) -> list[str]:
        """What this kind says of the whole comparison, once every case is in."""
        return []


@functools.cache
def _adapter(kind: type[FindingKind]) -> TypeAdapter[Any]:
    return TypeAdapter(kind.kept)

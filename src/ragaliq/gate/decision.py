"""The gate decision, as data: what the comment, the summary, the outputs and the exit code show.

The findings the evaluators list (:mod:`ragaliq.evaluators.findings`) are kept by list name in
``findings``; a decision's JSON gives each list as a key of its own (``new_hallucinations``,
``lost_chunks`` ...), as it always has.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Generic, Literal, Self, TypeVar, overload

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializeAsAny,
    SerializerFunctionWrapHandler,
    field_validator,
    model_serializer,
    model_validator,
)

from ragaliq.baseline import Provenance
from ragaliq.evaluators._claims import ClaimChange
from ragaliq.evaluators.context_precision import IrrelevantChunk
from ragaliq.evaluators.findings import Finding
from ragaliq.evaluators.registry import finding_lists
from ragaliq.gate.acceptance import Acceptance
from ragaliq.models import SCHEMA_VERSION, JudgeInfo, Usage, coverage_of

__all__ = [
    "MAX_LISTED",
    "CaseFailure",
    "ClaimChange",
    "EvaluatorDecision",
    "EvaluatorStatus",
    "Finding",
    "GateDecision",
    "IrrelevantChunk",
    "RegressedCase",
]


MAX_LISTED = 1000
"""Entries each list of a decision keeps; the rest are counted in ``omitted``."""


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)


EvaluatorStatus = Literal["pass", "below_threshold", "regressed", "inconclusive", "no_score"]
"""``inconclusive``: a drop past ``max_drop`` that the suite cannot tell from noise."""


class EvaluatorDecision(_Model):
    """One evaluator's head score against its threshold and the baseline."""

    head: float | None
    """The head's mean, as the gate decides on it: claims a reviewer accepted count as
    supported."""
    baseline: float | None
    delta: float | None
    threshold: float
    max_drop: float
    status: EvaluatorStatus
    passed: bool
    comparable: bool = False
    """Whether a drop from the baseline counts: there is one, judged alike for this evaluator
    (an evaluator asking no judge is held to it whatever judge ran)."""
    errors: int = 0
    turned_off: bool = False
    """The baseline has this evaluator but the run does not: the PR turned it off."""
    shared_cases: int | None = None
    """How many cases both runs scored: ``baseline`` and ``delta`` are over these alone."""
    head_shared: float | None = None
    """The head's mean over the shared cases; it must reach the threshold too, so that new
    cases cannot hide a drop on the baseline's."""
    interval: tuple[float, float] | None = None
    """The confidence interval of ``delta``; None with fewer than two shared cases."""
    confidence: float | None = None
    """The interval's level."""
    cases_to_resolve: int | None = None
    """When inconclusive: roughly how many cases would resolve a drop of ``max_drop``."""
    judge_score: float | None = None
    """The judge's own mean, when accepted claims make ``head`` differ from it."""
    claims: int | None = None
    """For a score over claims: the claims the head's cases made (None for another score)."""
    checked: int | None = None
    """How many of those the judge could check; the rest are not verifiable offline."""

    @property
    def coverage(self) -> float | None:
        """The share of claims checked, shown beside a score over claims."""
        return coverage_of(self.checked, self.claims)


class RegressedCase(_Model):
    """A case whose score for one evaluator dropped by more than the tolerance."""

    case_id: str
    query: str
    evaluator: str
    baseline: float
    head: float | None
    """None when the case now fails to judge."""


class CaseFailure(_Model):
    """A case the judge could not judge in the head run."""

    case_id: str
    query: str
    error: str


F = TypeVar("F", bound=Finding)


class _Entries(Generic[F]):
    """A list of findings read as an attribute of the decision, by the list's name."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, decision: None, owner: type | None = None) -> _Entries[F]: ...
    @overload
    def __get__(self, decision: GateDecision, owner: type | None = None) -> tuple[F, ...]: ...
    def __get__(self, decision: GateDecision | None, owner: type | None = None) -> Any:
        if decision is None:
            return self
        return decision.listed(self.name)


class GateDecision(_Model):
    """Everything the comment, the summary, the outputs and the exit code are made from."""

    schema_version: int = SCHEMA_VERSION
    passed: bool
    failures: tuple[str, ...]
    """Why the gate failed, one line each; empty when it passed."""
    first_run: bool
    """No baseline yet: thresholds only."""
    comparable: bool
    """Whether the baseline's provenance equals the head's, so every evaluator's regressions
    count (each evaluator's ``comparable`` says whether its own do)."""
    evaluators: dict[str, EvaluatorDecision]
    findings: dict[str, tuple[SerializeAsAny[Finding], ...]] = Field(default_factory=dict)
    """The evaluators' findings by list name (``ragaliq.evaluators.findings``): newly
    hallucinated claims, needed facts and relevant chunks lost, ... ."""
    regressed_cases: tuple[RegressedCase, ...] = ()
    errors: tuple[CaseFailure, ...] = ()
    added_cases: tuple[str, ...] = ()
    removed_cases: tuple[str, ...] = ()
    omitted: dict[str, int] = Field(default_factory=dict)
    """Per list above, how many entries past :data:`MAX_LISTED` were left out of it."""
    notices: tuple[str, ...] = ()
    acceptances: tuple[Acceptance, ...] = ()
    """The reviews that accepted newly hallucinated claims at this commit
    (``ragaliq.gate.acceptance``)."""
    accepted_claims: int = Field(default=0, ge=0)
    """How many of the newly hallucinated claims a reviewer accepted: listed, not counted."""
    cases: int
    usage: Usage
    judge: JudgeInfo
    baseline_provenance: Provenance | None = None
    baseline_commit: str | None = None

    @field_validator("schema_version")
    @classmethod
    def _supported(cls, value: int) -> int:
        if value != SCHEMA_VERSION:
            raise ValueError(
                f"schema_version {value} is not the supported {SCHEMA_VERSION}; decide the gate "
                "again with this version of RagaliQ Gate"
            )
        return value

    @model_validator(mode="before")
    @classmethod
    def _gather_findings(cls, data: Any) -> Any:
        """Each list of findings given by its name (as the JSON has it) into ``findings``."""
        if not isinstance(data, Mapping):
            return data
        lists = finding_lists()
        findings = dict(data.get("findings") or {})
        rest = {key: value for key, value in data.items() if key not in lists}
        findings |= {key: value for key, value in data.items() if key in lists}
        unknown = sorted(set(findings) - set(lists))
        if unknown:
            raise ValueError(f"findings: no evaluator lists {', '.join(unknown)}")
        rest["findings"] = {
            name: tuple(
                entry if isinstance(entry, lists[name]) else lists[name].model_validate(entry)
                for entry in entries
            )
            for name, entries in findings.items()
            if entries
        }
        return rest

    @model_serializer(mode="wrap")
    def _lists_by_name(self, handler: SerializerFunctionWrapHandler) -> Any:
        """Each list of findings under its own name, every list there is (empty or not)."""
        data = handler(self)
        if not isinstance(data, dict):
            return data
        findings = data.pop("findings", {})
        return data | {name: findings.get(name, []) for name in finding_lists()}

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        """A copy with ``update`` applied; a list of findings may be given by its name."""
        lists = finding_lists()
        if update and any(key in lists for key in update):
            findings = {**self.findings}
            for key, entries in update.items():
                if key in lists:
                    findings[key] = tuple(entries)
            update = {k: v for k, v in update.items() if k not in lists} | {"findings": findings}
        return super().model_copy(update=update, deep=deep)

    def listed(self, name: str) -> tuple[Finding, ...]:
        """One list of findings by name (empty when nothing was found)."""
        return self.findings.get(name, ())

    def count(self, listed: str) -> int:
        """How many entries a list of this decision has in all, those left out included."""
        entries = self.listed(listed) if listed in finding_lists() else getattr(self, listed)
        assert isinstance(entries, tuple)
        return len(entries) + self.omitted.get(listed, 0)

    def count_new(self) -> int:
        """How many newly hallucinated claims count against the gate: those nobody accepted."""
        return max(self.count("new_hallucinations") - self.accepted_claims, 0)

    # The lists templates and integrations have always read by name.
    new_hallucinations: ClassVar[_Entries[ClaimChange]] = _Entries()
    """Claims hallucinated in the head and in no matching form in the baseline's case."""
    hallucinations: ClassVar[_Entries[ClaimChange]] = _Entries()
    """On the first run only: every hallucinated claim, listed but not counted as new."""
    fixed_hallucinations: ClassVar[_Entries[ClaimChange]] = _Entries()
    unstable_claims: ClassVar[_Entries[ClaimChange]] = _Entries()
    """Hallucinated claims whose verdicts disagreed when asked again; not new unless counted."""
    unverifiable_claims: ClassVar[_Entries[ClaimChange]] = _Entries()
    """Claims the offline judge could neither ground nor fault, in cases new or changed, and
    not in any matching form among the baseline case's own unchecked claims."""
    still_unchecked_claims: ClassVar[_Entries[ClaimChange]] = _Entries()
    """Claims unchecked now and unchecked in the baseline's same case: never new."""
    lost_facts: ClassVar[_Entries[ClaimChange]] = _Entries()
    """Needed facts the baseline's context held and this run's does not (context recall)."""
    irrelevant_chunks: ClassVar[_Entries[IrrelevantChunk]] = _Entries()
    """Chunks of this run rated irrelevant to their query (context precision)."""

    @property
    def scores(self) -> dict[str, float | None]:
        """Head score per evaluator."""
        return {name: e.head for name, e in self.evaluators.items()}

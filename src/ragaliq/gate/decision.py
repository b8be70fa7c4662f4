"""The gate decision, as data: what the comment, the summary, the outputs and the exit code show."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ragaliq.baseline import Provenance
from ragaliq.gate.acceptance import Acceptance
from ragaliq.models import SCHEMA_VERSION, JudgeInfo, Usage, coverage_of

__all__ = [
    "MAX_LISTED",
    "CaseFailure",
    "ClaimChange",
    "EvaluatorDecision",
    "EvaluatorStatus",
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


class ClaimChange(_Model):
    """A claim that became, or stopped being, hallucinated."""

    case_id: str
    query: str
    claim: str
    verdict: str
    evidence: str | None = None
    reason: str = ""
    confidence: float = 1.0
    agreement: float | None = None
    """With ``judge.repeat``: the share of repetitions that gave the verdict."""
    id: str = ""
    """The claim's short id, which a reviewer names to accept it (``/ragaliq accept <id>``)."""
    accepted_by: str | None = None
    """The reviewer who accepted this newly hallucinated claim at this commit, if one did."""


class IrrelevantChunk(_Model):
    """A retrieved chunk the judge rated irrelevant to the query."""

    case_id: str
    query: str
    rank: int
    """Its place in the retrieval's order, from 1."""
    reason: str = ""


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


class GateDecision(_Model):
    """Everything the comment, the summary, the outputs and the exit code are made from."""

    schema_version: int = SCHEMA_VERSION
    passed: bool
    failures: tuple[str, ...]
    """Why the gate failed, one line each; empty when it passed."""
    first_run: bool
    """No baseline yet: thresholds only."""
    comparable: bool
    """Whether the baseline's provenance equals the head's, so regressions count."""
    evaluators: dict[str, EvaluatorDecision]
    new_hallucinations: tuple[ClaimChange, ...] = ()
    hallucinations: tuple[ClaimChange, ...] = ()
    """On the first run only: every hallucinated claim, listed but not counted as new."""
    fixed_hallucinations: tuple[ClaimChange, ...] = ()
    unstable_claims: tuple[ClaimChange, ...] = ()
    """Hallucinated claims whose repeated verdicts disagreed; not new unless counted."""
    unverifiable_claims: tuple[ClaimChange, ...] = ()
    """Claims the offline judge could neither ground nor fault (``not_verifiable_offline``), in
    the cases new or changed since the baseline (every case without one): shown apart, never
    counted as hallucinated."""
    regressed_cases: tuple[RegressedCase, ...] = ()
    lost_facts: tuple[ClaimChange, ...] = ()
    """Needed facts the baseline's context held and this run's does not (context recall)."""
    irrelevant_chunks: tuple[IrrelevantChunk, ...] = ()
    """Chunks of this run rated irrelevant to their query (context precision)."""
    errors: tuple[CaseFailure, ...] = ()
    added_cases: tuple[str, ...] = ()
    removed_cases: tuple[str, ...] = ()
    omitted: dict[str, int] = Field(default_factory=dict)
    """Per list above, how many entries past :data:`MAX_LISTED` were left out of it."""
    notices: tuple[str, ...] = ()
    acceptances: tuple[Acceptance, ...] = ()
    """The reviews that accepted newly hallucinated claims at this commit
    (``ragaliq.gate.acceptance``)."""
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

    def count(self, listed: str) -> int:
        """How many entries a list of this decision has in all, those left out included."""
        entries = getattr(self, listed)
        assert isinstance(entries, tuple)
        return len(entries) + self.omitted.get(listed, 0)

    @property
    def scores(self) -> dict[str, float | None]:
        """Head score per evaluator."""
        return {name: e.head for name, e in self.evaluators.items()}

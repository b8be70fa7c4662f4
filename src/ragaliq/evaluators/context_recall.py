"""Context recall: whether retrieval brought what the answer needs.

A case names what it needs as ``expected_facts`` (statements), or as an ``expected_answer``
(split into its sentences). Each needed fact is verified against the context in the same judge
call as the response's claims, so recall costs no extra call. The score is the mean weight of the
facts' verdicts: supported 1, partly supported 0.5, anything else 0. A case that names no needed
fact is skipped with the reason, never scored 0 or 1. A fact the offline judge flags
``not_verifiable_offline`` is left out of the mean, and a case whose every fact is not verifiable
is skipped too.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from ragaliq._fields import Flag
from ragaliq.evaluators._claims import ClaimChange, checkable, none_verifiable, verdict_counts
from ragaliq.evaluators.base import CaseJudgement, Evaluator, EvaluatorOptions, VerdictLabel
from ragaliq.evaluators.findings import Before, Emit, Finding, FindingKind
from ragaliq.evaluators.questions import FACTS, Question
from ragaliq.models import CaseResult, EvaluationResult, Verdict
from ragaliq.text.counts import plural
from ragaliq.text.matching import normalise

__all__ = ["RECALL_WEIGHTS", "ContextRecallEvaluator", "ContextRecallOptions", "LostFacts"]

RECALL_WEIGHTS = {Verdict.SUPPORTED: 1.0, Verdict.PARTIALLY_SUPPORTED: 0.5}
"""A needed fact's weight by verdict; other verdicts weigh 0."""


class ContextRecallOptions(EvaluatorOptions):
    """Context recall: did retrieval bring the facts a good answer needs. Off unless written."""

    enabled: Flag = False


class LostFacts(FindingKind):
    """Needed facts the baseline's context held (verified supported) and this run's does not."""

    name: ClassVar[str] = "held_facts"
    lists: ClassVar[Mapping[str, type[Finding]]] = {"lost_facts": ClaimChange}
    kept: ClassVar[Any] = tuple[str, ...]

    @classmethod
    def keep(cls, case: CaseResult) -> tuple[str, ...] | None:
        held = tuple(f.text for f in case.facts if f.verdict is Verdict.SUPPORTED)
        return held or None

    def find(self, case: CaseResult, before: Before | None, *, first_run: bool, emit: Emit) -> None:
        if before is None or case.status != "ok":
            return
        held = {normalise(text) for text in before.kept or ()}
        for fact in case.facts:
            if not fact.verifiable:
                continue  # the offline judge cannot tell: not a lost fact
            if fact.verdict is not Verdict.SUPPORTED and normalise(fact.text) in held:
                emit("lost_facts", ClaimChange.of(case, fact))


class ContextRecallEvaluator(Evaluator[ContextRecallOptions]):
    """The share of the needed facts the context holds."""

    name: ClassVar[str] = "context_recall"
    version: ClassVar[str] = "1"
    default_threshold: ClassVar[float] = 0.7
    questions: ClassVar[tuple[Question[Any], ...]] = (FACTS,)
    Options = ContextRecallOptions
    findings = (LostFacts,)

    def describe_shortfall(self, case: CaseResult, *, label: VerdictLabel) -> list[str]:
        """The needed facts the context does not fully hold."""
        return [
            f"needed fact {label(f.verdict)}: {f.text}"
            for f in checkable(case.facts)
            if f.verdict is not Verdict.SUPPORTED
        ]

    def evaluate(self, judgement: CaseJudgement) -> EvaluationResult:
        facts = judgement.facts or ()
        if not facts:
            return self.skipped(
                "The case names no expected_facts or expected_answer, so there is nothing "
                "retrieval had to bring."
            )
        counted = checkable(facts)
        if not counted:
            return self.skipped(none_verifiable(len(facts), "needed fact"))
        missing = tuple(
            i for i, f in enumerate(facts) if f.verifiable and f.verdict is not Verdict.SUPPORTED
        )
        score = sum(RECALL_WEIGHTS.get(f.verdict, 0.0) for f in counted) / len(counted)
        return self.result(
            score,
            f"{plural(len(facts), 'needed fact')}: {verdict_counts(facts)}.",
            {"facts": len(facts)},
            flagged=missing,
        )

"""Hallucination: the share of claims the context does not back, and which ones they are.

A claim the offline judge flags ``not_verifiable_offline`` is not hallucinated and not counted:
the score is over the other claims, and a case whose every claim is not verifiable is skipped (no
score, never 0 or 1). It is never among the flagged claims, so the gate never lists it as newly
hallucinated.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from ragaliq._fields import Fraction
from ragaliq.evaluators._claims import (
    NO_CLAIMS_NOTE,
    BaselineClaim,
    ClaimChange,
    UnverifiableClaims,
    all_are,
    checkable,
    describe_claims,
    none_verifiable,
    not_verifiable_note,
    of_total_are,
    unchecked_details,
)
from ragaliq.evaluators.base import CaseJudgement, Evaluator, EvaluatorOptions, VerdictLabel
from ragaliq.evaluators.findings import Before, Emit, Finding, FindingKind
from ragaliq.evaluators.questions import EXTRACT, VERIFY, Question
from ragaliq.models import CaseResult, ClaimVerdict, EvaluationResult, Verdict
from ragaliq.text.matching import unmatched

__all__ = [
    "NEW_HALLUCINATIONS",
    "UNSTABLE_APART",
    "UNSTABLE_CLAIMS",
    "HallucinatedClaims",
    "HallucinationEvaluator",
    "HallucinationOptions",
    "hallucinated_claims",
    "newly_hallucinated",
]

NEW_HALLUCINATIONS = "new_hallucinations"
"""The list of claims hallucinated now and not in the baseline's same case: what acceptance
and ``gate.fail_on_new_hallucinations`` act on."""
UNSTABLE_CLAIMS = "unstable_claims"
"""The list of newly hallucinated claims whose verdicts disagreed when asked again: new only
when the gate counts unstable claims."""
UNSTABLE_APART = "listed apart and not counted as new."
"""How the gate's notice about unstable claims ends when it does not count them as new."""


class HallucinationOptions(EvaluatorOptions):
    """Hallucination: the share of claims the context backs."""

    min_confidence: Fraction | None = None
    """Count a SUPPORTED claim as hallucinated when the judge's confidence is below this."""

    stricter_when_higher: ClassVar[frozenset[str]] = frozenset({"min_confidence"})


def _text_of(claim: ClaimVerdict | BaselineClaim) -> str:
    return claim.text


class HallucinatedClaims(FindingKind):
    """Claims hallucinated now and in no matching form in the baseline's same case, and back.

    A re-worded claim is not new (:mod:`ragaliq.text.matching`). Without a baseline every
    hallucinated claim is listed, none as new. A new claim whose verdicts disagreed when asked
    again is listed as unstable; whether it counts as new, and what a reviewer accepted, is the
    gate's policy on :data:`NEW_HALLUCINATIONS`.
    """

    name: ClassVar[str] = "hallucinated"
    lists: ClassVar[Mapping[str, type[Finding]]] = {
        NEW_HALLUCINATIONS: ClaimChange,
        "hallucinations": ClaimChange,
        "fixed_hallucinations": ClaimChange,
        UNSTABLE_CLAIMS: ClaimChange,
    }
    kept: ClassVar[Any] = tuple[BaselineClaim, ...]

    @classmethod
    def keep(cls, case: CaseResult) -> tuple[BaselineClaim, ...] | None:
        claims = tuple(
            BaselineClaim(text=c.text, verdict=c.verdict, flags=c.flags)
            for c in hallucinated_claims(case)
        )
        return claims or None

    def find(self, case: CaseResult, before: Before | None, *, first_run: bool, emit: Emit) -> None:
        if case.status != "ok":
            return
        now: list[ClaimVerdict | BaselineClaim] = list(hallucinated_claims(case))
        if first_run:
            for claim in now:
                emit("hallucinations", ClaimChange.of(case, claim))
            return
        judged = before is not None and before.status == "ok"
        for claim in newly_hallucinated(case, before):
            unstable = "unstable" in claim.flags
            emit(UNSTABLE_CLAIMS if unstable else NEW_HALLUCINATIONS, ClaimChange.of(case, claim))
        if judged:
            was: list[ClaimVerdict | BaselineClaim] = list(before.kept or ()) if before else []
            for claim in unmatched(was, now, text=_text_of):
                emit("fixed_hallucinations", ClaimChange.of(case, claim))


class HallucinationEvaluator(Evaluator[HallucinationOptions]):
    """Score ``1 - hallucinated / claims``; a claim is hallucinated unless SUPPORTED.

    With ``min_confidence`` set, a SUPPORTED verdict below that confidence counts as hallucinated.
    The hallucinated claims are the result's ``flagged_claims``. Claims not verifiable offline
    are neither hallucinated nor counted; with only such claims the case is skipped.
    """

    name: ClassVar[str] = "hallucination"
    version: ClassVar[str] = "1"
    default_threshold: ClassVar[float] = 0.8
    questions: ClassVar[tuple[Question[Any], ...]] = (EXTRACT, VERIFY)
    Options = HallucinationOptions
    findings = (HallucinatedClaims, UnverifiableClaims)

    def is_hallucinated(self, verdict: ClaimVerdict) -> bool:
        """Whether one claim counts as hallucinated under this evaluator's options."""
        if not verdict.verifiable:
            return False
        if verdict.verdict is not Verdict.SUPPORTED:
            return True
        floor = self.settings.min_confidence
        return floor is not None and verdict.confidence < floor

    def describe_shortfall(self, case: CaseResult, *, label: VerdictLabel) -> list[str]:
        """The claims this evaluator held against the case, with their verdicts and reasons."""
        return describe_claims(hallucinated_claims(case), label)

    def evaluate(self, judgement: CaseJudgement) -> EvaluationResult:
        verdicts = judgement.verdicts or ()
        if not verdicts:
            return self.result(
                1.0,
                "The response makes no factual claims, so none is hallucinated.",
                {"note": NO_CLAIMS_NOTE, "claims": 0},
                flagged=(),
            )
        counted = len(checkable(verdicts))
        if not counted:
            return self.skipped(none_verifiable(len(verdicts)), unchecked_details(verdicts))
        hallucinated = tuple(i for i, v in enumerate(verdicts) if self.is_hallucinated(v))
        reasoning = (
            f"{of_total_are(len(hallucinated), counted, 'claim')} not supported by the context."
            if hallucinated
            else f"{all_are(counted, 'claim')} supported by the context."
        )
        return self.result(
            1.0 - len(hallucinated) / counted,
            reasoning + not_verifiable_note(len(verdicts) - counted),
            dict(unchecked_details(verdicts)),
            flagged=hallucinated,
        )


def hallucinated_claims(case: CaseResult) -> list[ClaimVerdict]:
    """The claims the hallucination evaluator held against a case (none without it)."""
    result = case.results.get(HallucinationEvaluator.name)
    flagged = set(result.flagged_claims or ()) if result is not None else set()
    return [claim for i, claim in enumerate(case.claims) if i in flagged]


def newly_hallucinated(case: CaseResult, before: Before | None) -> list[ClaimVerdict]:
    """The claims of ``case`` hallucinated now that match none the baseline held against it.

    Every hallucinated claim when the baseline lacks the case or could not judge it.
    """
    was: list[ClaimVerdict | BaselineClaim] = []
    if before is not None and before.status == "ok":
        was = list(before.kept or ())
    now: list[ClaimVerdict | BaselineClaim] = list(hallucinated_claims(case))
    return [c for c in unmatched(now, was, text=_text_of) if isinstance(c, ClaimVerdict)]

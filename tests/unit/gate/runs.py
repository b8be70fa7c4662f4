"""Run reports built case by case, for the gate to decide on: scores as a test names them, or
claims, facts and chunks scored by the real evaluators."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ragaliq.evaluators.base import CaseJudgement, Evaluator
from ragaliq.gate import GateDecision, GateRules, compare
from ragaliq.models import (
    CaseResult,
    ChunkRating,
    ClaimVerdict,
    EvaluationResult,
    EvaluatorInfo,
    JudgeInfo,
    RunReport,
    RunSummary,
    Usage,
)
from tests.baselines import record_baseline
from tests.conftest import make_case

SKIPPED = "skipped"
"""A score for a case that gave the evaluator nothing to score."""

Score = float | str | None
"""A case's score: a number, :data:`SKIPPED`, or None when the judge failed on the case."""

FAITHFULNESS = {"faithfulness": 0.5}


def _result(name: str, score: Score, threshold: float) -> EvaluationResult:
    if score is None:
        return EvaluationResult(evaluator=name, score=None, passed=None, status="error")
    if score == SKIPPED:
        return EvaluationResult(evaluator=name, score=None, passed=None, status="skipped")
    assert isinstance(score, float)
    return EvaluationResult(evaluator=name, score=score, passed=score >= threshold)


def report(
    cases: Sequence[CaseResult], evaluators: Mapping[str, EvaluatorInfo], **head: Any
) -> RunReport:
    """A run of these cases by the fake judge, with these evaluators."""
    return RunReport(
        judge=JudgeInfo(provider="fake", model="fake-1", prompt_version="p1"),
        evaluators=dict(evaluators),
        summary=RunSummary(cases=0, errors=0, evaluators={}),  # counted from the cases
        usage=Usage(),
        cases=tuple(cases),
        **head,
    )


def scored(
    cases: Mapping[str, Score | Mapping[str, Score]],
    *,
    thresholds: Mapping[str, float] = FAITHFULNESS,
    error: str | None = "the judge timed out",
    **head: Any,
) -> RunReport:
    """A run whose cases scored as given, per evaluator (``{"a": {"faithfulness": 0.5}}``) or one
    score for every evaluator (``{"a": 0.5}``); a case with a None score could not be judged."""
    built = []
    for case_id, given in cases.items():
        scores = given if isinstance(given, Mapping) else dict.fromkeys(thresholds, given)
        failed = any(score is None for score in scores.values())
        built.append(
            CaseResult(
                id=case_id,
                input_hash="0" * 64,
                status="error" if failed else "ok",
                query=f"question {case_id}?",
                results={n: _result(n, s, thresholds[n]) for n, s in scores.items()},
                error=error if failed else None,
            )
        )
    infos = {n: EvaluatorInfo(threshold=t, version="1") for n, t in thresholds.items()}
    return report(built, infos, **head)


def decided(
    base_scores: Mapping[str, Score | Mapping[str, Score]],
    head_scores: Mapping[str, Score | Mapping[str, Score]],
    *,
    rules: GateRules | None = None,
    thresholds: Mapping[str, float] = FAITHFULNESS,
    **head: Any,
) -> GateDecision:
    """The gate's decision on a run scored ``head_scores`` against a baseline scored
    ``base_scores`` (recorded with its errors, if any)."""
    base = record_baseline(scored(base_scores, thresholds=thresholds), allow_errors=True)
    run = scored(head_scores, thresholds=thresholds, **head)
    return compare(run, base, rules=rules or GateRules())


def judged(
    case_id: str,
    evaluators: Sequence[Evaluator[Any]],
    *,
    claims: Sequence[ClaimVerdict] = (),
    facts: Sequence[ClaimVerdict] | None = None,
    chunks: Sequence[bool] | None = None,
    response: str = "Refunds are available within 14 days of purchase.",
) -> CaseResult:
    """A case the evaluators scored from these verdicts, as the runner scores it."""
    case = make_case(id=case_id, query=f"question {case_id}?", response=response)
    ratings = None
    if chunks is not None:
        ratings = tuple(ChunkRating(relevant=r, reason=f"chunk {i}") for i, r in enumerate(chunks))
    judgement = CaseJudgement(
        case=case,
        verdicts=tuple(claims),
        facts=None if facts is None else tuple(facts),
        chunks=ratings,
    )
    return CaseResult(
        id=case_id,
        input_hash=case.input_hash,
        status="ok",
        query=case.query,
        claims=tuple(claims),
        facts=tuple(facts or ()),
        chunks=ratings or (),
        results={e.name: e.evaluate(judgement) for e in evaluators},
    )


def failed(case_id: str, evaluators: Sequence[Evaluator[Any]]) -> CaseResult:
    """A case the judge failed on: every evaluator in error."""
    case = make_case(id=case_id, query=f"question {case_id}?")
    return CaseResult(
        id=case_id,
        input_hash=case.input_hash,
        status="error",
        query=case.query,
        results={e.name: e.error("the judge timed out") for e in evaluators},
        error="the judge timed out",
    )


def run_of(cases: Sequence[CaseResult], evaluators: Sequence[Evaluator[Any]]) -> RunReport:
    """A run of these cases with these evaluators."""
    return report(cases, {e.name: e.info() for e in evaluators})

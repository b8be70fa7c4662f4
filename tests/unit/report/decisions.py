"""Gate decisions and runs to render: realistic, first runs, hostile, and very long."""

from __future__ import annotations

from typing import Any

from ragaliq.baseline import Provenance
from ragaliq.gate import (
    CaseFailure,
    ClaimChange,
    EvaluatorDecision,
    GateDecision,
    RegressedCase,
)
from ragaliq.models import (
    CaseResult,
    EvaluationResult,
    EvaluatorInfo,
    EvaluatorSummary,
    JudgeInfo,
    RunReport,
    RunSummary,
    Usage,
)

DASH = "\N{EN DASH}"
MINUS = "\N{MINUS SIGN}"
DETAILS_URL = "https://github.com/northwind/assistant/actions/runs/4242"
HOSTILE = (
    "<script>alert(1)</script> </details> | a | b | `tick` @octocat <!-- x --> first line\n"
    "\n- item\n# heading *em* _u_ [link](https://x.test) ~~s~~ $x$ #12 \\ &amp; <img src=x>"
)


# --- fixtures ------------------------------------------------------------------------------


def claude() -> JudgeInfo:
    return JudgeInfo(provider="anthropic", model="claude-sonnet-4-5", prompt_version="2f1c9a7e04b3")


def provenance() -> Provenance:
    versions = {"faithfulness": "1", "hallucination": "1", "relevance": "1"}
    return Provenance(
        judge_provider="anthropic",
        judge_model="claude-sonnet-4-5",
        prompt_version="2f1c9a7e04b3",
        evaluator_versions=versions,
    )


def change(case_id: str, query: str, claim: str, **overrides: Any) -> ClaimChange:
    values: dict[str, Any] = {
        "case_id": case_id,
        "query": query,
        "claim": claim,
        "verdict": "CONTRADICTED",
        "evidence": None,
        "reason": "",
        "confidence": 0.9,
    }
    values.update(overrides)
    return ClaimChange(**values)


REFUND_Q = "Can I get a refund on my annual Personal plan?"
RESTORE_Q = "How do I restore a folder I deleted by mistake?"
API_Q = "What are the rate limits for the Northwind Cloud API?"


def realistic_evaluators() -> dict[str, EvaluatorDecision]:
    return {
        "faithfulness": EvaluatorDecision(
            head=0.8125,
            baseline=0.883333,
            delta=-0.070833,
            threshold=0.7,
            max_drop=0.05,
            status="regressed",
            passed=False,
            errors=1,
        ),
        "hallucination": EvaluatorDecision(
            head=0.741667,
            baseline=0.883333,
            delta=-0.141667,
            threshold=0.75,
            max_drop=0.05,
            status="below_threshold",
            passed=False,
            errors=1,
        ),
        "relevance": EvaluatorDecision(
            head=0.9745,
            baseline=0.962,
            delta=0.0125,
            threshold=0.6,
            max_drop=0.05,
            status="pass",
            passed=True,
        ),
    }


def realistic_new_claims() -> tuple[ClaimChange, ...]:
    return (
        change(
            "billing-refund-window",
            REFUND_Q,
            "Annual Personal plans can be refunded if you cancel within 30 days of the "
            "initial purchase or renewal date.",
            evidence="Northwind Cloud offers a full refund on annual Personal, Team and "
            "Business subscriptions if you cancel within 14 days of the initial purchase "
            "or renewal date.",
            reason="The context gives 14 days, not 30.",
            confidence=0.95,
        ),
        change(
            "restore-deleted-folder",
            RESTORE_Q,
            "Folders can be restored for 365 days on Team, Business and Enterprise plans.",
            evidence="Deleted files and folders can be restored for 30 days on the Free and "
            "Personal plans and for 180 days on Team, Business and Enterprise plans.",
            reason="The context gives 180 days for these plans.",
            confidence=0.92,
        ),
        change(
            "restore-deleted-folder",
            RESTORE_Q,
            "Restored folders keep their original sharing settings.",
            verdict="NOT_ENOUGH_INFO",
            reason="The context does not say what happens to sharing settings.",
            confidence=0.71,
        ),
    )


def realistic_decision(**overrides: Any) -> GateDecision:
    values: dict[str, Any] = {
        "passed": False,
        "failures": (
            "hallucination: 0.742 is below the threshold 0.75",
            "faithfulness: 0.812 dropped 0.071 from the baseline 0.883 (max_drop 0.05)",
            "1 case could not be judged (gate.on_error: fail)",
        ),
        "first_run": False,
        "comparable": True,
        "evaluators": realistic_evaluators(),
        "new_hallucinations": realistic_new_claims(),
        "fixed_hallucinations": (
            change(
                "mobile-offline-files",
                "Can I use offline files on the Free plan?",
                "Yes, offline files are available on the Free plan.",
                evidence="Offline files are not available on the Free plan.",
                reason="The context says the opposite.",
            ),
        ),
        "regressed_cases": (
            RegressedCase(
                case_id="restore-deleted-folder",
                query=RESTORE_Q,
                evaluator="hallucination",
                baseline=1.0,
                head=0.333333,
            ),
            RegressedCase(
                case_id="api-rate-limits",
                query=API_Q,
                evaluator="faithfulness",
                baseline=1.0,
                head=None,
            ),
        ),
        "errors": (
            CaseFailure(
                case_id="api-rate-limits",
                query=API_Q,
                error="the judge replied twice without a verdict for claim 2",
            ),
        ),
        "added_cases": ("sso-okta-scim",),
        "removed_cases": (),
        "notices": ("1 case is new since the baseline: sso-okta-scim.",),
        "cases": 21,
        "usage": Usage(
            calls=42,
            input_tokens=61_480,
            output_tokens=9_312,
            cache_read_tokens=40_960,
            cache_write_tokens=4_096,
            cache_hits=3,
            cost_usd=0.3217,
        ),
        "judge": claude(),
        "baseline_provenance": provenance(),
        "baseline_commit": "3f2c1e9a7b5d40c8e1f2a3b4c5d6e7f8a9b0c1d2",
    }
    values.update(overrides)
    return GateDecision(**values)


def result(name: str, score: float | None, threshold: float) -> EvaluationResult:
    if score is None:
        return EvaluationResult(evaluator=name, score=None, passed=None, status="error")
    return EvaluationResult(evaluator=name, score=score, passed=score >= threshold)


THRESHOLDS = {"faithfulness": 0.7, "hallucination": 0.75, "relevance": 0.6}


def case(case_id: str, query: str, scores: tuple[float | None, ...]) -> CaseResult:
    error = scores[0] is None
    return CaseResult(
        id=case_id,
        input_hash="0" * 64,
        status="error" if error else "ok",
        query=query,
        results={
            name: result(name, score, THRESHOLDS[name])
            for name, score in zip(THRESHOLDS, scores, strict=True)
        },
        error="the judge replied twice without a verdict for claim 2" if error else None,
    )


def realistic_report() -> RunReport:
    cases = (
        case("billing-refund-window", REFUND_Q, (0.5, 0.5, 1.0)),
        case("sso-okta-scim", "Does SSO with Okta provision users?", (1.0, 1.0, 0.875)),
        case("restore-deleted-folder", RESTORE_Q, (0.333333, 0.333333, 0.9375)),
        case("api-rate-limits", API_Q, (None, None, None)),
        case("mobile-offline-files", "Can I use offline files on the Free plan?", (1.0, 1.0, 1.0)),
    )
    return RunReport(
        judge=claude(),
        evaluators={n: EvaluatorInfo(threshold=t, version="1") for n, t in THRESHOLDS.items()},
        summary=RunSummary(
            cases=len(cases),
            errors=1,
            evaluators={
                n: EvaluatorSummary(score=0.8, pass_rate=0.75, passed=True, threshold=t)
                for n, t in THRESHOLDS.items()
            },
        ),
        usage=Usage(),
        cases=cases,
    )


def first_run_decision() -> GateDecision:
    return realistic_decision(
        passed=True,
        failures=(),
        first_run=True,
        comparable=False,
        evaluators={
            "faithfulness": EvaluatorDecision(
                head=0.9,
                baseline=None,
                delta=None,
                threshold=0.7,
                max_drop=0.05,
                status="pass",
                passed=True,
            ),
        },
        new_hallucinations=(),
        hallucinations=realistic_decision().new_hallucinations[:2],
        fixed_hallucinations=(),
        regressed_cases=(),
        errors=(),
        added_cases=(),
        notices=("No baseline yet: only thresholds apply.",),
        baseline_provenance=None,
        baseline_commit=None,
    )


def hostile_decision() -> GateDecision:
    hostile_change = change(
        "case|`x`</details>@octocat",
        HOSTILE,
        HOSTILE,
        evidence=HOSTILE,
        reason=HOSTILE,
    )
    return realistic_decision(
        failures=(HOSTILE,),
        new_hallucinations=(hostile_change, *realistic_decision().new_hallucinations),
        fixed_hallucinations=(hostile_change,),
        regressed_cases=(
            RegressedCase(
                case_id=HOSTILE, query=HOSTILE, evaluator="faithfulness", baseline=1.0, head=0.5
            ),
        ),
        errors=(CaseFailure(case_id=HOSTILE, query=HOSTILE, error=HOSTILE),),
        notices=(HOSTILE,),
        baseline_commit=HOSTILE,
    )


def many_claims_decision(count: int) -> GateDecision:
    claims = tuple(
        change(
            f"case-{i // 3:04d}",
            f"Question number {i // 3} about the refund policy of the annual plans?",
            f"Claim {i}: annual plans can be refunded within {30 + i} days of purchase.",
            evidence="Northwind Cloud offers a full refund on annual subscriptions if you cancel "
            "within 14 days of the initial purchase or renewal date.",
            reason=f"The context gives 14 days, not {30 + i}.",
        )
        for i in range(count)
    )
    return realistic_decision(new_hallucinations=claims)

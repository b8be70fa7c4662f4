from __future__ import annotations

from pathlib import Path

import pytest

from ragaliq import testing
from ragaliq.errors import ConfigError, JudgeError
from ragaliq.evaluators import (
    ContextPrecisionEvaluator,
    ContextRecallEvaluator,
    FaithfulnessEvaluator,
    HallucinationEvaluator,
    RelevanceEvaluator,
)
from ragaliq.models import CaseResult, ChunkRating, EvaluationResult, Usage, Verdict
from ragaliq.report.filters import verdict_label
from ragaliq.testing import BudgetSpentError, JudgeSession, QualityFailure, assert_rag_quality
from tests.conftest import make_case, make_config, make_verdict
from tests.fakes.judge import FakeJudge, Opener

S, P, N, C = (
    Verdict.SUPPORTED,
    Verdict.PARTIALLY_SUPPORTED,
    Verdict.NOT_ENOUGH_INFO,
    Verdict.CONTRADICTED,
)


def session(judge: FakeJudge, **config) -> JudgeSession:
    return JudgeSession(config=make_config(**config), env={}, open_judge=Opener(judge))


def failure_of(check) -> str:
    with pytest.raises(QualityFailure) as caught:
        check()
    return str(caught.value)


def test_hallucination_lists_the_claims_it_held_against_the_case_even_when_supported():
    judge = FakeJudge(claims={"case-1": ["Refunds take 14 days.", "Plans cost $5."]})
    gate = session(judge, evaluators={"hallucination": {"min_confidence": 0.95}})
    message = failure_of(lambda: gate.assert_quality(make_case(), hallucination=0.9))
    assert "hallucination: 0.000 is below the threshold 0.9" in message
    # Supported at 0.9 confidence, under min_confidence: the evaluator's own rule, not the verdict.
    assert "  - supported: Refunds take 14 days. (scripted)" in message
    assert "  - supported: Plans cost $5. (scripted)" in message


def test_faithfulness_lists_only_the_claims_weighing_less_than_a_point():
    judge = FakeJudge(claims={"case-1": ["a", "b", "c"]}, verdicts={"case-1": [S, P, C]})
    message = failure_of(lambda: session(judge).assert_quality(make_case(), faithfulness=0.9))
    assert "  - partly supported: b (scripted)" in message
    assert "  - contradicted: c (scripted)" in message
    assert ": a (" not in message


def test_retrieval_evaluators_list_missing_facts_and_irrelevant_chunks():
    case = make_case(context=("one", "two"), expected_facts=("Refunds take 14 days.",))
    judge = FakeJudge(fact_verdicts={"case-1": [N]}, chunks={"case-1": [True, False]})
    message = failure_of(
        lambda: session(judge).assert_quality(case, context_recall=0.9, context_precision=0.9)
    )
    assert "  - needed fact not in the context: Refunds take 14 days." in message
    assert "  - chunk 2 is not relevant: scripted" in message


def test_a_long_list_is_cut_and_counted():
    claims = [f"claim {i}" for i in range(13)]
    judge = FakeJudge(claims={"case-1": claims}, verdicts={"case-1": [N] * 13})
    message = failure_of(lambda: session(judge).assert_quality(make_case(), hallucination=0.5))
    assert message.count("  - not in the context: ") == 10
    assert "  - ... and 3 more" in message


def test_relevance_lists_nothing_beyond_its_reasoning():
    case = CaseResult(
        id="a",
        input_hash="h",
        status="ok",
        claims=(make_verdict(N),),
        chunks=(ChunkRating(relevant=False, reason="off topic"),),
        results={
            "relevance": EvaluationResult(
                evaluator="relevance", score=0.1, passed=False, reasoning="off"
            )
        },
    )
    assert RelevanceEvaluator().describe_shortfall(case, label=verdict_label) == []
    assert FaithfulnessEvaluator().describe_shortfall(case, label=str) == [
        "NOT_ENOUGH_INFO: a claim"
    ]
    # Hallucination lists what it flagged in the result, and this case has no result of its.
    assert HallucinationEvaluator().describe_shortfall(case, label=str) == []
    assert ContextRecallEvaluator().describe_shortfall(case, label=str) == []
    assert ContextPrecisionEvaluator().describe_shortfall(case, label=str) == [
        "chunk 1 is not relevant: off topic"
    ]


def test_a_spent_budget_stops_before_the_next_case_and_says_so_in_words():
    judge = FakeJudge(usage_per_call=Usage(calls=1, cost_usd=0.01))
    gate = session(judge)
    gate.budget_usd = 0.005
    gate.judge(make_case())
    calls = len(judge.calls)
    with pytest.raises(BudgetSpentError, match=r"on 1 case\)"):
        gate.judge(make_case(id="case-2"))
    assert len(judge.calls) == calls


def test_the_configs_default_thresholds_apply_when_the_config_leaves_them_out():
    # Neither the config nor the call names a threshold: the evaluators' defaults apply.
    judge = FakeJudge(claims={"case-1": ["a", "b"]}, verdicts={"case-1": [N, C]})
    message = failure_of(lambda: session(judge).assert_quality(make_case()))
    assert "faithfulness: 0.000 is below the threshold 0.7" in message
    assert "hallucination: 0.000 is below the threshold 0.8" in message
    assert "  - contradicted: b (scripted)" in message


def test_a_threshold_in_the_config_applies_when_the_call_names_none():
    judge = FakeJudge(relevance={"case-1": 0.5})
    gate = session(judge, evaluators={"relevance": {"threshold": 0.4}})
    assert gate.assert_quality(make_case()).results["relevance"].score == 0.5
    message = failure_of(
        lambda: session(judge, evaluators={"relevance": {"threshold": 0.6}}).assert_quality(
            make_case()
        )
    )
    assert "relevance: 0.500 is below the threshold 0.6" in message


# --- the assertion's rules at their edges ------------------------------------------------------


def test_a_score_exactly_at_its_minimum_passes_and_just_under_it_fails():
    judge = FakeJudge(claims={"case-1": ["a", "b"]}, verdicts={"case-1": [S, N]})
    result = session(judge).assert_quality(make_case(), faithfulness=0.5)
    assert result.results["faithfulness"].score == 0.5
    message = failure_of(lambda: session(judge).assert_quality(make_case(), faithfulness=0.51))
    assert "faithfulness: 0.500 is below the threshold 0.51" in message


def test_an_evaluator_that_could_not_judge_fails_the_assertion():
    judge = FakeJudge(fail={"case-1": JudgeError("the judge timed out")})
    message = failure_of(lambda: session(judge).assert_quality(make_case(), faithfulness=0.1))
    assert "case 'case-1': faithfulness: could not be judged:" in message
    assert "the judge timed out" in message


def test_a_misspelt_evaluator_is_refused_rather_than_turning_every_evaluator_off():
    judge = FakeJudge(claims={"case-1": ["a"]}, verdicts={"case-1": [C]})
    with pytest.raises(ValueError, match=r"unknown evaluators \['faithfullness'\]") as caught:
        session(judge).assert_quality(make_case(), faithfullness=0.9)
    assert "'faithfulness'" in str(caught.value)  # the choices are listed
    assert judge.calls == []


def test_an_evaluator_named_but_with_nothing_to_score_fails():
    # context_recall needs expected facts; a case without them cannot meet a named minimum.
    message = failure_of(
        lambda: session(FakeJudge()).assert_quality(make_case(), context_recall=0.5)
    )
    assert "context_recall: nothing to score:" in message


def test_an_evaluator_the_config_enables_that_has_nothing_to_score_does_not_fail():
    gate = session(FakeJudge(), evaluators={"context_recall": {"enabled": True}})
    result = gate.assert_quality(make_case())
    assert result.results["context_recall"].status == "skipped"


def test_only_the_named_evaluators_judge_the_case():
    judge = FakeJudge(claims={"case-1": ["a"]}, verdicts={"case-1": [C]})
    result = session(judge).assert_quality(make_case(), relevance=0.1)
    assert set(result.results) == {"relevance"}


def test_a_minimum_of_none_keeps_the_configs_threshold():
    judge = FakeJudge(relevance={"case-1": 0.5})
    gate = session(judge, evaluators={"relevance": {"threshold": 0.6}})
    message = failure_of(lambda: gate.assert_quality(make_case(), relevance=None))
    assert "relevance: 0.500 is below the threshold 0.6" in message


def test_assert_rag_quality_uses_the_session_it_is_given(monkeypatch):
    judge = FakeJudge(claims={"case-1": ["a"]}, verdicts={"case-1": [C]})
    message = failure_of(
        lambda: assert_rag_quality(make_case(), session=session(judge), faithfulness=0.9)
    )
    assert "faithfulness: 0.000 is below the threshold 0.9" in message
    # Without one it keeps a default session for every later call.
    shared = session(FakeJudge())
    monkeypatch.setattr(testing, "_defaults", {Path.cwd(): shared})
    assert assert_rag_quality(make_case(), relevance=0.1).results["relevance"].score == 1.0
    assert shared.judged == 1


def test_a_direct_call_judges_with_the_current_projects_config_and_cache(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(testing, "_defaults", {})
    (tmp_path / "ragaliq.yaml").write_text(
        "judge: {provider: offline, cache: true, cache_path: .ragaliq/verdicts.sqlite}\n"
        "evaluators:\n  hallucination: {enabled: false}\n  relevance: {enabled: false}\n",
        encoding="utf-8",
    )
    case = make_case(context=("Refunds take 14 days.",), response="Refunds take 14 days.")
    result = assert_rag_quality(case)
    # The project's evaluators and its judge cache, as the pytest plugin's session would have.
    assert set(result.results) == {"faithfulness"}
    session = testing._defaults[Path.cwd()]
    assert session.cache_path == Path.cwd() / ".ragaliq" / "verdicts.sqlite"


def test_a_direct_call_without_a_config_judges_with_the_defaults(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(testing, "_defaults", {})
    shared = testing.project_session(root=tmp_path)
    assert shared.config == testing.GateConfig()


# --- the failure message, as a test author reads it ---------------------------------------------


def test_each_failing_score_is_a_line_of_its_own_with_its_claims_beneath_it():
    judge = FakeJudge(
        claims={"case-1": ["a", "b"]}, verdicts={"case-1": [S, C]}, relevance={"case-1": 0.5}
    )
    message = failure_of(
        lambda: session(judge).assert_quality(
            make_case(), faithfulness=0.9, hallucination=0.9, relevance=0.6
        )
    )
    assert message == (
        "case 'case-1': faithfulness: 0.500 is below the threshold 0.9: "
        "2 claims: 1 supported, 1 contradicted.\n"
        "  - contradicted: b (scripted)\n"
        "hallucination: 0.500 is below the threshold 0.9: "
        "1 of 2 claims are not supported by the context.\n"
        "  - contradicted: b (scripted)\n"
        # Relevance stands on one judgement: its reasoning, and nothing listed after it.
        "relevance: 0.500 is below the threshold 0.6: scripted"
    )


def test_ten_claims_are_all_listed_and_an_eleventh_is_counted():
    def listed(count: int) -> list[str]:
        claims = [f"claim {i}" for i in range(count)]
        judge = FakeJudge(claims={"case-1": claims}, verdicts={"case-1": [N] * count})
        message = failure_of(lambda: session(judge).assert_quality(make_case(), hallucination=1))
        return message.splitlines()[1:]

    assert listed(10) == [f"  - not in the context: claim {i} (scripted)" for i in range(10)]
    assert listed(11)[-1] == "  - ... and 1 more"
    assert len(listed(11)) == 11


def test_judge_alone_scores_only_the_named_evaluators_and_never_fails():
    judge = FakeJudge(claims={"case-1": ["a"]}, verdicts={"case-1": [C]})
    result = session(judge).judge(make_case(), relevance=0.99)
    assert set(result.results) == {"relevance"}
    every = session(judge).judge(make_case())
    assert set(every.results) == {"faithfulness", "hallucination", "relevance"}
    assert every.results["faithfulness"].passed is False


def test_the_judges_notice_is_kept_once_however_many_cases_it_judged():
    # No key in the session's environment: the offline judge, and the run says why, once.
    gate = JudgeSession(config=make_config(judge={"provider": "auto", "cache": False}), env={})
    gate.judge(make_case())
    gate.judge(make_case(id="case-2"))
    assert len(gate.notices) == 1
    assert gate.notices[0].startswith("No ANTHROPIC_API_KEY set. Judged by the offline")


def test_a_named_config_that_is_missing_says_how_to_name_the_right_one(tmp_path):
    missing = tmp_path / "nope.yaml"
    with pytest.raises(ConfigError) as caught:
        testing.project_session(root=tmp_path, config_path=missing)
    assert str(caught.value) == (
        f"{missing}: not found; write one with `ragaliq init` (or by hand: every key is in "
        "https://github.com/ragaliq/ragaliq-gate/blob/main/docs/configuration.md), or pass "
        "--config with the right path"
    )


def test_judge_settings_given_to_a_project_session_override_the_configs(tmp_path):
    (tmp_path / "ragaliq.yaml").write_text(
        "judge: {provider: claude, cache: false}\n", encoding="utf-8"
    )
    gate = testing.project_session(root=tmp_path, judge={"provider": "offline"})
    gate.env = {}  # no key: Claude could not judge, the offline judge can
    assert gate.config.judge.provider == "offline"
    assert gate.config.judge.cache is False  # the config's other judge settings are kept
    result = gate.assert_quality(make_case(), faithfulness=0.9)
    assert result.results["faithfulness"].score == 1.0

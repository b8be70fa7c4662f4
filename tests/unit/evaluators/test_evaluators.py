from __future__ import annotations

import pytest

from ragaliq.config import EvaluatorsConfig
from ragaliq.evaluators import (
    EVALUATORS,
    PRESETS,
    CaseJudgement,
    FaithfulnessEvaluator,
    FaithfulnessOptions,
    HallucinationEvaluator,
    RelevanceEvaluator,
    build_evaluators,
    evaluator_class,
    response_judged_by,
)
from ragaliq.evaluators.registry import evaluator_sections
from ragaliq.models import NOT_VERIFIABLE, ClaimVerdict, RelevanceResult, Verdict
from tests.conftest import make_case, make_verdict

S, P, N, C = (
    Verdict.SUPPORTED,
    Verdict.PARTIALLY_SUPPORTED,
    Verdict.NOT_ENOUGH_INFO,
    Verdict.CONTRADICTED,
)


def judged(*verdicts: Verdict, confidence: float = 0.9) -> CaseJudgement:
    return CaseJudgement(
        case=make_case(),
        verdicts=tuple(
            make_verdict(v, text=f"claim {i}", confidence=confidence)
            for i, v in enumerate(verdicts)
        ),
    )


# The seed acceptance table of DESIGN.md §4, for both claim-based evaluators.
@pytest.mark.parametrize("evaluator", [FaithfulnessEvaluator(), HallucinationEvaluator()])
@pytest.mark.parametrize(
    ("verdicts", "expected"),
    [
        ((S, S, S, S), 1.0),
        ((S, S, N, N), 0.5),
        ((N, C, N), 0.0),
    ],
    ids=["all-supported", "half-supported", "none-supported"],
)
def test_acceptance_table(evaluator, verdicts, expected):
    result = evaluator.evaluate(judged(*verdicts))
    assert result.status == "ok"
    assert result.score == pytest.approx(expected)


@pytest.mark.parametrize("evaluator", [FaithfulnessEvaluator(), HallucinationEvaluator()])
def test_no_claims_is_vacuously_one_with_a_note(evaluator):
    result = evaluator.evaluate(judged())
    assert result.score == 1.0
    assert result.passed is True
    assert result.details["note"] == "no_claims"


@pytest.mark.parametrize(
    ("preset", "verdicts", "expected"),
    [
        ("standard", (S, P, N, C), (1 + 0.5) / 4),
        ("axion", (S, P, N, C), (1 + 0.5 + 0 - 1) / 4),
        ("strict", (S, P, N, C), 0.0),  # (1 + 0.5 - 1 - 1) / 4 < 0, clamped
        ("strict", (S, S, S, N), 0.5),
        ("axion", (C, C), 0.0),
    ],
)
def test_faithfulness_presets(preset, verdicts, expected):
    result = FaithfulnessEvaluator(preset=preset).evaluate(judged(*verdicts))
    assert result.score == pytest.approx(expected)


def test_presets_match_the_design():
    assert PRESETS["standard"] == {S: 1.0, P: 0.5, N: 0.0, C: 0.0}
    assert PRESETS["axion"] == {S: 1.0, P: 0.5, N: 0.0, C: -1.0}
    assert PRESETS["strict"] == {S: 1.0, P: 0.5, N: -1.0, C: -1.0}


def test_verdict_scores_override_single_weights():
    evaluator = FaithfulnessEvaluator(preset="standard", verdict_scores={P: 0.8, N: 0.25})
    result = evaluator.evaluate(judged(P, N))
    assert result.score == pytest.approx((0.8 + 0.25) / 2)
    assert evaluator.options["verdict_scores"]["SUPPORTED"] == 1.0
    assert evaluator.options["verdict_scores"]["PARTIALLY_SUPPORTED"] == 0.8


def test_unknown_preset_is_refused():
    with pytest.raises(ValueError, match="preset"):
        FaithfulnessEvaluator(preset="lenient")


def test_hallucination_lists_the_hallucinated_claims():
    result = HallucinationEvaluator().evaluate(judged(S, C, S, N, P))
    assert result.flagged_claims == (1, 3, 4)
    assert result.score == pytest.approx(2 / 5)
    assert "3 of 5" in result.reasoning


def test_min_confidence_turns_weak_support_into_hallucination():
    weak = judged(S, S, confidence=0.4)
    assert HallucinationEvaluator().evaluate(weak).score == 1.0
    strict = HallucinationEvaluator(min_confidence=0.6).evaluate(weak)
    assert strict.score == 0.0
    assert strict.flagged_claims == (0, 1)


def test_support_at_exactly_min_confidence_is_not_hallucinated():
    at = HallucinationEvaluator(min_confidence=0.6).evaluate(judged(S, confidence=0.6))
    assert (at.score, at.flagged_claims) == (1.0, ())
    under = HallucinationEvaluator(min_confidence=0.6).evaluate(judged(S, confidence=0.59))
    assert (under.score, under.flagged_claims) == (0.0, (0,))


def test_min_confidence_leaves_verdicts_other_than_supported_hallucinated():
    confident = HallucinationEvaluator(min_confidence=0.6).evaluate(judged(C, N, confidence=0.99))
    assert confident.flagged_claims == (0, 1)


def test_relevance_takes_the_judges_score():
    judgement = CaseJudgement(
        case=make_case(), relevance=RelevanceResult(score=0.65, reasoning="partly")
    )
    result = RelevanceEvaluator(threshold=0.7).evaluate(judgement)
    assert result.score == 0.65
    assert result.passed is False
    assert result.reasoning == "partly"


def test_relevance_without_a_rating_is_an_error_not_a_score():
    result = RelevanceEvaluator().evaluate(CaseJudgement(case=make_case()))
    assert result.status == "error"
    assert result.score is None
    assert result.reasoning == "The judge gave no relevance rating for this case."


def test_each_evaluator_keeps_its_own_default_threshold():
    suite = {e.name: e for e in build_evaluators(EvaluatorsConfig())}
    assert suite["faithfulness"].threshold == 0.7
    assert suite["hallucination"].threshold == 0.8
    assert suite["relevance"].threshold == 0.7


def test_thresholds_are_per_evaluator():
    config = EvaluatorsConfig.model_validate({"hallucination": {"threshold": 0.95}})
    suite = {e.name: e for e in build_evaluators(config)}
    assert suite["hallucination"].threshold == 0.95
    assert suite["faithfulness"].threshold == 0.7  # untouched by another evaluator's setting


def test_disabled_evaluators_are_left_out():
    config = EvaluatorsConfig.model_validate({"relevance": {"enabled": False}})
    assert [e.name for e in build_evaluators(config)] == ["faithfulness", "hallucination"]


def test_registry_knows_every_evaluator_by_name():
    names = [e.name for e in EVALUATORS]
    # The five shipped ones first, in the order reports list them; a new one may follow.
    assert names[:5] == [
        "faithfulness",
        "hallucination",
        "relevance",
        "context_precision",
        "context_recall",
    ]
    assert len(set(names)) == len(names)
    assert all(evaluator_class(name).name == name for name in names)
    assert evaluator_class("relevance") is RelevanceEvaluator
    with pytest.raises(KeyError, match=r"^'nope'$"):
        evaluator_class("nope")


def test_the_config_has_one_section_per_registered_evaluator():
    assert list(EvaluatorsConfig.model_fields) == [e.name for e in EVALUATORS]
    config = EvaluatorsConfig.model_validate({"hallucination": {"min_confidence": 0.5}})
    assert config.options(HallucinationEvaluator).min_confidence == 0.5
    suite = build_evaluators(config)
    assert suite[1].info().options == {"min_confidence": 0.5}


def test_an_evaluator_takes_its_options_as_a_model_or_as_keywords():
    from ragaliq.evaluators import FaithfulnessOptions

    as_model = FaithfulnessEvaluator(FaithfulnessOptions(preset="axion", threshold=0.6))
    as_keywords = FaithfulnessEvaluator(preset="axion", threshold=0.6)
    assert as_model.info() == as_keywords.info()
    assert as_model.threshold == 0.6


def test_passed_compares_with_the_threshold():
    evaluator = FaithfulnessEvaluator(threshold=0.5)
    assert evaluator.evaluate(judged(S, N)).passed is True
    assert evaluator.evaluate(judged(S, N, N)).passed is False


def not_verifiable(text: str = "a claim the offline judge cannot tell") -> ClaimVerdict:
    return make_verdict(N, text=text, flags=(NOT_VERIFIABLE,))


@pytest.mark.parametrize(
    ("evaluator", "expected"), [(FaithfulnessEvaluator(), 0.5), (HallucinationEvaluator(), 0.5)]
)
def test_a_claim_not_verifiable_offline_weighs_nothing_either_way(evaluator, expected):
    counted = (make_verdict(S, text="one"), make_verdict(C, text="two"))
    judgement = CaseJudgement(case=make_case(), verdicts=(*counted, not_verifiable()))
    result = evaluator.evaluate(judgement)
    assert result.score == pytest.approx(expected)
    assert result.details == {"claims": 3, "not_verifiable": 1}
    assert "1 not verifiable offline" in result.reasoning or "not verifiable" in result.reasoning


def test_a_claim_not_verifiable_offline_is_never_hallucinated():
    judgement = CaseJudgement(
        case=make_case(), verdicts=(make_verdict(C, text="wrong"), not_verifiable())
    )
    result = HallucinationEvaluator().evaluate(judgement)
    assert result.flagged_claims == (0,)
    assert result.reasoning == (
        "1 of 1 claim is not supported by the context. 1 claim not verifiable offline is left out."
    )


@pytest.mark.parametrize("evaluator", [FaithfulnessEvaluator(), HallucinationEvaluator()])
def test_a_case_whose_every_claim_is_not_verifiable_has_no_score(evaluator):
    judgement = CaseJudgement(case=make_case(), verdicts=(not_verifiable(), not_verifiable("b")))
    result = evaluator.evaluate(judgement)
    assert result.status == "skipped"
    assert result.score is None and result.passed is None
    assert "not verifiable offline" in result.reasoning


def test_claudes_not_enough_info_still_counts_as_before():
    judgement = judged(S, N)
    assert FaithfulnessEvaluator().evaluate(judgement).score == pytest.approx(0.5)
    assert HallucinationEvaluator().evaluate(judgement).flagged_claims == (1,)


def test_relevance_the_judge_could_not_rate_is_skipped_with_its_reason():
    judgement = CaseJudgement(
        case=make_case(), relevance=RelevanceResult(score=None, reasoning="cannot rate")
    )
    result = RelevanceEvaluator().evaluate(judgement)
    assert (result.status, result.score, result.passed) == ("skipped", None, None)
    assert result.reasoning == "cannot rate"


@pytest.mark.parametrize("evaluator", [FaithfulnessEvaluator(), HallucinationEvaluator()])
def test_why_a_case_of_unverifiable_claims_has_no_score_is_said_in_a_sentence(evaluator):
    one = evaluator.evaluate(CaseJudgement(case=make_case(), verdicts=(not_verifiable(),)))
    assert one.reasoning == (
        "The one claim is not verifiable offline (the offline judge could neither ground nor "
        "fault it), so the case has no score."
    )
    two = (not_verifiable(), not_verifiable("b"))
    both = evaluator.evaluate(CaseJudgement(case=make_case(), verdicts=two))
    assert both.reasoning == (
        "All 2 claims are not verifiable offline (the offline judge could neither ground nor "
        "fault them), so the case has no score."
    )


def test_the_evaluators_section_of_the_config_is_built_from_the_registry():
    model = evaluator_sections()
    schema = model.model_json_schema()
    # What an editor shows for `evaluators:` (and `ragaliq schema` prints under $defs).
    assert schema["title"] == "EvaluatorsConfig"
    assert schema["description"].startswith("``evaluators`` in ``ragaliq.yaml``: one section")
    assert list(schema["properties"]) == [e.name for e in EVALUATORS]
    assert schema == EvaluatorsConfig.model_json_schema()
    left_out = model()
    assert [name for name, options in left_out.sections() if options.enabled] == [
        "faithfulness",
        "hallucination",
        "relevance",
    ]
    assert model.model_validate({"context_recall": None}).section("context_recall").enabled


def test_an_editor_shows_each_evaluators_section_with_its_effective_defaults():
    sections = EvaluatorsConfig.model_json_schema()["properties"]
    number_or_null = [{"type": "number"}, {"type": "null"}]
    faithfulness = sections["faithfulness"]
    assert faithfulness["title"] == "faithfulness"
    assert faithfulness["properties"]["threshold"] == {
        "anyOf": number_or_null,
        "default": 0.7,
        "description": "Minimum mean score (0.7 when left out).",
        "title": "Threshold",
    }
    assert faithfulness["properties"]["enabled"] == {
        "default": True,
        "description": "faithfulness is on unless enabled: false.",
        "title": "Enabled",
        "type": "boolean",
    }
    recall = sections["context_recall"]
    assert recall["title"] == "context_recall"
    assert recall["properties"]["enabled"]["description"] == (
        "Writing this section turns context_recall on; it is off when the section is left out, "
        "and enabled: false keeps a written section off."
    )
    assert recall["properties"]["threshold"]["default"] == 0.7
    # An evaluator's own options are untouched by the config's schema.
    assert FaithfulnessOptions.model_json_schema()["properties"]["threshold"]["default"] is None


@pytest.mark.parametrize(
    ("written", "named"),
    [
        ({}, "faithfulness, hallucination and relevance"),
        ({"hallucination": {"enabled": False}}, "faithfulness and relevance"),
        ({"faithfulness": {"enabled": False}, "hallucination": {"enabled": False}}, "relevance"),
        (
            {e: {"enabled": False} for e in ("faithfulness", "hallucination", "relevance")}
            | {"context_recall": {}},
            None,
        ),
    ],
)
def test_the_evaluators_that_need_a_response_are_named_as_a_reader_would(written, named):
    # The words a dataset's refusal of a case without a response gives as the reason.
    assert response_judged_by(EvaluatorsConfig.model_validate(written)) == named


def test_hallucinations_reasoning_counts_the_claims_it_left_out_only_when_there_are_some():
    evaluator = HallucinationEvaluator()
    assert evaluator.evaluate(judged(S, C)).reasoning == (
        "1 of 2 claims are not supported by the context."
    )
    assert evaluator.evaluate(judged(S, C)).details == {"claims": 2}
    assert (
        evaluator.evaluate(judged(S, S)).reasoning == "All 2 claims are supported by the context."
    )
    two_left_out = (make_verdict(S, text="one"), not_verifiable(), not_verifiable("b"))
    result = evaluator.evaluate(CaseJudgement(case=make_case(), verdicts=two_left_out))
    assert result.reasoning == (
        "The one claim is supported by the context. 2 claims not verifiable offline are left out."
    )


def test_a_response_without_claims_has_no_hallucination_and_the_report_says_so():
    result = HallucinationEvaluator().evaluate(judged())
    assert result.reasoning == "The response makes no factual claims, so none is hallucinated."
    assert result.details == {"note": "no_claims", "claims": 0}
    # Recorded as "flagged none", where an evaluator that flags no claims records null.
    assert result.flagged_claims == ()
    assert result.model_dump(mode="json")["flagged_claims"] == []


def test_a_response_without_claims_is_vacuously_faithful_and_says_so():
    result = FaithfulnessEvaluator().evaluate(judged())
    assert result.reasoning == "The response makes no factual claims, so it is vacuously faithful."
    assert result.details == {"note": "no_claims", "claims": 0}
    counted = FaithfulnessEvaluator().evaluate(judged(S, P, N, C))
    assert counted.reasoning == (
        "4 claims: 1 supported, 1 partially supported, 1 not enough info, 1 contradicted."
    )
    assert counted.details == {"claims": 4}

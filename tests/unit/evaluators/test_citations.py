from __future__ import annotations

import pydantic
import pytest

from ragaliq.evaluators.base import CaseJudgement
from ragaliq.evaluators.citations import (
    CitationAccuracyEvaluator,
    CitationOptions,
    MiscitedClaim,
    MiscitedClaims,
)
from ragaliq.evaluators.findings import Before
from ragaliq.models import NOT_VERIFIABLE, CaseResult, ChunkRef, Labels, Verdict
from ragaliq.offline import OfflineJudge
from tests.conftest import make_case, make_verdict

CONTEXT = (
    "Allotment plots cost 40 euros per season.",
    "The water taps run from April to October.",
    "The tool shed opens on Saturday mornings.",
)


def judged(response: str, *verdicts, **case):
    return CaseJudgement(
        case=make_case(context=CONTEXT, response=response, **case), verdicts=tuple(verdicts)
    )


S, P, N, C = (
    Verdict.SUPPORTED,
    Verdict.PARTIALLY_SUPPORTED,
    Verdict.NOT_ENOUGH_INFO,
    Verdict.CONTRADICTED,
)


def test_the_score_is_the_share_of_checked_cited_claims_whose_citations_back_them():
    verdicts = [
        make_verdict(S, text="Plots cost 40 euros [1].", chunks=(1,)),  # right
        make_verdict(P, text="Taps run all year [2].", chunks=(2,)),  # right: partly backed there
        make_verdict(S, text="The shed opens on Saturdays [2].", chunks=(3,)),  # miscited
        make_verdict(C, text="Plots cost 50 euros [1].", chunks=()),  # miscited: nothing backs it
        make_verdict(N, text="Plots come with a hose [3].", flags=(NOT_VERIFIABLE,)),  # unchecked
        make_verdict(S, text="Water is free [2].", chunks=()),  # unchecked: no chunk named
        make_verdict(S, text="Plots cost 40 euros.", chunks=(1,)),  # cites nothing
    ]
    result = CitationAccuracyEvaluator().evaluate(judged("(see the claims)", *verdicts))
    assert result.score == 0.5  # 2 right of 4 checked; 2 unchecked and 1 uncited left out
    assert result.passed is False  # below the default 0.8
    assert result.details == {
        "cited_claims": 6,
        "checked": 4,
        "miscited": [
            {"claim": 2, "cited": ["2"], "backed_by": ["3"]},
            {"claim": 3, "cited": ["1"], "backed_by": []},
        ],
    }
    assert result.reasoning == (
        "2 of 4 cited claims are credited to chunks that do not back them. 2 cited claims the "
        "judge could not check left out."
    )


def test_a_claim_citing_several_chunks_is_right_when_one_of_them_backs_it():
    verdicts = [
        make_verdict(S, text="Plots cost 40 euros [1][3].", chunks=(1,)),
        make_verdict(S, text="The shed opens on Saturdays [1, 2].", chunks=(3,)),
        make_verdict(S, text="Taps run from April [2].", chunks=(2,)),
    ]
    result = CitationAccuracyEvaluator().evaluate(judged("(see the claims)", *verdicts))
    assert result.score == pytest.approx(2 / 3)
    assert result.details["miscited"] == [{"claim": 1, "cited": ["1", "2"], "backed_by": ["3"]}]


def test_chunks_are_named_by_their_ids_where_the_dataset_names_them():
    refs = (ChunkRef(id="fees"), ChunkRef(id="taps"), ChunkRef())
    verdicts = [
        make_verdict(S, text="Plots cost 40 euros [taps].", chunks=(1,)),
        make_verdict(S, text="The shed opens on Saturdays [1].", chunks=(3,)),
    ]
    result = CitationAccuracyEvaluator().evaluate(
        judged("(see the claims)", *verdicts, chunk_refs=refs)
    )
    assert result.score == 0.0
    assert result.details["miscited"] == [
        {"claim": 0, "cited": ["taps"], "backed_by": ["fees"]},
        {"claim": 1, "cited": ["fees"], "backed_by": ["3"]},
    ]


@pytest.mark.parametrize(
    ("response", "verdicts", "reason"),
    [
        pytest.param(
            "Plots cost 40 euros [sic]. Built in [2019].",
            [make_verdict(S, text="Plots cost 40 euros [sic].", chunks=(1,))],
            "The response cites no retrieved chunk: no citation to check.",
            id="no citation",
        ),
        pytest.param(
            "Plots cost 40 euros [1].",
            [make_verdict(S, text="Plots cost 40 euros.", chunks=(1,))],
            "The response cites chunks, but none of its claims kept a citation marker, so no "
            "citation could be checked.",
            id="markers lost in extraction",
        ),
        pytest.param(
            "Plots come with a hose [1].",
            [make_verdict(N, text="Plots come with a hose [1].", flags=(NOT_VERIFIABLE,))],
            "The one cited claim is unchecked (not verifiable offline, or backed without the "
            "judge naming a chunk), so the case has no score.",
            id="nothing checked",
        ),
    ],
)
def test_a_case_without_a_checked_citation_is_skipped_with_its_reason(response, verdicts, reason):
    result = CitationAccuracyEvaluator().evaluate(judged(response, *verdicts))
    assert (result.status, result.score, result.reasoning) == ("skipped", None, reason)


def test_a_pattern_of_its_own_reads_other_markers():
    evaluator = CitationAccuracyEvaluator(pattern=r"\(source (\d+)\)")
    verdicts = [
        make_verdict(S, text="Plots cost 40 euros (source 2).", chunks=(1,)),
        make_verdict(S, text="Taps run from April [1].", chunks=(2,)),  # not a marker now
    ]
    result = evaluator.evaluate(judged("(see the claims)", *verdicts))
    assert (result.score, result.details["cited_claims"]) == (0.0, 1)
    assert evaluator.options == {"pattern": r"\(source (\d+)\)"}


@pytest.mark.parametrize(
    ("pattern", "problem"),
    [("[unclosed", "is not a regular expression"), (r"\[?", "matches the empty text")],
)
def test_a_pattern_that_cannot_find_markers_is_refused(pattern, problem):
    with pytest.raises(pydantic.ValidationError, match=problem):
        CitationOptions(pattern=pattern)


def test_a_refused_pattern_says_what_to_write_instead():
    with pytest.raises(pydantic.ValidationError) as unclosed:
        CitationOptions(pattern="[unclosed")
    assert "); write one whose first group holds the references, such as \\[([^\\]]+)\\]" in str(
        unclosed.value
    )
    with pytest.raises(pydantic.ValidationError) as empty:
        CitationOptions(pattern=r"\[?")
    message = "Value error, matches the empty text, so every position would be a marker ["
    assert message in str(empty.value)


def test_a_case_whose_citations_were_not_scored_has_no_shortfall():
    skipped = CitationAccuracyEvaluator().evaluate(judged("No citation here.", make_verdict(S)))
    assert skipped.status == "skipped" and "miscited" not in skipped.details
    case = CaseResult(
        id="fees", input_hash="h", status="ok", results={"citation_accuracy": skipped}
    )
    assert CitationAccuracyEvaluator().describe_shortfall(case, label=str) == []


def test_it_is_off_until_its_section_is_written():
    assert CitationOptions().enabled is False


def test_the_miscited_claims_are_listed_with_the_chunk_cited_and_the_chunks_that_back_it():
    verdicts = (
        make_verdict(S, text="Plots cost 40 euros [2].", chunks=(1,)),
        make_verdict(C, text="Plots cost 50 euros [1].", chunks=()),
    )
    evaluator = CitationAccuracyEvaluator()
    result = evaluator.evaluate(judged("(see the claims)", *verdicts))
    case = CaseResult(
        id="fees",
        input_hash="h",
        status="ok",
        query="How much is a plot?",
        claims=verdicts,
        results={evaluator.name: result},
    )
    found: list[tuple[str, MiscitedClaim]] = []
    MiscitedClaims().find(case, None, first_run=True, emit=lambda n, f: found.append((n, f)))
    assert [(name, f.headline, f.text) for name, f in found] == [
        (
            "miscited_claims",
            "miscited",
            "Plots cost 40 euros [2]. (cites chunk 2; chunk 1 backs it)",
        ),
        (
            "miscited_claims",
            "miscited",
            "Plots cost 50 euros [1]. (cites chunk 1; no chunk backs it)",
        ),
    ]
    assert evaluator.describe_shortfall(case, label=str) == [
        "miscited: Plots cost 40 euros [2]. (cites chunk 2; chunk 1 backs it)",
        "miscited: Plots cost 50 euros [1]. (cites chunk 1; no chunk backs it)",
    ]


async def test_the_offline_judge_reads_no_marker_as_a_figure_and_names_the_chunks_that_back():
    context = (*CONTEXT, "The water taps run from April to October.")
    case = make_case(
        context=context,
        chunk_refs=(ChunkRef(id="fees"), ChunkRef(), ChunkRef(), ChunkRef()),
        response="",
    )
    claims = (
        "Allotment plots cost 40 euros per season [fees].",
        "The water taps run from April to October [3].",
        "The tool shed opens on Sunday mornings [3].",
    )
    result = await OfflineJudge().verify_claims(case, claims)
    assert [(v.text, v.verdict, v.chunks) for v in result.verdicts] == [
        (claims[0], S, (1,)),
        (claims[1], S, (2, 4)),  # stated in two chunks: both back it
        (claims[2], C, ()),
    ]


# --- chunks not retrieved ------------------------------------------------------------------------

REFS = (ChunkRef(id="fees#1"), ChunkRef(id="taps#1"), ChunkRef(id="shed#1"))


def test_a_claim_citing_a_labelled_chunk_not_retrieved_is_miscited_whatever_the_judge_says():
    labels = Labels(level="chunk", grades={"fees#1": 1, "rules": 2})
    verdicts = [
        make_verdict(S, text="Plots cost 40 euros [rules].", chunks=(1,)),  # backed elsewhere
        make_verdict(N, text="Plots come with a hose [rules].", flags=(NOT_VERIFIABLE,)),
        make_verdict(S, text="Taps run from April [taps#1].", chunks=(2,)),  # right
    ]
    result = CitationAccuracyEvaluator().evaluate(
        judged("(see the claims)", *verdicts, chunk_refs=REFS, labels=labels)
    )
    assert result.score == pytest.approx(1 / 3)
    assert result.details == {
        "cited_claims": 3,
        "checked": 3,
        "miscited": [
            {"claim": 0, "cited": ["rules (not retrieved)"], "backed_by": ["fees#1"]},
            {"claim": 1, "cited": ["rules (not retrieved)"], "backed_by": []},
        ],
    }


def test_another_chunk_of_a_retrieved_document_is_a_chunk_not_retrieved():
    verdicts = [
        make_verdict(S, text="Plots cost 40 euros [fees#2].", chunks=(1,)),
        make_verdict(S, text="Taps run from April [taps#1, fees#7].", chunks=(2,)),  # one backs
        make_verdict(S, text="The shed opens on Saturdays [sic].", chunks=(3,)),  # no citation
        make_verdict(S, text="Plots are rented [2019].", chunks=(1,)),  # no citation either
    ]
    result = CitationAccuracyEvaluator().evaluate(
        judged("(see the claims)", *verdicts, chunk_refs=REFS)
    )
    assert result.score == 0.5
    assert result.details["cited_claims"] == 2
    assert result.details["miscited"] == [
        {"claim": 0, "cited": ["fees#2 (not retrieved)"], "backed_by": ["fees#1"]}
    ]


def test_a_claim_citing_a_chunk_not_retrieved_beside_one_that_is_is_judged_on_that_one():
    verdicts = [
        make_verdict(S, text="Plots cost 40 euros [2, fees#2].", chunks=(1,)),
        make_verdict(N, text="Taps run all year [2, fees#3].", flags=(NOT_VERIFIABLE,)),
    ]
    result = CitationAccuracyEvaluator().evaluate(
        judged("(see the claims)", *verdicts, chunk_refs=REFS)
    )
    assert result.details == {
        "cited_claims": 2,
        "checked": 1,
        "miscited": [
            {"claim": 0, "cited": ["taps#1", "fees#2 (not retrieved)"], "backed_by": ["fees#1"]}
        ],
    }


def test_source_labels_name_no_chunk_and_ids_without_a_document_part_name_none():
    labels = Labels(level="source", grades={"rules": 1})
    refs = (ChunkRef(id="fees"), ChunkRef(id="taps"), ChunkRef())
    verdicts = [make_verdict(S, text="Plots cost 40 euros [rules][feesx].", chunks=(1,))]
    result = CitationAccuracyEvaluator().evaluate(
        judged("Plots cost 40 euros [rules].", *verdicts, chunk_refs=refs, labels=labels)
    )
    assert result.status == "skipped"
    assert "none of its claims kept a citation marker" not in result.reasoning


# --- newly miscited ------------------------------------------------------------------------------


def miscited_case(*texts: str, status: str = "ok", case_id: str = "fees") -> CaseResult:
    verdicts = tuple(make_verdict(S, text=text, chunks=(1,)) for text in texts)
    evaluator = CitationAccuracyEvaluator()
    result = evaluator.evaluate(judged("(see the claims)", *verdicts))
    return CaseResult(
        id=case_id,
        input_hash="h",
        status=status,  # type: ignore[arg-type]
        query="How much is a plot?",
        claims=verdicts,
        results={evaluator.name: result},
    )


def found_in(case: CaseResult, before: Before | None, *, first_run: bool = False):
    kind = MiscitedClaims()
    found: list[MiscitedClaim] = []
    kind.find(case, before, first_run=first_run, emit=lambda n, f: found.append(f))
    return kind, found


def kept(case: CaseResult, status: str = "ok") -> Before:
    return Before(input_hash="h", status=status, kept=MiscitedClaims.keep(case))  # type: ignore[arg-type]


def test_the_baseline_keeps_each_cases_miscited_claims_and_nothing_for_a_case_without():
    main = miscited_case("Plots cost 40 euros [1].", "Plots cost 40 euros a season [2].")
    assert MiscitedClaims.keep(main) == ("Plots cost 40 euros a season [2].",)
    assert MiscitedClaims.keep(miscited_case("Plots cost 40 euros [1].")) is None
    assert MiscitedClaims.read_kept(["a claim"]) == ("a claim",)


def test_a_claim_the_baseline_miscited_too_is_not_new_and_a_reworded_one_neither():
    main = miscited_case("The plots cost 40 euros per season [2].")
    head = miscited_case(
        "Plots cost 40 euros per season [2].",  # the same, re-worded
        "The shed opens on Saturdays [3].",  # new
        "The shed opens on Saturdays [3].",  # the same again: new twice
    )
    kind, found = found_in(head, kept(main))
    assert [f.new for f in found] == [False, True, True]
    assert kind.new_total == 2 and kind.new == [found[1], found[2]]


def test_every_miscited_claim_of_a_new_case_or_one_the_baseline_could_not_judge_is_new():
    head = miscited_case("Plots cost 40 euros [2].")
    for before in (None, kept(head, status="error")):
        kind, found = found_in(head, before)
        assert [f.new for f in found] == [True] and kind.new_total == 1


def test_without_a_baseline_nothing_is_new_and_a_failed_case_lists_nothing():
    kind, found = found_in(miscited_case("Plots cost 40 euros [2]."), None, first_run=True)
    assert [f.new for f in found] == [False] and kind.new_total == 0 and kind.new == []
    kind, found = found_in(miscited_case("Plots cost 40 euros [2].", status="error"), None)
    assert found == [] and kind.new_total == 0


def test_a_failure_names_three_newly_miscited_claims_and_counts_the_rest():
    head = miscited_case(*(f"Claim number {n} holds [2]." for n in range(5)))
    kind, found = found_in(head, None)
    assert kind.new_total == 5 and kind.new == found[:3]


def test_a_chunk_not_retrieved_is_named_once_and_read_with_a_pattern_of_its_own():
    evaluator = CitationAccuracyEvaluator(CitationOptions(enabled=True, pattern=r"\{\w+#\d\}"))
    case = make_case(context=CONTEXT, response="", chunk_refs=REFS)
    reader = evaluator.reader(case)
    # no group: the whole marker is the reference, which names no chunk as it is written
    assert evaluator.not_retrieved(case, reader, "Plots cost 40 euros {fees#2}.") == ()
    plain = CitationAccuracyEvaluator()
    reader = plain.reader(case)
    text = "Plots cost [fees#2; fees#2, shed#4] and [fees#3, taps#1, 2, fees#5] [fees#2]."
    assert plain.not_retrieved(case, reader, text) == ("fees#2", "shed#4", "fees#3", "fees#5")
    optional = CitationAccuracyEvaluator(CitationOptions(enabled=True, pattern=r"\[(fees#\d)?\]"))
    assert optional.not_retrieved(case, optional.reader(case), "Plots [] cost [fees#4].") == (
        "fees#4",
    )


def test_the_document_part_of_an_id_is_before_its_last_separator():
    from ragaliq.evaluators.citations import document_of

    assert [document_of(i) for i in ("export#2", "doc-7", "a/b:c_3", "x.y", "faq__3")] == [
        "export",
        "doc",
        "a/b:c",
        "x",
        "faq",
    ]
    assert [document_of(i) for i in ("sic", "2019", "-x", "x-", "#")] == [None] * 5


def test_several_chunks_cited_and_backing_are_named_in_the_plural():
    verdicts = (make_verdict(S, text="Plots cost 40 euros [3][2].", chunks=(1,)),)
    result = CitationAccuracyEvaluator().evaluate(judged("(see the claims)", *verdicts))
    case = CaseResult(
        id="fees",
        input_hash="h",
        status="ok",
        claims=verdicts,
        results={"citation_accuracy": result},
    )
    assert CitationAccuracyEvaluator().describe_shortfall(case, label=str) == [
        "miscited: Plots cost 40 euros [3][2]. (cites chunks 2, 3; chunk 1 backs it)"
    ]
    backed = (make_verdict(C, text="Plots cost 50 euros [3].", chunks=(1, 2)),)
    result = CitationAccuracyEvaluator().evaluate(judged("(see the claims)", *backed))
    case = case.model_copy(update={"claims": backed, "results": {"citation_accuracy": result}})
    assert CitationAccuracyEvaluator().describe_shortfall(case, label=str) == [
        "miscited: Plots cost 50 euros [3]. (cites chunk 3; chunks 1, 2 back it)"
    ]
    assert (
        CitationAccuracyEvaluator().describe_shortfall(
            case.model_copy(update={"results": {}}), label=str
        )
        == []
    )


def test_a_case_whose_cited_claims_are_all_backed_scores_one_and_says_so():
    verdicts = [
        make_verdict(S, text="Plots cost 40 euros [1].", chunks=(1,)),
        make_verdict(S, text="Taps run from April [2].", chunks=(2,)),
    ]
    result = CitationAccuracyEvaluator().evaluate(judged("(see the claims)", *verdicts))
    assert (result.score, result.reasoning) == (
        1.0,
        "All 2 cited claims are backed by a chunk they cite.",
    )


def test_a_pattern_of_its_own_finds_a_right_citation_the_default_would_not():
    evaluator = CitationAccuracyEvaluator(pattern=r"\(source (\d+)\)")
    verdicts = [make_verdict(S, text="Plots cost 40 euros (source 1).", chunks=(1,))]
    result = evaluator.evaluate(judged("Plots cost 40 euros (source 1).", *verdicts))
    assert (result.status, result.score, result.details["cited_claims"]) == ("ok", 1.0, 1)


def test_a_claim_miscited_once_on_main_and_twice_now_is_new_once():
    main = miscited_case("The shed opens on Saturdays [3].")
    head = miscited_case("The shed opens on Saturdays [3].", "The shed opens on Saturdays [3].")
    kind, found = found_in(head, kept(main))
    assert [f.new for f in found] == [True, False] and kind.new_total == 1


def test_a_miscited_claim_has_the_id_of_its_case_and_text():
    from ragaliq.evaluators._claims import claim_id

    _, found = found_in(miscited_case("Plots cost 40 euros [2].", case_id="fees"), None)
    assert found[0].id == claim_id("fees", "Plots cost 40 euros [2].") != claim_id("x", "P")

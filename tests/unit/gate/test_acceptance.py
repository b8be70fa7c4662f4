"""Accepting flagged claims: what a reviewer's acceptance changes in the decision, and what not."""

from __future__ import annotations

import io
import re
from datetime import UTC, datetime, timedelta

import pytest

from ragaliq.ci.publication import annotate
from ragaliq.errors import ConfigError, ReportError
from ragaliq.evaluators import FaithfulnessEvaluator, HallucinationEvaluator
from ragaliq.gate import Comparison, GateRules, compare
from ragaliq.gate.acceptance import (
    Acceptance,
    Command,
    bind_to_dataset,
    claim_id,
    claim_key,
    parse_command,
    read_acceptances,
)
from ragaliq.models import NOT_VERIFIABLE, EvaluationResult, EvaluatorInfo, Verdict
from ragaliq.report.console import format_decision
from ragaliq.report.markdown import render_comment
from tests.baselines import record_baseline
from tests.conftest import make_verdict
from tests.unit.gate.runs import judged, report, run_of
from tests.unit.gate.test_compare import report_of

S, N, C = Verdict.SUPPORTED, Verdict.NOT_ENOUGH_INFO, Verdict.CONTRADICTED
STRICT = GateRules(max_drop=1.0, fail_on_new_hallucinations=True)
MADE_UP = "Support is 24/7."
ID_A = "3f9a1c2b77e0d4aa"
ID_B = "0c1d2e3f4a5b6c7d"


async def flagged_pull():
    base = record_baseline(await report_of({"a": [S, S, S], "b": [S, S, S]}))
    head = await report_of({"a": [S, S, C], "b": [S, S, S]})
    return head, base


async def test_an_accepted_claim_no_longer_fails_the_gate_and_says_who():
    head, base = await flagged_pull()
    assert compare(head, base, rules=STRICT).passed is False
    accepted = Acceptance(by="maintainer", commit="c" * 40, claims=(claim_id("a", MADE_UP),))
    decision = compare(head, base, rules=STRICT, acceptances=(accepted,))
    assert decision.passed is True
    (claim,) = decision.new_hallucinations
    assert claim.accepted_by == "maintainer"
    assert claim.id == claim_id("a", MADE_UP)
    assert decision.acceptances == (accepted,)
    assert decision.notices == (
        "1 newly hallucinated claim accepted by a reviewer at this commit, counted as supported "
        "in the faithfulness and hallucination scores the gate decides on (the run report keeps "
        "the judge's verdicts); a new push needs a new review.",
    )


async def test_an_acceptance_of_another_claim_changes_nothing_and_says_so():
    head, base = await flagged_pull()
    other = Acceptance(by="maintainer", claims=(claim_id("b", MADE_UP),))
    decision = compare(head, base, rules=STRICT, acceptances=(other,))
    assert decision.passed is False
    assert decision.new_hallucinations[0].accepted_by is None
    assert decision.notices == (
        f"maintainer accepted {claim_id('b', MADE_UP)}, which no newly hallucinated claim at this "
        "commit has: nothing was accepted for it. The comment shows each claim's id.",
    )


async def test_every_review_naming_ids_no_claim_has_is_told_of_them_after_one_accepting_all():
    head, base = await flagged_pull()
    everything = Acceptance(by="lead", claims="all")
    mistyped = Acceptance(by="maintainer", claims=(ID_A, ID_B))
    decision = compare(head, base, rules=STRICT, acceptances=(everything, mistyped))
    assert decision.passed is True
    assert (
        f"maintainer accepted {ID_A}, {ID_B}, which no newly hallucinated claim at this commit "
        "has: nothing was accepted for them. The comment shows each claim's id."
    ) in decision.notices


async def test_an_accepted_claim_counts_as_supported_in_the_scores_the_gate_decides_on():
    # One contradicted claim of six: hallucination 0.833 is below 0.9 and dropped 0.167.
    head, base = await flagged_pull()
    rules = GateRules(max_drop=0.05)
    thresholds = {"faithfulness": 0.7, "hallucination": 0.9, "relevance": 0.5}
    failing = compare(head, base, rules=rules, thresholds=thresholds)
    assert failing.passed is False
    assert any(f.startswith("hallucination: 0.833") for f in failing.failures)

    accepted = Acceptance(by="maintainer", claims=(claim_id("a", MADE_UP),))
    decision = compare(head, base, rules=rules, thresholds=thresholds, acceptances=(accepted,))
    assert decision.passed is True, decision.failures
    hallucination = decision.evaluators["hallucination"]
    assert hallucination.head == 1.0 and hallucination.delta == 0.0
    assert hallucination.judge_score == pytest.approx(0.833333)
    assert decision.evaluators["relevance"].judge_score is None  # not claim-based: untouched
    # The run report keeps the judge's verdict; the comment shows both scores.
    assert [c.verdict for c in next(iter(head.iter_cases())).claims][-1] is C
    comment = render_comment(decision)
    assert "**1.000** <sub>judge: 0.833</sub>" in comment
    assert any("counted as supported" in n for n in decision.notices)


UNSURE = make_verdict(S, text="Refunds take 14 days.", confidence=0.9)
"""A claim supported with less confidence than ``min_confidence: 0.95`` asks: hallucinated."""


def a_pull_with_one_claim_accepted_and_one_still_hallucinated(**unknown):
    """Claims scored under ``min_confidence: 0.95``: one accepted, one not; ``unknown``: an
    evaluator this version does not know, named first in the run."""
    evaluators = [FaithfulnessEvaluator(), HallucinationEvaluator(min_confidence=0.95)]
    base = record_baseline(run_of([judged("a", evaluators, claims=[UNSURE])], evaluators))
    case = judged("a", evaluators, claims=[UNSURE, make_verdict(C, text=MADE_UP)])
    infos = {e.name: e.info() for e in evaluators}
    if unknown:
        case = case.model_copy(update={"results": {**unknown, **case.results}})
        infos = {name: EvaluatorInfo(threshold=0.5, version="1") for name in unknown} | infos
    accepted = Acceptance(by="maintainer", claims=(claim_id("a", MADE_UP),))
    return compare(report([case], infos), base, rules=STRICT, acceptances=(accepted,))


def test_an_accepted_claim_is_scored_as_supported_under_the_runs_own_options():
    decision = a_pull_with_one_claim_accepted_and_one_still_hallucinated()
    assert decision.failures == ("hallucination: 0.500 is below the threshold 0.80",)
    faith, hallucination = decision.evaluators["faithfulness"], decision.evaluators["hallucination"]
    assert (faith.head, faith.judge_score) == (1.0, 0.5)
    # The claim supported with 0.9 confidence is still hallucinated under min_confidence 0.95.
    assert (hallucination.head, hallucination.judge_score) == (0.5, 0.0)


def test_an_evaluator_this_version_does_not_know_leaves_the_rescoring_of_the_others_alone():
    newer = EvaluationResult(evaluator="answer_correctness", score=1.0, passed=True)
    decision = a_pull_with_one_claim_accepted_and_one_still_hallucinated(answer_correctness=newer)
    hallucination = decision.evaluators["hallucination"]
    assert (hallucination.head, hallucination.judge_score) == (0.5, 0.0)


def test_accepting_a_claim_supported_with_too_little_confidence_lifts_hallucination_alone():
    evaluators = [FaithfulnessEvaluator(), HallucinationEvaluator(min_confidence=0.95)]
    sure = make_verdict(S, text=MADE_UP, confidence=0.99)
    base = record_baseline(run_of([judged("a", evaluators, claims=[sure])], evaluators))
    head = run_of([judged("a", evaluators, claims=[sure, UNSURE])], evaluators)
    accepted = Acceptance(by="maintainer", claims=(claim_id("a", UNSURE.text),))
    decision = compare(head, base, rules=STRICT, acceptances=(accepted,))
    assert decision.passed is True
    assert decision.notices == (
        "1 newly hallucinated claim accepted by a reviewer at this commit, counted as supported "
        "in the hallucination scores the gate decides on (the run report keeps the judge's "
        "verdicts); a new push needs a new review.",
    )


def test_a_report_with_options_this_version_does_not_know_is_decided_on_its_scores():
    # The options a run records are read only to score accepted claims again: with none accepted,
    # a report from a newer version is decided as it stands.
    evaluators = [FaithfulnessEvaluator(), HallucinationEvaluator()]
    infos = {e.name: e.info() for e in evaluators}
    infos["faithfulness"] = infos["faithfulness"].model_copy(update={"options": {"strict": True}})
    sure = make_verdict(S, text="Refunds take 14 days.")
    base = record_baseline(report([judged("a", evaluators, claims=[sure])], infos))
    head = report([judged("a", evaluators, claims=[sure, make_verdict(C, text=MADE_UP)])], infos)
    decision = compare(head, base, rules=STRICT)
    assert decision.failures == (
        "faithfulness: 0.500 is below the threshold 0.70",
        "hallucination: 0.500 is below the threshold 0.80",
        "1 newly hallucinated claim (gate.fail_on_new_hallucinations: true)",
    )


def test_accepting_a_claim_in_a_report_with_options_this_version_does_not_know_is_refused():
    # The accepted claim cannot be scored again under options this version cannot read: the gate
    # stops and says so, rather than scoring it under other options.
    evaluators = [FaithfulnessEvaluator(), HallucinationEvaluator()]
    infos = {e.name: e.info() for e in evaluators}
    infos["hallucination"] = infos["hallucination"].model_copy(
        update={"options": {"min_confidenc": 0.9}}
    )
    sure = make_verdict(S, text="Refunds take 14 days.")
    base = record_baseline(report([judged("a", evaluators, claims=[sure])], infos))
    head = report([judged("a", evaluators, claims=[sure, make_verdict(C, text=MADE_UP)])], infos)
    accepted = Acceptance(by="maintainer", claims=(claim_id("a", MADE_UP),))
    with pytest.raises(ReportError) as raised:
        compare(head, base, rules=STRICT, acceptances=(accepted,))
    assert str(raised.value) == (
        "the run report's hallucination options are not this version's (min_confidenc: unknown "
        "key 'min_confidenc'; did you mean 'min_confidence'?), so the claims a reviewer accepted "
        "cannot be scored again; judge the run with this version of ragaliq"
    )


async def test_a_comparison_not_given_the_runs_evaluators_counts_accepted_claims_only():
    head, base = await flagged_pull()
    accepted = Acceptance(by="maintainer", claims=(claim_id("a", MADE_UP),))
    comparison = Comparison(base, rules=STRICT, acceptances=(accepted,))
    for case in head.iter_cases():
        comparison.add(case)
    decision = comparison.decide(head.head)
    assert decision.passed is True
    assert decision.evaluators["hallucination"].judge_score is None  # not rescored
    assert decision.notices == (
        "1 newly hallucinated claim accepted by a reviewer at this commit; a new push needs a "
        "new review.",
    )


def test_the_means_an_acceptance_rescores_are_given_to_six_decimals():
    # Rescored, the three cases score 1, 0 and 1 for hallucination: a mean of 2/3.
    evaluators = [HallucinationEvaluator(threshold=0.5)]
    wrong, right = make_verdict(C, text="Refunds take 30 days."), make_verdict(S, text="By card.")
    cases = {"a": [right], "b": [wrong], "c": [right]}
    base = record_baseline(
        run_of([judged(i, evaluators, claims=c) for i, c in cases.items()], evaluators)
    )
    cases["a"] = [right, make_verdict(C, text=MADE_UP)]
    head = run_of([judged(i, evaluators, claims=c) for i, c in cases.items()], evaluators)
    accepted = Acceptance(by="maintainer", claims=(claim_id("a", MADE_UP),))
    decision = compare(head, base, rules=STRICT, acceptances=(accepted,))
    hallucination = decision.evaluators["hallucination"]
    assert (hallucination.head, hallucination.judge_score) == (0.666667, 0.5)


def test_a_case_with_nothing_to_score_stays_out_of_the_means_an_acceptance_rescores():
    evaluators = [FaithfulnessEvaluator(), HallucinationEvaluator()]
    sure = make_verdict(S, text="Refunds take 14 days.")
    offline = [make_verdict(N, text="It makes excellent tea.", flags=(NOT_VERIFIABLE,))]
    unscored = judged("b", evaluators, claims=offline)
    assert unscored.results["hallucination"].status == "skipped"
    base = record_baseline(run_of([judged("a", evaluators, claims=[sure]), unscored], evaluators))
    flagged = judged("a", evaluators, claims=[sure, make_verdict(C, text=MADE_UP)])
    accepted = Acceptance(by="maintainer", claims=(claim_id("a", MADE_UP),))
    head = run_of([flagged, unscored], evaluators)
    decision = compare(head, base, rules=STRICT, acceptances=(accepted,))
    assert decision.passed is True
    hallucination = decision.evaluators["hallucination"]
    assert (hallucination.head, hallucination.judge_score) == (1.0, 0.5)


def test_accepting_an_unstable_claim_not_counted_as_new_changes_no_count():
    evaluators = [FaithfulnessEvaluator(), HallucinationEvaluator()]
    steady = [make_verdict(S, text="Refunds take 14 days."), make_verdict(S, text=MADE_UP)]
    shaky = [steady[0], make_verdict(C, text=MADE_UP, flags=("unstable",))]
    base = record_baseline(run_of([judged("a", evaluators, claims=steady)], evaluators))
    head = run_of([judged("a", evaluators, claims=shaky)], evaluators)
    accepted = Acceptance(by="maintainer", claims=(claim_id("a", MADE_UP),))
    decision = compare(head, base, rules=STRICT, acceptances=(accepted,))
    assert (decision.passed, decision.failures, decision.new_hallucinations) == (True, (), ())
    assert [c.accepted_by for c in decision.unstable_claims] == ["maintainer"]
    assert not any("accepted by a reviewer" in n for n in decision.notices)


async def test_accepting_all_accepts_the_flagged_claims_and_nothing_else():
    base = record_baseline(await report_of({"a": [S, S, S], "gone": [S, S, S]}))
    head = await report_of({"a": [C, C, C]})
    failing = compare(head, base, rules=STRICT)
    assert not failing.passed
    everything = Acceptance(by="lead", claims="all")
    decision = compare(head, base, rules=STRICT, acceptances=(everything,))
    assert all(c.accepted_by == "lead" for c in decision.new_hallucinations)
    assert not any("newly hallucinated" in f for f in decision.failures)
    # A baseline case the run lacks still fails the gate: `all` is for claims only.
    assert decision.passed is False
    assert [f for f in decision.failures if "missing" in f] == [
        f for f in failing.failures if "missing" in f
    ]
    assert "accepted_failures" not in decision.model_dump()


async def test_the_notice_that_new_claims_do_not_fail_is_given_only_when_they_do_not():
    head, base = await flagged_pull()
    strict = compare(head, base, rules=STRICT)
    assert not any("do not fail this gate" in n for n in strict.notices)
    loose = compare(head, base, rules=GateRules(max_drop=1.0))
    assert any("do not fail this gate" in n for n in loose.notices)


@pytest.mark.parametrize(
    ("body", "command"),
    [
        (f"/ragaliq accept {ID_A}", Command(claims=(ID_A,))),
        (
            f"Looks right to me.\n\n/RAGALIQ ACCEPT {ID_A.upper()} {ID_B}\n",
            Command(claims=(ID_A, ID_B)),
        ),
        (f"/ragaliq accept {ID_A}, {ID_B}", Command(claims=(ID_A, ID_B))),
        ("/ragaliq accept all", Command(claims="all")),
        ("/ragaliq accept ALL ", Command(claims="all")),
        # `all` counts only as the one word of its line; a line with an aside accepts nothing.
        (
            f"/ragaliq accept {ID_A} (not all)",
            Command(claims=(), unread=(f"/ragaliq accept {ID_A} (not all)",)),
        ),
        (
            "/ragaliq accept all but 3f9a",
            Command(claims=(), unread=("/ragaliq accept all but 3f9a",)),
        ),
        ("/ragaliq accept 3f9a1c2b", Command(claims=(), unread=("/ragaliq accept 3f9a1c2b",))),
        ("/ragaliq accept", Command(claims=(), unread=("/ragaliq accept",))),
        (
            f"/ragaliq accept {ID_A}\n/ragaliq accept everything please",
            Command(claims=(ID_A,), unread=("/ragaliq accept everything please",)),
        ),
        (f"/ragaliq accept {ID_A}\n/ragaliq accept {ID_B}", Command(claims=(ID_A, ID_B))),
        (f"ragaliq accept {ID_A}", None),  # not a command: no slash
        ("LGTM", None),
    ],
)
def test_the_command_names_claims_by_id_or_all_on_its_own(body, command):
    assert parse_command(body) == command


def test_claim_ids_tell_apart_claims_in_any_script_and_any_currency():
    ids = {
        claim_id("faq", text)
        for text in (
            "Доставка бесплатная.",
            "Возврат в течение года.",
            "配送は無料です。",
            "返品は一年以内です。",
            "It costs 5 €.",
            "It costs 5 $.",
            "It costs 5 £.",
        )
    }
    assert len(ids) == 7
    assert all(re.fullmatch(r"[0-9a-f]{16}", i) for i in ids)
    # What a reader would not tell apart has one id: case, width, spacing, a trailing full stop.
    assert claim_id("faq", "Support is 24/7.") == claim_id("faq", "support  is \uff12\uff14/\uff17")
    assert claim_key("\uff33upport is\tFREE\uff0e") == "support is free"
    assert claim_id("faq", MADE_UP) != claim_id("other", MADE_UP)


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("Store it above 5 °C.", "Store it above -5 °C."),
        ("Store it above 5 °C.", "Store it above \u22125 °C."),
        ("The plan covers 100% of repairs.", "The plan covers 100 of repairs."),
        ("The fee is $1.000 a year.", "The fee is $1,000 a year."),
        ("The fee is $1.000 a year.", "The fee is $1 000 a year."),
        ("Open from 9:30.", "Open from 930."),
        ("It weighs 2.5 kg.", "It weighs 25 kg."),
        ("Up 3 points.", "Up +3 points."),
    ],
)
def test_claim_ids_tell_apart_signs_percentages_separators_and_currencies(one, other):
    assert claim_id("faq", one) != claim_id("faq", other)


def test_claim_ids_fold_case_and_spacing_but_keep_every_dash_and_punctuation_mark():
    assert claim_key("Store it  ABOVE -5 °C.") == claim_key("store it above -5 °C")
    assert claim_key("Store it above -5 °C") != claim_key("store it above \u22125 °C")
    assert claim_key("A well-known plan, renewed.") == "a well-known plan, renewed"
    assert claim_key("COVID-19 cover") != claim_key("covid 19 cover")
    assert claim_key("Rates: 5-10%.") == "rates: 5-10%"


def test_local_acceptances_come_from_a_file(tmp_path):
    path = tmp_path / "acceptances.yaml"
    path.write_text(f"acceptances:\n  - {{by: maintainer, claims: [{ID_A}]}}\n", encoding="utf-8")
    (read,) = read_acceptances(path)
    assert read.by == "maintainer" and read.claims == (ID_A,) and read.source == str(path)
    path.write_text("- maintainer\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="not a list of acceptances"):
        read_acceptances(path)
    path.write_text("acceptances:\n  - {by: maintainer, claims: [3f9a1c2b]}\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="not a list of acceptances"):
        read_acceptances(path)  # an id of the old, short form names no claim


def test_an_acceptances_file_is_read_as_utf8_whatever_the_machines_locale(tmp_path, monkeypatch):
    # A machine whose locale encoding is ASCII (a C locale without Python's UTF-8 mode).
    monkeypatch.setattr(io, "text_encoding", lambda encoding, stacklevel=2: encoding or "ascii")
    path = tmp_path / "acceptances.yaml"
    path.write_text(f"acceptances:\n  - {{by: zoë, claims: [{ID_A}]}}  # vérifié\n", "utf-8")
    (read,) = read_acceptances(path)
    assert (read.by, read.claims) == ("zoë", (ID_A,))


def test_an_acceptances_file_that_cannot_be_read_says_why_and_what_to_write(tmp_path):
    path = tmp_path / "acceptances.yaml"
    with pytest.raises(ConfigError) as missing:
        read_acceptances(path)
    assert str(missing.value) == f"{path}: cannot be read (No such file or directory)"
    path.write_text("acceptances: [\n", encoding="utf-8")
    with pytest.raises(ConfigError) as broken:
        read_acceptances(path)
    assert str(broken.value) == (
        f"{path}: not a list of acceptances (while parsing a flow node); write "
        "`acceptances: [{by: <login>, claims: [<claim id>, ...]}]` or `claims: all`"
    )


T0 = datetime(2026, 1, 1, tzinfo=UTC)


def at(minutes: int) -> datetime:
    return T0 + timedelta(minutes=minutes)


def refusal(why: str) -> str:
    return (
        "The review by lead accepts all, which covers only the claims its reviewer saw flagged, "
        f"but {why}: it accepts nothing here. Name the claims by the ids the comment shows instead."
    )


def test_a_reviews_all_holds_only_for_the_one_dataset_handed_over_before_it():
    everything = Acceptance(by="lead", claims="all", submitted_at=at(10))
    named = Acceptance(by="lead", claims=(ID_A,), submitted_at=at(10))
    local = Acceptance(by="me", claims="all")
    asked: list[int] = []

    def uploads(*times: int):
        def listed():
            asked.append(1)
            return tuple(at(t) for t in times)

        return listed

    kept, notes = bind_to_dataset(
        (everything, named, local), handed_over=at(5), all_handed_over=uploads(5, 20)
    )
    assert kept == (everything, named, local) and notes == ()
    # Handed over after the review: its reviewer cannot have seen these claims.
    kept, notes = bind_to_dataset(
        (everything, named), handed_over=at(20), all_handed_over=uploads(5, 20)
    )
    assert kept == (named,)
    assert notes == (refusal("the dataset judged was handed over after the review was submitted"),)
    # Two datasets at the head before the review: which one it saw is unknown.
    kept, notes = bind_to_dataset((everything,), handed_over=at(5), all_handed_over=uploads(3, 5))
    assert kept == ()
    assert notes == (
        refusal(
            "the head commit's runs had handed over 2 datasets by then, so which claims it saw "
            "is not known"
        ),
    )
    # Handed over in the second the review was submitted: not known to be before it.
    kept, notes = bind_to_dataset((everything,), handed_over=at(10), all_handed_over=uploads(10))
    assert kept == ()
    assert notes == (refusal("the dataset judged was handed over after the review was submitted"),)
    # No artifact, no time: a review's `all` holds nothing.
    kept, notes = bind_to_dataset((everything,), handed_over=None, all_handed_over=uploads())
    assert kept == ()
    assert notes == (
        refusal("the dataset judged was not handed over as an artifact, so when is unknown"),
    )
    assert len(asked) == 2  # the runs are listed only when an `all` needs them


def test_a_dataset_handed_over_as_the_review_was_submitted_is_not_one_its_reviewer_saw():
    # Two reviews, one listing of the runs; the upload in the review's own second came too late
    # to be judged and shown to the reviewer, so the one before it is still the one they saw.
    first = Acceptance(by="lead", claims="all", submitted_at=at(10))
    second = Acceptance(by="owner", claims="all", submitted_at=at(10))
    asked: list[int] = []

    def uploads():
        asked.append(1)
        return (at(5), at(10))

    kept, notes = bind_to_dataset((first, second), handed_over=at(5), all_handed_over=uploads)
    assert (kept, notes, len(asked)) == ((first, second), (), 1)


async def test_the_headline_counts_the_new_claims_the_failure_counts():
    base = record_baseline(await report_of({"a": [S, S, S], "b": [S, S, S], "c": [S, S, S]}))
    head = await report_of({"a": [S, S, C], "b": [S, S, C], "c": [S, S, C]})
    accepted = Acceptance(by="maintainer", claims=(claim_id("a", MADE_UP),))
    decision = compare(head, base, rules=STRICT, acceptances=(accepted,))
    assert decision.count("new_hallucinations") == 3  # all listed, one marked accepted
    assert (decision.count_new(), decision.accepted_claims) == (2, 1)
    assert "2 newly hallucinated claims (gate.fail_on_new_hallucinations: true)" in (
        decision.failures
    )
    comment = render_comment(decision)
    assert "· **2 newly hallucinated claims** · 1 accepted ·" in comment
    assert "3 newly hallucinated" not in comment.split("####")[0]
    console = format_decision(decision)
    assert "2 newly hallucinated claims, 1 accepted, 0 fixed" in console
    assert "failed: 2 newly hallucinated claims (" in console


class _Annotations:
    """A job log that keeps its annotations."""

    def __init__(self):
        self.lines: list[tuple[str, str, str]] = []

    def notice(self, message, *, title=""):
        self.lines.append(("notice", title, message))

    def warning(self, message, *, title=""):
        self.lines.append(("warning", title, message))

    def error(self, message, *, title=""):
        self.lines.append(("error", title, message))


@pytest.mark.parametrize("fails", [True, False])
async def test_an_accepted_claim_is_a_notice_never_an_error_or_a_warning(fails):
    base = record_baseline(await report_of({"a": [S, S, S], "b": [S, S, S]}))
    head = await report_of({"a": [S, S, C], "b": [S, S, C]})
    accepted = Acceptance(by="maintainer", claims=(claim_id("a", MADE_UP),))
    rules = STRICT if fails else GateRules(max_drop=1.0)
    decision = compare(head, base, rules=rules, acceptances=(accepted,))
    log = _Annotations()
    annotate(log, decision)  # type: ignore[arg-type]
    flagged = "error" if fails else "warning"
    assert [(kind, title) for kind, title, _ in log.lines] == [
        *([("error", "RagaliQ Gate failed")] * len(decision.failures)),
        (flagged, "New hallucination in b"),
        ("notice", "Accepted claim in a"),
    ]
    assert "accepted by maintainer" in log.lines[-1][2]

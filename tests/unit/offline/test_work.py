"""The offline judge's work is linear in a case's size, and bounded: an error, never a stall."""

from __future__ import annotations

import gc
import weakref

import pytest

from ragaliq.errors import JudgeWorkError
from ragaliq.evaluators.questions import VERIFY
from ragaliq.judges.cascade import CascadeJudge
from ragaliq.models import TestCase, Verdict
from ragaliq.offline import OfflineJudge, extract_sentence_claims
from ragaliq.offline.context import MAX_CANDIDATES, ContextIndex
from ragaliq.offline.work import WORK_FLOOR, Work, collection_paused
from tests.conftest import make_case
from tests.unit.judges.test_cascade import RecordingClaude

DISTRICTS = 80
"""More sentences than a claim is compared with (every one shares its words)."""
assert DISTRICTS > MAX_CANDIDATES


def _district(i: int) -> str:
    return f"district {i + 1}"


def _word(i: int) -> str:
    """A made-up word of letters alone, one for each ``i`` (``zaa``, ``zab``, ...)."""
    letters = ""
    for _ in range(3):
        i, rest = divmod(i, 26)
        letters = chr(ord("a") + rest) + letters
    return "z" + letters


def shared_words_case(districts: int) -> tuple[TestCase, list[str]]:
    """A news-like case whose every context sentence holds every word of every claim.

    Each sentence and each claim names its own district, so that no two sentences are the same
    text: nothing is read once for many.
    """
    sentences = [
        f"The city council approved the harbour ferry plan for {_district(i)} after a long "
        "debate on the budget."
        for i in range(districts)
    ]
    claims = [
        f"The city council approved the harbour ferry plan for {_district(i)}."
        for i in range(districts)
    ]
    case = make_case(context=(" ".join(sentences),), response=" ".join(claims))
    return case, claims


async def work_of(case: TestCase, claims: list[str]) -> tuple[int, tuple[Verdict, ...]]:
    judge = OfflineJudge()
    result = await judge.verify_claims(case, claims)
    return judge.work_spent, tuple(v.verdict for v in result.verdicts)


async def test_doubling_a_case_whose_sentences_all_share_a_claims_words_at_most_doubles_work():
    single, verdicts = await work_of(*shared_words_case(DISTRICTS))
    doubled, doubled_verdicts = await work_of(*shared_words_case(2 * DISTRICTS))
    assert set(verdicts) == set(doubled_verdicts) == {Verdict.SUPPORTED}  # judged, not skipped
    assert single > DISTRICTS * MAX_CANDIDATES  # each claim looked at its candidates
    assert doubled <= 2 * single


async def test_a_context_sentence_with_no_full_stop_is_read_in_windows():
    words = " ".join(_word(i) for i in range(5000))
    claim = f"The warehouse lists {_word(4999)}."
    case = make_case(context=(f"The warehouse lists {words} in stock",), response=claim)
    judge = OfflineJudge()
    result = await judge.verify_claims(case, [claim])
    verdict = result.verdicts[0]
    assert verdict.verdict is Verdict.NOT_ENOUGH_INFO  # its words are in two windows
    assert f'uses "{_word(4999)}" elsewhere, not there' in verdict.reason
    assert judge.work_spent < 50 * len(case.context[0])


async def test_a_claim_too_long_to_compare_is_not_verifiable_offline_and_says_why():
    claim = " ".join(_word(i) for i in range(300)) + "."
    judge = OfflineJudge()
    result = await judge.verify_claims(make_case(context=("A short context.",)), [claim])
    verdict = result.verdicts[0]
    assert verdict.verdict is Verdict.NOT_ENOUGH_INFO and not verdict.verifiable
    assert "300 content words, more than the 100" in verdict.reason


def test_work_past_the_bound_is_an_error_for_the_case():
    work = Work(size=10)
    work.spend(WORK_FLOOR)
    with pytest.raises(JudgeWorkError, match="split the context into smaller chunks"):
        work.spend(10_000)


class BoundedOffline(OfflineJudge):
    """The offline judge, stopping at its work bound on every case."""

    async def verify_claims(self, case, claims, *, sample=0, facts=()):
        raise JudgeWorkError("the offline judge stopped on this case")


async def test_the_cascade_sends_every_claim_to_claude_when_the_offline_judge_stops():
    claude = RecordingClaude()
    judge = CascadeJudge(BoundedOffline(), claude)
    claims = ["The city council approved the plan.", "The plan passed."]
    answers = await judge.ask(
        [VERIFY], make_case(context=("The city council met.",)), claims=claims
    )
    result = answers.get(VERIFY)
    assert result is not None and claude.asked == [claims]
    assert [v.reason for v in result.verdicts] == ["scripted", "scripted"]
    assert judge.stats.unchecked_cases == 1
    notice = judge.stats.notice()
    assert notice is not None and "stopped on 1 case" in notice


def test_the_cycle_collector_is_held_off_while_judging_and_back_on_after_it_even_on_an_error():
    assert gc.isenabled()
    with collection_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(JudgeWorkError), collection_paused():
        Work(size=0).spend(WORK_FLOOR + 1)
    assert gc.isenabled()


async def test_judging_a_case_leaves_the_cycle_collector_as_it_found_it():
    case, claims = shared_words_case(3)
    await work_of(case, claims)
    assert gc.isenabled()
    gc.disable()
    try:
        await work_of(case, claims)
        assert not gc.isenabled()  # a caller that turned it off keeps it off
    finally:
        gc.enable()


async def test_a_cases_context_index_is_freed_before_the_cycle_collector_is_back_on(monkeypatch):
    built: list[weakref.ref[ContextIndex]] = []
    alive_when_enabled: list[bool] = []
    build, enable = ContextIndex.build, gc.enable

    def recording_build(*args: object, **kwargs: object) -> ContextIndex:
        index = build(*args, **kwargs)  # type: ignore[arg-type]
        built.append(weakref.ref(index))
        return index

    def recording_enable() -> None:
        alive_when_enabled.extend(ref() is not None for ref in built)
        enable()

    monkeypatch.setattr(ContextIndex, "build", recording_build)
    monkeypatch.setattr(gc, "enable", recording_enable)
    await work_of(*shared_words_case(3))
    assert len(built) == 1
    assert alive_when_enabled == [False]  # the collector never walks a finished case's index


async def test_a_response_of_two_words_around_99000_spaces_is_one_claim_judged_within_its_bound():
    response = "A" + " " * 99_000 + "B"
    assert len(response) == 99_002
    claims = extract_sentence_claims(response)
    assert claims == [response]
    case = make_case(context=("A is the first letter. B is the second letter.",), response=response)
    judge = OfflineJudge()
    result = await judge.verify_claims(case, claims)
    assert len(result.verdicts) == 1
    assert judge.work_spent <= len(response)  # the spaces are read once, never compared

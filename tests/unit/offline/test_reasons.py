"""What the offline judge says of a claim is true of that claim and its context.

Every reason it gives for a claim it could not check is produced here from a claim and a
context, and checked against them; a day or month the context never names is not in the
context, as a figure or a name is; and a claim copied from one context sentence is supported
unless the rest of that sentence negates, conditions, hedges or attributes it.
"""

from __future__ import annotations

import dataclasses
import re

import pytest

from ragaliq.models import ClaimVerdict, Verdict
from ragaliq.offline import OfflineJudge
from tests.conftest import make_case

HOURS = "The museum is open from 10 am to 6 pm. Tickets cost $12 for adults."


async def verdict_of(claim: str, *context: str, judge: OfflineJudge | None = None) -> ClaimVerdict:
    judge = judge or OfflineJudge()
    result = await judge.verify_claims(make_case(context=context, response=claim), [claim])
    return result.verdicts[0]


def quoted(reason: str) -> list[str]:
    return re.findall(r'"([^"]+)"', reason)


def words_of(text: str) -> set[str]:
    return {w.lower() for w in re.findall(r"[A-Za-z']+", text)}


# A day or month the context never names -------------------------------------------------------


async def test_a_day_the_context_never_names_is_not_in_the_context():
    claim = "Visitors can also take free helicopter tours above the museum roof every Wednesday."
    verdict = await verdict_of(claim, HOURS)
    assert verdict.verdict is Verdict.NOT_ENOUGH_INFO and verdict.verifiable  # hallucinated
    assert verdict.reason == 'The day "Wednesday" does not occur in the context.'
    assert "wednesday" not in HOURS.lower()


async def test_a_month_the_context_never_names_is_not_in_the_context():
    verdict = await verdict_of("The museum is open from 10 am to 6 pm in August.", HOURS)
    assert verdict.verifiable and verdict.verdict is not Verdict.SUPPORTED
    assert verdict.reason == 'The month "August" does not occur in the context.'


async def test_a_day_the_context_implies_is_no_finding():
    context = "The museum is open on weekdays from 10 am to 6 pm."
    verdict = await verdict_of("The museum is open on Wednesday from 10 am to 6 pm.", context)
    assert "does not occur in the context" not in verdict.reason


async def test_may_as_a_modal_is_no_month():
    verdict = await verdict_of("Adults may buy tickets for $12.", HOURS)
    assert "month" not in verdict.reason


# A claim copied from one context sentence ------------------------------------------------------

PLAIN = [
    (
        "The app syncs notes across devices, but it does not work offline.",
        "The app syncs notes across devices.",
    ),
    ("You cannot cancel online, but you can cancel by phone.", "You can cancel by phone."),
    (
        "Refunds are not available after 30 days; the store accepts returns of unopened items.",
        "The store accepts returns of unopened items [1].",
    ),
    (
        "Our team never answers calls on weekends, though it replies to email within a day.",
        "It replies to email within a day.",
    ),
]


@pytest.mark.parametrize(("sentence", "claim"), PLAIN)
async def test_a_span_of_a_sentence_nothing_governs_is_supported(sentence: str, claim: str):
    verdict = await verdict_of(claim, sentence)
    assert verdict.verdict is Verdict.SUPPORTED, verdict.reason
    assert verdict.evidence == sentence
    assert "word for word" in verdict.reason


GOVERNED = [
    ("It is not true that the app works offline.", "negation", "says it under a negation"),
    ("If you upgrade to Pro, the app works offline.", "condition", "with a condition or a limit"),
    ("The app works offline only on Android phones.", "condition", "with a condition or a limit"),
    ("The app might eventually work offline.", "modal", "may or will be so"),
    ("According to the vendor, the app works offline.", "attribution", "as someone's word"),
    ("The app works offline, the vendor claimed.", "attribution", "as someone's word"),
    ("Critics say that the app works offline.", "attribution", "as someone's word"),
]


@pytest.mark.parametrize(("sentence", "kind", "said"), GOVERNED)
async def test_a_span_the_rest_of_its_sentence_governs_is_never_supported(
    sentence: str, kind: str, said: str
):
    claim = "The app works offline." if "might" not in sentence else "Eventually work offline."
    verdict = await verdict_of(claim, sentence)
    assert verdict.verdict is not Verdict.SUPPORTED
    assert not verdict.verifiable
    assert said in verdict.reason, (kind, verdict.reason)
    (governing,) = quoted(verdict.reason)
    assert governing.rstrip(" \u2026") in sentence  # quoted from the sentence, outside the span


# Every reason for a claim not verifiable is true of it ----------------------------------------


async def test_words_not_stated_are_not_in_the_sentence_it_rests_on():
    context = "The kettle holds 1.7 litres and boils water in 4 minutes. It has a steel base."
    verdict = await verdict_of("The kettle holds 1.7 litres and makes excellent tea.", context)
    assert not verdict.verifiable
    assert 'the context sentence it rests on does not state "excellent", "tea"' in (verdict.reason)
    assert verdict.evidence is not None
    for word in quoted(verdict.reason):
        assert word.lower() not in words_of(verdict.evidence)
    assert "found nothing in the context to fault it" in verdict.reason


async def test_words_used_elsewhere_are_in_the_context_and_not_in_the_sentence():
    context = "The kettle holds 1.7 litres. The steel base keeps it steady."
    verdict = await verdict_of("The kettle holds 1.7 litres of steel.", context)
    assert '(the context uses "steel" elsewhere, not there)' in verdict.reason
    assert verdict.evidence is not None and "steel" not in verdict.evidence
    assert "steel" in context


async def test_a_negation_that_may_govern_what_the_claim_asserts_is_named_not_called_a_denial():
    sentence = "The shop is not open on holidays and is open late on Fridays."
    verdict = await verdict_of("The shop is open late on Fridays.", sentence)
    assert not verdict.verifiable
    assert verdict.reason == (
        'Not verifiable offline: a negation of the context sentence it rests on governs "open", '
        "which the claim asserts; the offline judge cannot tell whether that negation bears on "
        "what the claim says."
    )
    assert "not open" in sentence and "open" in words_of("The shop is open late on Fridays.")


async def test_a_claim_too_long_and_a_claim_with_no_content_words_say_so():
    long_claim = " ".join(f"z{chr(97 + i // 26)}{chr(97 + i % 26)}q" for i in range(120)) + "."
    verdict = await verdict_of(long_claim, HOURS)
    assert "120 content words, more than the 100" in verdict.reason
    assert (await verdict_of("The.", HOURS)).reason == (
        "Not verifiable offline: the claim has no content words to compare."
    )


async def test_the_claim_models_doubt_is_given_only_where_every_word_is_in_the_sentence():
    judge = OfflineJudge()
    models = judge.model

    class Doubting:
        """The judge's claim models, each doubting every grounded claim."""

        def for_index(self, index):  # type: ignore[no-untyped-def]
            return dataclasses.replace(models.for_index(index), threshold=0.0)

    judge.model = Doubting()  # type: ignore[assignment]
    sentence = "The river flows north from the lake to the sea past the old mill."
    verdict = await verdict_of(
        "The river flows from the sea to the lake past the old mill.", sentence, judge=judge
    )
    assert "its words are all in the context sentence it rests on" in verdict.reason
    assert words_of("river flows sea lake past old mill") <= words_of(sentence)


async def test_no_reason_both_faults_the_claim_and_says_nothing_contradicts_it():
    cases = [
        (
            "The shop is open late on Fridays.",
            "The shop is not open on holidays and is open late on Fridays.",
        ),
        ("The app works offline.", "It is not true that the app works offline."),
        ("The app works offline.", "If you upgrade to Pro, the app works offline."),
    ]
    for claim, sentence in cases:
        reason = (await verdict_of(claim, sentence)).reason
        assert "found nothing in the context to fault it" not in reason, reason

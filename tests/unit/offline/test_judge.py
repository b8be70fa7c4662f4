from __future__ import annotations

import json

import pytest

from ragaliq.judges import OfflineJudge
from ragaliq.judges.cascade import settles_offline
from ragaliq.models import Verdict
from ragaliq.offline import extract_sentence_claims
from ragaliq.text.words import content_words, numbers, split_sentences
from tests.conftest import make_case

CONTEXT = (
    "Northwind Cloud refunds annual plans within 14 days of purchase. "
    "Monthly plans are not refundable. "
    "The Business plan costs $12.50 per user per month and includes 2 TB of storage.",
    "Dr. Ada Byron founded the company in 2015 in Lisbon.",
)


def test_sentences_keep_abbreviations_and_decimals_together():
    text = (
        "Dr. Smith paid $3.50 for approx. two items, e.g. apples. "
        "Version 2.4.1 shipped in Jan. 2024."
    )
    assert split_sentences(text) == [
        "Dr. Smith paid $3.50 for approx. two items, e.g. apples.",
        "Version 2.4.1 shipped in Jan. 2024.",
    ]


def test_sentences_split_bullets_and_numbered_lists():
    text = "To reset:\n- Open Settings.\n- Click Reset. Confirm.\n1. Sign in again\n2) Done"
    assert split_sentences(text) == [
        "To reset:",
        "Open Settings.",
        "Click Reset.",
        "Confirm.",
        "Sign in again",
        "Done",
    ]


def test_sentences_keep_initials():
    assert split_sentences("J. R. R. Tolkien wrote it. It sold well.") == [
        "J. R. R. Tolkien wrote it.",
        "It sold well.",
    ]


def test_claims_skip_questions_list_intros_and_pleasantries():
    response = "Here is what to do:\n- Refunds take 14 days.\nAnything else?\nThanks!"
    assert extract_sentence_claims(response) == ["Refunds take 14 days."]
    chatty = "Sure! Refunds take 14 days. I hope this helps! Let me know if you have questions."
    assert extract_sentence_claims(chatty) == ["Refunds take 14 days."]


@pytest.mark.parametrize(
    "sentence",
    [
        "Unable to answer based on the given passages.",
        "Therefore, I am unable to answer your question based on these passages.",
        "I'm sorry, but I cannot find that in the passages.",
        "Passage 2 does not provide any information about the warranty.",
        "The price is not mentioned in the context.",
        "The provided structured data does not include information about reservations.",
    ],
)
def test_statements_about_the_sources_are_not_claims(sentence):
    assert extract_sentence_claims(f"{sentence} Refunds take 14 days.") == ["Refunds take 14 days."]


@pytest.mark.parametrize(
    "sentence",
    [
        "The company cannot provide refunds after 30 days.",
        "We cannot ship to Alaska.",
        "Passage 2 says the plan costs $10.",
        "Outdoor seating is not available.",
        "The drug is not approved in the EU.",
    ],
)
def test_claims_that_deny_something_are_still_claims(sentence):
    assert extract_sentence_claims(sentence) == [sentence]


def test_a_colon_before_a_capital_ends_a_list_intro():
    response = "Based on the data, here is an overview:  Finch & Fork is a restaurant."
    assert extract_sentence_claims(response) == ["Finch & Fork is a restaurant."]


def test_numbers_are_normalised():
    assert numbers("It costs $1,200.50, up 45% since 2019, twelve times") == {
        "1200.5",
        "45",
        "2019",
        "12",
    }
    assert numbers("0.50 and 007") == {"0.5", "7"}


def test_content_words_stem_and_drop_stopwords():
    assert content_words("The refunds were refunded") == ["refund", "refund"]


async def verdict_of(claim: str, context=CONTEXT):
    result = await OfflineJudge().verify_claims(make_case(context=context), [claim])
    return result.verdicts[0]


async def test_verbatim_support():
    v = await verdict_of("Annual plans are refunded within 14 days of purchase.")
    assert v.verdict is Verdict.SUPPORTED
    assert v.evidence == "Northwind Cloud refunds annual plans within 14 days of purchase."


async def test_wrong_number_is_contradicted():
    v = await verdict_of("Annual plans are refunded within 30 days of purchase.")
    assert v.verdict is Verdict.CONTRADICTED
    assert "30" in v.reason


async def test_negation_flip_is_contradicted():
    v = await verdict_of("Monthly plans are refundable.")
    assert v.verdict is Verdict.CONTRADICTED


async def test_unrelated_claim_is_not_enough_info():
    v = await verdict_of("The mobile app supports offline editing of spreadsheets.")
    assert v.verdict is Verdict.NOT_ENOUGH_INFO
    assert '"mobile", "app"' in v.reason and "does not state" in v.reason


async def test_partial_support():
    v = await verdict_of(
        "The Business plan includes 2 TB of storage, a dedicated account manager and free "
        "phone support."
    )
    assert v.verdict in (Verdict.PARTIALLY_SUPPORTED, Verdict.NOT_ENOUGH_INFO)
    assert "account" in v.reason and "phone" in v.reason


async def test_a_short_invented_phrase_is_never_confidently_supported():
    # Calibrated on RAGTruth, where answers paraphrase freely, one added phrase in an otherwise
    # grounded sentence may pass as SUPPORTED offline, but never confidently: a cascade sends it
    # on to Claude.
    v = await verdict_of(
        "The Business plan includes 2 TB of storage and a dedicated account manager."
    )
    assert not settles_offline(v)
    sure = await verdict_of("The Business plan includes 2 TB of storage.")
    assert settles_offline(sure)
    assert v.confidence < sure.confidence


async def test_four_verdicts_come_with_confidence_in_range():
    for claim in [
        "Dr. Ada Byron founded the company in 2015.",
        "Dr. Ada Byron founded the company in 2012.",
        "The company sells hardware routers.",
    ]:
        v = await verdict_of(claim)
        assert 0.0 <= v.confidence <= 1.0
        assert v.reason


async def test_empty_context_gives_not_enough_info():
    result = await OfflineJudge().verify_claims(make_case(context=("",)), ["a", "b"])
    assert [v.verdict for v in result.verdicts] == [Verdict.NOT_ENOUGH_INFO] * 2


@pytest.mark.parametrize(
    ("response", "low", "high"),
    [
        ("Annual plans are refundable within 14 days.", 0.9, 1.0),
        ("Our office is in Lisbon.", 0.0, 0.3),
    ],
)
async def test_relevance_from_query_overlap(response, low, high):
    case = make_case(query="Are annual plans refundable?", response=response)
    result = await OfflineJudge().evaluate_relevance(case)
    assert low <= result.score <= high
    assert "key terms" in result.reasoning


async def test_offline_judge_is_deterministic_and_says_it_is_heuristic():
    judge = OfflineJudge()
    assert judge.info.heuristic is True
    assert "heuristic" in judge.info.model
    case = make_case(context=CONTEXT, response="Annual plans cost $12.50. Refunds take 30 days.")
    first = await judge.verify_claims(case, (await judge.extract_claims(case)).claims)
    second = await judge.verify_claims(case, (await judge.extract_claims(case)).claims)
    assert first == second
    assert first.usage.calls == 0


async def test_verbatim_support_is_confident_and_quotes_the_sentence():
    v = await verdict_of("The Business plan costs $12.50 per user per month.")
    assert v.verdict is Verdict.SUPPORTED
    assert settles_offline(v)
    assert v.evidence is not None and "$12.50 per user per month" in v.evidence


@pytest.mark.parametrize(
    ("claim", "names"),
    [
        ("Dr. Ada Byron and Charles Babbage founded the company in 2015.", ["Charles", "Babbage"]),
        ("Dr. Ada Byron founded the company in 2015 in Porto.", ["Porto"]),
    ],
)
async def test_a_name_the_context_lacks_is_not_supported(claim, names):
    v = await verdict_of(claim)
    assert v.verdict is Verdict.PARTIALLY_SUPPORTED
    assert all(name in v.reason for name in names)


async def test_a_date_the_context_lacks_is_not_supported():
    v = await verdict_of("Northwind Cloud was sold to a rival in 2021.")
    assert v.verdict is Verdict.NOT_ENOUGH_INFO
    assert "2021" in v.reason


async def test_a_paraphrase_with_the_same_facts_is_supported():
    v = await verdict_of("Annual plans can be refunded within 14 days after they are purchased.")
    assert v.verdict is Verdict.SUPPORTED


RECORD = json.dumps(
    {
        "name": "Finch & Fork",
        "city": "Santa Barbara",
        "categories": "Breakfast & Brunch, American (New), Bars",
        "hours": {
            "Monday": "17:30-23:0",
            "Tuesday": "17:0-21:0",
            "Wednesday": "17:0-21:0",
            "Thursday": "17:0-21:0",
            "Friday": "17:0-21:0",
            "Saturday": "17:0-21:0",
            "Sunday": "9:0-14:0",
        },
        "attributes": {
            "BusinessParking": {"garage": True, "street": True, "lot": False, "valet": True},
            "RestaurantsReservations": True,
            "OutdoorSeating": False,
            "WiFi": "free",
            "Music": None,
            "Ambience": {"classy": True, "casual": False},
        },
        "business_stars": 4.0,
        "review_info": [
            {
                "review_stars": 5.0,
                "review_text": "What a great brunch, the steak and eggs were perfect and the "
                "mimosas were served just the way I like them.",
            }
        ],
    }
)


@pytest.mark.parametrize(
    ("claim", "verdict", "in_reason"),
    [
        ("Finch & Fork offers free WiFi and accepts reservations.", Verdict.SUPPORTED, ""),
        ("It does not offer outdoor seating.", Verdict.SUPPORTED, ""),
        ("Guests can enjoy the outdoor seating.", Verdict.CONTRADICTED, "OutdoorSeating"),
        ("It has a casual atmosphere.", Verdict.CONTRADICTED, '"casual": false'),
        ("It offers free delivery.", Verdict.NOT_ENOUGH_INFO, "no field about delivery"),
        ("Live music plays on weekends.", Verdict.NOT_ENOUGH_INFO, "null field about music"),
        ("It is open on Sunday from 9 am to 2 pm.", Verdict.SUPPORTED, ""),
        ("It is open Monday to Saturday from 5 pm to 9 pm.", Verdict.CONTRADICTED, "Monday"),
        ("The restaurant is open daily from 11am to 10pm.", Verdict.CONTRADICTED, "hours"),
        ("It has a 4.5-star rating.", Verdict.CONTRADICTED, "4.5"),
        ("There is no parking lot, but valet parking is available.", Verdict.SUPPORTED, ""),
    ],
)
async def test_claims_about_a_json_record_are_checked_field_by_field(claim, verdict, in_reason):
    v = await verdict_of(claim, context=(RECORD,))
    assert v.verdict is verdict, v.reason
    assert in_reason in v.reason + (v.evidence or "")
    assert v.reason


async def test_a_record_verdict_quotes_the_field():
    v = await verdict_of("Guests can enjoy the outdoor seating.", context=(RECORD,))
    assert v.evidence == '"OutdoorSeating": false'
    assert v.evidence.replace('"', "").replace(":", "") in RECORD.replace('"', "").replace(":", "")


def test_the_shipped_model_matches_the_features():
    from ragaliq.offline import load_model
    from ragaliq.offline.features import FEATURES

    models = load_model()
    for model in (models.answer, models.summary, models.record):
        assert len(model.weights) == len(FEATURES)
        assert 0 < model.threshold < 1
    assert models.answer.weights == models.summary.weights
    assert models.answer.weights != models.record.weights


def test_the_kind_of_case_picks_the_model():
    from ragaliq.offline import case_kind, load_model
    from ragaliq.offline.context import ContextIndex

    passages = ("The museum opens at nine and closes at five.",)
    answer = ContextIndex.build(passages, query="When does the museum open?")
    summary = ContextIndex.build(passages)
    record = ContextIndex.build((RECORD,), query="Describe the business.")
    assert [case_kind(i) for i in (answer, summary, record)] == ["answer", "summary", "record"]
    models = load_model()
    assert models.for_index(answer) is models.answer
    assert models.for_index(summary) is models.summary
    assert models.for_index(record) is models.record


THERMOSTAT = (
    "The Nestor app and all thermostat features are free; there is no subscription.",
    "Monthly plans are refundable within 14 days of purchase.",
    "The Nestor thermostat works with heat pumps, furnaces and boilers.",
    "Installation takes about 30 minutes and most people do it themselves.",
    "Every thermostat comes with a 5-year warranty.",
)


@pytest.mark.parametrize(
    "response",
    [
        "No. The app and all thermostat features are free.",
        "No, the app and all thermostat features are free.",
        "No. Monthly plans are refundable within 14 days.",
        "No. The thermostat works with heat pumps.",
        "Yes, the thermostat works with heat pumps.",
    ],
)
async def test_a_leading_yes_or_no_answers_the_question_and_negates_nothing(response):
    judge = OfflineJudge()
    case = make_case(context=THERMOSTAT, response=response)
    claims = (await judge.extract_claims(case)).claims
    assert claims and all(not c.startswith("No.") for c in claims)
    verdicts = (await judge.verify_claims(case, claims)).verdicts
    assert [v.verdict for v in verdicts] == [Verdict.SUPPORTED] * len(claims), verdicts


async def test_a_flipped_answer_after_yes_is_still_contradicted():
    v = await verdict_of("Yes, monthly plans are refundable.")
    assert v.verdict is Verdict.CONTRADICTED


@pytest.mark.parametrize(
    "claim",
    [
        "Most people can fit it on their own in roughly half an hour.",
        "Most people install it by themselves in about 30 minutes.",
        "There is no subscription, and the app is free of charge.",
    ],
)
async def test_a_paraphrase_that_keeps_the_facts_is_supported(claim):
    v = await verdict_of(claim, context=THERMOSTAT)
    assert v.verdict is Verdict.SUPPORTED, v.reason


@pytest.mark.parametrize(
    ("claim", "verdict", "in_reason"),
    [
        ("Every thermostat comes with a 2-year warranty.", Verdict.CONTRADICTED, "2"),
        ("Installation takes about 45 minutes.", Verdict.CONTRADICTED, "45"),
        (
            "The Nestor thermostat was designed by Maria Keller.",
            Verdict.NOT_ENOUGH_INFO,
            "Keller",
        ),
    ],
)
async def test_a_changed_figure_or_an_invented_name_is_still_caught(claim, verdict, in_reason):
    v = await verdict_of(claim, context=THERMOSTAT)
    assert v.verdict is verdict, v.reason
    assert in_reason in v.reason


@pytest.mark.parametrize("query", ["", "   \n", "\u200b"])
async def test_a_blank_query_is_no_query_to_rate_relevance_against(query):
    from ragaliq.errors import JudgeError

    case = make_case(query=query)
    with pytest.raises(JudgeError, match="the case has no query"):
        await OfflineJudge().evaluate_relevance(case)


def test_every_module_of_the_offline_judge_is_part_of_its_version():
    from importlib import resources

    from ragaliq.offline import judge

    shipped = {
        item.name
        for item in resources.files("ragaliq.offline").iterdir()
        if item.name.endswith((".py", ".json")) and item.name != "__init__.py"
    }
    assert shipped <= {name for package, name in judge._sources() if package == judge.__package__}


LIBRARY = (
    "The Elm Street branch library lends laptops for two weeks. "
    "On Saturdays the branch has a volunteer who repairs bicycles in the courtyard. "
    "Both reading rooms close at 8 pm. "
    "The courtyard is kept by the Friends of Elm Street Library.",
)


async def _judged(claim: str, context: tuple[str, ...] = LIBRARY):
    case = make_case(context=context)
    return (await OfflineJudge().verify_claims(case, [claim])).verdicts[0]


async def test_a_claim_whose_relation_verb_the_evidence_lacks_is_supported_but_not_settled():
    # "offers" is a generic verb, so the claim may be SUPPORTED; the relation is still part of
    # the fact, and the cascade asks Claude about it
    said = await _judged("The Elm Street branch library lends laptops for two weeks.")
    assert said.verdict is Verdict.SUPPORTED and settles_offline(said)
    related = await _judged("The Elm Street branch library offers laptops for two weeks.")
    assert related.verdict is Verdict.SUPPORTED
    assert not settles_offline(related)


@pytest.mark.parametrize(
    "claim",
    [
        "Only the Elm Street branch library lends laptops for two weeks.",
        "The Elm Street branch library lends laptops for two weeks before exams.",
    ],
)
async def test_a_word_of_reach_or_comparison_the_evidence_lacks_is_never_settled(claim):
    assert not settles_offline(await _judged(claim))


async def test_a_word_of_reach_the_evidence_writes_may_be_settled():
    v = await _judged("Both reading rooms close at 8 pm.")
    assert v.verdict is Verdict.SUPPORTED and settles_offline(v)


async def test_a_claim_that_only_names_something_is_never_settled():
    v = await _judged("Friends of Elm Street Library")
    assert not settles_offline(v)
    said = await _judged("The courtyard is kept by the Friends of Elm Street Library.")
    assert said.verdict is Verdict.SUPPORTED and settles_offline(said)


@pytest.mark.parametrize(
    ("claim", "context", "word"),
    [
        pytest.param(
            "The ferry gave insight into the harbour all morning.",
            "The ferry stayed in sight of the harbour all morning.",
            "insight",
            id="two words joined across a function word",
        ),
        pytest.param(
            "The Definite Guide series covers Python packaging.",
            "The Definitive Guide series covers Python packaging.",
            "Definite",
            id="a name differing by a suffix",
        ),
    ],
)
async def test_a_word_only_like_one_the_evidence_writes_is_not_grounded_by_it(claim, context, word):
    v = await _judged(claim, (context,))
    assert not v.verifiable and f'"{word}"' in v.reason


@pytest.mark.parametrize(
    ("claim", "context", "noun"),
    [
        pytest.param(
            "The hotel restaurant serves Thai and Vietnamese cuisine.",
            "The hotel restaurant serves Thai and Vietnamese dishes.",
            "cuisine",
            id="a noun of a kind of thing",
        ),
        pytest.param(
            "The ward offers same-day and walk-in appointment options.",
            "The ward offers same-day and walk-in appointments.",
            "options",
            id="a noun of choice",
        ),
        pytest.param(
            "The bakery offers custom cake and catering services.",
            "The bakery offers custom cakes.",
            "catering",
            id="an added service",
        ),
    ],
)
async def test_a_generic_noun_the_evidence_does_not_state_keeps_a_claim_from_being_settled(
    claim, context, noun
):
    v = await _judged(claim, (context,))
    assert not settles_offline(v) and noun in v.reason


ROUTER = (
    "Annual plans can be cancelled within 30 days.",
    "The router restarts itself every night at 3 am.",
)


async def test_a_figure_beside_a_source_number_is_still_checked():
    v = await _judged("The router restarts itself every night at 4 am (Passage 2).", ROUTER)
    assert v.verdict is Verdict.CONTRADICTED and "4 am" in v.reason
    bare = await _judged("(Passage 2)", ROUTER)
    assert not settles_offline(bare)


NOODLE_BAR = json.dumps(
    {
        "name": "Harbor Noodle Bar",
        "address": "12 Quay St",
        "stars": 4.5,
        "attributes": {
            "OutdoorSeating": True,
            "WiFi": "free",
            "RestaurantsDelivery": None,
            "RestaurantsReservations": False,
        },
        "categories": "Noodles, Ramen, Restaurants",
    }
)


@pytest.mark.parametrize(
    "claim",
    [
        "Harbor Noodle Bar offers outdoor seating.",
        "Harbor Noodle Bar provides free WiFi.",
        "Harbor Noodle Bar has received a rating of 4.5 stars.",
    ],
)
async def test_a_relation_verb_a_record_confirms_only_by_its_fields_is_sent_on(claim):
    v = await _judged(claim, (NOODLE_BAR,))
    assert v.verdict is Verdict.SUPPORTED and not settles_offline(v)


@pytest.mark.parametrize(
    "claim",
    [
        "Harbor Noodle Bar offers outdoor seating and delivery.",
        "Harbor Noodle Bar accepts reservations.",
    ],
)
async def test_a_record_that_leaves_a_field_null_or_denies_it_settles_nothing(claim):
    assert not settles_offline(await _judged(claim, (NOODLE_BAR,)))

"""Offline relevance: whole words from the query, on a scale where good answers score well."""

from __future__ import annotations

import pytest

from ragaliq.offline.relevance import NEAR_PREFIX, rate_relevance


def test_the_reasoning_names_whole_words_as_the_query_writes_them():
    rated = rate_relevance(
        "Which thermostat works with a Lennox heat pump?",
        "The Nestor T3 works with heat pumps.",
    )
    assert "Lennox" in rated.reasoning
    assert "thermostat" in rated.reasoning
    assert "com," not in rated.reasoning and "thermostat," in rated.reasoning + ","


@pytest.mark.parametrize(
    ("query", "response"),
    [
        (
            "How long does installation take?",
            "Most people can fit it on their own in roughly half an hour.",
        ),
        ("Do I have to pay a subscription to use the app?", "No. The app is free."),
        ("How long is the warranty?", "It comes with a 5-year limited warranty."),
        (
            "Can I get a refund on a monthly plan?",
            "Yes, monthly plans are refundable within 14 days.",
        ),
    ],
)
def test_a_good_answer_scores_well(query, response):
    rated = rate_relevance(query, response)
    assert rated.score >= 0.8, rated.reasoning


def test_an_answer_about_something_else_scores_low():
    rated = rate_relevance(
        "How long is the warranty on the thermostat?",
        "Express shipping arrives in 1 to 2 business days.",
    )
    assert rated.score < 0.5, rated.reasoning
    assert "not taken up: warranty, thermostat" in rated.reasoning


def test_a_question_for_a_figure_needs_a_figure():
    with_figure = rate_relevance("How much does the Pro plan cost?", "The Pro plan costs $20.")
    without = rate_relevance("How much does the Pro plan cost?", "The Pro plan is good value.")
    assert with_figure.score > without.score
    assert "gives no figure" in without.reasoning


@pytest.mark.parametrize("query", ["What is it?", "How?", "Can you tell me?"])
def test_a_query_without_key_terms_is_not_rated_never_a_perfect_score(query):
    rated = rate_relevance(query, "Annual plans can be refunded within 14 days.")
    assert rated.score is None
    assert "no key terms" in rated.reasoning and "cannot rate" in rated.reasoning


def test_the_relevance_of_an_answer_to_a_query_without_key_terms_is_skipped():
    from ragaliq import evaluate
    from tests.conftest import make_case, make_config

    config = make_config(judge={"provider": "offline", "cache": False})
    report = evaluate([make_case(query="What is it?")], config=config, env={})
    result = report.cases[0].results["relevance"]
    assert (result.status, result.score, result.passed) == ("skipped", None, None)
    assert "no key terms" in result.reasoning


@pytest.mark.parametrize(
    ("query", "response", "taken"),
    [
        # plurals: "bike" in the query, "bikes" in the answer (too short to share a prefix)
        (
            "How long do I have to return a bike?",
            "Unused bikes may be sent back within 30 days.",
            "bike",
        ),
        ("Do you sell cars?", "We sell two used car models.", "cars"),
        # tenses: "ship" / "shipped", doubled consonant; "fit" / "fitted"
        ("Where do you ship to?", "We shipped to Canada and Mexico last year.", "ship"),
        ("Who fits the pedals?", "Our mechanics fitted them before delivery.", "fits"),
        # -ies / -y
        ("Which battery lasts longest?", "Our batteries last about 60 km.", "battery"),
    ],
)
def test_plurals_and_tenses_take_up_a_key_term(query, response, taken):
    rated = rate_relevance(query, response)
    assert rated.score is not None and rated.score > 0
    assert f"({taken}" in rated.reasoning or f", {taken}" in rated.reasoning, rated.reasoning


@pytest.mark.parametrize(
    ("query", "response", "asked", "answered"),
    [
        (
            "Which cities do you deliver to?",
            "We deliver in every city in Belgium.",
            "cities",
            "city",
        ),
        (
            "What taxes do I pay on an order?",
            "Each order carries a sales tax of 21%.",
            "taxes",
            "tax",
        ),
        ("Did you try the saddle?", "We tried every saddle we sell.", "try", "tried"),
        ("Do you sell boxes?", "Every bike ships in a cardboard box.", "boxes", "box"),
        ("How long do the tyres last?", "A tyre lasts about 3,000 km.", "tyres", "tyre"),
        ("Which routes are mapped?", "Every route has a map online.", "mapped", "map"),
    ],
)
def test_a_key_term_only_its_inflection_takes_up_is_taken_up(query, response, asked, answered):
    # Neither the same word nor a shared prefix: only taking the ending off finds the term.
    words = [word.strip(".,") for word in response.lower().split()]
    assert answered in words and asked not in words
    short = min(len(asked), len(answered)) < NEAR_PREFIX
    assert short or asked[:NEAR_PREFIX] != answered[:NEAR_PREFIX]
    rated = rate_relevance(query, response)
    assert rated.score is not None and rated.score > 0
    assert f"({asked}" in rated.reasoning or f", {asked}" in rated.reasoning, rated.reasoning


def test_an_answer_about_something_else_still_scores_nothing():
    rated = rate_relevance(
        "How long do I have to return a bike?", "Our shop opens at 9 on Saturdays."
    )
    assert rated.score == 0.0
    assert "not taken up: return, bike" in rated.reasoning

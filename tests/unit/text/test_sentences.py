"""Claims as a person would write them: tables, code, line breaks, quotes and clauses."""

from __future__ import annotations

import subprocess
import sys

import pytest

from ragaliq.text.sentences import split_clauses, split_context, split_sentences
from ragaliq.text.words import drop_answer_word


def test_a_table_is_one_claim_per_row_each_keeping_its_header():
    text = (
        "Our plans:\n\n"
        "| Plan | Price | Storage |\n"
        "|------|------:|---------|\n"
        "| Pro | $20 | 2 TB |\n"
        "| **Team** | $50 | |\n"
    )
    assert split_sentences(text) == [
        "Our plans:",
        "Plan: Pro; Price: $20; Storage: 2 TB",
        "Plan: Team; Price: $50",
    ]


def test_a_fenced_code_block_is_not_a_claim():
    text = "Install the CLI.\n```bash\npip install ragaliq\nragaliq init\n```\nThen run it."
    assert split_sentences(text) == ["Install the CLI.", "Then run it."]


def test_an_indented_code_block_is_not_a_claim():
    text = "Install the CLI:\n\n    pip install ragaliq\n    ragaliq init\n\nIt writes a config."
    assert split_sentences(text) == ["Install the CLI:", "It writes a config."]


def test_the_context_keeps_code_and_headings_as_text():
    text = "# Setup\n```\npip install ragaliq\n```\nIt installs one command, and it is free."
    assert split_context(text) == [
        "Setup",
        "pip install ragaliq",
        "It installs one command, and it is free.",
    ]


def test_a_line_without_final_punctuation_ends_its_claim():
    text = "Key facts\nFree shipping on orders over $50\nReturns within 30 days\nCall us any time."
    assert split_sentences(text) == [
        "Key facts",
        "Free shipping on orders over $50",
        "Returns within 30 days",
        "Call us any time.",
    ]


def test_a_hard_wrapped_sentence_stays_one_claim():
    assert split_sentences("The Pro plan costs $20 a month\nand includes 2 TB of storage.") == [
        "The Pro plan costs $20 a month and includes 2 TB of storage."
    ]


def test_list_items_without_full_stops_stand_alone():
    text = "What you get:\n- 2 TB of storage\n- Priority support\n* Version history for 180 days"
    assert split_sentences(text) == [
        "What you get:",
        "2 TB of storage",
        "Priority support",
        "Version history for 180 days",
    ]


def test_headings_are_context_not_claims():
    text = "## Pricing\nThe Pro plan costs $20.\n**Storage**\nIt includes 2 TB."
    assert split_sentences(text) == ["The Pro plan costs $20.", "It includes 2 TB."]


def test_a_sentence_ending_inside_a_quote_keeps_its_closing_quote():
    assert split_sentences('The label says "Dishwasher safe." It is not oven safe.') == [
        'The label says "Dishwasher safe."',
        "It is not oven safe.",
    ]
    assert split_sentences("She called it \u201cthe best plan.\u201d Prices rose in May.") == [
        "She called it \u201cthe best plan.\u201d",
        "Prices rose in May.",
    ]


def test_a_quote_with_several_sentences_stays_whole():
    text = 'The sign reads "Closed on Sundays. Open Monday to Friday." It was put up in 2020.'
    assert split_sentences(text) == [
        'The sign reads "Closed on Sundays. Open Monday to Friday."',
        "It was put up in 2020.",
    ]


@pytest.mark.parametrize(
    ("sentence", "clauses"),
    [
        (
            "The company was founded in 2015, but it moved to Lisbon in 2019.",
            ["The company was founded in 2015.", "It moved to Lisbon in 2019."],
        ),
        (
            "Refunds take 14 days, and the Business plan costs $12.",
            ["Refunds take 14 days.", "The Business plan costs $12."],
        ),
        (
            "The app is free; the thermostat costs $129.",
            ["The app is free.", "The thermostat costs $129."],
        ),
        (
            "The app is free, but the thermostat costs $129, and Nestor charges $50 to fit it.",
            ["The app is free.", "The thermostat costs $129.", "Nestor charges $50 to fit it."],
        ),
    ],
)
def test_independent_clauses_are_split(sentence, clauses):
    assert split_sentences(sentence) == clauses


@pytest.mark.parametrize(
    "sentence",
    [
        "We ship to Paris, London, and Rome.",
        "It syncs files, and keeps versions for 30 days.",
        "Support is available by email, and by phone on weekdays.",
        "The plan was great, and so was the support.",
        "Opening hours: Monday; Tuesday; Friday.",
        "Click Save, and the file syncs.",
        "The plan includes cheese, and wine costs extra.",
    ],
)
def test_lists_and_shared_subjects_stay_one_claim(sentence):
    assert split_clauses(sentence) == [sentence]


def test_abbreviations_decimals_and_numbered_no_do_not_end_a_sentence():
    text = "Dr. Smith paid $3.50 for approx. two items, e.g. apples. See No. 5 for details."
    assert split_sentences(text) == [
        "Dr. Smith paid $3.50 for approx. two items, e.g. apples.",
        "See No. 5 for details.",
    ]


def test_a_leading_no_is_its_own_sentence():
    assert split_sentences("No. The app and all thermostat features are free.") == [
        "No.",
        "The app and all thermostat features are free.",
    ]


@pytest.mark.parametrize(
    ("claim", "read"),
    [
        ("No, monthly plans are refundable.", "Monthly plans are refundable."),
        ("Yes. The thermostat works with heat pumps.", "The thermostat works with heat pumps."),
        ("No monthly plan is refundable.", "No monthly plan is refundable."),
        ("No.", "No."),
    ],
)
def test_a_leading_yes_or_no_is_an_answer_not_part_of_the_claim(claim, read):
    assert drop_answer_word(claim) == read


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "Backups run nightly at 3 a.m. Restores take about an hour.",
            ["Backups run nightly at 3 a.m.", "Restores take about an hour."],
        ),
        (
            "Phone lines close at 6 p.m. Calls after that go to voicemail.",
            ["Phone lines close at 6 p.m.", "Calls after that go to voicemail."],
        ),
        (
            "The frame is made by Larkspur Ltd. Larkspur also builds wheels.",
            ["The frame is made by Larkspur Ltd.", "Larkspur also builds wheels."],
        ),
        (
            "We ship anywhere in the U.K. Delivery takes two days.",
            ["We ship anywhere in the U.K.", "Delivery takes two days."],
        ),
        (
            "The promotion ends in Sept. Prices go back up afterwards.",
            ["The promotion ends in Sept.", "Prices go back up afterwards."],
        ),
        (
            "It was made by Acme Inc. It ships worldwide.",
            ["It was made by Acme Inc.", "It ships worldwide."],
        ),
        (
            "He lives on Elm St. The shop is next door.",
            ["He lives on Elm St.", "The shop is next door."],
        ),
        ("Use plan B. It costs less.", ["Use plan B.", "It costs less."]),
        ("What about Jan? It is free.", ["What about Jan?", "It is free."]),
        ("See Dr. Nguyen. The clinic opens at 9.", ["See Dr. Nguyen.", "The clinic opens at 9."]),
    ],
)
def test_an_abbreviation_ends_a_sentence_when_a_new_one_follows(text, expected):
    assert split_sentences(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "Support opens at 9 a.m. Eastern time.",
        "Lines open at 9 a.m. PT on weekdays.",
        "Orders placed by 5 p.m. Friday ship the same day.",
        "She joined the U.S. Navy in 2001.",
        "It was sent via the U.S. Postal Service.",
        "Ask Dr. Okafor about it.",
        "They climbed Mt. Kenya last year.",
        "We stayed in St. Ives for a week.",
        "C. S. Lewis wrote it.",
        "Acme Co. Ltd. makes it.",
        "The shop is open Wed. Thu. and Fri.",
        "Fruit, e.g. The apples, is fresh.",
    ],
)
def test_a_name_that_carries_on_past_an_abbreviation_stays_one_sentence(text):
    assert split_sentences(text) == [text]


HANG_GUARD_S = 120
"""Far above the second or so a linear splitter takes; the quadratic one took many minutes."""


@pytest.mark.parametrize(
    "unit",
    [
        'He said "yes. no." and then "maybe. " It was. ',
        "the plan costs $12, and the team grows, and it ships fast, and it works, ",
        "Dr. Smith met Mr. Jones at 4 p.m. on Jan. 5 e.g. at the office approx. two times etc. ",
        "A. B. C. D. E. F. G. ",
        "Alpha Beta said Gamma Delta met Epsilon Zeta in Paris and London with Rome ",
    ],
)
def test_a_very_long_response_is_split_without_hanging(unit):
    # A hang guard, not a timing assertion: 400,000 characters split and judged offline in a
    # subprocess.
    code = (
        "import asyncio\n"
        "from ragaliq.offline import OfflineJudge, extract_sentence_claims\n"
        "from ragaliq.models import TestCase\n"
        f"text = {unit!r} * (400_000 // {len(unit)})\n"
        "claims = extract_sentence_claims(text)\n"
        "case = TestCase(id='long', query='', context=('The plan costs $12.',), response=text)\n"
        "asyncio.run(OfflineJudge().verify_claims(case, claims))\n"
        "print(len(claims))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        timeout=HANG_GUARD_S,
    )
    assert int(done.stdout) > 0


def test_sentences_glued_without_a_space_end_at_their_stop_but_not_after_an_initial():
    text = (
        'The ferry runs hourly.Tickets cost 4 euros in 2024.The pier reopened in "Spring".'
        "Boats leave from J.Smith Quay. The fare is 3.5 euros."
    )
    assert split_context(text) == [
        "The ferry runs hourly.",
        "Tickets cost 4 euros in 2024.",
        'The pier reopened in "Spring".',
        "Boats leave from J.Smith Quay.",
        "The fare is 3.5 euros.",
    ]

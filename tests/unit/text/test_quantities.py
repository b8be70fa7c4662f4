"""Figures as a reader checks them: one figure however it is written, and no figure in a name."""

from __future__ import annotations

import pytest

from ragaliq.text.quantities import quantities
from ragaliq.text.words import calendar_words, drop_answer_word, names, numbers


def one(text: str):
    found = quantities(text)
    assert len(found) == 1, found
    return found[0]


def states(context: str, claim: str) -> bool:
    return all(any(q.stated_by(c) for c in quantities(context)) for q in quantities(claim))


@pytest.mark.parametrize(
    ("context", "claim"),
    [
        ("It needs a 24V C-wire.", "a 24-volt wire"),
        ("It needs a 24V C-wire.", "24 volts"),
        ("Returns within 60 days.", "within sixty days"),
        ("Returns within 60 days.", "within two months"),
        ("It lasts 12 months.", "within a year"),
        ("The budget is $1.2 million.", "$1,200,000"),
        ("Savings of 12%.", "twelve percent"),
        ("Savings of 12%.", "12 per cent"),
        ("It takes 30 minutes.", "half an hour"),
        ("It takes 90 minutes.", "an hour and a half"),
        ("Storage is 2 TB.", "2,000 GB"),
        ("It draws 1500W.", "1.5 kW"),
        ("Heat it to 41 °F.", "5 °C"),
        ("Ships in 1 to 2 business days.", "1 day"),
        ("The sale ends on January 15.", "Jan 15"),
        ("Price: 129", "$129"),
        ("It starts at 7:30 a.m.", "7.30 am"),
        ("a weeklong trip", "for a week"),
        ("She died at age 19.", "a 19-year-old"),
    ],
)
def test_one_figure_however_it_is_written(context, claim):
    assert states(context, claim)


@pytest.mark.parametrize(
    ("context", "claim"),
    [
        ("Returns within 60 days.", "within six months"),
        ("The code expires after 30 minutes.", "two hours"),
        ("The code expires after 30 minutes.", "forty-five minutes"),
        ("Storage is 2 TB.", "2 GB"),
        ("The team has 12 engineers.", "$12"),
        ("Updates install between 2 and 4 a.m.", "2 hours"),
        ("It opens at 4 a.m.", "4 p.m."),
    ],
)
def test_a_different_amount_is_not_stated(context, claim):
    assert not states(context, claim)


@pytest.mark.parametrize("text", ["the T3 model", "a 4K screen", "in the 1990s", "MP3 files"])
def test_codes_and_model_names_are_not_figures(text):
    assert quantities(text) == ()


def test_a_capitalised_word_after_a_number_is_a_name_not_a_unit():
    assert one("the 1965 Watts riots").unit is None


def test_a_range_gives_its_unit_to_both_ends():
    low, high = quantities("It arrives in 1 to 2 business days.")
    assert (low.unit, high.unit) == ("days", "days")


def test_numbers_reads_units_and_words():
    assert numbers("a 24V wire, sixty days, one of them") == {"24", "60"}


def test_weekdays_and_months_are_dates_not_names():
    assert calendar_words("Open Mon to Fri. from Jan. 5; sat down. May we?") == [
        ("monday", "Mon"),
        ("friday", "Fri"),
        ("january", "Jan"),
    ]
    assert names("We open on Mon and close in Sept for Ines Duarte.") == ["ines", "duarte"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Send the T3 back within 60 days.", []),
        ("Yes, click Settings and open Devices.", ["settings", "devices"]),
        ("Wine - Drinking a glass helps.", []),
        ("Charles Babbage built it.", ["babbage"]),
        ("It was built by Charles Babbage.", ["charles", "babbage"]),
    ],
)
def test_the_first_word_of_a_sentence_or_list_item_is_never_a_name(text, expected):
    assert names(drop_answer_word(text)) == expected

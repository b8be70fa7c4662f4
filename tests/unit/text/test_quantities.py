"""Figures as a reader checks them: one figure however it is written, and no figure in a name."""

from __future__ import annotations

import pytest

from ragaliq.text import quantities as quantities_module
from ragaliq.text import words as words_module
from ragaliq.text.quantities import DURATION_PHRASES, quantities
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
        ("The pump runs on a 12V supply.", "a 12-volt supply"),
        ("The pump runs on a 12V supply.", "12 volts"),
        ("Exchanges within 90 days.", "within ninety days"),
        ("Exchanges within 90 days.", "within three months"),
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
        ("The offer ends on March 3.", "Mar 3"),
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
        ("Exchanges within 90 days.", "within five months"),
        ("The link expires after 20 minutes.", "three hours"),
        ("The link expires after 20 minutes.", "twenty-five minutes"),
        ("Storage is 2 TB.", "2 GB"),
        ("The team has 12 engineers.", "$12"),
        ("Backups run between 1 and 3 a.m.", "3 hours"),
        ("It opens at 4 a.m.", "4 p.m."),
    ],
)
def test_a_different_amount_is_not_stated(context, claim):
    assert not states(context, claim)


@pytest.mark.parametrize(
    "text", ["the K7 model", "a 4K screen", "in the 1990s", "MP3 files", "COVID-19 rules"]
)
def test_codes_and_model_names_are_not_figures(text):
    assert quantities(text) == ()


def test_a_capitalised_word_after_a_number_is_a_name_not_a_unit():
    assert one("the 1965 Watts riots").unit is None


def test_a_range_gives_its_unit_to_both_ends():
    low, high = quantities("It arrives in 1 to 2 business days.")
    assert (low.unit, high.unit) == ("days", "days")


def test_numbers_reads_units_and_words():
    assert numbers("a 12V pump, ninety days, one of them") == {"12", "90"}


def test_weekdays_and_months_are_dates_not_names():
    assert calendar_words("Open Mon to Fri. from Jan. 5; sat down. May we?") == [
        ("monday", "Mon"),
        ("friday", "Fri"),
        ("january", "Jan"),
    ]
    assert names("We open on Mon and close in Sept for Ines Duarte.") == ["ines", "duarte"]


@pytest.mark.parametrize(
    ("text", "dates"),
    [
        ("The sale ends on Sept 30.", ["september"]),
        ("Lessons run Tues and Thurs evenings.", ["tuesday", "thursday"]),
        ("The desk is staffed Mon-Fri.", ["monday", "friday"]),
        ("Bookings open Jan-Mar each year.", ["january", "march"]),
        ("Pick-ups are on Sat. and Sun. mornings.", ["saturday", "sunday"]),
        ("Courses start in Oct. and Feb.", ["october", "february"]),
    ],
)
def test_a_weekday_or_month_abbreviation_is_a_date_never_a_name(text, dates):
    assert names(text) == []
    assert [full for full, _ in calendar_words(text)] == dates


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Ship the blender back within 90 days.", []),
        ("Yes, click Settings and open Devices.", ["settings", "devices"]),
        ("Wine - Drinking a glass helps.", []),
        ("Charles Babbage built it.", ["babbage"]),
        ("It was built by Charles Babbage.", ["charles", "babbage"]),
        ("We serve Italian-style pizza.", ["italian"]),
        ("It was a Vega-Orion venture.", ["vega", "orion"]),
    ],
)
def test_the_first_word_of_a_sentence_or_list_item_is_never_a_name(text, expected):
    assert names(drop_answer_word(text)) == expected


def _alternatives(pattern: str) -> list[str]:
    """The top-level alternatives of a pattern (``a|b(c|d)`` is ``a`` and ``b(c|d)``)."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(pattern):
        if ch == "(" and pattern[i - 1 : i] != "\\":
            depth += 1
        elif ch == ")" and pattern[i - 1 : i] != "\\":
            depth -= 1
        elif ch == "|" and depth == 0 and pattern[i - 1 : i] != "\\":
            parts.append(pattern[start:i])
            start = i + 1
    return [*parts, pattern[start:]]


def test_every_long_pattern_holds_a_hint_its_quick_test_looks_for():
    """A text is read with a long pattern only when it holds a hint, so each way the pattern
    can match must write one of the hints literally."""
    checks = [
        ([p for p, _ in DURATION_PHRASES], quantities_module._DURATION_HINTS),
        ([p for p, _ in words_module._PHRASES], words_module.PHRASE_HINTS),
    ]
    for patterns, hints in checks:
        for pattern in patterns:
            for alternative in _alternatives(pattern):
                assert any(hint in alternative for hint in hints), alternative
    numbers = quantities_module._NUMBER_HINTS
    assert all(any(h in word for h in numbers) for word in quantities_module.NUMBER_WORDS)
    figures = quantities_module._FIGURE_HINTS
    assert all(any(h in word for h in figures) for word in quantities_module._HINTS)


@pytest.mark.parametrize(
    "text",
    [
        "The ferry leaves every HALF HOUR.",
        "Doors open at nine and close at ELEVEN.",
        "A three-quarters of an hour wait, then ninety-nine steps.",
        "The warranty runs for a decade, twenty years for the frame.",
        "Shipping takes 4 days; pickup takes place on Monday.",
        "Delivery is FREE OF CHARGE on weekends; returns cost nothing.",
        "The crew fixed it on their own in an hour and a half.",
        "No figure here at all.",
    ],
)
def test_the_quick_tests_change_nothing_that_is_read(text, monkeypatch):
    """Figures and phrases read with the quick tests are those read without them."""
    with_tests = (quantities(text), words_module._read_phrases(text))
    for module, name in (
        (quantities_module, "_FIGURE_HINTS"),
        (quantities_module, "_NUMBER_HINTS"),
        (quantities_module, "_DURATION_HINTS"),
        (words_module, "PHRASE_HINTS"),
    ):
        monkeypatch.setattr(module, name, ("",))  # "" is in every text: no quick test
    quantities.cache_clear()
    words_module._read_phrases.cache_clear()
    try:
        assert (quantities(text), words_module._read_phrases(text)) == with_tests
    finally:
        quantities.cache_clear()
        words_module._read_phrases.cache_clear()

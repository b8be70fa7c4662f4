"""Claim ids: folded only by case, width, whitespace and a trailing full stop, nothing else.

Pairs are generated: claims that differ in one character a reader checks (a sign, a decimal
point, a superscript, a range, a currency, a unit) get different ids however they are folded
otherwise; claims that differ only in the named folds get the same id.
"""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragaliq.gate.acceptance import claim_id, claim_key

# Each template has one slot; each group lists fillers that a reader tells apart.
TEMPLATES = (
    "The pressure is {} and stays there.",
    "Refunds: {}",
    "{} is the figure the contract names.",
    "It costs {} per seat, billed yearly",
)
MEANINGFUL = {
    "signs": ("5 °C", "-5 °C", "\u22125 °C", "+5 °C", "\u00b15 °C", "\u20135 °C"),
    "decimal points": (
        "5 bar",
        ".5 bar",
        "0.5 bar",
        "5. bar",
        "5.0 bar",
        "1.5 bar",
        "15 bar",
        "1,5 bar",
        "1\u00b75 bar",
    ),
    "superscripts": ("10\u2076", "106", "10^6", "10\u2086", "m\u00b2", "m2", "x\u00b9", "x1"),
    "ranges": ("5-10", "510", "5\u201310", "5\u201410", "5 to 10", "5/10", "5\u202610"),
    "currencies": ("5 \u20ac", "5 $", "5 \u00a3", "5 \u00a5", "5", "$5", "US$5", "5 \u20bf"),
    "units": ("5 km", "5 kn", "5 m", "5 \u00b5m", "5 mm", "5 \u00b0F", "5 K", "5 \u00b0C", "5%"),
    "separators": ("1.000", "1,000", "1 000", "1000", "1'000", "9:30", "930"),
}


def _fold_variants(text: str) -> list[str]:
    """The same claim folded in each named way: case, width, whitespace, a trailing full stop."""
    wide = "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)
    return [
        text,
        text.upper(),
        text.lower(),
        text.swapcase(),
        wide,
        wide.upper(),
        "  " + text.replace(" ", " \t\u00a0 ") + "\n",
        text.replace(" ", "\u3000"),
        text.rstrip(".") + ".",
        text.rstrip(".") + " \uff0e",
        text.rstrip(".") + "\u3002",
        text.rstrip("."),
    ]


def _pairs_that_differ() -> list[tuple[str, str, str]]:
    pairs = []
    for group, fillers in MEANINGFUL.items():
        for one, other in itertools.combinations(fillers, 2):
            pairs.extend(
                (group, template.format(one), template.format(other)) for template in TEMPLATES
            )
    return pairs


DIFFERENT = _pairs_that_differ()


def test_every_pair_differing_in_one_meaningful_character_gets_two_ids():
    assert len(DIFFERENT) > 500
    clashes = [
        (group, one, other)
        for group, one, other in DIFFERENT
        if claim_id("faq", one) == claim_id("faq", other)
    ]
    assert clashes == []


@pytest.mark.parametrize("group", sorted(MEANINGFUL))
def test_no_fold_of_one_claim_meets_any_fold_of_another(group):
    """However each side is folded, a meaningful difference keeps the ids apart."""
    for template in TEMPLATES:
        keys = {}
        for filler in MEANINGFUL[group]:
            text = template.format(filler)
            own = {claim_key(v) for v in _fold_variants(text)}
            for other, their in keys.items():
                assert not own & their, (group, text, other)
            keys[text] = own


EVERY_CLAIM = [t.format(f) for t in TEMPLATES for fillers in MEANINGFUL.values() for f in fillers]


@pytest.mark.parametrize("text", EVERY_CLAIM)
def test_every_fold_of_a_claim_gets_its_one_id(text):
    ids = {claim_id("faq", variant) for variant in _fold_variants(text)}
    assert len(ids) == 1, ids


def test_the_cases_the_id_once_folded_are_told_apart():
    assert claim_id("faq", "The volume is 10\u2076 litres.") != claim_id(
        "faq", "The volume is 106 litres."
    )
    assert claim_id("faq", "Keep it at .5 bar.") != claim_id("faq", "Keep it at 5 bar.")


def test_only_the_named_folds_apply():
    assert claim_key("\uff33upport  is\tFREE\uff0e") == "support is free"
    assert claim_key("Rates: 5-10%.") == "rates: 5-10%"
    assert claim_key("Support\u200b is free!") == "support\u200b is free!"  # kept as written
    assert claim_key("A well-known plan, renewed.") == "a well-known plan, renewed"
    assert claim_key("Wait...") == "wait.."  # one full stop, not every one
    assert claim_key(" . ") == ""
    assert claim_id("faq", "Support is free") != claim_id("other", "Support is free")


_ASCII_CLAIM = st.text(
    alphabet=st.characters(min_codepoint=0x21, max_codepoint=0x7E), min_size=1, max_size=30
)


@given(st.lists(_ASCII_CLAIM, min_size=1, max_size=6), st.data())
def test_folding_case_width_and_spacing_never_changes_an_id(words, data):
    text = " ".join(words)
    variant = "".join(
        data.draw(
            st.sampled_from([c, c.upper(), c.lower(), chr(ord(c) + 0xFEE0)])
            if c != " "
            else st.sampled_from([" ", "  ", "\t", "\u3000", "\n \u00a0"])
        )
        for c in text
    )
    assert claim_id("faq", text) == claim_id("faq", variant)


@given(_ASCII_CLAIM, st.integers(min_value=0, max_value=29), st.sampled_from("+-.,%$/:^'"))
def test_inserting_a_sign_or_a_symbol_always_changes_an_id(text, at, symbol):
    at = min(at, len(text))
    changed = text[:at] + symbol + text[at:]
    if changed.rstrip(".") == text.rstrip("."):
        return  # only a trailing full stop, which is one of the named folds
    assert claim_id("faq", text) != claim_id("faq", changed)

"""The offline judge accuses only with a reason that is true of its context, and says which.

Every kind of finding has a case here, and each test checks the reason against the context: the
claim's side of it is in the claim and nowhere in the context (in any unit or spelling), the
context's side is in the context. A claim the judge can neither ground nor fault is not
verifiable offline, and a faithful rewording is never accused.
"""

from __future__ import annotations

import json
import re

import pytest

from ragaliq.judges import OfflineJudge
from ragaliq.judges.cascade import settles_offline
from ragaliq.models import NOT_VERIFIABLE, ClaimVerdict, Verdict
from ragaliq.offline.opposites import OPPOSITES
from ragaliq.text.quantities import quantities
from ragaliq.text.words import is_negated, word_key
from tests.conftest import make_case

CONTEXT = (
    "The Solano kettle holds 1.7 litres and boils water in 4 minutes. It runs on 230V.",
    "Orders ship within 2 business days. Delivery is free in Ireland.",
    "The warranty lasts two years and covers the heating element.",
    "Returns must include the original box. Unopened kettles get a full refund.",
    "Brennan Appliances acquired Solano Home in 2021.",
    "The showroom is open Monday to Friday. Most orders arrive within three days.",
    "The design team has 12 engineers and is led by Ines Duarte.",
    "The kettle does not have a keep-warm mode.",
)
RECORD = json.dumps(
    {
        "name": "Solano Café",
        "city": "Cork",
        "stars": 4.0,
        "attributes": {"OutdoorSeating": False, "WiFi": "free", "Music": None},
    }
)


async def verdict_of(claim: str, context: tuple[str, ...] = CONTEXT) -> ClaimVerdict:
    result = await OfflineJudge().verify_claims(make_case(context=context), [claim])
    return result.verdicts[0]


def quoted(reason: str) -> list[str]:
    return re.findall(r'"([^"]+)"', reason)


def hallucinated(verdict: ClaimVerdict) -> bool:
    return verdict.verdict is not Verdict.SUPPORTED and verdict.verifiable


def in_text(part: str, text: str) -> bool:
    return part.lower() in text.lower()


def states(context: str, figure: str) -> bool:
    """Whether the context states the figure, in any unit or spelling."""
    return any(q.stated_by(c) for q in quantities(figure) for c in quantities(context))


ALL = " ".join(CONTEXT)


@pytest.mark.parametrize(
    ("claim", "verdict"),
    [
        ("The Solano kettle holds 2 litres.", Verdict.CONTRADICTED),
        ("The Solano kettle boils water in six minutes.", Verdict.CONTRADICTED),
        ("Orders ship within a week.", Verdict.CONTRADICTED),
        ("The kettle runs on 110 volts.", Verdict.CONTRADICTED),
        ("The warranty lasts five years.", Verdict.CONTRADICTED),
        ("A spare filter costs $12.", Verdict.NOT_ENOUGH_INFO),
        ("The Solano kettle has seven heat settings.", Verdict.NOT_ENOUGH_INFO),
    ],
)
async def test_a_figure_the_context_states_nowhere_is_named_with_what_it_says(claim, verdict):
    v = await verdict_of(claim)
    assert v.verdict is verdict, v.reason
    said, *context_says = quoted(v.reason)
    assert in_text(said, claim)
    assert not states(ALL, said), f"{said!r} is in the context: {v.reason}"
    for figure in context_says:
        if figure != said:
            assert in_text(figure, ALL), v.reason


async def test_a_count_the_closest_sentence_gives_otherwise_is_contradicted():
    v = await verdict_of("The design team has fifteen engineers.")
    assert v.verdict is Verdict.CONTRADICTED
    said, context_says = quoted(v.reason)
    assert in_text(said, "The design team has fifteen engineers.")
    assert in_text(context_says, ALL) and not in_text(said, ALL)


@pytest.mark.parametrize(
    "claim",
    [
        "The kettle runs on 230 volts.",
        "It runs on a 230-volt supply.",
        "The Solano kettle boils water in four minutes.",
        "Orders ship within two business days.",
        "The warranty lasts 24 months.",
        "The kettle holds 1.7 l of water.",
        "The design team has twelve engineers.",
        "Brennan Appliances and Solano Home are two companies.",
    ],
)
async def test_the_same_figure_in_other_units_or_words_is_no_finding(claim):
    v = await verdict_of(claim)
    assert not hallucinated(v), v.reason


async def test_a_name_the_context_lacks_is_named_and_truly_absent():
    claim = "The design team is led by Ines Duarte and Pavel Novak."
    v = await verdict_of(claim)
    assert hallucinated(v)
    names = v.reason.split(":", 1)[1].strip(" .").split(", ")
    assert names == ["Pavel", "Novak"]
    assert all(in_text(n, claim) and not in_text(n, ALL) for n in names)


@pytest.mark.parametrize(
    "claim",
    [
        "Send the kettle back in its original box.",
        "Yes, check the showroom from Mon to Fri.",
        "Use the kettle with a 230V socket.",
        "Download the manual before you return it.",
    ],
)
async def test_a_first_word_weekday_or_month_is_not_a_name(claim):
    v = await verdict_of(claim)
    assert "Names not found" not in v.reason, v.reason


SALE = ("The spring sale runs from March 3 to April 14. The showroom is open Monday to Friday.",)


@pytest.mark.parametrize(
    "claim",
    [
        "The spring sale runs from Mar 3 to Apr 14.",
        "The spring sale ends in Apr.",
        "The showroom is open Mon-Fri.",
        "Visit the showroom Mon. to Fri.",
    ],
)
async def test_a_weekday_or_month_abbreviation_is_read_as_the_date_it_names(claim):
    v = await verdict_of(claim, context=SALE)
    assert "Names not found" not in v.reason, v.reason
    assert not hallucinated(v), v.reason


@pytest.mark.parametrize(
    "claim",
    [
        "The shop is at 12 Harbour Avenue in Monterey, California.",
        "Drop parcels at the Dock Road depot in New York.",
    ],
)
async def test_a_name_the_context_writes_short_is_known(claim):
    context = ("The shop is at 12 Harbour Ave, Monterey, CA. Parcels go to the Dock Rd depot, NY.",)
    v = await verdict_of(claim, context=context)
    assert "Names not found" not in v.reason, v.reason


@pytest.mark.parametrize(
    ("claim", "sentence"),
    [
        ("The kettle has a keep-warm mode.", CONTEXT[7]),
        ("Unopened kettles do not get a full refund.", "Unopened kettles get a full refund."),
        ("The Solano kettle does not run on 230V.", "It runs on 230V."),
    ],
)
async def test_a_flipped_negation_is_contradicted_quoting_both_sides(claim, sentence):
    v = await verdict_of(claim)
    assert v.verdict is Verdict.CONTRADICTED, v.reason
    assert v.evidence == sentence
    said, context_says = quoted(v.reason)
    assert in_text(said, claim) and in_text(context_says, sentence), v.reason
    assert is_negated(said) != is_negated(context_says), v.reason
    shared = {word_key(w) for w in re.findall(r"[\w-]+", said.lower())} & {
        word_key(w) for w in re.findall(r"[\w-]+", context_says.lower())
    }
    assert shared - {"not", "no"}, v.reason


async def test_a_denied_requirement_is_contradicted():
    claim = "Returns do not need the original box."
    v = await verdict_of(claim)
    assert v.verdict is Verdict.CONTRADICTED
    said, context_says = quoted(v.reason)
    assert in_text(said, claim) and in_text(context_says, ALL)
    assert v.evidence is not None and in_text(context_says, v.evidence)


@pytest.mark.parametrize(
    "claim",
    [
        "Unopened kettles get a partial refund.",
        "The showroom is closed Monday to Friday.",
    ],
)
async def test_an_opposite_word_is_contradicted_from_the_documented_list(claim):
    v = await verdict_of(claim)
    assert v.verdict is Verdict.CONTRADICTED, v.reason
    said, context_says = quoted(v.reason)
    assert in_text(said, claim) and in_text(context_says, ALL)
    assert v.evidence is not None and not in_text(said, v.evidence)
    groups = [line for line in OPPOSITES.splitlines() if "|" in line]
    keys = {word_key(said.lower()), word_key(context_says.lower())}
    assert any(keys <= {word_key(w.strip()) for w in re.split(r"[|/]", line)} for line in groups), (
        keys
    )


GYM = (
    "The climbing wall is open daily until 9 p.m. The locker room stays locked unless a PIN is "
    "entered.",
)


@pytest.mark.parametrize(
    "claim",
    [
        "The climbing wall closes at 9 p.m.",
        "The climbing wall is closed after 9 p.m.",
        "Without a PIN the locker room stays locked.",
        "If no PIN is entered, the locker room stays locked.",
        "The locker room stays locked if you do not enter a PIN.",
    ],
)
async def test_a_state_that_holds_until_a_time_or_unless_a_condition_is_no_opposite(claim):
    v = await verdict_of(claim, context=GYM)
    assert not hallucinated(v), v.reason


@pytest.mark.parametrize(
    ("claim", "kind"),
    [
        ("The climbing wall is closed until 9 p.m.", "closed"),
        ("The climbing wall closes at 7 p.m.", "7 p.m."),
    ],
)
async def test_a_state_said_otherwise_around_the_same_time_is_still_caught(claim, kind):
    v = await verdict_of(claim, context=GYM)
    assert v.verdict is Verdict.CONTRADICTED, v.reason
    said, context_says = quoted(v.reason)[:2]
    assert said == kind and in_text(said, claim) and in_text(context_says, GYM[0])


@pytest.mark.parametrize(
    ("claim", "wide"),
    [
        ("Delivery is free worldwide.", "worldwide"),
        ("All orders arrive within three days.", "All"),
    ],
)
async def test_a_widened_scope_is_partly_supported(claim, wide):
    v = await verdict_of(claim)
    assert v.verdict is Verdict.PARTIALLY_SUPPORTED, v.reason
    said, context_says = quoted(v.reason)
    assert said.lower() == wide.lower()
    assert in_text(context_says, ALL) and not in_text(f" {said} ", f" {ALL} ")


async def test_names_in_swapped_roles_are_contradicted_but_a_passive_is_not():
    v = await verdict_of("Solano Home acquired Brennan Appliances in 2021.")
    assert v.verdict is Verdict.CONTRADICTED
    said, context_says = quoted(v.reason)
    assert in_text(said, "Solano Home acquired Brennan Appliances") and in_text(context_says, ALL)
    passive = await verdict_of("Solano Home was acquired by Brennan Appliances in 2021.")
    assert not hallucinated(passive), passive.reason


ROLES = (
    "Halden Bank audited Pico Farms in 2022. The buyer pays the seller within 30 days. The "
    "ferry sails from Oban to Mull.",
)


@pytest.mark.parametrize(
    ("claim", "faithful"),
    [
        (
            "Halden Bank was audited by Pico Farms in 2022.",
            "Pico Farms was audited by Halden Bank.",
        ),
        ("The seller pays the buyer within 30 days.", "The seller is paid by the buyer."),
        ("The ferry sails from Mull to Oban.", "The ferry sails to Mull from Oban."),
    ],
)
async def test_roles_swapped_in_a_passive_between_parties_or_directions_are_contradicted(
    claim, faithful
):
    v = await verdict_of(claim, context=ROLES)
    assert v.verdict is Verdict.CONTRADICTED, v.reason
    said, context_says = quoted(v.reason)
    assert in_text(said, claim) and in_text(context_says, ROLES[0]), v.reason
    assert said.lower() != context_says.lower()
    assert not hallucinated(await verdict_of(faithful, context=ROLES))


async def test_a_weekday_the_closest_sentence_does_not_name_is_contradicted():
    v = await verdict_of("The showroom is open Monday to Saturday.")
    assert v.verdict is Verdict.CONTRADICTED
    day, sentence = quoted(v.reason)
    assert day == "Saturday" and sentence in CONTEXT[5]
    assert not hallucinated(await verdict_of("The showroom is open on Wednesday."))


@pytest.mark.parametrize(
    ("claim", "verdict", "field"),
    [
        ("Solano Café has outdoor seating.", Verdict.CONTRADICTED, '"OutdoorSeating": false'),
        ("There is live music at Solano Café.", Verdict.NOT_ENOUGH_INFO, '"Music": null'),
    ],
)
async def test_a_record_field_is_quoted_from_the_record(claim, verdict, field):
    v = await verdict_of(claim, context=(RECORD,))
    assert v.verdict is verdict, v.reason
    assert v.evidence == field
    assert field.replace(" ", "") in RECORD.replace(" ", "")


@pytest.mark.parametrize(
    ("claim", "said", "field"),
    [
        ("Solano Café offers paid WiFi.", "paid", '"WiFi": "free"'),
        ("WiFi at Solano Café is paid.", "paid", '"WiFi": "free"'),
        ("Solano Café is located in the city of Dublin.", "Dublin", '"city": "Cork"'),
    ],
)
async def test_a_value_the_record_states_otherwise_is_a_record_finding(claim, said, field):
    v = await verdict_of(claim, context=(RECORD,))
    assert v.verdict is Verdict.CONTRADICTED, v.reason
    assert v.evidence == field and field in v.reason
    assert field.replace(" ", "") in RECORD.replace(" ", "")
    assert in_text(said, claim) and said in v.reason and not in_text(said, RECORD)


async def test_a_name_the_record_lacks_is_a_name_finding_never_settled_offline():
    claim = "Solano Café is in Dublin."
    v = await verdict_of(claim, context=(RECORD,))
    assert hallucinated(v), v.reason
    assert v.reason == "Names not found in the context: Dublin."
    assert not in_text("Dublin", RECORD)
    assert not settles_offline(v)


@pytest.mark.parametrize(
    ("claim", "figure"),
    [
        ("Solano Café seats 40 guests.", "40"),
        ("Solano Café is open until 11 pm.", "11 pm"),
    ],
)
async def test_a_figure_the_record_states_nowhere_is_named(claim, figure):
    v = await verdict_of(claim, context=(RECORD,))
    assert hallucinated(v), v.reason
    assert [q.rstrip(".") for q in quoted(v.reason)] == [figure]
    assert "not occur in the record" in v.reason
    assert in_text(figure, claim) and not states(RECORD, figure)


async def test_a_figure_beside_every_word_of_a_field_is_read_as_that_field():
    record = json.dumps({"product": "Kestrel tent", "warranty_years": 2, "weight_kg": 3.1})
    v = await verdict_of("The Kestrel tent comes with a 5-year warranty.", context=(record,))
    assert v.verdict is Verdict.CONTRADICTED, v.reason
    assert v.evidence == '"warranty_years": 2'
    assert "5" in v.reason and not states(record, "5 years")


async def test_a_claim_with_a_word_the_record_lacks_is_never_settled_offline():
    unknown = await verdict_of("Solano Café is a pizzeria.", context=(RECORD,))
    assert not settles_offline(unknown), unknown.reason
    assert not in_text("pizzeria", RECORD)
    known = await verdict_of("Solano Café is in Cork.", context=(RECORD,))
    assert known.verdict is Verdict.SUPPORTED and settles_offline(known), known.reason


@pytest.mark.parametrize(
    "claim",
    [
        "Solano Café is in Cork.",
        "Solano Café is in the city of Cork.",
        "Solano Café offers free WiFi.",
        "Solano Café has a 4-star rating.",
    ],
)
async def test_what_the_record_states_is_never_accused(claim):
    v = await verdict_of(claim, context=(RECORD,))
    assert not hallucinated(v), v.reason


@pytest.mark.parametrize(
    "claim",
    [
        "The kettle makes excellent tea.",
        "Customers love the matte finish of the kettle.",
    ],
)
async def test_a_claim_it_can_neither_ground_nor_fault_is_not_verifiable_offline(claim):
    v = await verdict_of(claim)
    assert v.verdict is Verdict.NOT_ENOUGH_INFO
    assert v.flags == (NOT_VERIFIABLE,) and not v.verifiable
    assert v.reason.startswith("Not verifiable offline:")


@pytest.mark.parametrize(
    "claim",
    [
        "Yes. Send an unopened kettle back and you get a full refund.",
        "Plug it into a 230-volt socket.",
        "Orders ship within two business days.",
        "The showroom opens Mon. to Fri.",
        "Brennan Appliances bought Solano Home in 2021.",
        "The kettle holds 1.7 litres and boils water in 4 min.",
    ],
)
async def test_a_faithful_rewording_is_never_accused(claim):
    v = await verdict_of(claim)
    assert not hallucinated(v), v.reason

"""Record checks of the offline judge that must not fire on paraphrases of the record."""

from __future__ import annotations

import json

import pytest

from ragaliq.offline.records import parse_record

RECORD = json.dumps(
    {
        "name": "Bistro",
        "attributes": {
            "WiFi": "no",
            "RestaurantsReservations": False,
            "RestaurantsGoodForGroups": True,
            "Ambience": {"casual": True, "trendy": False, "classy": True},
            "BusinessParking": {"garage": False, "street": True, "lot": False, "valet": False},
        },
        "hours": {
            **{day: "9:0-19:0" for day in ("Monday", "Tuesday", "Wednesday", "Thursday")},
            "Friday": "9:0-21:0",
            "Saturday": "8:0-12:0",
        },
    }
)


def check(claim: str):  # type: ignore[no-untyped-def]
    record = parse_record(RECORD)
    assert record is not None
    return record.check(claim)


def test_a_negation_ends_with_its_clause() -> None:
    found = check("However, it does not offer Wi-Fi and its ambiance is described as classy.")
    assert not found.contradicted
    assert any("classy" in c for c in found.confirmed)
    assert any("wifi" in c for c in found.confirmed)


def test_a_segment_with_its_own_verb_is_not_in_an_earlier_negated_list() -> None:
    found = check("Despite the lack of reservations, the venue is favored for groups.")
    assert not found.contradicted
    assert check("There are no reservations, groups or Wi-Fi.").contradicted


def test_days_named_before_with_hours_take_those_hours() -> None:
    found = check(
        "It opens Monday to Thursday, with hours from 9:00 am to 7:00 pm, and on Saturdays "
        "from 8:00 am to 12:00 pm."
    )
    assert not found.contradicted
    assert len(found.confirmed) == 2


def test_narrower_days_with_their_own_hours_are_checked_on_their_own() -> None:
    agreed = check("It is open 9 am to 7 pm Monday to Thursday, until 9 pm on Friday.")
    assert not agreed.contradicted
    wrong = check("It is open 9 am to 7 pm Monday to Friday, until 8 pm on Saturday.")
    assert any("Friday" in c for c in wrong.contradicted)


def test_a_negation_after_a_conjunction_is_about_the_next_item() -> None:
    found = check("The ambience is casual and not particularly trendy.")
    assert not found.contradicted


def test_a_negation_through_the_verb_still_denies() -> None:
    assert not check("Wi-Fi is also not available.").contradicted
    assert check("Wi-Fi is available.").contradicted


def test_no_on_site_parking_but_street_parking_does_not_deny_parking() -> None:
    found = check("It does not have on-site parking, but street parking is available.")
    assert not found.contradicted


def test_catering_to_groups_is_not_a_catering_service() -> None:
    found = check("Catering to vegetarians, it offers a casual ambience.")
    assert not any("catering" in u for u in found.unknown + found.absent)
    assert any("catering" in u for u in check("The restaurant offers catering services.").absent)


PRODUCT = json.dumps(
    {
        "product": "Nestor T3 thermostat",
        "price_usd": 129,
        "warranty_years": 5,
        "features": {"wifi": True, "BatteryBackup": False, "voiceControl": True},
        "color": None,
        "in_stock": True,
        "reviews": [
            {"rating": 5, "text": "Easy to install and works well with our heat pump at home."},
            {"rating": 4, "text": "The app is clear, though the screen is a little dim at night."},
        ],
        "support_hours": {
            day: "9:00-17:00" for day in ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday")
        },
    }
)


def check_product(claim: str):  # type: ignore[no-untyped-def]
    record = parse_record(PRODUCT)
    assert record is not None
    return record.check(claim)


@pytest.mark.parametrize(
    ("claim", "outcome", "words"),
    [
        ("It has a battery backup.", "contradicted", "battery backup"),
        ("It has Wi-Fi and voice control.", "confirmed", "wifi"),
        ("It is not in stock.", "contradicted", "in stock"),
        ("The warranty lasts 2 years.", "contradicted", "warranty"),
        ("The warranty lasts 5 years.", "confirmed", "warranty"),
        ("It costs $129.", "confirmed", "price"),
        ("It comes in a red color.", "unknown", "color"),
        ("It offers free shipping.", "absent", "shipping"),
        ("Support is open Monday to Friday from 9 am to 5 pm.", "confirmed", "hours"),
        ("Support is open on Saturday from 9 am to 5 pm.", "contradicted", "Saturday"),
        ("It has two reviews.", "confirmed", "reviews"),
        ("It has three reviews.", "contradicted", "reviews"),
    ],
)
def test_any_record_is_read_from_its_own_keys_and_values(claim, outcome, words) -> None:
    found = check_product(claim)
    assert any(words in entry for entry in getattr(found, outcome)), found
    others = {"confirmed", "contradicted", "unknown", "absent"} - {outcome}
    if outcome in ("confirmed", "contradicted"):
        others -= {"confirmed"}
    assert not any(getattr(found, other) for other in others if other != "confirmed"), found


def test_nothing_in_the_record_reader_knows_one_dataset() -> None:
    import ast
    from pathlib import Path

    import ragaliq.offline.record_fields as record_fields
    import ragaliq.offline.record_mentions as record_mentions
    import ragaliq.offline.records as records
    import ragaliq.offline.schedule as schedule

    for module in (records, record_fields, record_mentions, schedule):
        tree = ast.parse(Path(module.__file__).read_text(encoding="utf-8"))
        docstrings = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Expr)}
        code = " ".join(
            node.value.lower()
            for node in ast.walk(tree)
            if isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in docstrings
        )
        for name in ("business", "outdoor", "ambience", "restaurant", "parking", "stars"):
            assert name not in code, (module.__name__, name)

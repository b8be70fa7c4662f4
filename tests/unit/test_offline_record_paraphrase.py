"""Record checks of the offline judge that must not fire on paraphrases of the record."""

from __future__ import annotations

import json

from ragaliq.judges._record import parse_record

RECORD = json.dumps(
    {
        "name": "Bistro",
        "attributes": {
            "WiFi": "no",
            "Ambience": {"casual": True, "trendy": False},
            "BusinessParking": {"garage": False, "street": True, "lot": False, "valet": False},
        },
    }
)


def check(claim: str):  # type: ignore[no-untyped-def]
    record = parse_record(RECORD)
    assert record is not None
    return record.check(claim)


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
    unknown = check("Catering to vegetarians, it offers a casual ambience.").unknown
    assert not any("catering" in u for u in unknown)
    assert any("catering" in u for u in check("The restaurant offers catering services.").unknown)

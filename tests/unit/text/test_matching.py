from __future__ import annotations

import pytest

from ragaliq.text.matching import same_claim, unmatched


def test_same_claim_matching():
    assert same_claim("Refunds take 14 days.", "refunds take 14 days")
    assert same_claim("Paris is the capital of France.", "The capital of France is Paris.")
    assert same_claim(
        "However, offline files are available on Team plans.",
        "Offline files are available on Team plans.",
    )
    assert same_claim(
        "The Business plan includes phone support.",
        "Phone support is included in the Business plan.",
    )
    assert not same_claim("Refunds take 14 days.", "The Business plan includes 2 TB.")


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("The premium plan costs $10 per month.", "The premium plan costs $100 per month."),
        ("The fee is 5%.", "The fee is 50%."),
        ("Paris is the capital of France.", "Paris is the capital of Germany."),
        ("The drug is safe for children.", "The drug is not safe for children."),
        ("Alice sued Bob in 2019.", "Bob sued Alice in 2019."),
    ],
)
def test_a_changed_figure_name_or_negation_is_another_claim(a, b):
    assert not same_claim(a, b)


def test_every_claim_that_can_find_a_counterpart_finds_one():
    # y matches both old claims, x only q: pairing y with q first would leave x unmatched.
    related = {("y", "q"), ("y", "p"), ("x", "q")}

    def pairs(head: list[str], base: list[str]) -> list[str]:
        return unmatched(head, base, text=str, same=lambda a, b: (a, b) in related)

    assert pairs(["y", "x"], ["q", "p"]) == []
    assert pairs(["y", "x", "z"], ["q", "p"]) == ["z"]


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (
            "Yes, annual Personal plans can be refunded within 14 days.",
            "Annual Personal plans can be refunded within 14 days.",
        ),
        (
            "EU workspaces are also encrypted at rest.",
            "Workspaces in the EU are also encrypted at rest.",
        ),
        ("Acme was founded in 1999.", "The company Acme was founded in 1999."),
        ("The team has 10 seats.", "The team has ten seats."),
    ],
)
def test_re_wordings_that_keep_the_facts_are_the_same_claim(a, b):
    assert same_claim(a, b)

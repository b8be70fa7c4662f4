"""Accepting flagged claims: what a reviewer's acceptance changes in the decision, and what not."""

from __future__ import annotations

import pytest

from ragaliq.errors import ConfigError
from ragaliq.gate import GateRules, compare
from ragaliq.gate.acceptance import Acceptance, claim_id, parse_command, read_acceptances
from ragaliq.models import Verdict
from tests.baselines import record_baseline
from tests.unit.gate.test_compare import report_of

S, C = Verdict.SUPPORTED, Verdict.CONTRADICTED
STRICT = GateRules(max_drop=1.0, fail_on_new_hallucinations=True)
MADE_UP = "Support is 24/7."


async def flagged_pull():
    base = record_baseline(await report_of({"a": [S, S, S], "b": [S, S, S]}))
    head = await report_of({"a": [S, S, C], "b": [S, S, S]})
    return head, base


async def test_an_accepted_claim_no_longer_fails_the_gate_and_says_who():
    head, base = await flagged_pull()
    assert compare(head, base, rules=STRICT).passed is False
    accepted = Acceptance(by="maintainer", commit="c" * 40, claims=(claim_id("a", MADE_UP),))
    decision = compare(head, base, rules=STRICT, acceptances=(accepted,))
    assert decision.passed is True
    (claim,) = decision.new_hallucinations
    assert claim.accepted_by == "maintainer"
    assert claim.id == claim_id("a", MADE_UP)
    assert decision.acceptances == (accepted,)
    assert any("accepted by a reviewer" in n for n in decision.notices)


async def test_an_acceptance_of_another_claim_changes_nothing():
    head, base = await flagged_pull()
    other = Acceptance(by="maintainer", claims=(claim_id("b", MADE_UP),))
    decision = compare(head, base, rules=STRICT, acceptances=(other,))
    assert decision.passed is False
    assert decision.new_hallucinations[0].accepted_by is None


async def test_accepting_all_sets_every_failure_aside_and_keeps_it_on_record():
    base = record_baseline(await report_of({"a": [S, S, S]}))
    head = await report_of({"a": [C, C, C]})
    rules = GateRules(fail_on_new_hallucinations=True)
    failing = compare(head, base, rules=rules)
    assert failing.passed is False
    everything = Acceptance(by="lead", claims="all")
    decision = compare(head, base, rules=rules, acceptances=(everything,))
    assert decision.passed is True
    assert decision.failures == ()
    # The claims themselves are accepted; what else failed is set aside, on record.
    assert all(c.accepted_by == "lead" for c in decision.new_hallucinations)
    assert decision.accepted_failures == tuple(
        f for f in failing.failures if "newly hallucinated" not in f
    )
    assert decision.accepted_failures


@pytest.mark.parametrize(
    ("body", "accepted"),
    [
        ("/ragaliq accept 3f9a1c2b", ("3f9a1c2b",)),
        ("Looks right to me.\n\n/RAGALIQ ACCEPT 3F9A1C2B 77e0d4aa\n", ("3f9a1c2b", "77e0d4aa")),
        ("/ragaliq accept all", "all"),
        ("/ragaliq accept", None),
        ("/ragaliq accept everything please", None),
        ("ragaliq accept 3f9a1c2b", None),  # not a command: no slash
        ("LGTM", None),
    ],
)
def test_the_command_names_claims_by_id_or_all(body, accepted):
    assert parse_command(body) == accepted


def test_local_acceptances_come_from_a_file(tmp_path):
    path = tmp_path / "acceptances.yaml"
    path.write_text("acceptances:\n  - {by: maintainer, claims: [3f9a1c2b]}\n", encoding="utf-8")
    (read,) = read_acceptances(path)
    assert read.by == "maintainer" and read.claims == ("3f9a1c2b",) and read.source == str(path)
    path.write_text("- maintainer\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="not a list of acceptances"):
        read_acceptances(path)

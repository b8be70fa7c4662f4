"""A story: a pull request that only adds invented details to grounded answers.

A camping-gear rental desk's assistant answers from its help pages. The repository starts from
`ragaliq init` (the offline judge, `fail_on_new_hallucinations: true`, the unchecked-claims
policy written commented out), records its baseline on main, then opens pull requests:

- one adds a detail with no figure or name to each of six grounded answers (a material, an extra
  item, a condition, a channel, a place, an agent) and widens a weekday range: no added claim is
  SUPPORTED; each is listed as a new claim that could not be checked offline, with the words its
  context sentence does not state, or as hallucinated (the weekday); every score over claims says
  how many claims it checked;
- the same pull request, with `gate.fail_on_unchecked_claims: true` switched on in its own
  config, fails on those claims (a pull request may tighten the bar at once);
- with the policy on at main, a pull request that switches it off still fails (it can loosen
  nothing until merged).
"""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

from ragaliq.models import Verdict
from ragaliq.report.markdown import escape_markdown
from ragaliq.run_report import ReportFile
from ragaliq.text.sentences import CONTINUATION
from tests.stories import git, invoke
from tests.stories import new_repository as empty_repository
from tests.unit.test_mower_story import pull_request as gate_branch
from tests.unit.test_mower_story import write_faq

DESK = {
    "tent": (
        "What comes with the tent?",
        "The four-person tent comes with poles, pegs and a rain fly. It packs into a carry bag. "
        "Spare pegs can be bought at the desk.",
        "The four-person tent comes with poles, pegs and a rain fly.",
    ),
    "stove": (
        "Which fuel does the stove use?",
        "The camping stove runs on butane cartridges. Cartridges are sold separately at the desk.",
        "The camping stove runs on butane cartridges.",
    ),
    "deposit": (
        "Do I pay a deposit?",
        "A deposit is taken when you collect the gear. The deposit is returned when the gear "
        "comes back undamaged.",
        "The deposit is returned when the gear comes back undamaged.",
    ),
    "booking": (
        "How do I book?",
        "Gear can be booked on the website. Bookings can be changed until the day before "
        "collection.",
        "Gear can be booked on the website.",
    ),
    "cleaning": (
        "Do I have to clean the gear?",
        "Sleeping bags are washed by the desk after every rental. Tents should be returned dry.",
        "Sleeping bags are washed by the desk after every rental.",
    ),
    "collection": (
        "Where do I collect the gear?",
        "Gear is collected at the rental desk. The desk is next to the visitor car park.",
        "Gear is collected at the rental desk.",
    ),
    "hours": (
        "When is the desk open?",
        "The rental desk is open Tuesday to Sunday. It is closed on Mondays for maintenance.",
        "The rental desk is open Tuesday to Sunday.",
    ),
}

ADDED = {
    "tent": "The four-person tent comes with poles, pegs and a rain fly, as well as a ground "
    "sheet.",
    "stove": "The camping stove runs on butane cartridges and has a stainless steel windshield.",
    "deposit": "The deposit is returned by bank transfer when the gear comes back undamaged.",
    "booking": "Gear can be booked on the website or over the phone.",
    "cleaning": "Sleeping bags are washed by a local laundry after every rental.",
    "collection": "Gear is collected at the rental desk inside the main lodge.",
    "hours": "The rental desk is open Monday to Sunday.",
}
"""Each grounded answer with one invented detail; the last widens the days."""
INVENTED_WORDS = {
    "tent": ("ground", "sheet"),
    "stove": ("stainless", "steel", "windshield"),
    "deposit": ("bank", "transfer"),
    "booking": ("phone",),
    "cleaning": ("local", "laundry"),
    "collection": ("inside", "main", "lodge"),
}
POLICY_OFF = "# fail_on_unchecked_claims: true"
POLICY_ON = "fail_on_unchecked_claims: true"


def set_policy(root: Path, *, on: bool) -> None:
    config = root / "ragaliq.yaml"
    text = config.read_text(encoding="utf-8")
    text = text.replace(POLICY_OFF, POLICY_ON) if on else text.replace(POLICY_ON, POLICY_OFF)
    config.write_text(text, encoding="utf-8")


def new_repository(root: Path, *, policy_on_main: bool) -> Path:
    empty_repository(root)
    code, output = invoke(["init", "--dir", str(root)])
    assert code == 0, output
    assert "judge: offline" in output and "Dependabot secret ANTHROPIC_API_KEY" in output
    config = (root / "ragaliq.yaml").read_text(encoding="utf-8")
    assert "provider: offline" in config and f"  {POLICY_OFF}\n" in config
    if policy_on_main:
        set_policy(root, on=True)
    write_faq(root, faq=DESK)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "Answers")
    # Main's baseline, recorded for that commit on this machine (in CI, its baseline workflow).
    code, output = invoke(["baseline", "record", "--config", str(root / "ragaliq.yaml")])
    assert code == 0, output
    return root


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A repository as `ragaliq init` leaves it, with the answers and their baseline on main."""
    return new_repository(tmp_path_factory.mktemp("desk"), policy_on_main=False)


def pull_request(
    repo: Path, name: str, changes: dict[str, str], *, policy: bool | None = None
) -> tuple[int, dict, str, str]:
    """Commit the changed answers (and the policy, when given) on a branch and gate it."""
    edit = None if policy is None else functools.partial(set_policy, on=policy)
    return gate_branch(repo, name, changes, faq=DESK, edit=edit)


def test_main_is_checked_and_supported(repo):
    code, decision, output, comment = pull_request(repo, "unchanged", {})
    assert code == 0, output
    claims = [
        c
        for case in ReportFile(repo / ".ragaliq/unchanged.report.json").iter_cases()
        for c in case.claims
    ]
    assert {c.verdict for c in claims} == {Verdict.SUPPORTED}
    assert decision["unverifiable_claims"] == []
    assert f"**1.000** <sub>{len(claims)} of {len(claims)} claims checked</sub>" in comment


def test_added_details_are_never_supported_and_are_listed_with_their_words(repo):
    code, decision, output, comment = pull_request(repo, "added", ADDED)
    cases = {c.id: c for c in ReportFile(repo / ".ragaliq/added.report.json").iter_cases()}
    for case_id, words in INVENTED_WORDS.items():
        claims = cases[case_id].claims
        added = [c for c in claims if any(w in c.text for w in words)]
        assert added, case_id
        for claim in added:
            assert claim.verdict is not Verdict.SUPPORTED, claim
            assert not claim.verifiable, claim
            assert all(f'"{w}"' in claim.reason for w in words if w in claim.text), claim
    tent = [c.text for c in cases["tent"].claims]
    assert tent == [
        "The four-person tent comes with poles, pegs and a rain fly.",
        f"{CONTINUATION}as well as a ground sheet.",
    ]
    assert cases["tent"].claims[0].verdict is Verdict.SUPPORTED  # the grounded part stays so
    hours = cases["hours"].claims[0]
    assert hours.verdict is Verdict.CONTRADICTED and '"Monday"' in hours.reason
    unchecked = {c["case_id"] for c in decision["unverifiable_claims"]}
    assert unchecked == set(INVENTED_WORDS)
    assert [c["case_id"] for c in decision["new_hallucinations"]] == ["hours"]
    assert code == 1, output  # init's fail_on_new_hallucinations: the widened days
    total = len(decision["unverifiable_claims"])
    assert f"**{total} new claims could not be checked offline**" in comment
    assert f"{total} new claims could not be checked offline: left out of the scores" in output
    for name in ("faithfulness", "hallucination"):
        checked = decision["evaluators"][name]
        assert checked["checked"] < checked["claims"]
        assert f"{checked['checked']} of {checked['claims']} claims checked" in comment
        assert f"{checked['checked']} of {checked['claims']} claims checked" in output
    assert '"bank", "transfer"' in comment and "`judge.provider: cascade`" in comment
    assert "could not be checked offline (gate.fail_on_unchecked_claims: true)" not in output


def test_without_the_widened_days_only_the_policy_fails_the_pull_request(repo):
    details = {case: text for case, text in ADDED.items() if case != "hours"}
    code, decision, output, _ = pull_request(repo, "details", details)
    assert code == 0, output  # left out of the scores, the details pass on the scores alone
    assert decision["new_hallucinations"] == []
    code, decision, output, comment = pull_request(repo, "details-policy", details, policy=True)
    assert code == 1, output
    total = len(decision["unverifiable_claims"])
    failure = (
        f"{total} new claims could not be checked offline (gate.fail_on_unchecked_claims: true)"
    )
    assert failure in decision["failures"]
    assert f"- {escape_markdown(failure)}" in comment


def test_a_pull_request_cannot_switch_the_policy_off(tmp_path):
    repo = new_repository(tmp_path, policy_on_main=True)
    details = {case: text for case, text in ADDED.items() if case != "hours"}
    code, decision, output, _ = pull_request(repo, "policy-off", details, policy=False)
    assert code == 1, output
    assert any("gate.fail_on_unchecked_claims: true" in f for f in decision["failures"])

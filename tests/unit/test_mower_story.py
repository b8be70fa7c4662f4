"""A new user's story: a fresh repository, `ragaliq init`'s defaults, eleven robot mower FAQ cases.

The repository starts from `ragaliq init` (the offline judge, `fail_on_new_hallucinations: true`),
commits the FAQ on main and records main's baseline for that commit, then opens pull requests,
each a branch gated with `ragaliq gate` against the merge base:

- a faithful rewording (imperative verbs, units, figures in words, weekday and month
  abbreviations, a sentence after "p.m.") passes, and no reason the judge gives it is untrue;
- plain changes (a changed figure or duration, an opposite word, a widened scope, a negation, a
  denied requirement) fail and are listed as newly hallucinated;
- invented names, and a made-up partner with a made-up price, fail and are listed.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from ragaliq.models import CaseResult, Verdict
from ragaliq.report.markdown import escape_markdown
from ragaliq.run_report import ReportFile
from ragaliq.text.quantities import quantities
from tests.stories import git, invoke, new_repository
from tests.stories import pull_request as gated

FAQ = {
    "returns": (
        "Can I return the mower?",
        "Unused mowers can be returned within 90 days of purchase for a full refund. Return "
        "labels are free in Canada. Returns must include the charging dock.",
        "Yes. Unused mowers can be returned within 90 days of purchase for a full refund.",
    ),
    "dock": (
        "Where does the charging dock go?",
        "Place the charging dock on flat ground outdoors, within 10 metres of a power outlet. "
        "The dock runs on the included 12V adapter.",
        "Place the charging dock on flat ground outdoors, within 10 metres of a power outlet. "
        "The dock runs on the included 12V adapter.",
    ),
    "setup": (
        "How do I set it up?",
        "Setup takes about 20 minutes with the included pegs. Download the Tallis app, tap Add "
        "mower and follow the steps.",
        "Setup takes about 20 minutes with the included pegs. Download the Tallis app, tap Add "
        "mower and follow the steps.",
    ),
    "pairing": (
        "How long is the pairing code valid?",
        "The pairing code shown in the app expires after 15 minutes. Request a new code under "
        "Settings.",
        "The pairing code shown in the app expires after 15 minutes.",
    ),
    "schedule": (
        "When does the mower run?",
        "By default the R5 mows from 9 a.m. to 5 p.m. It skips mowing while the rain sensor is "
        "wet.",
        "By default the R5 mows from 9 a.m. to 5 p.m. It skips mowing while the rain sensor is "
        "wet.",
    ),
    "offer": (
        "How much is the R5?",
        "The spring offer runs until March 3. The Tallis R5 costs $899, or $799 during the offer.",
        "The Tallis R5 costs $899, or $799 during the spring offer, which runs until March 3.",
    ),
    "support": (
        "When can I call support?",
        "Phone support is open Tuesday to Saturday from 8 a.m. to 4 p.m. Email support answers "
        "within a day.",
        "Phone support is open Tuesday to Saturday from 8 a.m. to 4 p.m.",
    ),
    "warranty": (
        "How long is the warranty?",
        "Every Tallis mower has a 2-year warranty. The battery is covered for one year.",
        "Every Tallis mower has a 2-year warranty.",
    ),
    "slopes": (
        "Can the R5 mow a slope?",
        "The R5 handles slopes of up to 35%. It does not work on gravel paths.",
        "The R5 handles slopes of up to 35%.",
    ),
    "noise": (
        "How loud is it?",
        "The R5 runs at 58 dB, according to a 2025 test by the manufacturer.",
        "The R5 runs at 58 dB, according to a 2025 test by the manufacturer.",
    ),
    "boundary": (
        "Do I need a boundary wire?",
        "The R5 finds its way by GPS and needs no boundary wire. You mark the mowing zones in the "
        "Tallis app.",
        "The R5 finds its way by GPS and needs no boundary wire.",
    ),
}

REWORDED = {
    "returns": "Yes. Ship an unused mower back within ninety days of purchase and get a full "
    "refund.",
    "dock": "Yes, put the dock outdoors on flat ground, within ten metres of an outlet. Use the "
    "included 12-volt adapter.",
    "setup": "Download the Tallis app, tap Add mower and follow the steps: setup takes twenty "
    "minutes with the included pegs.",
    "schedule": "It mows from 9 a.m. to 5 p.m. by default. Rain on the sensor skips mowing.",
    "offer": "The spring offer runs until Mar 3, and the Tallis R5 costs $799 until then.",
    "support": "Call phone support Tue to Sat, 8 am to 4 pm.",
    "pairing": "The pairing code in the app expires after a quarter of an hour.",
}
"""A faithful pull request: every answer still says what its context says."""

PLAIN_CHANGES = {
    "dock": (
        "Place the charging dock on flat ground indoors, within 10 metres of a power outlet.",
        "Place the charging dock on flat ground indoors, within 10 metres of a power outlet.",
    ),
    "slopes": (
        "The R5 handles slopes of up to 45%.",
        "The R5 handles slopes of up to 45%.",
    ),
    "pairing": (
        "The pairing code shown in the app expires after three hours.",
        "The pairing code shown in the app expires after three hours.",
    ),
    "warranty": (
        "Every Tallis mower has a four-year warranty.",
        "Every Tallis mower has a four-year warranty.",
    ),
}
"""Changes a reviewer checks at a glance: an opposite word and changed figures."""

MORE_PLAIN_CHANGES = {
    "returns": ("Yes. Return labels are free everywhere.", "Return labels are free everywhere."),
    "pairing": (
        "The pairing code shown in the app expires after twenty-five minutes.",
        "The pairing code shown in the app expires after twenty-five minutes.",
    ),
    "warranty": (
        "The warranty on every Tallis mower lasts for three years.",
        "The warranty on every Tallis mower lasts for three years.",
    ),
    "slopes": (
        "The R5 works on gravel paths.",
        "The R5 works on gravel paths.",
    ),
}
"""A widened scope, a duration in words, a period in words, a negation."""

DENIED = {
    "returns": (
        "You do not have to include the charging dock when you return a mower.",
        "You do not have to include the charging dock when you return a mower.",
    ),
}
"""A requirement of the context denied."""

INVENTED = {
    "noise": (
        "The R5 runs at 58 dB, according to a 2025 test by Oxford University.",
        "The R5 runs at 58 dB, according to a 2025 test by Oxford University.",
    ),
    "boundary": (
        "The R5 finds its way by GPS and needs no boundary wire. It was designed by Marta Ekholm.",
        "It was designed by Marta Ekholm.",
    ),
    "setup": (
        "Setup takes about 20 minutes with the included pegs. Our partner GreenLeaf also offers "
        "professional setup for $45.",
        "Our partner GreenLeaf also offers professional setup for $45.",
    ),
}
"""Invented names, and a made-up partner with a made-up price."""


def write_faq(
    root: Path,
    changes: dict[str, str] | None = None,
    faq: dict[str, tuple[str, str, str]] = FAQ,
) -> None:
    rows = [
        {"id": case, "query": query, "context": [context], "response": response}
        for case, (query, context, response) in faq.items()
    ]
    for row in rows:
        row["response"] = (changes or {}).get(row["id"], row["response"])
    (root / "rag_outputs.jsonl").write_text(
        "".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8"
    )


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A repository as `ragaliq init` leaves it, with the FAQ and its baseline on main."""
    root = new_repository(tmp_path_factory.mktemp("mower"))
    code, output = invoke(["init", "--dir", str(root)])
    assert code == 0, output
    config = (root / "ragaliq.yaml").read_text(encoding="utf-8")
    assert "provider: offline" in config and "fail_on_new_hallucinations: true" in config
    write_faq(root)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "FAQ answers")
    # Main's baseline, recorded for that commit on this machine (in CI, its baseline workflow).
    code, output = invoke(["baseline", "record", "--config", str(root / "ragaliq.yaml")])
    assert code == 0, output
    assert "as the baseline of" in output
    return root


def pull_request(
    repo: Path,
    name: str,
    changes: dict[str, str],
    *,
    faq: dict[str, tuple[str, str, str]] = FAQ,
    edit: Callable[[Path], None] | None = None,
) -> tuple[int, dict, str, str]:
    """Commit the changed answers (and ``edit``'s changes) on a branch off main and gate it."""

    def change() -> None:
        write_faq(repo, changes, faq)
        if edit is not None:
            edit(repo)

    return gated(repo, name, change)


def cases_of(repo: Path, name: str) -> dict[str, CaseResult]:
    return {c.id: c for c in ReportFile(repo / ".ragaliq" / f"{name}.report.json").iter_cases()}


def test_main_is_judged_faithful(repo):
    code, decision, output, _ = pull_request(repo, "unchanged", {})
    assert code == 0, output
    assert decision["new_hallucinations"] == []
    for case in cases_of(repo, "unchanged").values():
        checked = [c for c in case.claims if c.verifiable]
        assert {c.verdict for c in checked} == {Verdict.SUPPORTED}, case
        unchecked = [c for c in case.claims if not c.verifiable]
        if case.id == "offer":
            # "during the spring offer" takes "spring" from the sentence before: not checked.
            assert [c.text for c in unchecked] == [
                "The Tallis R5 costs $899, or $799 during the spring offer."
            ]
            assert 'does not state "spring"' in unchecked[0].reason
        else:
            assert not unchecked, case


def test_a_faithful_rewording_passes_and_no_reason_is_untrue(repo):
    code, decision, output, comment = pull_request(repo, "reworded", REWORDED)
    assert code == 0, output
    assert decision["new_hallucinations"] == []
    assert "Newly hallucinated" not in comment
    cases = cases_of(repo, "reworded")
    claims = [claim for case in REWORDED for claim in cases[case].claims]
    assert [c.text for c in cases["schedule"].claims] == [
        "It mows from 9 a.m. to 5 p.m. by default.",
        "Rain on the sensor skips mowing.",
    ]
    for claim in claims:
        assert claim.verdict is Verdict.SUPPORTED or not claim.verifiable, claim
        assert "Names not found" not in claim.reason, claim
        assert "does not occur" not in claim.reason, claim


@pytest.mark.parametrize(
    ("name", "changes"),
    [
        ("plain-changes", PLAIN_CHANGES),
        ("more-plain-changes", MORE_PLAIN_CHANGES),
        ("denied", DENIED),
        ("invented", INVENTED),
    ],
)
def test_a_planted_hallucination_fails_and_is_listed_with_a_true_reason(repo, name, changes):
    code, decision, output, comment = pull_request(
        repo, name, {case: response for case, (response, _) in changes.items()}
    )
    assert code == 1, output
    listed = {c["case_id"]: c for c in decision["new_hallucinations"]}
    assert {case: listed[case]["claim"] for case in listed} == {
        case: claim for case, (_, claim) in changes.items()
    }
    for case, change in listed.items():
        assert escape_markdown(change["claim"]) in comment
        context = FAQ[case][1]
        reason = change["reason"]
        for quoted in reason.split('"')[1::2][:1]:
            assert quoted.lower() in change["claim"].lower(), reason
        if "does not occur" in reason or "nowhere" in reason:
            figure = reason.split('"')[1]
            stated = quantities(context)
            assert not any(q.stated_by(s) for q in quantities(figure) for s in stated), reason
        if reason.startswith("Names not found"):
            for name_ in reason.split(":", 1)[1].strip(" .").split(", "):
                assert name_.lower() not in context.lower(), reason

"""A new user's story: a fresh repository, `ragaliq init`'s defaults, eleven thermostat FAQ cases.

The repository starts from `ragaliq init` (the offline judge, `fail_on_new_hallucinations: true`),
records its baseline on main, then opens pull requests, each a branch gated with `ragaliq gate`
against the merge base:

- a faithful rewording (imperative verbs, units, figures in words, abbreviations, a sentence
  after "a.m.") passes, and no reason the judge gives it is untrue;
- plain changes (a changed figure or duration, an opposite word, a widened scope, a negation, a
  denied requirement) fail and are listed as newly hallucinated;
- invented names, and a made-up partner with a made-up price, fail and are listed.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragaliq.cli import cli
from ragaliq.models import CaseResult, Verdict
from ragaliq.report.markdown import escape_markdown
from ragaliq.run_report import ReportFile
from ragaliq.text.quantities import quantities

FAQ = {
    "returns": (
        "Can I return the thermostat?",
        "You can return the Vireo T3 within 60 days of delivery for a full refund. Return "
        "shipping is free in the US. Returns must include all original parts.",
        "Yes. You can return the Vireo T3 within 60 days of delivery for a full refund.",
    ),
    "wiring": (
        "What wiring does the T3 need?",
        "The Vireo T3 needs a 24V C-wire. If your system has no C-wire, use the included power "
        "adapter.",
        "The Vireo T3 needs a 24V C-wire. If your system has no C-wire, use the included power "
        "adapter.",
    ),
    "install": (
        "How do I install it?",
        "Installation takes about 30 minutes with a screwdriver. Download the Vireo app, tap Add "
        "device and follow the steps.",
        "Installation takes about 30 minutes with a screwdriver. Download the Vireo app, tap Add "
        "device and follow the steps.",
    ),
    "pairing": (
        "How long is the pairing code valid?",
        "The pairing code in the app expires after 30 minutes. You can request a new code in "
        "Settings.",
        "The pairing code in the app expires after 30 minutes.",
    ),
    "updates": (
        "When do updates install?",
        "Firmware updates install between 2 and 4 a.m. The thermostat keeps heating during an "
        "update.",
        "Firmware updates install between 2 and 4 a.m. The thermostat keeps heating during an "
        "update.",
    ),
    "sale": (
        "How much is the T3?",
        "The winter sale runs until January 15. The Vireo T3 costs $149, or $129 during the sale.",
        "The Vireo T3 costs $149, or $129 during the winter sale, which runs until January 15.",
    ),
    "support": (
        "When can I call support?",
        "Phone support is open Monday to Friday from 8 a.m. to 6 p.m. Chat support is available "
        "every day.",
        "Phone support is open Monday to Friday from 8 a.m. to 6 p.m.",
    ),
    "warranty": (
        "How long is the warranty?",
        "Every Vireo thermostat has a 3-year warranty. The warranty does not cover damage from "
        "incorrect wiring.",
        "Every Vireo thermostat has a 3-year warranty.",
    ),
    "compatibility": (
        "Does the T3 work with my heating?",
        "The Vireo T3 works with gas furnaces, heat pumps and boilers. It does not work with "
        "electric baseboard heaters.",
        "The Vireo T3 works with gas furnaces, heat pumps and boilers.",
    ),
    "energy": (
        "How much can I save?",
        "Customers save an average of 10% on heating, according to a 2024 study by the company.",
        "Customers save an average of 10% on heating, according to a 2024 study by the company.",
    ),
    "wifi": (
        "What Wi-Fi does the T3 need?",
        "The Vireo T3 connects to 2.4 GHz Wi-Fi. It keeps its schedule when the Wi-Fi is down.",
        "The Vireo T3 connects to 2.4 GHz Wi-Fi and keeps its schedule when the Wi-Fi is down.",
    ),
}

REWORDED = {
    "returns": "Yes. Send the T3 back within 60 days of delivery and you get a full refund.",
    "wiring": "Yes, use a 24-volt C-wire. If you have no C-wire, use the power adapter included.",
    "install": "Download the Vireo app, tap Add device and follow the steps: it takes thirty "
    "minutes with a screwdriver.",
    "updates": "Updates install between 2 and 4 a.m. The thermostat keeps heating meanwhile.",
    "sale": "The winter sale runs until Jan 15, and the Vireo T3 costs $129 until then.",
    "support": "Call phone support Mon to Fri, 8 am to 6 pm.",
    "pairing": "The pairing code in the app expires after half an hour.",
}
"""A faithful pull request: every answer still says what its context says."""

PLAIN_CHANGES = {
    "returns": (
        "Send the T3 back within 60 days of delivery for a partial refund.",
        "Send the T3 back within 60 days of delivery for a partial refund.",
    ),
    "wifi": (
        "The Vireo T3 connects to 5 GHz Wi-Fi.",
        "The Vireo T3 connects to 5 GHz Wi-Fi.",
    ),
    "pairing": (
        "The pairing code in the app expires after two hours.",
        "The pairing code in the app expires after two hours.",
    ),
    "warranty": (
        "Every Vireo thermostat has a five-year warranty.",
        "Every Vireo thermostat has a five-year warranty.",
    ),
}
"""Changes a reviewer checks at a glance: an opposite word and changed figures."""

MORE_PLAIN_CHANGES = {
    "returns": ("Yes. Return shipping is free worldwide.", "Return shipping is free worldwide."),
    "pairing": (
        "The pairing code in the app expires after forty-five minutes.",
        "The pairing code in the app expires after forty-five minutes.",
    ),
    "warranty": (
        "The warranty on every Vireo thermostat lasts for a year.",
        "The warranty on every Vireo thermostat lasts for a year.",
    ),
    "compatibility": (
        "The Vireo T3 does not work with heat pumps.",
        "The Vireo T3 does not work with heat pumps.",
    ),
}
"""A widened scope, a duration in words, "a year", a negation."""

DENIED = {
    "returns": (
        "You do not need the original parts to return the Vireo T3.",
        "You do not need the original parts to return the Vireo T3.",
    ),
}
"""A requirement of the context denied."""

INVENTED = {
    "energy": (
        "Customers save an average of 10% on heating, according to a 2024 study by Stanford "
        "University.",
        "Customers save an average of 10% on heating, according to a 2024 study by Stanford "
        "University.",
    ),
    "compatibility": (
        "The Vireo T3 works with gas furnaces, heat pumps and boilers. It was designed by Anders "
        "Lund.",
        "It was designed by Anders Lund.",
    ),
    "install": (
        "Installation takes about 30 minutes with a screwdriver. Our partner CoolFix also offers "
        "professional installation for $79.",
        "Our partner CoolFix also offers professional installation for $79.",
    ),
}
"""Invented names, and a made-up partner with a made-up price."""


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)


def invoke(args: list[str]) -> tuple[int, str]:
    result = CliRunner().invoke(cli, args, env={"ANTHROPIC_API_KEY": ""})
    return result.exit_code, result.output


def write_faq(root: Path, changes: dict[str, str] | None = None) -> None:
    rows = [
        {"id": case, "query": query, "context": [context], "response": response}
        for case, (query, context, response) in FAQ.items()
    ]
    for row in rows:
        row["response"] = (changes or {}).get(row["id"], row["response"])
    (root / "rag_outputs.jsonl").write_text(
        "".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8"
    )


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A repository as `ragaliq init` leaves it, with the FAQ and its baseline on main."""
    root = tmp_path_factory.mktemp("thermostat")
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.email", "dev@example.com")
    git(root, "config", "user.name", "Dev")
    code, output = invoke(["init", "--dir", str(root)])
    assert code == 0, output
    config = (root / "ragaliq.yaml").read_text(encoding="utf-8")
    assert "provider: offline" in config and "fail_on_new_hallucinations: true" in config
    write_faq(root)
    code, output = invoke(["baseline", "record", "--config", str(root / "ragaliq.yaml")])
    assert code == 0, output
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "FAQ answers and their baseline")
    return root


def pull_request(repo: Path, name: str, changes: dict[str, str]) -> tuple[int, dict, str, str]:
    """Commit the changed answers on a branch off main and gate it as a pull request."""
    git(repo, "checkout", "-q", "-B", name, "main")
    write_faq(repo, changes)
    git(repo, "commit", "-q", "--allow-empty", "-am", name)
    try:
        decision = repo / ".ragaliq" / f"{name}.decision.json"
        code, output = invoke(
            [
                "gate",
                "--config",
                str(repo / "ragaliq.yaml"),
                "--decision-out",
                str(decision),
                "--comment-out",
                str(repo / ".ragaliq" / f"{name}.comment.md"),
                "-o",
                str(repo / ".ragaliq" / f"{name}.report.json"),
            ]
        )
        comment = (repo / ".ragaliq" / f"{name}.comment.md").read_text(encoding="utf-8")
        return code, json.loads(decision.read_text(encoding="utf-8")), output, comment
    finally:
        git(repo, "checkout", "-q", "main")


def cases_of(repo: Path, name: str) -> dict[str, CaseResult]:
    return {c.id: c for c in ReportFile(repo / ".ragaliq" / f"{name}.report.json").iter_cases()}


def test_main_is_judged_faithful(repo):
    code, decision, output, _ = pull_request(repo, "unchanged", {})
    assert code == 0, output
    assert decision["new_hallucinations"] == []
    for case in cases_of(repo, "unchanged").values():
        assert {c.verdict for c in case.claims} == {Verdict.SUPPORTED}, case


def test_a_faithful_rewording_passes_and_no_reason_is_untrue(repo):
    code, decision, output, comment = pull_request(repo, "reworded", REWORDED)
    assert code == 0, output
    assert decision["new_hallucinations"] == []
    assert "Newly hallucinated" not in comment
    cases = cases_of(repo, "reworded")
    claims = [claim for case in REWORDED for claim in cases[case].claims]
    assert [c.text for c in cases["updates"].claims] == [
        "Updates install between 2 and 4 a.m.",
        "The thermostat keeps heating meanwhile.",
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

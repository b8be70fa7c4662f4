"""The ten-case story: a small suite, no API key, and a gate that does not cry wolf.

A team adopts the gate with ten realistic cases and the offline judge. A pull request that rewords
an answer faithfully, or that starts an answer with "No.", passes; one that changes a figure or
invents a name fails, and the comment lists the claim as newly hallucinated. With ten cases one
claim moves a mean by a tenth, which the noise-aware rule calls inconclusive, so the failure comes
from `gate.fail_on_new_hallucinations`, which this config turns on.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragaliq.cli import cli
from ragaliq.models import CaseResult, Verdict
from ragaliq.run_report import ReportFile

CONFIG = """\
dataset: rag_outputs.jsonl
judge:
  provider: auto
evaluators:
  faithfulness:
    threshold: 0.7
  hallucination:
    threshold: 0.8
  relevance:
    threshold: 0.7
gate:
  max_drop: 0.05
  fail_on_new_hallucinations: true
"""

DOCS = {
    "price": (
        "The Nestor T3 thermostat costs $129. The Nestor app and all thermostat features are "
        "free; there is no subscription.",
        "Nestor Plus is an optional plan for $4 a month that adds 30 days of energy history "
        "and priority support.",
    ),
    "refund": (
        "Monthly Nestor Plus plans are refundable within 14 days of purchase. Annual plans are "
        "refundable within 30 days.",
        "To ask for a refund, open the app, go to Account > Billing and tap Request refund.",
    ),
    "install": (
        "Installation takes about 30 minutes and most people do it themselves. You need a "
        "screwdriver and a C-wire.",
        "If your system has no C-wire, the Nestor Power Adapter is included in the box.",
    ),
    "heat_pump": (
        "The Nestor T3 works with heat pumps, gas furnaces, boilers and most central air systems.",
        "It does not work with line-voltage electric baseboard heaters.",
    ),
    "warranty": (
        "Every Nestor thermostat comes with a 5-year limited warranty from the date of purchase.",
        "The warranty covers defects in materials and workmanship, not damage from improper "
        "installation.",
    ),
    "wifi": (
        "The Nestor T3 connects to 2.4 GHz Wi-Fi networks. It does not support 5 GHz networks.",
        "Keep the thermostat within 15 metres of your router for a stable connection.",
    ),
    "offline": (
        "If the Wi-Fi goes down, the thermostat keeps following its schedule.",
        "Changes made in the app while it is offline are applied once the thermostat reconnects.",
    ),
    "support": (
        "Phone support is open Monday to Friday from 8 am to 6 pm Eastern time.",
        "Chat support in the app is available every day from 9 am to 9 pm.",
    ),
    "shipping": (
        "Orders ship within 2 business days. Standard shipping is free in the United States.",
        "Express shipping costs $15 and arrives in 1 to 2 business days.",
    ),
    "energy": (
        "Nestor customers save an average of 12% on heating bills, according to a 2023 study "
        "by the company.",
        "Eco mode lowers the temperature by 2 degrees when nobody is home.",
    ),
}

CASES = [
    (
        "price",
        "Do I have to pay a subscription to use the Nestor app?",
        "No. The app and all thermostat features are free. Nestor Plus is an optional plan for "
        "$4 a month that adds 30 days of energy history and priority support.",
    ),
    (
        "refund",
        "Can I get a refund on a monthly Nestor Plus plan?",
        "Yes, monthly Nestor Plus plans are refundable within 14 days of purchase. Open the app, "
        "go to Account > Billing and tap Request refund.",
    ),
    (
        "install",
        "How long does installation take, and do I need an electrician?",
        "Installation takes about 30 minutes and most people do it themselves. You need a "
        "screwdriver and a C-wire. If your system has no C-wire, the Nestor Power Adapter is "
        "included in the box.",
    ),
    (
        "heat_pump",
        "Will the Nestor T3 work with my heat pump?",
        "Yes. The Nestor T3 works with heat pumps, gas furnaces, boilers and most central air "
        "systems. It does not work with line-voltage electric baseboard heaters.",
    ),
    (
        "warranty",
        "How long is the warranty on the thermostat?",
        "Every Nestor thermostat comes with a 5-year limited warranty from the date of purchase. "
        "The warranty covers defects in materials and workmanship.",
    ),
    (
        "wifi",
        "Does the thermostat support 5 GHz Wi-Fi?",
        "No. The Nestor T3 connects to 2.4 GHz Wi-Fi networks and does not support 5 GHz "
        "networks. Keep it within 15 metres of your router.",
    ),
    (
        "offline",
        "What happens to my heating schedule if the Wi-Fi goes down?",
        "If the Wi-Fi goes down, the thermostat keeps following its schedule. Changes made in "
        "the app while it is offline are applied once it reconnects.",
    ),
    (
        "support",
        "When can I call phone support?",
        "Phone support is open Monday to Friday from 8 am to 6 pm Eastern time. Chat support in "
        "the app is available every day from 9 am to 9 pm.",
    ),
    (
        "shipping",
        "How much does shipping cost?",
        "Standard shipping is free in the United States, and orders ship within 2 business "
        "days. Express shipping costs $15.",
    ),
    (
        "energy",
        "How much can I save on heating with the Nestor thermostat?",
        "Nestor customers save an average of 12% on heating bills, according to a 2023 study by "
        "the company. Eco mode lowers the temperature by 2 degrees when nobody is home.",
    ),
]

REWORDED = (
    "Most people can fit it on their own in roughly half an hour. You need a screwdriver and a "
    "C-wire. If your system has no C-wire, the Nestor Power Adapter is included in the box."
)
LEADING_NO = "No. Monthly Nestor Plus plans are refundable within 14 days of purchase."
CHANGED_FIGURE = (
    "Every Nestor thermostat comes with a 2-year limited warranty from the date of purchase. "
    "The warranty covers defects in materials and workmanship."
)
INVENTED_NAME = (
    "Nestor customers save an average of 12% on heating bills, according to a 2023 study by "
    "Stanford University. Eco mode lowers the temperature by 2 degrees when nobody is home."
)


def write_suite(path: Path, changes: dict[str, str] | None = None) -> None:
    lines = []
    for doc, query, response in CASES:
        case = {
            "id": doc,
            "query": query,
            "context": list(DOCS[doc]),
            "response": (changes or {}).get(doc, response),
        }
        lines.append(json.dumps(case))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def invoke(args: list[str]) -> tuple[int, str]:
    result = CliRunner().invoke(cli, args, env={"ANTHROPIC_API_KEY": ""})
    return result.exit_code, result.output


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("story")
    (root / "ragaliq.yaml").write_text(CONFIG, encoding="utf-8")
    write_suite(root / "rag_outputs.jsonl")
    code, output = invoke(["baseline", "record", "--config", str(root / "ragaliq.yaml")])
    assert code == 0, output
    return root


def gate(project: Path, name: str, changes: dict[str, str]) -> tuple[int, dict, str]:
    dataset = project / f"{name}.jsonl"
    write_suite(dataset, changes)
    decision = project / f"{name}.decision.json"
    code, output = invoke(
        [
            "gate",
            "--config",
            str(project / "ragaliq.yaml"),
            "--dataset",
            str(dataset),
            "--base",
            "none",
            "--decision-out",
            str(decision),
            "--comment-out",
            str(project / f"{name}.comment.md"),
            "-o",
            str(project / f"{name}.report.json"),
        ]
    )
    return code, json.loads(decision.read_text(encoding="utf-8")), output


def report_of(project: Path, name: str) -> list[CaseResult]:
    return list(ReportFile(project / f"{name}.report.json").iter_cases())


def test_the_main_branch_is_judged_faithful_and_relevant(project):
    code, _, output = gate(project, "unchanged", {})
    assert code == 0, output
    cases = report_of(project, "unchanged")
    assert len(cases) == 10
    for case in cases:
        assert {claim.verdict for claim in case.claims} == {Verdict.SUPPORTED}, case
        relevance = case.results["relevance"]
        assert relevance.score is not None and relevance.score >= 0.7, relevance


@pytest.mark.parametrize(
    ("name", "changes"),
    [
        ("reworded", {"install": REWORDED}),
        ("leading-no", {"refund": LEADING_NO}),
    ],
)
def test_a_faithful_change_does_not_fail_the_pull_request(project, name, changes):
    code, decision, output = gate(project, name, changes)
    assert code == 0, output
    assert decision["new_hallucinations"] == []


@pytest.mark.parametrize(
    ("name", "changes", "claim"),
    [
        (
            "changed-figure",
            {"warranty": CHANGED_FIGURE},
            "Every Nestor thermostat comes with a 2-year limited warranty from the date of "
            "purchase.",
        ),
        (
            "invented-name",
            {"energy": INVENTED_NAME},
            "Nestor customers save an average of 12% on heating bills, according to a 2023 "
            "study by Stanford University.",
        ),
    ],
)
def test_a_changed_figure_or_an_invented_name_fails_and_is_listed(project, name, changes, claim):
    code, decision, output = gate(project, name, changes)
    assert code == 1, output
    assert [c["claim"] for c in decision["new_hallucinations"]] == [claim]
    assert claim in (project / f"{name}.comment.md").read_text(encoding="utf-8")

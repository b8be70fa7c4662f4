"""What the console says when a run or a gate fails: which cases, which claims, what to accept."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragaliq.cli import cli
from ragaliq.gate.acceptance import claim_id
from ragaliq.judging import WorstFailing
from ragaliq.models import CaseResult, EvaluationResult
from tests.conftest import write_jsonl

CONTEXT = ["Unused bikes may be returned within 30 days of delivery for a full refund."]
QUERY = "How long do I have to return a bike?"
FAITHFUL = "Unused bikes may be returned within 30 days of delivery for a full refund."


def row(i: int, response: str = FAITHFUL) -> dict:
    return {"id": f"case-{i:02}", "query": QUERY, "context": CONTEXT, "response": response}


def invented(days: int) -> str:
    return f"Unused bikes may be returned within {days} days of delivery for a full refund."


def half_invented(days: int) -> str:
    return f"{FAITHFUL} Opened bikes may be returned within {days} days."


def setup(tmp_path: Path, rows: list[dict], config: str = "") -> Path:
    write_jsonl(tmp_path / "data.jsonl", rows)
    path = tmp_path / "ragaliq.yaml"
    path.write_text("dataset: data.jsonl\njudge: {provider: offline}\n" + config, encoding="utf-8")
    return path


@pytest.fixture
def runner(no_api_key):
    return CliRunner()


def test_run_lists_the_failing_cases_worst_first_with_their_evaluators_and_claims(runner, tmp_path):
    rows = [row(0), row(1, half_invented(45)), row(2, invented(60)), row(3)]
    config = setup(tmp_path, rows)
    result = runner.invoke(cli, ["run", "--config", str(config)])
    assert result.exit_code == 1, result.output
    after_table = result.output.split("usage:", 1)[1]
    listing = after_table.split("2 cases below a threshold (worst first):\n", 1)[1]
    lines = listing.splitlines()
    assert lines[0] == "  case-02: faithfulness 0.000, hallucination 0.000"
    assert lines[1] == (f"    contradicted: {invented(60)} [{claim_id('case-02', invented(60))}]")
    assert lines[2].startswith("  case-01: faithfulness 0.500, hallucination 0.500")
    second = "Opened bikes may be returned within 45 days."
    assert lines[3].endswith(f": {second} [{claim_id('case-01', second)}]")
    assert FAITHFUL not in lines[3]
    assert lines[4].startswith("failed: ")
    assert "case-00" not in listing and "case-03" not in listing


def test_run_shows_at_most_ten_failing_cases_and_counts_the_rest(runner, tmp_path):
    config = setup(tmp_path, [row(i, invented(40 + i)) for i in range(13)])
    result = runner.invoke(cli, ["run", "--config", str(config)])
    assert result.exit_code == 1, result.output
    assert "13 cases below a threshold (the worst 10):" in result.output
    assert len(re.findall(r"^  case-\d\d: ", result.output, re.M)) == 10
    assert "  ... and 3 more cases (see the report)" in result.output


def test_a_passing_run_lists_nothing_and_quiet_keeps_one_line(runner, tmp_path):
    config = setup(tmp_path, [row(0), row(1)])
    result = runner.invoke(cli, ["run", "--config", str(config)])
    assert result.exit_code == 0, result.output
    assert "below a threshold" not in result.output
    failing = setup(tmp_path, [row(0), row(1, invented(60))])
    result = runner.invoke(cli, ["run", "-q", "--config", str(failing)])
    assert result.exit_code == 1
    assert result.output.strip().splitlines() == ["run: FAILED"]


def test_a_run_that_passes_on_its_means_says_so_above_its_cases_below_a_threshold(runner, tmp_path):
    config = setup(tmp_path, [row(i) for i in range(9)] + [row(9, invented(60))])
    result = runner.invoke(cli, ["run", "--config", str(config)])
    assert result.exit_code == 0, result.output
    assert (
        "1 case below a threshold (worst first; the run passes on the mean scores):\n"
        "  case-09: faithfulness 0.000, hallucination 0.000\n"
    ) in result.output
    assert "failed:" not in result.output


def test_run_lists_the_claims_it_could_not_check_with_their_ids_and_why(runner, tmp_path):
    added = "The owner gets an email reminder before the window closes."
    config = setup(tmp_path, [row(0), row(1, f"{FAITHFUL} {added}"), row(2)])
    result = runner.invoke(cli, ["run", "--config", str(config)])
    assert result.exit_code == 0, result.output
    listing = result.output.split("usage:", 1)[1]
    lines = listing.split(
        "1 claim could not be checked offline: left out of the scores, not "
        "counted as hallucinated\n",
        1,
    )[1].splitlines()
    assert lines[0] == f"  unchecked in case-01: {added} [{claim_id('case-01', added)}]"
    assert lines[1].startswith("    ") and "owner" in lines[1]
    assert lines[2].startswith("  Judge them with Claude")
    quiet = runner.invoke(cli, ["run", "--config", str(setup(tmp_path, [row(0)]))])
    assert "could not be checked" not in quiet.output


def test_run_lists_ten_unchecked_claims_and_counts_the_rest(runner, tmp_path):
    rows = [row(i, f"{FAITHFUL} The owner gets an email reminder.") for i in range(12)]
    result = runner.invoke(cli, ["run", "--config", str(setup(tmp_path, rows))])
    assert "12 claims could not be checked offline" in result.output, result.output
    assert len(re.findall(r"^  unchecked in case-\d\d: ", result.output, re.M)) == 10
    assert "  ... and 2 more (see the report)" in result.output


def gate(runner, config: Path, *extra: str):
    return runner.invoke(
        cli,
        ["gate", "--config", str(config), "--base", "none", *extra],
    )


def test_gate_lists_each_new_claim_with_its_id_and_which_were_accepted_by_whom(runner, tmp_path):
    config = setup(tmp_path, [row(0), row(1), row(2)], "gate: {fail_on_new_hallucinations: true}\n")
    recorded = runner.invoke(cli, ["baseline", "record", "--config", str(config)])
    assert recorded.exit_code == 0, recorded.output
    write_jsonl(tmp_path / "data.jsonl", [row(0, invented(60)), row(1, invented(90)), row(2)])
    first, second = claim_id("case-00", invented(60)), claim_id("case-01", invented(90))

    result = gate(runner, config)
    assert result.exit_code == 1, result.output
    assert "2 newly hallucinated claims, 0 fixed" in result.output
    assert f"  new in case-00: {invented(60)} [contradicted] id {first}" in result.output
    assert f"  new in case-01: {invented(90)} [contradicted] id {second}" in result.output
    assert "`/ragaliq accept <id>`" in result.output

    (tmp_path / "accepted.yaml").write_text(
        f"acceptances:\n  - by: alice\n    claims: [{first}]\n", encoding="utf-8"
    )
    result = gate(runner, config, "--acceptances", str(tmp_path / "accepted.yaml"))
    assert result.exit_code == 1, result.output
    assert "1 newly hallucinated claim, 1 accepted, 0 fixed" in result.output
    assert f"[contradicted, accepted by alice] id {first}" in result.output
    assert f"  new in case-01: {invented(90)} [contradicted] id {second}" in result.output
    assert "failed: 1 newly hallucinated claim (" in result.output

    result = gate(runner, config, "-q")
    assert result.exit_code == 1
    assert result.output.strip().splitlines() == ["gate: FAILED"]


def result(name: str, score: float, *, passed: bool) -> EvaluationResult:
    return EvaluationResult(evaluator=name, score=score, passed=passed)


def case(i: int, **scores: tuple[float, bool]) -> CaseResult:
    return CaseResult(
        id=f"c{i}",
        input_hash="h",
        status="ok",
        results={name: result(name, s, passed=p) for name, (s, p) in scores.items()},
    )


def test_the_worst_failing_cases_are_kept_in_bounded_memory_most_failing_lowest_first():
    worst = WorstFailing(most=3)
    worst.add(case(0, faithfulness=(0.9, True)))
    worst.add(case(1, faithfulness=(0.6, False)))
    worst.add(case(2, faithfulness=(0.2, False)))
    worst.add(case(3, faithfulness=(0.6, False), relevance=(0.5, False)))
    worst.add(case(4, faithfulness=(0.4, False)))
    worst.add(case(5, faithfulness=(0.6, False)))
    assert worst.count == 5
    assert [c.id for c in worst.cases] == ["c3", "c2", "c4"]


def test_every_row_of_the_gate_table_lines_up_whatever_the_evaluators_name():
    from ragaliq.report.console import format_decision
    from tests.unit.report.decisions import realistic_decision

    decision = realistic_decision()
    faithfulness = decision.evaluators["faithfulness"]
    evaluators = {**decision.evaluators, "citation_accuracy": faithfulness}
    table = format_decision(decision.model_copy(update={"evaluators": evaluators}))
    rows = table.split("\n\n")[1].splitlines()
    assert rows[0].startswith("evaluator ") and rows[-1].startswith("citation_accuracy ")
    assert len(rows) == len(evaluators) + 1
    # Each column ends where its header ends: "baseline", "head", "delta", "threshold".
    for header in ("baseline", "head", "delta", "threshold"):
        end = rows[0].index(header) + len(header)
        assert all(row[end - 1] != " " and row[end] == " " for row in rows), (header, rows)


def test_every_row_of_the_run_table_lines_up_with_citation_accuracy(runner, tmp_path):
    config = setup(tmp_path, [row(0)], "evaluators: {citation_accuracy: {}}\n")
    result = runner.invoke(cli, ["run", "--config", str(config)])
    assert result.exit_code == 1, result.output  # nothing cited: no case scored
    table = result.output.split("\n\n")[1].split("\n\nusage:")[0]
    rows = table.splitlines()
    assert rows[0].startswith("evaluator ") and any(
        r.startswith("citation_accuracy ") for r in rows
    ), rows
    for header in ("score", "threshold", "pass rate"):
        end = rows[0].index(header) + len(header)
        assert all(row[end - 1] != " " and row[end] == " " for row in rows), (header, rows)

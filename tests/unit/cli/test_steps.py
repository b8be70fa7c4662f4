"""The steps after judging: baseline, compare, render, merge, publish, report."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from ragaliq.cli import cli

QUICKSTART = Path(__file__).resolve().parents[3] / "examples" / "quickstart" / "ragaliq.yaml"


def invoke(*args: str):
    return CliRunner().invoke(cli, list(args), env={"ANTHROPIC_API_KEY": ""})


def run_cli(*args: str) -> None:
    result = invoke(*args)
    assert result.exit_code in (0, 1), result.output


def test_merge_cli_refuses_with_exit_2(tmp_path):
    path = tmp_path / "r.json"
    run_cli("run", "--config", str(QUICKSTART), "-o", str(path))
    result = CliRunner().invoke(cli, ["merge", str(path), str(path), "-o", str(tmp_path / "m")])
    assert result.exit_code == 2
    assert "merge each shard once" in result.stderr


def test_compare_against_a_recorded_baseline_passes_an_unchanged_run(tmp_path):
    report_path = tmp_path / "report.json"
    run_cli("run", "--config", str(QUICKSTART), "-o", str(report_path))
    baseline = tmp_path / "baseline.json"
    recorded = invoke("baseline", "update", "--report", str(report_path), "-o", str(baseline))
    assert recorded.exit_code == 0, recorded.output
    compared = invoke(
        "compare",
        "--baseline",
        str(baseline),
        "--report",
        str(report_path),
        "--config",
        str(QUICKSTART),
    )
    assert compared.exit_code == 0, compared.output


def test_compare_names_a_missing_baseline_file_and_how_to_go_on(tmp_path):
    report_path = tmp_path / "report.json"
    run_cli("run", "--config", str(QUICKSTART), "-o", str(report_path))
    result = invoke(
        "compare", "--baseline", str(tmp_path / "nope.json"), "--report", str(report_path)
    )
    assert result.exit_code == 2
    assert "nope.json: not found" in result.stderr
    assert "leave --baseline out" in result.stderr

"""Reports, decisions and baselines read from files: versions checked, numbers finite, and the
summary always what the cases say."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragaliq.cli import cli

QUICKSTART = Path(__file__).resolve().parents[2] / "examples" / "quickstart"


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> dict:
    out = tmp_path_factory.mktemp("run") / "report.json"
    result = CliRunner().invoke(
        cli,
        ["run", "--config", str(QUICKSTART / "ragaliq.yaml"), "-o", str(out)],
        env={"ANTHROPIC_API_KEY": ""},
    )
    assert result.exit_code in (0, 1), result.output
    return json.loads(out.read_text(encoding="utf-8"))


def compare(tmp_path: Path, report: dict, baseline: dict | None = None):
    path = tmp_path / "report.json"
    path.write_text(json.dumps(report), encoding="utf-8")
    args = ["compare", "--report", str(path)]
    if baseline is not None:
        (tmp_path / "baseline.json").write_text(json.dumps(baseline), encoding="utf-8")
        args += ["--baseline", str(tmp_path / "baseline.json")]
    return CliRunner().invoke(cli, args)


def test_a_report_of_another_schema_version_is_refused(tmp_path, report):
    result = compare(tmp_path, {**report, "schema_version": 99})
    assert result.exit_code == 2
    assert "schema_version 99 is not the supported 1" in result.stderr


def test_a_forged_summary_counts_for_nothing(tmp_path, report):
    forged = json.loads(json.dumps(report))
    for case in forged["cases"]:
        case["results"]["faithfulness"]["score"] = 0.0
        case["results"]["faithfulness"]["passed"] = False
    honest = compare(tmp_path, forged)
    for summary in forged["summary"]["evaluators"].values():
        summary.update(score=1.0, pass_rate=1.0, passed=True)
    lying = compare(tmp_path, forged)
    assert honest.exit_code == lying.exit_code == 1, honest.output + lying.output
    assert "faithfulness: 0.000 is below the threshold" in lying.output


@pytest.mark.parametrize("value", ["NaN", "Infinity", "-0.5", "1.5"])
def test_a_score_that_is_not_a_number_between_0_and_1_is_refused(tmp_path, report, value):
    text = json.dumps(report)
    score = report["cases"][0]["results"]["faithfulness"]["score"]
    first = text.index(f'"score": {json.dumps(score)}')
    broken = (
        text[:first] + f'"score": {value}' + text[first + len(f'"score": {json.dumps(score)}') :]
    )
    path = tmp_path / "report.json"
    path.write_text(broken, encoding="utf-8")
    result = CliRunner().invoke(cli, ["compare", "--report", str(path)])
    assert result.exit_code == 2
    assert "not a valid run report" in result.stderr
    assert "Traceback" not in result.output


@pytest.mark.parametrize("max_drop", [float("nan"), -0.1, 2.0])
def test_a_baseline_with_an_impossible_max_drop_is_refused(tmp_path, report, max_drop):
    baseline = {
        "schema_version": 1,
        "recorded_at": "2026-01-01T00:00:00Z",
        "provenance": {
            "judge_provider": report["judge"]["provider"],
            "judge_model": report["judge"]["model"],
            "prompt_version": report["judge"]["prompt_version"],
            "evaluator_versions": {n: e["version"] for n, e in report["evaluators"].items()},
        },
        "thresholds": {n: e["threshold"] for n, e in report["evaluators"].items()},
        "policy": {
            "max_drop": {n: max_drop for n in report["evaluators"]},
            "fail_on_new_hallucinations": False,
            "on_error": "fail",
            "count_unstable": False,
        },
        "report": report,
    }
    result = compare(tmp_path, report, baseline)
    assert result.exit_code == 2
    assert "corrupt baseline (policy.drops" in result.stderr

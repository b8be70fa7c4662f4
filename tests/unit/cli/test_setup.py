from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from ragaliq.cli import cli

GOLDEN = Path(__file__).resolve().parents[3] / "examples" / "calibration" / "golden.jsonl"


def test_init_writes_the_files_and_refuses_to_overwrite(tmp_path):
    runner = CliRunner()
    first = runner.invoke(cli, ["init", "--dir", str(tmp_path)])
    assert first.exit_code == 0, first.output
    for name in ("ragaliq.yaml", "rag_outputs.jsonl", ".github/workflows/ragaliq.yml"):
        assert (tmp_path / name).is_file()
    again = runner.invoke(cli, ["init", "--dir", str(tmp_path)])
    assert again.exit_code == 2
    assert "--force" in again.stderr
    forced = runner.invoke(cli, ["init", "--dir", str(tmp_path), "--force"])
    assert forced.exit_code == 0
    validate = runner.invoke(cli, ["validate", "--config", str(tmp_path / "ragaliq.yaml")])
    assert validate.exit_code == 0, validate.output


def test_init_from_a_release_pins_that_release_and_says_so(tmp_path, monkeypatch):
    from ragaliq import _release

    commit = "4c1d" * 10
    image = "ghcr.io/ragaliq/ragaliq-gate@sha256:" + "e7" * 32
    monkeypatch.setattr(_release, "TAG", "v2.3.4")
    monkeypatch.setattr(_release, "COMMIT", commit)
    monkeypatch.setattr(_release, "IMAGE", image)
    github = CliRunner().invoke(cli, ["init", "--dir", str(tmp_path / "gh")])
    assert github.exit_code == 0, github.output
    assert "use the release v2.3.4 by its commit" in github.output
    workflow = (tmp_path / "gh/.github/workflows/ragaliq.yml").read_text(encoding="utf-8")
    assert f"uses: ragaliq/ragaliq-gate@{commit} # v2.3.4" in workflow
    gitlab = CliRunner().invoke(cli, ["init", "--dir", str(tmp_path / "gl"), "--ci", "gitlab"])
    assert gitlab.exit_code == 0, gitlab.output
    pipeline = (tmp_path / "gl/.gitlab-ci.yml").read_text(encoding="utf-8")
    assert image in pipeline
    assert "Pin the image" not in gitlab.output


def test_init_from_a_build_that_is_no_release_says_what_main_costs(tmp_path):
    result = CliRunner().invoke(cli, ["init", "--dir", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "ragaliq/ragaliq-gate@main, which builds the image on every run" in result.output


def test_calibrate_prints_the_metrics_and_writes_json(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no ragaliq.yaml here: the defaults apply
    out = tmp_path / "calibration.json"
    result = CliRunner().invoke(
        cli,
        ["calibrate", "--labels", str(GOLDEN), "-o", str(out)],
        env={"ANTHROPIC_API_KEY": ""},
    )
    assert result.exit_code == 0, result.output
    assert "Cohen's kappa" in result.output
    assert "balanced accuracy" in result.output
    data = json.loads(out.read_text())
    assert data["n"] + len(data["errors"]) == 96
    strict = CliRunner().invoke(
        cli,
        [
            "calibrate",
            "--labels",
            str(GOLDEN),
            "--min-kappa",
            "0.99",
        ],
        env={"ANTHROPIC_API_KEY": ""},
    )
    assert strict.exit_code == 1
    assert "below --min-kappa 0.99" in strict.stderr


def test_a_config_named_with_config_must_exist(tmp_path):
    missing = tmp_path / "none.yaml"
    result = CliRunner().invoke(
        cli,
        ["calibrate", "--labels", str(GOLDEN), "--config", str(missing)],
        env={"ANTHROPIC_API_KEY": ""},
    )
    assert result.exit_code == 2
    assert f"{missing}: not found" in result.stderr


def test_min_kappa_says_when_kappa_is_undefined(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    labels = tmp_path / "one-class.jsonl"
    claim = "Plans can be refunded within 14 days."
    rows = [
        {"id": str(i), "claim": claim, "context": [claim], "label": "SUPPORTED"} for i in range(2)
    ]
    labels.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    result = CliRunner().invoke(
        cli,
        ["calibrate", "--labels", str(labels), "--min-kappa", "0.2"],
        env={"ANTHROPIC_API_KEY": ""},
    )
    assert result.exit_code == 1
    assert "kappa is undefined" in result.stderr
    assert "nan" not in result.stderr


def test_calibrate_help_says_which_retrieval_judgements_it_measures():
    text = " ".join(CliRunner().invoke(cli, ["calibrate", "--help"]).output.split())
    assert "covers context recall too" in text
    assert "Context precision's chunk ratings are not measured" in text

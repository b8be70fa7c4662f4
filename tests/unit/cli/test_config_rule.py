"""One rule for the config, whatever the command: a config you name must exist; with none named
and no ragaliq.yaml, the built-in defaults apply, with a notice."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from ragaliq.cli import cli
from tests.conftest import write_jsonl

CASE = {
    "id": "return-window",
    "query": "How long do I have to return a bike?",
    "context": ["Unused bikes may be returned within 30 days of delivery."],
    "response": "Unused bikes may be returned within 30 days of delivery.",
}
DEFAULTS = "so this run uses the built-in defaults"


@pytest.fixture
def folder(tmp_path, monkeypatch, no_api_key):
    monkeypatch.chdir(tmp_path)
    write_jsonl(tmp_path / "data.jsonl", [CASE])
    return tmp_path


def commands(folder) -> dict[str, list[str]]:
    report = folder / ".ragaliq" / "report.json"
    return {
        "validate": ["validate", "--dataset", "data.jsonl"],
        "run": ["run", "--dataset", "data.jsonl", "-o", str(report)],
        "baseline record": ["baseline", "record", "--dataset", "data.jsonl", "-o", "base.json"],
        "gate": ["gate", "--base", "none", "--dataset", "data.jsonl"],
        "compare": ["compare", "--report", str(report)],
    }


@pytest.mark.parametrize("name", ["validate", "run", "baseline record", "gate", "compare"])
def test_no_config_named_and_none_there_means_the_defaults_with_a_notice(folder, name):
    runner = CliRunner()
    if name == "compare":
        assert runner.invoke(cli, commands(folder)["run"]).exit_code == 0
    result = runner.invoke(cli, commands(folder)[name])
    assert result.exit_code == 0, result.output
    assert DEFAULTS in result.output
    assert not (folder / "ragaliq.yaml").exists()


@pytest.mark.parametrize("name", ["validate", "run", "baseline record", "gate", "compare"])
def test_a_named_config_that_is_not_there_is_an_error(folder, name):
    runner = CliRunner()
    if name == "compare":
        assert runner.invoke(cli, commands(folder)["run"]).exit_code == 0
    argv = commands(folder)[name]
    result = runner.invoke(cli, [*argv, "--config", "ci.yaml"])
    assert result.exit_code == 2, result.output
    assert "ci.yaml: not found; write one with `ragaliq init`" in result.output
    assert DEFAULTS not in result.output


def test_validate_says_it_checked_the_defaults_not_a_file(folder):
    result = CliRunner().invoke(cli, ["validate", "--dataset", "data.jsonl"])
    assert "the built-in defaults: ok (faithfulness, hallucination, relevance)" in result.output

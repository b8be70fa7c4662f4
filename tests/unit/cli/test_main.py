"""The command group: help, -q/-v, what init says it writes, completion."""

from __future__ import annotations

import functools
import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragaliq.cli import _common, cli
from ragaliq.report.progress import ProgressPrinter
from ragaliq.scaffold import scaffold_files

QUICKSTART = Path(__file__).resolve().parents[3] / "examples" / "quickstart" / "ragaliq.yaml"


def invoke(*args: str, env: dict[str, str] | None = None):
    return CliRunner().invoke(
        cli,
        list(args),
        env={"ANTHROPIC_API_KEY": "", **(env or {})},
        prog_name="ragaliq",
        auto_envvar_prefix="RAGALIQ",  # as the console script runs it (ragaliq.cli.main)
    )


def test_no_arguments_prints_the_help_and_exits_0():
    result = invoke()
    assert result.exit_code == 0, result.output
    assert result.output.startswith("Usage: ragaliq")
    assert "Commands:" in result.output
    assert "run" in result.output and "gate" in result.output


def test_the_actions_entry_point_is_hidden_from_the_help_but_still_there():
    listed = invoke("--help").output
    commands = listed.split("Commands:")[1].split()
    assert "action" not in commands
    assert "gate" in commands
    assert invoke("action", "--help").exit_code == 0


def test_init_help_names_every_file_init_writes(tmp_path):
    text = invoke("init", "--help").output
    unwrapped = "".join(text.split())  # click wraps long paths at their hyphens
    for file in scaffold_files(Path(".")):
        assert str(file.path) in unwrapped, file.path
    assert "four workflows" in " ".join(text.split())


def test_the_help_says_how_to_turn_on_shell_completion():
    text = " ".join(invoke("--help").output.split())
    assert "_RAGALIQ_COMPLETE=bash_source ragaliq" in text
    script = invoke(env={"_RAGALIQ_COMPLETE": "bash_source"})
    assert script.exit_code == 0
    assert "_ragaliq_completion" in script.output


def test_quiet_prints_only_the_verdict_line(tmp_path):
    shutil.copy(QUICKSTART.parent / "rag_outputs.jsonl", tmp_path / "rag_outputs.jsonl")
    config = tmp_path / "ragaliq.yaml"
    config.write_text(QUICKSTART.read_text(encoding="utf-8"), encoding="utf-8")
    report = tmp_path / "report.json"
    loud = invoke("run", "--config", str(config), "-o", str(report))
    assert "evaluator" in loud.stdout and "notice:" in loud.stderr
    quiet = invoke("-q", "run", "--config", str(config), "-o", str(report))
    assert quiet.exit_code == 0, quiet.output
    assert (quiet.stdout, quiet.stderr) == ("run: PASSED\n", "")
    assert json.loads(report.read_text(encoding="utf-8"))["summary"]["cases"] == 20

    strict = config.read_text(encoding="utf-8").replace("threshold: 0.75", "threshold: 0.999")
    config.write_text(strict, encoding="utf-8")
    failed = invoke("--quiet", "run", "--config", str(config))
    assert failed.exit_code == 1
    assert (failed.stdout, failed.stderr) == ("run: FAILED\n", "")
    assert invoke("-q", "validate", "--config", str(config)).stdout == "validate: ok\n"


def test_quiet_still_prints_errors_and_what_a_command_was_asked_for(tmp_path):
    missing = invoke("-q", "run", "--config", str(tmp_path / "nope.yaml"))
    assert missing.exit_code == 2
    assert missing.stdout == ""
    assert missing.stderr.startswith("error: ") and "nope.yaml" in missing.stderr
    schema = invoke("-q", "schema")
    assert json.loads(schema.stdout)["title"] == "ragaliq.yaml"


def test_verbose_prints_progress_for_every_case_from_the_first(monkeypatch):
    result = invoke("-v", "run", "--config", str(QUICKSTART))
    lines = [line for line in result.stderr.splitlines() if line.startswith("judged ")]
    assert lines == [f"judged {n}/20 cases, 0 errors, $0.00 so far" for n in range(1, 21)]
    assert "notice:" in result.stderr
    # Without -v a run quicker than the quiet spell prints no progress at all; its clock stands
    # still, so that a machine slow enough to take two seconds does not print a line.
    monkeypatch.setattr(
        _common, "ProgressPrinter", functools.partial(ProgressPrinter, clock=lambda: 0.0)
    )
    assert "judged " not in invoke("run", "--config", str(QUICKSTART)).stderr


def test_quiet_and_verbose_together_are_a_usage_error():
    result = invoke("-q", "-v", "run")
    assert result.exit_code == 2
    assert "cannot be used together" in result.stderr


@pytest.mark.parametrize("flag", ["-q", "-v"])
def test_quiet_and_verbose_can_also_come_from_the_environment(flag):
    name = "RAGALIQ_QUIET" if flag == "-q" else "RAGALIQ_VERBOSE"
    result = invoke("run", "--config", str(QUICKSTART), env={name: "1"})
    if flag == "-q":
        assert result.stdout == "run: PASSED\n"
    else:
        assert "judged 1/20 cases" in result.stderr


@pytest.mark.parametrize("flag", ["-q", "--quiet"])
def test_quiet_after_the_command_is_the_same_as_before_it(flag):
    result = invoke("run", flag, "--config", str(QUICKSTART))
    assert result.exit_code == 0, result.output
    assert (result.stdout, result.stderr) == ("run: PASSED\n", "")


def test_verbose_and_debug_after_a_nested_command_too(tmp_path):
    result = invoke("run", "--config", str(QUICKSTART), "-v")
    assert "judged 1/20 cases" in result.stderr
    missing = invoke("baseline", "record", "--config", str(tmp_path / "nope.yaml"), "--debug")
    assert missing.exit_code == 2
    assert "Traceback (most recent call last)" in missing.stderr
    both = invoke("-q", "run", "-v")
    assert both.exit_code == 2 and "cannot be used together" in both.stderr

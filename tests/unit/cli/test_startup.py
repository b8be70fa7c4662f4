"""`ragaliq --help` and `--version` answer at once: no judge, GitHub client or templates."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from ragaliq.cli import COMMANDS, cli

HEAVY = ("anthropic", "github", "jinja2", "httpx", "httpx2", "requests", "urllib3")
"""Packages the help and the version must not import: the judge's SDK and its transport, the
GitHub client and its, the template engine."""

PROBE = """
import json, sys
sys.argv = ["ragaliq", *json.loads(sys.argv[1])]
from ragaliq.__main__ import main
try:
    main()
except SystemExit:
    pass
sys.stderr.write(json.dumps(sorted(sys.modules)))
"""


def imported_by(*argv: str) -> tuple[str, list[str]]:
    """What ``ragaliq ARGV`` prints, and every module it imported, from a fresh interpreter."""
    done = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(argv)],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout, json.loads(done.stderr)


@pytest.mark.parametrize("argv", [["--help"], ["--version"], []])
def test_help_and_version_import_no_judge_github_client_or_template_engine(argv):
    output, modules = imported_by(*argv)
    assert "ragaliq" in output
    loaded = sorted({m.split(".")[0] for m in modules} & set(HEAVY))
    assert loaded == [], f"ragaliq {' '.join(argv)} imported {loaded}"
    ours = [m for m in modules if m.startswith("ragaliq.")]
    assert not [m for m in ours if m.startswith(("ragaliq.judges", "ragaliq.report"))], ours


def test_a_commands_help_loads_that_command_only():
    output, modules = imported_by("schema", "--help")
    assert "JSON Schema" in output
    assert "ragaliq.cli.setup" in modules
    assert "ragaliq.cli.steps" not in modules and "github" not in {m.split(".")[0] for m in modules}


def test_the_help_lists_every_command_with_its_own_short_help():
    ctx = cli.make_context("ragaliq", [], resilient_parsing=True)
    for name, spec in COMMANDS.items():
        command = cli.get_command(ctx, name)
        assert command is not None and command.name == name
        assert command.get_short_help_str(limit=200) == spec.short_help, name
        assert command.hidden == spec.hidden, name
    output, _ = imported_by("--help")
    shown = [name for name, spec in COMMANDS.items() if not spec.hidden]
    for name in shown:
        assert f"\n  {name} " in output, name
    assert "\n  action " not in output

"""The README shows what the tool really does."""

from __future__ import annotations

import importlib.util
import re
import subprocess
from pathlib import Path

import pytest

from tests.conftest import console_tool

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def load_script():
    spec = importlib.util.spec_from_file_location(
        "update_readme", ROOT / "scripts/update_readme.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_example_comment_is_what_the_gate_renders_today():
    script = load_script()
    assert script.splice(README, script.render_example()) == README, (
        "README.md's example comment is out of date: run scripts/update_readme.py"
    )


def test_exactly_two_set_up_commands():
    setup = README.split("## Set up", 1)[1].split("\n## ", 1)[0]
    block = setup.split("```bash", 1)[1].split("```", 1)[0]
    commands = [line for line in block.splitlines() if line.strip() and not line.startswith("#")]
    assert len(commands) == 2
    assert "ragaliq run --config examples/quickstart/ragaliq.yaml" in commands[0]
    assert commands[1] == "./scripts/test"
    assert "./scripts/test" in (ROOT / ".ci/run").read_text(encoding="utf-8")


def test_the_readme_links_resolve():
    for target in re.findall(r"\]\(((?!https?:)[^)#]+)\)", README):
        assert (ROOT / target).exists(), target


def test_the_readme_workflow_snippets_pass_actionlint(tmp_path):
    """Every YAML block with jobs is a workflow a user may paste; its shell must work too."""
    actionlint = console_tool("actionlint")
    if actionlint is None:
        pytest.skip("actionlint is not installed (it comes with the project's `lint` extra)")
    blocks = [b for b in re.findall(r"```yaml\n(.*?)```", README, re.S) if "jobs:" in b]
    assert blocks
    workflows = tmp_path / ".github" / "workflows"
    workflows.mkdir(parents=True)
    paths = []
    for i, block in enumerate(blocks):
        text = block if block.startswith(("name:", "on:")) else f"on: pull_request\n{block}"
        path = workflows / f"readme-{i}.yml"
        path.write_text(text, encoding="utf-8")
        paths.append(str(path))
    shellcheck = [] if console_tool("shellcheck") else ["-shellcheck="]
    result = subprocess.run(
        [actionlint, *shellcheck, "-no-color", *paths],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr

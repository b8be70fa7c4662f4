"""The README shows what the tool really does."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

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

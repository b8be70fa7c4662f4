"""Stories in a repository of their own: a branch off main, gated as a pull request."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from ragaliq.cli import cli


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)


def invoke(args: list[str]) -> tuple[int, str]:
    result = CliRunner().invoke(cli, args, env={"ANTHROPIC_API_KEY": ""})
    return result.exit_code, result.output


def new_repository(root: Path) -> Path:
    """An empty repository on ``main`` with a committer."""
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.email", "dev@example.com")
    git(root, "config", "user.name", "Dev")
    return root


def main_with_baseline(root: Path, config: str, write: Callable[[], None], message: str) -> Path:
    """A new repository whose main holds ``config`` and what ``write`` writes, with its baseline."""
    new_repository(root)
    (root / "ragaliq.yaml").write_text(config, encoding="utf-8")
    write()
    code, output = invoke(["baseline", "record", "--config", str(root / "ragaliq.yaml")])
    assert code == 0, output
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", message)
    return root


def pull_request(
    repo: Path, name: str, change: Callable[[], None]
) -> tuple[int, dict[str, Any], str, str]:
    """Make ``change`` on a branch off main, commit it and gate it as a pull request.

    Returns the exit code, the decision, the output and the comment; the run report is
    ``.ragaliq/<name>.report.json``.
    """
    git(repo, "checkout", "-q", "-B", name, "main")
    change()
    git(repo, "commit", "-q", "--allow-empty", "-am", name)
    try:
        out = repo / ".ragaliq"
        code, output = invoke(
            [
                "gate",
                "--config",
                str(repo / "ragaliq.yaml"),
                "--decision-out",
                str(out / f"{name}.decision.json"),
                "--comment-out",
                str(out / f"{name}.comment.md"),
                "-o",
                str(out / f"{name}.report.json"),
            ]
        )
        decision = json.loads((out / f"{name}.decision.json").read_text(encoding="utf-8"))
        comment = (out / f"{name}.comment.md").read_text(encoding="utf-8")
        return code, decision, output, comment
    finally:
        git(repo, "checkout", "-q", "main")

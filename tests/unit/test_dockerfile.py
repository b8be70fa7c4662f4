"""The action's image trusts no checkout and imports nothing from the workspace."""

from __future__ import annotations

import json
from pathlib import Path

DOCKERFILE = Path(__file__).resolve().parents[2] / "Dockerfile"


def instructions() -> list[tuple[str, str]]:
    """The Dockerfile's instructions (continuation lines joined, comments left out)."""
    joined: list[str] = []
    pending = ""
    for line in DOCKERFILE.read_text(encoding="utf-8").splitlines():
        if line.lstrip().startswith("#") or not line.strip():
            continue
        pending += line.rstrip("\\").strip() + " "
        if not line.rstrip().endswith("\\"):
            joined.append(pending.strip())
            pending = ""
    return [(text.split(" ", 1)[0].upper(), text.split(" ", 1)[1]) for text in joined]


def test_git_is_never_told_to_trust_a_checkout():
    for keyword, text in instructions():
        assert "safe.directory" not in text, f"{keyword} {text}"


def test_python_runs_isolated_so_the_workspace_cannot_add_imports():
    entrypoints = [json.loads(text) for keyword, text in instructions() if keyword == "ENTRYPOINT"]
    assert entrypoints == [["python", "-I", "-m", "ragaliq", "action"]]

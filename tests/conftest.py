from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ragaliq.config import GateConfig
from ragaliq.models import ClaimVerdict, TestCase, Verdict

REPO_ROOT = Path(__file__).resolve().parents[1]


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--run-live", action="store_true", help="run tests that call the real Anthropic API"
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    run_live = config.getoption("--run-live") and os.environ.get("ANTHROPIC_API_KEY")
    skip = pytest.mark.skip(reason="live test: needs --run-live and ANTHROPIC_API_KEY")
    for item in items:
        if "live" in item.keywords and not run_live:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def no_traceback_without_debug(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every command line run in the suite: a traceback only with --debug, never otherwise.

    Wraps click's test runner (a library, not this project), so that no input any test gives
    the command line can end in a traceback unnoticed.
    """
    from click.testing import CliRunner

    invoke = CliRunner.invoke

    def checked(self: CliRunner, cli: Any, args: Any = None, *rest: Any, **kw: Any) -> Any:
        result = invoke(self, cli, args, *rest, **kw)
        words = [args] if isinstance(args, str) else list(args or ())
        crashed = result.exception is not None and not isinstance(result.exception, SystemExit)
        if "--debug" not in words and crashed:
            raise AssertionError(
                f"ragaliq {' '.join(map(str, words))} raised "
                f"{type(result.exception).__name__}: {result.exception}"
            ) from result.exception
        if "--debug" not in words:
            shown = result.output + (result.stderr if result.stderr_bytes is not None else "")
            assert "Traceback (most recent call last)" not in shown, shown
        return result

    monkeypatch.setattr(CliRunner, "invoke", checked)


_CACHES = frozenset({".pytest_cache", "__pycache__", ".mypy_cache", ".ruff_cache"})


def _written_here(folder: Path) -> set[str]:
    """The files and folders in ``folder`` and in its ``.ragaliq/`` (where commands write)."""
    found = {p.name for p in folder.iterdir() if p.name not in _CACHES}
    own = folder / ".ragaliq"
    if own.is_dir():
        found |= {f".ragaliq/{p.name}" for p in own.iterdir()}
    return found


@pytest.fixture(autouse=True)
def nothing_written_where_pytest_runs() -> Iterator[None]:
    """No test leaves a file in the directory pytest runs from: results belong in ``tmp_path``.

    A command run with its default paths (``.ragaliq/comment.md``, ``report.json``) writes
    into the working directory, which is the repository or wherever a developer runs pytest.
    """
    folder = Path.cwd()
    before = _written_here(folder)
    yield
    left = sorted(_written_here(folder) - before)
    assert not left, f"the test wrote {left} into {folder}; give it a path under tmp_path"


def console_tool(name: str) -> str | None:
    """A console script next to this interpreter (the venv), else one on PATH."""
    beside = Path(sys.executable).parent / name
    return str(beside) if beside.is_file() else shutil.which(name)


def git(root: Path, *args: str) -> str:
    """Run git in ``root`` (a test's own repository); its output, stripped."""
    done = subprocess.run(
        ["git", "-C", str(root), *args], capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def new_repository(root: Path) -> Path:
    """A fresh git repository at ``root`` on ``main``, with a committer set."""
    if shutil.which("git") is None:
        pytest.skip("git is needed for a repository")
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.email", "ci@example.com")
    git(root, "config", "user.name", "CI")
    return root


def make_case(**overrides: Any) -> TestCase:
    values: dict[str, Any] = {
        "id": "case-1",
        "query": "How long is the refund window?",
        "context": ("Refunds are available within 14 days of purchase.",),
        "response": "Refunds are available within 14 days of purchase.",
    }
    values.update(overrides)
    return TestCase(**values)


def make_verdict(verdict: Verdict = Verdict.SUPPORTED, **overrides: Any) -> ClaimVerdict:
    values: dict[str, Any] = {"text": "a claim", "verdict": verdict, "confidence": 0.9}
    values.update(overrides)
    return ClaimVerdict(**values)


def every_evaluator() -> list[Any]:
    """Every evaluator that asks the judge, the ones off by default (context precision and recall,
    citation accuracy) on."""
    from ragaliq.evaluators import EVALUATORS

    return [kind(enabled=True) for kind in EVALUATORS if kind.asks_judge()]


def make_config(**overrides: Any) -> GateConfig:
    return GateConfig.model_validate(overrides)


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


@pytest.fixture
def no_api_key(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    yield

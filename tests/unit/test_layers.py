"""The layers only look down: rendering and deciding the gate load no judge, no SDK."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src" / "ragaliq"


def loaded_after(statement: str) -> set[str]:
    code = f"{statement}\nimport sys\nprint('\\n'.join(sorted(sys.modules)))"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    return set(done.stdout.split())


@pytest.mark.parametrize("module", ["ragaliq.cli", "ragaliq"])
def test_the_edges_do_not_load_the_anthropic_sdk_until_a_judge_needs_it(module):
    assert "anthropic" not in loaded_after(f"import {module}")


@pytest.mark.parametrize(
    "module",
    [
        "ragaliq.report",
        "ragaliq.report.markdown",
        "ragaliq.report.calibration",
        "ragaliq.report.html",
        "ragaliq.gate",
        "ragaliq.github.comment",
        "ragaliq.run_report",
        "ragaliq.baseline",
        "ragaliq.metrics",
    ],
)
def test_rendering_deciding_and_reading_results_load_no_judge(module):
    modules = loaded_after(f"import {module}")
    assert "anthropic" not in modules
    assert not {m for m in modules if m == "ragaliq.judges" or m.startswith("ragaliq.judges.")}


def test_one_judge_module_does_not_load_every_judge():
    modules = loaded_after("import ragaliq.judges.base")
    assert {m for m in modules if m.startswith("ragaliq.judges")} == {
        "ragaliq.judges",
        "ragaliq.judges.base",
    }


def test_an_offline_run_never_loads_the_anthropic_sdk(tmp_path):
    (tmp_path / "d.jsonl").write_text(
        '{"id": "a", "query": "q?", "context": ["The sky is blue."], "response": "It is blue."}\n',
        encoding="utf-8",
    )
    (tmp_path / "ragaliq.yaml").write_text(
        "dataset: d.jsonl\njudge: {provider: offline}\n", encoding="utf-8"
    )
    statement = (
        "from ragaliq.cli import main\n"
        "try:\n"
        f"    main(['run', '--config', {str(tmp_path / 'ragaliq.yaml')!r}])\n"
        "except SystemExit:\n"
        "    pass"
    )
    assert "anthropic" not in loaded_after(statement)


STAGES: list[tuple[str, ...]] = [
    ("text",),
    ("git", "repository", "checkout"),
    ("dataset", "labels"),
    ("evaluators",),
    ("policy",),
    ("baseline",),
    ("config",),
    ("judges",),
    ("run_report",),
    ("pool", "runner", "shards", "preflight"),
    ("metrics", "calibrate"),
    ("gate",),
    ("report",),
    ("github",),
    ("trust",),
    ("inputs",),
    ("judging",),
    ("gating",),
]
"""The layers, lowest first (docs/architecture.md): no module imports one from a later layer.

A module of ``ragaliq`` (or a package's modules) belongs to the layer that names it; the shared
helpers (``errors``, ``models``, ``_files``...) and the edges (``cli``, ``action``) to none.
"""


def imports_of(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module == "ragaliq":
            found |= {f"ragaliq.{a.name}" for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("ragaliq"):
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("ragaliq")}
    return found


def stage_of(module: str) -> int | None:
    parts = module.split(".")
    name = parts[1] if len(parts) > 1 else ""
    return next((i for i, names in enumerate(STAGES) if name in names), None)


def test_no_stage_imports_a_stage_after_its_own():
    backwards = []
    for path in SRC.rglob("*.py"):
        module = "ragaliq." + ".".join(path.relative_to(SRC).with_suffix("").parts)
        own = stage_of(module)
        if own is None:
            continue
        for imported in imports_of(path):
            theirs = stage_of(imported)
            if theirs is not None and theirs > own:
                backwards.append(f"{module} imports {imported}")
    assert backwards == []

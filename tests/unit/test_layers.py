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
    (
        "_version",
        "_release",
        "_lazy",
        "_ids",
        "_yaml",
        "_fields",
        "_validation",
        "redaction",
        "signals",
        "environment",
        "_times",
    ),
    ("text",),
    ("models",),
    ("errors",),
    ("_reading", "_streamed", "_files"),
    ("git", "repository", "checkout"),
    ("dataset", "labels"),
    ("evaluators",),
    ("policy",),
    ("baseline",),
    ("config", "scaffold"),
    ("store",),
    ("judges.base",),
    ("offline",),
    ("judges",),
    ("run_report",),
    ("pool", "runner", "shards", "preflight"),
    ("metrics", "calibrate"),
    ("gate",),
    ("exits",),
    ("report",),
    ("forge",),
    ("github", "gitlab"),
    ("trust", "tightening"),
    ("inputs",),
    ("judging",),
    ("gate_sequence",),
    ("ci",),
    ("python_api", "testing", "pytest_plugin"),
    ("cli", "action", "__main__", "__init__"),
]
"""The layers, lowest first (docs/architecture.md): no module imports one from a later layer.

Every module of ``ragaliq`` belongs to the layer that names it (a package's modules to the
package's): the shared helpers at the bottom, the edges (the command line, the action, the
package's entry points) at the top.
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
    """The layer of ``module``: its own module's where a layer names it (``judges.base``), else its
    top-level package's."""
    parts = module.split(".")
    name = parts[1] if len(parts) > 1 else "__init__"
    own = ".".join(parts[1:3])
    return next(
        (i for i, names in enumerate(STAGES) if own in names),
        next((i for i, names in enumerate(STAGES) if name in names), None),
    )


def modules() -> list[tuple[str, Path]]:
    return [
        ("ragaliq." + ".".join(path.relative_to(SRC).with_suffix("").parts), path)
        for path in sorted(SRC.rglob("*.py"))
    ]


def test_every_module_has_a_layer():
    assert [module for module, _ in modules() if stage_of(module) is None] == []


def test_no_stage_imports_a_stage_after_its_own():
    backwards = []
    for module, path in modules():
        own = stage_of(module)
        assert own is not None
        for imported in imports_of(path):
            theirs = stage_of(imported)
            if theirs is not None and theirs > own:
                backwards.append(f"{module} imports {imported}")
    assert backwards == []


ADAPTERS = ("ragaliq.github", "ragaliq.gitlab")
"""The host adapters: only each adapter itself and the entries (``ragaliq.action``) import one."""


def test_only_an_adapter_itself_and_the_entries_import_an_adapter():
    offenders = []
    for module, path in modules():
        own = next((a for a in ADAPTERS if module == a or module.startswith(a + ".")), None)
        if own is not None or module.startswith("ragaliq.action"):
            continue
        offenders += [
            f"{module} imports {imported}"
            for imported in imports_of(path)
            if any(imported == a or imported.startswith(a + ".") for a in ADAPTERS)
        ]
    assert offenders == []


def test_the_core_on_a_host_imports_the_port_and_no_adapter():
    core = [(m, p) for m, p in modules() if m.startswith("ragaliq.ci.")]
    assert core, "the core's package"
    for module, path in core:
        assert not any(i.startswith(ADAPTERS) for i in imports_of(path)), module

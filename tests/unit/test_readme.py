"""The README shows what the tool really does, and leads a team that adopts it."""

from __future__ import annotations

import importlib.util
import re
import subprocess
from pathlib import Path

import pytest

from tests.conftest import console_tool

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
PAGES = {
    path: path.read_text(encoding="utf-8")
    for path in [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted(ROOT.glob("docs/*.md"))]
}
"""The README, CONTRIBUTING.md and the docs/ pages the README leads to."""
MAX_README_WORDS = 5_000


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


def test_exactly_two_set_up_commands_near_the_top():
    setup = README.split("## Try it, develop it", 1)[1].split("\n## ", 1)[0]
    assert README.index("## Try it, develop it") < README.index("<!-- example-comment:start -->")
    block = setup.split("```bash", 1)[1].split("```", 1)[0]
    commands = [line for line in block.splitlines() if line.strip() and not line.startswith("#")]
    assert len(commands) == 2
    assert "ragaliq run --config examples/quickstart/ragaliq.yaml" in commands[0]
    assert commands[1] == "./scripts/test"
    assert "./scripts/test" in (ROOT / ".ci/run").read_text(encoding="utf-8")


def test_the_readme_stays_short():
    words = len(README.split())
    assert words <= MAX_README_WORDS, (
        f"README.md has {words} words, more than {MAX_README_WORDS}: move detail to a docs/ page"
    )


def test_the_first_example_comment_fails_and_lists_newly_hallucinated_claims():
    first = README.split("<!-- ragaliq:comment", 1)[1]
    headline = next(line for line in first.splitlines() if line.startswith("### "))
    assert "failed" in headline and "passed" not in headline, headline
    listed = first.split("#### Newly hallucinated claims", 1)[1].split("</details>", 1)[0]
    assert re.search(r"<sub>`[0-9a-f]{16}`</sub>", listed), "each new claim shows its id"


def test_the_links_of_the_readme_and_the_docs_resolve():
    for page, text in PAGES.items():
        for target in re.findall(r"\]\(((?!https?:|mailto:)[^)#\s]+)(?:#[^)]*)?\)", text):
            assert (page.parent / target).exists(), f"{page.relative_to(ROOT)}: {target}"


def test_the_links_into_pages_name_their_headings():
    anchors = {page: _anchors(text) for page, text in PAGES.items()}
    for page, text in PAGES.items():
        for target, anchor in re.findall(r"\]\(((?!https?:)[^)#\s]*)#([^)\s]+)\)", text):
            linked = (page.parent / target).resolve() if target else page
            if linked in anchors:
                assert anchor in anchors[linked], f"{page.relative_to(ROOT)}: {target}#{anchor}"


def _anchors(text: str) -> set[str]:
    """GitHub's anchors of a page's headings: lower case, punctuation dropped, spaces to hyphens."""
    out = set()
    for heading in re.findall(r"^#+ (.+)$", re.sub(r"```.*?```", "", text, flags=re.S), re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        out.add(slug)
    return out


def test_the_readme_workflow_snippets_pass_actionlint(tmp_path):
    """Every YAML block with jobs is a workflow a user may paste; its shell must work too."""
    actionlint = console_tool("actionlint")
    if actionlint is None:
        pytest.skip("actionlint is not installed (it comes with the project's `lint` extra)")
    blocks = [
        b
        for text in PAGES.values()
        for b in re.findall(r"```yaml\n(.*?)```", text, re.S)
        if "jobs:" in b
    ]
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


def required_status() -> str:
    """The status the README's adoption steps tell a team to require."""
    adopt = README.split("## Adopt it", 1)[1].split("\n## ", 1)[0]
    named = re.findall(r"require the status `([^`]+)`", adopt)
    assert len(named) == 1, f"the adoption steps name one status to require, not {named}"
    return named[0]


def test_the_status_the_readme_says_to_require_is_the_one_the_gate_sets_for_main():
    from ragaliq.forge import status_context

    assert required_status() == status_context("default", "main")
    for said in re.findall(r"`(RagaliQ Gate \([^`)]*\))`", README):
        assert said == required_status(), f"the README also names the status {said!r}"


def test_init_says_what_the_readme_says_it_writes_and_the_status_to_require(tmp_path):
    from click.testing import CliRunner

    from ragaliq.cli import cli
    from ragaliq.scaffold import scaffold_files

    done = CliRunner().invoke(cli, ["init", "--dir", str(tmp_path)], env={"ANTHROPIC_API_KEY": ""})
    assert done.exit_code == 0, done.output
    files = [f.path.relative_to(tmp_path).as_posix() for f in scaffold_files(tmp_path)]
    adopt = README.split("## Adopt it", 1)[1].split("\n## ", 1)[0]
    init_line = next(line for line in adopt.splitlines() if line.startswith("ragaliq init "))
    workflows = [name for name in files if name.startswith(".github/workflows/")]
    for name in files:
        assert f"wrote {tmp_path / name}" in done.output
        assert (tmp_path / name).is_file()
        if name in workflows:
            assert f"`{Path(name).name}`" in adopt, f"the README's adoption omits {name}"
        else:
            assert name in init_line, f"the README's `ragaliq init` line omits {name}"
    count = {2: "two", 3: "three", 4: "four"}[len(workflows)]
    assert f"{count} workflows" in init_line and f"wrote {count} workflows" in adopt
    closing = done.output.strip().splitlines()[-1]
    assert f'"{required_status()}"' in closing
    for name in ("ragaliq-baselines", *(Path(n).name for n in workflows if "forks" not in n)):
        assert name in closing and name in adopt, name


def test_the_evaluator_table_lists_every_evaluator_the_registry_has():
    from ragaliq.evaluators import EVALUATORS

    section = README.split("### Scores and thresholds", 1)[1].split("\n### ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    listed = [name for row in rows for name in re.findall(r"`([a-z_]+)`", row.split(" | ")[0])]
    assert sorted(listed) == sorted(e.name for e in EVALUATORS)
    for row in rows:
        names = re.findall(r"`([a-z_]+)`", row.split(" | ")[0])
        off = {e.name for e in EVALUATORS if e.name in names and not e.Options().enabled}
        assert ("(off until configured)" in row) == bool(off), row

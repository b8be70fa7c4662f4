"""The README and the docs agree with the code: every command, option, file and figure they name.

Every `ragaliq ...` the README, CONTRIBUTING.md and the docs/ pages write (in code, inline or in a
block) is checked against the command line's own commands and options; every repository path
they name in code exists; and the figures the README quotes are read from where they come from.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import click
import pytest

from ragaliq.cli import cli
from ragaliq.config import GateConfig
from ragaliq.evaluators import EVALUATORS
from ragaliq.gate.acceptance import ID_LENGTH

ROOT = Path(__file__).resolve().parents[2]
PAGES = {
    path.relative_to(ROOT).as_posix(): path.read_text(encoding="utf-8")
    for path in [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted(ROOT.glob("docs/*.md"))]
}
README = PAGES["README.md"]
MENTION = re.compile(
    r"(?<![\w./@$-])(?<!from )(?<!import )ragaliq(?![\w./@-])((?:[ \t]+[^\s`#|;&)>]+)*)"
)
"""``ragaliq`` as a command, then its words up to the end of the command."""
REPO_DIRS = (
    "benchmarks/",
    "docs/",
    "examples/",
    "requirements/",
    "scripts/",
    "src/",
    "templates/",
    "tests/",
)
"""Folders of this repository: a path in code starting with one names a file of ours."""
GLOBAL = {"-q", "--quiet", "-v", "--verbose", "--debug", "-h", "--help"}


def code_of(text: str) -> list[str]:
    """The code of a page: each fenced block's lines, then each inline span."""
    blocks = re.findall(r"^```[^\n]*\n(.*?)^```", text, re.S | re.M)
    prose = re.sub(r"^```[^\n]*\n.*?^```", "", text, flags=re.S | re.M)
    lines = [line.split(" #", 1)[0] for block in blocks for line in block.splitlines()]
    return lines + re.findall(r"`([^`\n]+)`", prose)


def mentions() -> list[tuple[str, str]]:
    """(page, the words after ``ragaliq``) for every command a page writes."""
    found = []
    for page, text in PAGES.items():
        for code in code_of(text):
            for match in MENTION.finditer(code):
                words = match[1].replace("[", " ").replace("]", " ").replace('"', " ")
                found.append((page, " ".join(words.replace("\\", " ").split())))
    return found


def resolve(words: list[str]) -> tuple[click.Command, list[str], str]:
    """The command ``words`` name (descending into groups), the words left, and its name."""
    command: click.Command = cli
    name = "ragaliq"
    ctx = click.Context(cli)
    while words and isinstance(command, click.Group) and not words[0].startswith("-"):
        sub = command.get_command(ctx, words[0])
        if sub is None:
            break
        command, name, words = sub, f"{name} {words[0]}", words[1:]
    return command, words, name


def options_of(command: click.Command) -> set[str]:
    return {opt for param in command.params for opt in (*param.opts, *param.secondary_opts)}


def test_the_pages_name_commands_at_all():
    named = {resolve(words.split())[2] for _, words in mentions()}
    assert {"ragaliq run", "ragaliq gate", "ragaliq init", "ragaliq baseline record"} <= named


@pytest.mark.parametrize(("page", "words"), sorted(set(mentions())))
def test_every_command_and_option_the_docs_name_exists(page, words):
    tokens = words.split()
    if tokens and re.fullmatch(r"[A-Z_]+", tokens[0]):
        return  # `ragaliq COMMAND --help`: a placeholder for any command
    command, rest, name = resolve(tokens)
    if tokens and not tokens[0].startswith("-"):
        assert name != "ragaliq" or tokens[0] not in {"", None}, words
        assert command is not cli, f"{page}: `ragaliq {words}`: no command {tokens[0]!r}"
    if isinstance(command, click.Group) and rest and not rest[0].startswith("-"):
        pytest.fail(f"{page}: `ragaliq {words}`: {name} has no command {rest[0]!r}")
    known = options_of(command) | GLOBAL | (options_of(cli) if command is cli else set())
    for token in rest:
        flag = token.split("=", 1)[0]
        if re.fullmatch(r"--?[A-Za-z][\w-]*", flag):
            assert flag in known, f"{page}: `ragaliq {words}`: {name} has no option {flag}"


def test_every_repository_path_the_docs_name_exists():
    for page, text in PAGES.items():
        for code in code_of(text):
            for token in re.findall(r"[\w./-]+", code):
                path = token.removeprefix("./").removeprefix("../").rstrip(".,:")
                if path.startswith(REPO_DIRS) and "*" not in path and "<" not in path:
                    assert (ROOT / path).exists(), f"{page}: {token}"


def test_the_readme_figures_are_the_codes():
    defaults = {cls.name: cls.default_threshold for cls in EVALUATORS}
    table = README.split("| evaluator | a case's score | default threshold |", 1)[1]
    rows = dict(re.findall(r"^\| `(\w+)`[^|]*\|[^|]*\| ([\d.]+) \|$", table, re.M))
    assert rows == {
        name: format(defaults[name], "g") for name in ("faithfulness", "hallucination", "relevance")
    }
    retrieval = re.search(
        r"^\| `context_precision`, `context_recall`.*\| ([\d.]+), ([\d.]+) \|$", table, re.M
    )
    assert retrieval is not None
    assert (float(retrieval[1]), float(retrieval[2])) == (
        defaults["context_precision"],
        defaults["context_recall"],
    )
    max_drop = GateConfig().gate.max_drop
    assert f"`gate.max_drop` ({max_drop:g} by default)" in README
    assert f"max_drop: {max_drop:g}" in README
    assert f"a {ID_LENGTH}-character **id**" in README
    quickstart = ROOT / "examples/quickstart/rag_outputs.jsonl"
    cases = sum(1 for line in quickstart.read_text(encoding="utf-8").splitlines() if line.strip())
    assert f"the quick start's {cases} answers" in README
    assert all(json.loads(line)["id"] for line in quickstart.read_text("utf-8").splitlines())


def test_the_readme_counts_the_workflows_init_writes():
    from ragaliq.scaffold import WORKFLOW_FILES

    words = {2: "two", 3: "three", 4: "four"}[len(WORKFLOW_FILES)]
    assert f"{words} workflows" in README
    for text in PAGES.values():
        for other in {"two", "three", "four"} - {words}:
            assert f"the {other} workflows `ragaliq init` writes" not in text
            assert f"{other} workflows (`.github" not in text

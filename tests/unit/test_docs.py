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


def problems_of(page: str, words: str) -> list[str]:
    """What is wrong with ``ragaliq <words>`` as ``page`` writes it: no such command or option."""
    tokens = words.split()
    if tokens and re.fullmatch(r"[A-Z_]+", tokens[0]):
        return []  # `ragaliq COMMAND --help`: a placeholder for any command
    command, rest, name = resolve(tokens)
    if tokens and not tokens[0].startswith("-") and command is cli:
        return [f"{page}: `ragaliq {words}`: no command {tokens[0]!r}"]
    if isinstance(command, click.Group) and rest and not rest[0].startswith("-"):
        return [f"{page}: `ragaliq {words}`: {name} has no command {rest[0]!r}"]
    known = options_of(command) | GLOBAL | (options_of(cli) if command is cli else set())
    return [
        f"{page}: `ragaliq {words}`: {name} has no option {flag}"
        for flag in (token.split("=", 1)[0] for token in rest)
        if re.fullmatch(r"--?[A-Za-z][\w-]*", flag) and flag not in known
    ]


@pytest.mark.parametrize(("page", "words"), sorted(set(mentions())))
def test_every_command_and_option_the_docs_name_exists(page, words):
    assert problems_of(page, words) == []


@pytest.mark.parametrize(
    ("words", "problem"),
    [
        ("gat --config x.yaml", "no command 'gat'"),
        ("baseline recrod", "ragaliq baseline has no command 'recrod'"),
        ("run --datset d.jsonl", "ragaliq run has no option --datset"),
        ("gate -x", "ragaliq gate has no option -x"),
    ],
)
def test_a_command_or_option_the_cli_lacks_is_reported(words, problem):
    assert problems_of("page.md", words) == [f"page.md: `ragaliq {words}`: {problem}"]
    assert problems_of("page.md", "COMMAND --help") == []
    assert problems_of("page.md", "baseline record --commit abc -q") == []


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
        name: format(defaults[name], "g")
        for name in ("faithfulness", "hallucination", "relevance", "citation_accuracy")
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


def test_the_console_script_the_readme_runs_from_its_venv_is_the_one_the_package_installs():
    import importlib
    import tomllib

    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "scripts"
    ]
    module, _, function = scripts["ragaliq"].partition(":")
    assert callable(getattr(importlib.import_module(module), function))
    runs = [
        (page, code)
        for page, text in PAGES.items()
        for code in code_of(text)
        if re.search(r"/bin/ragaliq\b", code)
    ]
    assert any(page == "README.md" and ".venv/bin/ragaliq" in code for page, code in runs)
    for page, code in runs:
        for venv, tool, words in re.findall(
            r"([\w./-]+)/bin/([\w-]+)((?:[ \t]+[^\s`#|;&)>]+)*)", code
        ):
            assert tool in {"pip", "python", "python3", *scripts}, f"{page}: {venv}/bin/{tool}"
            if tool in scripts:
                # The same line makes that environment and installs this package into it first.
                made = code.index(f"-m venv {venv}")
                installed = code.index(f"{venv}/bin/pip install -e .")
                assert made < installed < code.index(f"{venv}/bin/{tool}"), f"{page}: {code}"
                assert problems_of(page, words) == []


def test_the_files_the_docs_say_init_writes_are_the_files_it_writes(tmp_path):
    from ragaliq.scaffold import DATASET_FILE, GITIGNORE_FILE, WORKFLOW_FILES, write_scaffold

    written = {path.relative_to(tmp_path).as_posix() for path in write_scaffold(tmp_path)}
    assert written == {"ragaliq.yaml", DATASET_FILE, GITIGNORE_FILE, *WORKFLOW_FILES}
    examples = {path.name for path in (ROOT / "examples" / "workflows").glob("*.yml")}
    for name in WORKFLOW_FILES:
        assert (ROOT / "examples" / "workflows" / Path(name).name).read_text(encoding="utf-8") == (
            tmp_path / name
        ).read_text(encoding="utf-8"), name
    named = set()
    for page, text in PAGES.items():
        for path in re.findall(r"(?<![\w./-])\.github/workflows/([\w.-]+\.ya?ml)", text):
            where = f".github/workflows/{path}"
            # A gate's workflow is one init writes; any other is this repository's own.
            assert where in written or (ROOT / where).is_file(), f"{page}: {where}"
            assert where in written or not path.startswith("ragaliq"), f"{page}: {where}"
        for name in re.findall(r"(?<![\w-])(ragaliq[\w-]*\.yml)\b", text):
            named.add(name)
            assert name in examples, (
                f"{page}: {name} is no workflow init writes or the examples hold"
            )
    assert {Path(name).name for name in WORKFLOW_FILES} <= named
    for name in (DATASET_FILE, GITIGNORE_FILE, "ragaliq.yaml"):
        assert name in README, name


def test_the_pages_messages_send_users_to_online_are_pages_of_ours():
    from ragaliq.config import DOCS_URL

    assert DOCS_URL.endswith("/blob/main/docs")
    linked = {
        name
        for path in (ROOT / "src").rglob("*.py")
        for name in re.findall(r"DOCS_URL\}/([\w-]+\.md)", path.read_text(encoding="utf-8"))
    }
    assert {"configuration.md", "baselines.md"} <= linked
    for name in linked:
        assert (ROOT / "docs" / name).is_file(), name


def test_the_sections_skip_messages_send_contributors_to_are_there():
    """A test that skips for want of shared data or a Docker daemon says where CONTRIBUTING.md
    tells how to get them; those sections exist and name the same commands and folders."""
    headings = set(re.findall(r"^## (.+)$", PAGES["CONTRIBUTING.md"], re.M))
    sent = {
        section
        for path in (ROOT / "tests").rglob("*.py")
        for section in re.findall(r"CONTRIBUTING\.md, ([A-Z][\w -]+)\)", path.read_text("utf-8"))
    }
    assert {"The Docker stand-in", "The shared data"} <= sent
    assert sent <= headings
    docker = (ROOT / "tests" / "e2e" / "test_docker.py").read_text(encoding="utf-8")
    standin = re.search(r'^STANDIN = "([^"]+)"', docker, re.M)[1]
    assert f"sudo {standin}" in PAGES["CONTRIBUTING.md"]
    assert "`../shared/data`" in PAGES["CONTRIBUTING.md"]


def test_the_configuration_reference_names_every_gate_option():
    gate = GateConfig.model_fields["gate"].annotation
    assert isinstance(gate, type)
    reference = PAGES["docs/configuration.md"]
    missing = [name for name in gate.model_fields if f"`gate.{name}" not in reference]
    assert missing == [], f"docs/configuration.md does not name gate.{', gate.'.join(missing)}"

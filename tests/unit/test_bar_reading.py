"""Where the bar is read from: the base commit's config and baseline, what the change proposes.

The base commit and the change's checkout are two folders here, each read as the gate reads a
source; the notices and errors are the words a user reads in the PR comment and the log.
"""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragaliq.baseline import write_baseline
from ragaliq.cli import cli
from ragaliq.config import GateConfig
from ragaliq.errors import BaselineError, ConfigError, RepositoryError
from ragaliq.evaluators import build_evaluators
from ragaliq.repository import WorkTree
from ragaliq.runner import run_suite
from ragaliq.trust import base_source, read_bar
from tests.conftest import make_case, write_jsonl
from tests.fakes.judge import FakeJudge

BASE = "the base commit 0123456789ab"
CONFIG = "dataset: data.jsonl\nevaluators:\n  faithfulness: {threshold: 0.8}\n"
BASELINE = ".ragaliq/baseline.json"


def baseline_text(cases: int = 1) -> str:
    """A baseline as ``ragaliq`` records it, of a suite of ``cases`` cases."""
    report = asyncio.run(
        run_suite(
            [make_case()], judge=FakeJudge(), evaluators=build_evaluators(GateConfig().evaluators)
        )
    )
    (case,) = report.cases
    with_ids = (case.model_copy(update={"id": f"case-{i}"}) for i in range(cases))
    with tempfile.TemporaryDirectory(prefix="ragaliq-test-") as folder:
        path = Path(folder) / "baseline.json"
        write_baseline(path, head=report.head, cases=with_ids)
        text = path.read_text(encoding="utf-8")
    # One judged case, recorded under as many ids: the header counts the one case the run had.
    return text.replace('"case_count":1,', f'"case_count":{cases},', 1)


@pytest.fixture(scope="module")
def recorded() -> str:
    return baseline_text()


def tree(root: Path, files: dict[str, str], *, label: str = "the working tree") -> WorkTree:
    """A source holding ``files`` (repository path → text)."""
    root.mkdir(parents=True, exist_ok=True)
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text, encoding="utf-8")
    return WorkTree(root, label=label)


def bar_of(tmp_path: Path, files: dict[str, str], change: dict[str, str] | None, **kw):
    trusted = tree(tmp_path / "base", files, label=BASE)
    proposal = None if change is None else tree(tmp_path / "change", change)
    return read_bar(trusted=trusted, proposal=proposal, config_file="ragaliq.yaml", **kw)


EDITED = (
    "This change edits .ragaliq/baseline.json; the gate compares with the version on the base "
    "branch, and the edit takes effect once merged."
)


def test_a_change_that_edits_the_baseline_is_compared_with_the_base_commits(tmp_path, recorded):
    edited = recorded.replace('"faithfulness":1.0', '"faithfulness":0.2')
    bar = bar_of(
        tmp_path,
        {"ragaliq.yaml": CONFIG, BASELINE: recorded},
        {"ragaliq.yaml": CONFIG, BASELINE: edited},
    )
    assert bar.baseline is not None
    assert bar.baseline.score("faithfulness") == 1.0
    assert bar.notices == (EDITED,)


@pytest.mark.parametrize("in_change", ["the same baseline", "no baseline"])
def test_a_change_that_leaves_the_baseline_alone_hears_nothing_of_it(tmp_path, recorded, in_change):
    change = {"ragaliq.yaml": CONFIG}
    if in_change == "the same baseline":
        change[BASELINE] = recorded
    bar = bar_of(tmp_path, {"ragaliq.yaml": CONFIG, BASELINE: recorded}, change)
    assert bar.baseline is not None
    assert bar.notices == ()


def test_a_baseline_the_change_has_unreadable_counts_as_edited(tmp_path, recorded):
    base = {"ragaliq.yaml": CONFIG, BASELINE: recorded}
    change = tree(tmp_path / "change", {"ragaliq.yaml": CONFIG, "elsewhere.json": recorded})
    (tmp_path / "change" / BASELINE).parent.mkdir()
    (tmp_path / "change" / BASELINE).symlink_to(tmp_path / "change" / "elsewhere.json")
    bar = read_bar(
        trusted=tree(tmp_path / "base", base, label=BASE),
        proposal=change,
        config_file="ragaliq.yaml",
    )
    assert bar.baseline is not None
    assert bar.notices == (EDITED,)


def test_a_baseline_over_a_config_s_size_limit_is_read(tmp_path):
    large = baseline_text(cases=6000)
    assert len(large.encode()) > 1024 * 1024  # a config or a template may not be this large
    bar = bar_of(
        tmp_path,
        {"ragaliq.yaml": CONFIG, BASELINE: large},
        {"ragaliq.yaml": CONFIG, BASELINE: large},
    )
    assert bar.baseline is not None
    assert len(bar.baseline.case_index) == 6000
    assert bar.notices == ()


def test_a_baseline_the_base_commit_holds_as_a_link_is_refused_by_name(tmp_path, recorded):
    base = tree(tmp_path / "base", {"ragaliq.yaml": CONFIG, "real.json": recorded}, label=BASE)
    (tmp_path / "base" / ".ragaliq").mkdir()
    (tmp_path / "base" / BASELINE).symlink_to(tmp_path / "base" / "real.json")
    with pytest.raises(RepositoryError) as caught:
        read_bar(trusted=base, proposal=None, config_file="ragaliq.yaml")
    assert str(caught.value) == (
        "baseline: .ragaliq/baseline.json is a symbolic link; the gate reads only regular files "
        "inside the repository, so commit the file itself"
    )


def test_a_corrupt_baseline_is_named_with_where_it_was_read(tmp_path, recorded):
    with pytest.raises(BaselineError) as caught:
        bar_of(tmp_path, {"ragaliq.yaml": CONFIG, BASELINE: recorded[:-40]}, None)
    assert str(caught.value).startswith(f".ragaliq/baseline.json at {BASE}:2: corrupt baseline")


def test_a_named_baseline_that_does_not_exist_says_how_to_fix_it(tmp_path):
    with pytest.raises(BaselineError) as caught:
        bar_of(tmp_path, {"ragaliq.yaml": CONFIG}, None, baseline_file=".ragaliq/baselin.json")
    assert str(caught.value) == (
        f".ragaliq/baselin.json: not found at {BASE}; check the path (a typo?), or leave it out "
        "to use the config's baseline"
    )


NO_BAR = (
    f"No bar protects {BASE} yet: ragaliq.yaml is not there, so this first run judges with the "
    "built-in defaults (tightened where this change tightens them), never with this change's "
    "judge, endpoint or templates. Merge the set-up, let the baseline workflow record the base "
    "branch's baseline, then require this status."
)


def test_without_a_config_at_the_base_the_built_in_defaults_apply(tmp_path):
    bar = bar_of(tmp_path, {}, {})
    assert bar.config == GateConfig()
    assert bar.baseline is None
    assert bar.notices == (NO_BAR,)


def test_a_first_run_takes_the_changes_dataset_and_tightening_never_its_judge(tmp_path):
    hostile = (
        "dataset: outputs/rag.jsonl\n"
        "judge: {provider: claude, base_url: 'https://collector.example', model: cheap}\n"
        "evaluators: {faithfulness: {threshold: 0.95}, relevance: {threshold: 0.1}}\n"
        "templates: {comment: lies.md.j2}\n"
        "baselines: {store: branch, branch: forged}\n"
    )
    bar = bar_of(tmp_path, {}, {"ragaliq.yaml": hostile})
    assert bar.config.dataset == "outputs/rag.jsonl"
    assert bar.config.judge == GateConfig().judge  # no endpoint, provider or model of its own
    assert bar.config.templates == GateConfig().templates
    assert bar.config.baselines == GateConfig().baselines
    assert bar.config.evaluators.faithfulness.threshold == 0.95  # tightened
    assert bar.config.evaluators.relevance.threshold == GateConfig().evaluators.relevance.threshold
    assert NO_BAR in bar.notices


def test_a_base_with_a_config_and_no_baseline_stops_the_gate_naming_the_base(tmp_path):
    with pytest.raises(BaselineError) as caught:
        bar_of(tmp_path, {"ragaliq.yaml": CONFIG}, {"ragaliq.yaml": CONFIG}, base="main@0123456")
    assert str(caught.value).startswith(
        "no baseline for main@0123456: .ragaliq/baseline.json is not in that commit, so no bar "
        "can be applied; record it on the base branch"
    )


class Finder:
    hint = ""

    def __init__(self, found) -> None:
        self.found = found
        self.asked: list = []

    def find(self, settings):
        self.asked.append(settings)
        return self.found


def test_a_base_that_keeps_baselines_on_a_branch_reads_them_from_there_only(tmp_path, recorded):
    from ragaliq.baseline import parse_baseline
    from ragaliq.store.found import FoundBaseline

    config = CONFIG + "baselines: {store: branch, branch: bars}\n"
    committed = recorded.replace('"faithfulness":1.0', '"faithfulness":0.0')
    files = {"ragaliq.yaml": config, BASELINE: committed}
    none = Finder(None)
    with pytest.raises(BaselineError) as caught:
        bar_of(tmp_path, files, {"ragaliq.yaml": config}, base="main@0123456", finder=none)
    assert str(caught.value).startswith(
        "no baseline for main@0123456 in bars nor for its 20 nearest first-parent ancestors; "
        "re-run the baseline workflow (ragaliq-baseline.yml)"
    )
    assert none.asked[0].branch == "bars"  # the base's settings, never the change's
    found = FoundBaseline(
        baseline=parse_baseline(recorded, source="store"),
        commit="0" * 40,
        description="read from bars for main@0123456",
    )
    bar = bar_of(tmp_path, files, {"ragaliq.yaml": config}, finder=Finder(found))
    assert bar.baseline is not None and bar.baseline.score("faithfulness") == 1.0
    assert "The baseline: read from bars for main@0123456." in bar.notices
    with pytest.raises(BaselineError, match="cannot be read here"):
        bar_of(tmp_path, files, {"ragaliq.yaml": config})


def test_a_change_that_deletes_the_config_is_held_to_the_base_commits(tmp_path, recorded):
    bar = bar_of(tmp_path, {"ragaliq.yaml": CONFIG, BASELINE: recorded}, {})
    assert bar.config.evaluators.faithfulness.threshold == 0.8
    assert bar.notices == (
        "This change deletes ragaliq.yaml; the gate keeps using the base commit's.",
    )


def test_a_config_the_base_commit_holds_as_a_link_is_refused_by_name(tmp_path):
    base = tree(tmp_path / "base", {"real.yaml": CONFIG}, label=BASE)
    (tmp_path / "base" / "ragaliq.yaml").symlink_to(tmp_path / "base" / "real.yaml")
    change = tree(tmp_path / "change", {"ragaliq.yaml": CONFIG})
    with pytest.raises(RepositoryError) as caught:
        read_bar(trusted=base, proposal=change, config_file="ragaliq.yaml")
    assert str(caught.value).startswith("config: ragaliq.yaml is a symbolic link; ")


def test_an_invalid_config_at_the_base_is_named_with_where_it_was_read(tmp_path):
    with pytest.raises(ConfigError) as caught:
        bar_of(tmp_path, {"ragaliq.yaml": "judge: {model: [1]}\n"}, {"ragaliq.yaml": CONFIG})
    assert str(caught.value) == f"ragaliq.yaml at {BASE}: judge.model: must be a string (got list)"


def test_a_change_s_config_that_cannot_be_read_only_loses_what_it_proposes(tmp_path, recorded):
    base = tree(tmp_path / "base", {"ragaliq.yaml": CONFIG, BASELINE: recorded}, label=BASE)
    change = tree(tmp_path / "change", {"real.yaml": "evaluators: {}\n"})
    (tmp_path / "change" / "ragaliq.yaml").symlink_to(tmp_path / "change" / "real.yaml")
    bar = read_bar(trusted=base, proposal=change, config_file="ragaliq.yaml")
    assert bar.config.evaluators.faithfulness.threshold == 0.8
    assert bar.notices == (
        "This change's own ragaliq.yaml could not be read (config: ragaliq.yaml is a symbolic "
        "link; the gate reads only regular files inside the repository, so commit the file "
        "itself), so what it proposes is not known; the gate uses the base commit's.",
    )


def test_an_invalid_config_in_the_change_is_named_as_the_change_s(tmp_path):
    with pytest.raises(ConfigError) as caught:
        bar_of(tmp_path, {"ragaliq.yaml": CONFIG}, {"ragaliq.yaml": "judge: {model: [1]}\n"})
    assert (
        str(caught.value) == "ragaliq.yaml (this change): judge.model: must be a string (got list)"
    )


def test_without_a_base_a_missing_config_says_how_to_write_one(tmp_path):
    work = tree(tmp_path, {})
    with pytest.raises(ConfigError) as caught:
        read_bar(trusted=work, proposal=work, config_file="ragaliq.yaml")
    assert str(caught.value) == (
        "ragaliq.yaml: not found; write one with `ragaliq init` (or by hand: every key is in "
        "https://github.com/ragaliq/ragaliq-gate/blob/main/docs/configuration.md), or pass "
        "--config with the right path"
    )


def test_a_config_that_is_not_utf8_says_how_to_fix_it(tmp_path):
    base = tree(tmp_path / "base", {}, label=BASE)
    (tmp_path / "base" / "ragaliq.yaml").write_bytes(
        "dataset: donn\u00e9es.jsonl\n".encode("latin-1")
    )
    with pytest.raises(ConfigError) as caught:
        read_bar(trusted=base, proposal=None, config_file="ragaliq.yaml")
    assert str(caught.value) == (
        f"config: ragaliq.yaml at {BASE} is not UTF-8 text; re-save it as UTF-8"
    )


def test_a_command_that_compares_nothing_never_reads_the_baseline(tmp_path):
    work = tree(tmp_path, {"ragaliq.yaml": CONFIG, BASELINE: "not a baseline"})
    bar = read_bar(trusted=work, proposal=work, config_file="ragaliq.yaml", with_baseline=False)
    assert bar.baseline is None


# --- `ragaliq gate --base <ref>` ---------------------------------------------------------------


def git(root: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(root), *args], capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def test_base_names_the_commit_the_bar_was_read_at(tmp_path):
    if shutil.which("git") is None:
        pytest.skip("git is needed for a repository")
    git(tmp_path, "init", "-q", "-b", "main")
    git(tmp_path, "config", "user.email", "ci@example.com")
    git(tmp_path, "config", "user.name", "CI")
    (tmp_path / "README.md").write_text("no config yet\n", encoding="utf-8")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-q", "-m", "start")
    sha = git(tmp_path, "rev-parse", "HEAD")
    git(tmp_path, "checkout", "-q", "-b", "feature")
    work = WorkTree(tmp_path)

    def defaults_notice(ref: str) -> str:
        bar = read_bar(trusted=base_source(tmp_path, ref), proposal=work, config_file="c.yaml")
        return bar.notices[0]

    said = "No bar protects {} yet: c.yaml is not there"
    assert defaults_notice("auto").startswith(said.format(f"the base commit {sha[:12]}"))
    assert defaults_notice("main").startswith(said.format(f"main ({sha[:12]})"))
    assert base_source(tmp_path, "none") == work
    with pytest.raises(ConfigError) as caught:
        base_source(tmp_path, "no-such-branch")
    assert str(caught.value) == (
        f"--base no-such-branch: not a commit in the repository {tmp_path}; give a commit, "
        "branch or tag, or 'none' to read everything from the working tree"
    )


def test_a_config_in_a_folder_names_its_files_from_that_folder(tmp_path):
    if shutil.which("git") is None:
        pytest.skip("git is needed for a repository")
    git(tmp_path, "init", "-q", "-b", "main")
    conf = tmp_path / "conf"
    conf.mkdir()
    write_jsonl(conf / "data.jsonl", [make_case().model_dump(mode="json")])
    (conf / "ragaliq.yaml").write_text(
        "dataset: data.jsonl\njudge: {provider: offline}\ntemplates: {comment: comment.md.j2}\n",
        encoding="utf-8",
    )
    (conf / "comment.md.j2").write_text(
        '{% extends "comment.md.j2" %}{% block footer %}our own footer{% endblock %}',
        encoding="utf-8",
    )
    comment = tmp_path / "out" / "comment.md"
    result = CliRunner().invoke(
        cli,
        [
            "gate",
            "--config",
            str(conf / "ragaliq.yaml"),
            "--base",
            "none",
            "--comment-out",
            str(comment),
        ],
        env={"ANTHROPIC_API_KEY": ""},
    )
    assert result.exit_code == 0, result.output
    assert "the baseline: conf/.ragaliq/baseline.json" in result.output
    assert "our own footer" in comment.read_text(encoding="utf-8")

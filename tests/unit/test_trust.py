"""The trust boundary: repository paths, where files are read from, what a change may tighten."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragaliq.cli import cli
from ragaliq.config import GateConfig, parse_config
from ragaliq.errors import ConfigError, RepositoryError
from ragaliq.repository import CommitMissingError, GitCommit, WorkTree, repo_path
from ragaliq.trust import read_bar, tighten

QUICKSTART = Path(__file__).resolve().parents[2] / "examples" / "quickstart"


@pytest.mark.parametrize(
    ("raw", "folder", "expected"),
    [
        ("baseline.json", "", "baseline.json"),
        ("./a/b.json", "conf", "conf/a/b.json"),
        ("../shared/t.j2", "conf", "shared/t.j2"),
        ("a//b/./c", "", "a/b/c"),
    ],
)
def test_repository_paths_are_normalised_inside_the_repository(raw, folder, expected):
    assert repo_path(raw, folder=folder, what="x") == expected


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("/proc/self/environ", "not a path inside the repository"),
        ("~/.ssh/id_rsa", "not a path inside the repository"),
        ("../../etc/passwd", "leads out of the repository"),
        ("a\\b", "backslash"),
        ("a\x00b", "NUL"),
        ("  ", "empty"),
        (".", "names a folder"),
    ],
)
def test_paths_outside_the_repository_are_refused(raw, message):
    with pytest.raises(ConfigError, match=message):
        repo_path(raw, folder="conf", what="templates.comment")


def test_the_working_tree_refuses_links_folders_and_special_files(tmp_path):
    tree = WorkTree(tmp_path)
    (tmp_path / "real.txt").write_text("x", encoding="utf-8")
    (tmp_path / "link.txt").symlink_to(tmp_path / "real.txt")
    (tmp_path / "linked").symlink_to(tmp_path)
    (tmp_path / "folder").mkdir()
    os.mkfifo(tmp_path / "fifo")
    assert tree.read("real.txt", limit=10, what="t") == b"x"
    assert tree.read("absent.txt", limit=10, what="t") is None
    with pytest.raises(RepositoryError, match=r"link\.txt is a symbolic link"):
        tree.read("link.txt", limit=10, what="t")
    with pytest.raises(RepositoryError, match="linked is a symbolic link"):
        tree.read("linked/real.txt", limit=10, what="t")
    with pytest.raises(RepositoryError, match="is a folder"):
        tree.read("folder", limit=10, what="t")
    with pytest.raises(RepositoryError, match="not a regular file"):
        tree.read("fifo", limit=10, what="t")
    (tmp_path / "big.txt").write_text("x" * 11, encoding="utf-8")
    with pytest.raises(RepositoryError, match="over the size limit"):
        tree.read("big.txt", limit=10, what="t")


def git(root: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(root), *args], capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


@pytest.fixture
def repo(tmp_path):
    if shutil.which("git") is None:
        pytest.skip("git is needed for a repository")
    git(tmp_path, "init", "-q", "-b", "main")
    git(tmp_path, "config", "user.email", "ci@example.com")
    git(tmp_path, "config", "user.name", "CI")
    return tmp_path


def commit(root: Path, message: str = "c") -> str:
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", message)
    return git(root, "rev-parse", "HEAD")


def test_a_commit_is_read_with_git_and_a_link_in_it_is_refused(repo):
    (repo / "ragaliq.yaml").write_text("gate: {max_drop: 0.01}\n", encoding="utf-8")
    (repo / "link.json").symlink_to("ragaliq.yaml")
    sha = commit(repo)
    (repo / "ragaliq.yaml").write_text("gate: {max_drop: 0.5}\n", encoding="utf-8")
    at = GitCommit(repo, sha)
    assert at.read("ragaliq.yaml", limit=100, what="config") == b"gate: {max_drop: 0.01}\n"
    assert at.read("absent.yaml", limit=100, what="config") is None
    with pytest.raises(RepositoryError, match="symbolic link at the commit"):
        at.read("link.json", limit=100, what="baseline")
    with pytest.raises(CommitMissingError):
        GitCommit(repo, "f" * 40).read("ragaliq.yaml", limit=100, what="config")


def config(text: str) -> GateConfig:
    return parse_config(text, name="ragaliq.yaml")


def test_a_change_may_tighten_the_bar_at_once():
    trusted = config("evaluators:\n  relevance: {enabled: false}\ngate: {max_drop: 0.05}\n")
    proposed = config(
        "evaluators:\n  faithfulness: {threshold: 0.9}\n  hallucination: {min_confidence: 0.6}\n"
        "gate: {max_drop: 0.01, fail_on_new_hallucinations: true, on_missing_cases: fail}\n"
    )
    merged, notices = tighten(trusted, proposed)
    assert merged.evaluators.faithfulness.threshold == 0.9
    assert merged.evaluators.relevance.enabled is True
    assert merged.evaluators.hallucination.min_confidence == 0.6
    assert merged.gate.max_drop == 0.01
    assert merged.gate.fail_on_new_hallucinations is True
    (said,) = notices
    assert "faithfulness threshold 0.7 → 0.9" in said
    assert "turns on relevance" in said


def test_everything_else_a_change_proposes_waits_for_the_merge():
    trusted = config("judge: {model: claude-a}\nevaluators:\n  faithfulness: {threshold: 0.8}\n")
    proposed = config(
        "judge: {model: claude-b, base_url: 'http://evil.example', api_key: sk-ant-proposed-key}\n"
        "evaluators:\n  faithfulness: {threshold: 0.5, verdict_scores: {CONTRADICTED: 1}}\n"
        "gate: {max_drop: 0.5, on_error: ignore}\ntemplates: {comment: t.md.j2}\n"
    )
    merged, notices = tighten(trusted, proposed)
    assert merged == trusted
    (said,) = notices
    for change in (
        "judge.model claude-a → claude-b",
        "judge.base_url unset → http://evil.example",
        "judge.api_key (changed)",
        "faithfulness threshold 0.8 → 0.5",
        "faithfulness.verdict_scores",
        "max_drop 0.05 → 0.5",
        "on_error fail → ignore",
        "templates.comment unset → t.md.j2",
    ):
        assert change in said
    assert "sk-ant-proposed-key" not in said


def test_the_local_gate_reads_the_bar_at_the_merge_base(repo):
    shutil.copy(QUICKSTART / "rag_outputs.jsonl", repo / "rag_outputs.jsonl")
    (repo / "ragaliq.yaml").write_text(
        "dataset: rag_outputs.jsonl\njudge: {provider: offline}\n"
        "evaluators:\n  faithfulness: {threshold: 0.95}\n",
        encoding="utf-8",
    )
    commit(repo, "main")
    git(repo, "checkout", "-q", "-b", "feature")
    (repo / "ragaliq.yaml").write_text(
        "dataset: rag_outputs.jsonl\njudge: {provider: offline}\n"
        "evaluators:\n  faithfulness: {threshold: 0.1}\n",
        encoding="utf-8",
    )
    runner = CliRunner()
    args = ["gate", "--config", str(repo / "ragaliq.yaml"), "--comment-out", str(repo / "c.md")]
    at_base = runner.invoke(cli, args)
    assert at_base.exit_code == 1, at_base.output
    assert "faithfulness threshold 0.95 → 0.1" in at_base.output
    worktree = runner.invoke(cli, [*args, "--base", "none"])
    assert worktree.exit_code == 0, worktree.output
    unknown = runner.invoke(cli, [*args, "--base", "no-such-branch"])
    assert unknown.exit_code == 2
    assert "--base no-such-branch: not a commit" in unknown.stderr


def test_an_explicit_baseline_that_does_not_exist_is_an_error(tmp_path):
    shutil.copy(QUICKSTART / "rag_outputs.jsonl", tmp_path / "rag_outputs.jsonl")
    (tmp_path / "ragaliq.yaml").write_text(
        "dataset: rag_outputs.jsonl\njudge: {provider: offline}\n", encoding="utf-8"
    )
    work = WorkTree(tmp_path)
    with pytest.raises(Exception, match=r"baselin\.json: not found .*a typo"):
        read_bar(
            trusted=work,
            proposal=work,
            config_file="ragaliq.yaml",
            baseline_file=".ragaliq/baselin.json",
        )
    bar = read_bar(trusted=work, proposal=work, config_file="ragaliq.yaml")
    assert bar.baseline is None  # the config's baseline, not recorded yet
    result = CliRunner().invoke(
        cli,
        [
            "gate",
            "--config",
            str(tmp_path / "ragaliq.yaml"),
            "--baseline",
            str(tmp_path / ".ragaliq" / "baselin.json"),
        ],
    )
    assert result.exit_code == 2
    assert "not found" in result.stderr
    assert json.dumps("No baseline yet")[1:-1] not in result.output


@pytest.mark.parametrize(
    ("cache_path", "message"),
    [
        ("/tmp/cache.sqlite", "is not a path inside the repository"),
        ("~/cache.sqlite", "is not a path inside the repository"),
        ("../../cache.sqlite", "leads out of the repository"),
    ],
)
def test_a_judge_cache_outside_the_repository_is_refused(tmp_path, cache_path, message):
    shutil.copy(QUICKSTART / "rag_outputs.jsonl", tmp_path / "rag_outputs.jsonl")
    (tmp_path / "ragaliq.yaml").write_text(
        f"dataset: rag_outputs.jsonl\njudge: {{cache_path: '{cache_path}'}}\n", encoding="utf-8"
    )
    result = CliRunner().invoke(
        cli, ["run", "--config", str(tmp_path / "ragaliq.yaml")], env={"ANTHROPIC_API_KEY": ""}
    )
    assert result.exit_code == 2
    assert f"judge.cache_path: {cache_path!r} {message}" in result.stderr

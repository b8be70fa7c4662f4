"""``ragaliq gate`` on a laptop with baselines kept off main: the baseline of the merge base is
read from this machine's folder, else from the data branch git fetched (``upstream`` first), and
the gate says which, and that it could not check where the baseline came from."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragaliq.cli import cli
from ragaliq.config import BaselinesConfig
from ragaliq.store.backends import FolderBackend
from ragaliq.store.layout import BaselineStore
from tests.conftest import git, new_repository

QUICKSTART = Path(__file__).resolve().parents[2] / "examples" / "quickstart"
CONFIG = "dataset: rag_outputs.jsonl\njudge: {provider: offline}\nbaselines: {store: branch}\n"


@pytest.fixture
def repo(tmp_path):
    root = new_repository(tmp_path / "clone")
    shutil.copy(QUICKSTART / "rag_outputs.jsonl", root / "rag_outputs.jsonl")
    (root / "ragaliq.yaml").write_text(CONFIG, encoding="utf-8")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "main")
    return root


def on_a_branch(root: Path) -> None:
    git(root, "checkout", "-q", "-b", "feature")
    (root / "NOTES.md").write_text("a change\n", encoding="utf-8")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "feature")


def gate(root: Path):
    return CliRunner().invoke(
        cli,
        ["gate", "--config", str(root / "ragaliq.yaml"), "--comment-out", str(root / "c.md")],
        env={"ANTHROPIC_API_KEY": ""},
    )


def test_a_baseline_recorded_here_is_the_local_gates_bar(repo):
    main = git(repo, "rev-parse", "HEAD")
    recorded = CliRunner().invoke(
        cli, ["baseline", "record", "--config", str(repo / "ragaliq.yaml")]
    )
    assert recorded.exit_code == 0, recorded.output
    assert f"kept in {repo / '.ragaliq' / 'baselines'} as the baseline of {main[:12]}" in (
        recorded.output
    )
    on_a_branch(repo)
    result = gate(repo)
    assert result.exit_code == 0, result.output
    assert f"the baseline of the base commit {main[:12]}, read from the folder" in result.output
    assert "not checked for where it came from" in result.output


def data_branch(tmp_path: Path, name: str, commit: str, baseline: bytes) -> Path:
    """A repository whose branch ragaliq-baselines holds a store with ``commit``'s baseline."""
    remote = new_repository(tmp_path / name)
    git(remote, "checkout", "-q", "-b", "ragaliq-baselines")
    BaselineStore(FolderBackend(remote), keep=5).put(commit, baseline)
    git(remote, "add", "-A")
    git(remote, "commit", "-q", "-m", "a baseline")
    return remote


def recorded_for(repo: Path, tmp_path: Path, commit: str) -> bytes:
    out = tmp_path / "elsewhere.json"
    done = CliRunner().invoke(
        cli,
        [
            *("baseline", "record", "--config", str(repo / "ragaliq.yaml")),
            *("-o", str(out), "--commit", commit),
        ],
    )
    assert done.exit_code == 0, done.output
    assert "It is not kept for `ragaliq gate`" in done.output
    return out.read_bytes()


def test_the_local_gate_reads_the_fetched_data_branch_upstream_first(repo, tmp_path):
    main = git(repo, "rev-parse", "HEAD")
    on_a_branch(repo)
    baseline = recorded_for(repo, tmp_path, main)
    missing = gate(repo)
    assert missing.exit_code == 2
    assert f"no baseline for the base commit {main[:12]} in ragaliq-baselines" in missing.stderr
    assert "`git fetch origin` brings the data branch" in missing.stderr
    assert "in a clone of a fork, add the original repository as `upstream`" in missing.stderr

    # A clone of a fork: origin (the fork) has a stale store; upstream has main's.
    stale = data_branch(tmp_path, "fork", "f" * 40, baseline)
    git(repo, "remote", "add", "origin", str(stale))
    git(repo, "fetch", "-q", "origin")
    assert gate(repo).exit_code == 2
    real = data_branch(tmp_path, "upstream", main, baseline)
    git(repo, "remote", "add", "upstream", str(real))
    git(repo, "fetch", "-q", "upstream")
    found = gate(repo)
    assert found.exit_code == 0, found.output
    assert "read from upstream/ragaliq-baselines (fetched by git)" in found.output


def test_a_local_store_keeps_what_the_settings_keep(tmp_path):
    store = BaselineStore(FolderBackend(tmp_path), keep=BaselinesConfig(keep=2).keep)
    for n in range(3):
        store.put(f"{n:040x}", b"x")
    view = store.view()
    assert view is not None
    assert [view.has(f"{n:040x}") for n in range(3)] == [False, True, True]


def test_the_set_up_branch_is_gated_locally_as_a_first_run_on_its_own_dataset(tmp_path):
    root = new_repository(tmp_path / "new")
    (root / "README.md").write_text("a bot\n", encoding="utf-8")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "before the gate")
    main = git(root, "rev-parse", "HEAD")
    git(root, "checkout", "-q", "-b", "set-up")
    shutil.copy(QUICKSTART / "rag_outputs.jsonl", root / "outputs.jsonl")
    (root / "ragaliq.yaml").write_text(
        CONFIG.replace("rag_outputs.jsonl", "outputs.jsonl"), encoding="utf-8"
    )
    result = gate(root)
    assert result.exit_code == 0, result.output
    assert "no dataset given" not in result.output
    comment = (root / "c.md").read_text(encoding="utf-8")
    assert f"No bar protects the base commit {main[:12]} yet" in comment


def main_moves_on(root: Path) -> None:
    """A commit on main after the branch was cut: main's tip is no longer the merge base."""
    git(root, "checkout", "-q", "main")
    (root / "LATER.md").write_text("main moved on\n", encoding="utf-8")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "later on main")
    git(root, "checkout", "-q", "feature")


def footer(root: Path) -> str:
    comment = (root / "c.md").read_text(encoding="utf-8")
    return next(line for line in comment.splitlines() if "Baseline: " in line)


def test_the_local_comment_names_the_merge_base_its_baseline_was_kept_for(repo):
    merge_base = git(repo, "rev-parse", "HEAD")
    recorded = CliRunner().invoke(
        cli, ["baseline", "record", "--config", str(repo / "ragaliq.yaml")]
    )
    assert recorded.exit_code == 0, recorded.output
    on_a_branch(repo)
    main_moves_on(repo)
    assert git(repo, "merge-base", "HEAD", "main") == merge_base != git(repo, "rev-parse", "main")
    result = gate(repo)
    assert result.exit_code == 0, result.output
    assert f"Baseline: commit {merge_base[:12]} ·" in footer(repo)


def test_the_local_comment_names_the_merge_base_a_committed_baseline_was_read_at(tmp_path):
    root = new_repository(tmp_path / "committed")
    shutil.copy(QUICKSTART / "rag_outputs.jsonl", root / "rag_outputs.jsonl")
    (root / "ragaliq.yaml").write_text(
        CONFIG.replace("{store: branch}", "{store: file}"), encoding="utf-8"
    )
    recorded = CliRunner().invoke(
        cli, ["baseline", "record", "--config", str(root / "ragaliq.yaml")]
    )
    assert recorded.exit_code == 0, recorded.output
    assert '"commit":null' in (root / ".ragaliq" / "baseline.json").read_text(encoding="utf-8")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "the gate, with a baseline recorded by hand")
    merge_base = git(root, "rev-parse", "HEAD")
    on_a_branch(root)
    main_moves_on(root)
    result = gate(root)
    assert result.exit_code == 0, result.output
    assert f"Baseline: commit {merge_base[:12]} ·" in footer(root)

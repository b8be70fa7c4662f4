"""A checkout whose ``.git`` was written by a pull request's code: nothing in it runs, nothing lies.

Each test plays one way the pipeline step of a single-job workflow could rewrite the checkout
before the gate reads the base commit from it, and checks that reading the base neither runs the
planted program nor returns anything but the base commit's own bytes.
"""

from __future__ import annotations

import subprocess
import zlib
from pathlib import Path

import pytest

from ragaliq.errors import RepositoryError
from ragaliq.git import CommitMissingError, GitObjects, git_command, head_commit
from ragaliq.repository import GitCommit, git_resolve, git_toplevel, is_tracked

BASE_CONFIG = "evaluators:\n  faithfulness: {threshold: 0.9}\n"


def git(repo: Path, *args: str, input_text: str | None = None) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, input=input_text
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.email", "ci@example.com")
    git(root, "config", "user.name", "CI")
    (root / "ragaliq.yaml").write_text(BASE_CONFIG, encoding="utf-8")
    (root / "docs").mkdir()
    (root / "docs" / "notes.md").write_text("notes\n", encoding="utf-8")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    return root


@pytest.fixture
def planted(tmp_path: Path) -> tuple[Path, Path]:
    """A program that leaves a marker file when anything runs it."""
    marker = tmp_path / "ran"
    program = tmp_path / "evil.sh"
    program.write_text(f"#!/bin/sh\ntouch {marker}\n", encoding="utf-8")
    program.chmod(0o755)
    return program, marker


def base_config(repo: Path, sha: str) -> bytes | None:
    return GitCommit(repo, sha).read("ragaliq.yaml", limit=1 << 20, what="config")


def test_the_base_commit_is_read_as_it_was_committed(repo):
    sha = git(repo, "rev-parse", "HEAD")
    assert base_config(repo, sha) == BASE_CONFIG.encode()
    assert GitCommit(repo, sha).read("missing.yaml", limit=100, what="x") is None
    assert GitCommit(repo, sha).read("docs/nope.md", limit=100, what="x") is None
    with pytest.raises(RepositoryError, match="a folder"):
        GitCommit(repo, sha).read("docs", limit=100, what="x")
    with pytest.raises(RepositoryError, match="over the size limit of 10 bytes"):
        GitCommit(repo, sha).read("ragaliq.yaml", limit=10, what="config")


def test_a_symbolic_link_in_the_base_tree_is_refused(repo):
    (repo / "link.yaml").symlink_to("/etc/passwd")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "link")
    with pytest.raises(RepositoryError, match="symbolic link"):
        GitCommit(repo, git(repo, "rev-parse", "HEAD")).read("link.yaml", limit=100, what="x")


def test_an_fsmonitor_in_the_checkouts_config_never_runs(repo, planted):
    program, marker = planted
    git(repo, "config", "core.fsmonitor", str(program))
    sha = git(repo, "rev-parse", "HEAD")
    assert base_config(repo, sha) == BASE_CONFIG.encode()
    assert is_tracked(repo, "ragaliq.yaml") is True
    assert is_tracked(repo, "rag_outputs.jsonl") is False
    assert git_resolve(repo, "main") == sha
    assert git_toplevel(repo) is not None
    assert not marker.exists()


def test_git_config_from_the_environment_never_runs(repo, planted, monkeypatch):
    program, marker = planted
    for name, value in {
        "GIT_CONFIG_COUNT": "1",
        "GIT_CONFIG_KEY_0": "core.fsmonitor",
        "GIT_CONFIG_VALUE_0": str(program),
        "GIT_CONFIG_PARAMETERS": f"'core.fsmonitor'='{program}'",
        "GIT_DIR": str(repo / "elsewhere"),
    }.items():
        monkeypatch.setenv(name, value)
    sha = git_resolve(repo, "main")
    assert sha is not None
    assert base_config(repo, sha) == BASE_CONFIG.encode()
    assert git_command(repo, "status", "--porcelain").returncode == 0
    assert not marker.exists()


def test_a_replace_ref_cannot_swap_the_base_commit(repo):
    base = git(repo, "rev-parse", "HEAD")
    (repo / "ragaliq.yaml").write_text("evaluators: {}\n", encoding="utf-8")
    git(repo, "commit", "-q", "-am", "forged")
    forged = git(repo, "rev-parse", "HEAD")
    git(repo, "replace", base, forged)
    assert git(repo, "show", f"{base}:ragaliq.yaml") == "evaluators: {}"  # git itself is fooled
    assert base_config(repo, base) == BASE_CONFIG.encode()


def test_an_overwritten_loose_object_is_refused(repo):
    sha = git(repo, "rev-parse", "HEAD")
    blob = git(repo, "rev-parse", f"{sha}:ragaliq.yaml")
    path = repo / ".git" / "objects" / blob[:2] / blob[2:]
    forged = b"evaluators: {}\n"
    path.chmod(0o644)
    path.write_bytes(zlib.compress(b"blob %d\0" % len(forged) + forged))
    with pytest.raises(RepositoryError, match="does not match its id"):
        base_config(repo, sha)


def test_an_overwritten_tree_is_refused(repo):
    sha = git(repo, "rev-parse", "HEAD")
    tree = git(repo, "rev-parse", f"{sha}^{{tree}}")
    other = git(repo, "hash-object", "-w", "--stdin", input_text="evaluators: {}\n")
    forged = b"100644 ragaliq.yaml\0" + bytes.fromhex(other)
    path = repo / ".git" / "objects" / tree[:2] / tree[2:]
    path.chmod(0o644)
    path.write_bytes(zlib.compress(b"tree %d\0" % len(forged) + forged))
    with pytest.raises(RepositoryError, match="does not match its id"):
        base_config(repo, sha)


def test_a_promisor_remote_never_runs_its_transport(repo, planted, tmp_path):
    program, marker = planted
    git(repo, "config", "core.repositoryformatversion", "1")
    git(repo, "config", "extensions.partialClone", "evil")
    git(repo, "config", "remote.evil.url", f"ext::{program}")
    git(repo, "config", "remote.evil.promisor", "true")
    git(repo, "config", "protocol.ext.allow", "always")
    missing = "0123456789abcdef0123456789abcdef01234567"
    with pytest.raises(CommitMissingError):
        base_config(repo, missing)
    with GitObjects(repo) as objects, pytest.raises(CommitMissingError):
        objects.read(missing, "blob", limit=100)
    assert not marker.exists()


def test_head_is_read_from_files(repo):
    sha = git(repo, "rev-parse", "HEAD")
    assert head_commit(repo) == sha
    git(repo, "checkout", "-q", "--detach")
    assert head_commit(repo) == sha
    git(repo, "checkout", "-q", "main")
    git(repo, "pack-refs", "--all")
    assert not (repo / ".git" / "refs" / "heads" / "main").exists()
    assert head_commit(repo) == sha
    assert head_commit(repo.parent) is None


def test_a_worktree_reads_through_its_git_file(repo, tmp_path):
    sha = git(repo, "rev-parse", "HEAD")
    other = tmp_path / "other"
    git(repo, "worktree", "add", "-q", "--detach", str(other), sha)
    assert (other / ".git").is_file()
    assert head_commit(other) == sha
    assert base_config(other, sha) == BASE_CONFIG.encode()

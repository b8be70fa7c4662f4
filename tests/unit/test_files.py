from __future__ import annotations

import os
import stat
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from ragaliq._files import (
    check_writable,
    make_folders,
    open_atomic,
    own_files_like,
    set_owner,
    write_atomic,
)
from ragaliq.errors import OutputError
from ragaliq.evaluators.questions import EXTRACT
from ragaliq.judges.cache import CachedJudge
from tests.conftest import make_case
from tests.fakes.judge import FakeJudge


@pytest.fixture
def umask_022() -> Iterator[None]:
    previous = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(previous)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.usefixtures("umask_022")
def test_a_new_file_is_readable_by_others_as_open_would_make_it(tmp_path: Path) -> None:
    target = tmp_path / "deep" / "baseline.json"
    write_atomic(target, "{}\n")
    assert target.read_text(encoding="utf-8") == "{}\n"
    assert _mode(target) == 0o644


@pytest.mark.usefixtures("umask_022")
def test_a_replaced_file_keeps_its_permissions(tmp_path: Path) -> None:
    target = tmp_path / "report.json"
    target.write_text("old", encoding="utf-8")
    target.chmod(0o600)
    write_atomic(target, "new")
    assert target.read_text(encoding="utf-8") == "new"
    assert _mode(target) == 0o600


def test_no_temporary_file_is_left_when_writing_fails(tmp_path: Path) -> None:
    target = tmp_path / "report.json"
    with pytest.raises(UnicodeEncodeError):
        write_atomic(target, "\udcff")
    assert list(tmp_path.iterdir()) == []


def test_a_path_under_a_file_is_an_output_error(tmp_path):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("x", encoding="utf-8")
    with pytest.raises(OutputError, match=r"not-a-folder/r\.json: cannot be written \(.+\)"):
        write_atomic(blocker / "r.json", "{}")
    with pytest.raises(OutputError, match="cannot be written"):
        check_writable(blocker / "r.json")


def test_check_writable_refuses_inputs_twins_and_folders(tmp_path):
    config = tmp_path / "ragaliq.yaml"
    config.write_text("", encoding="utf-8")
    with pytest.raises(OutputError, match="is also an input of this command"):
        check_writable(tmp_path / "." / "ragaliq.yaml", reads=[config])
    with pytest.raises(OutputError, match="two results would be written to this one file"):
        check_writable(tmp_path / "a.json", None, tmp_path / "sub" / ".." / "a.json")
    with pytest.raises(OutputError, match="is a folder"):
        check_writable(tmp_path)
    check_writable(tmp_path / "new" / "deep" / "r.json", None, reads=[config, None])
    assert not (tmp_path / "new").exists()  # writing creates it, not the check


def test_temporary_files_a_killed_write_left_are_removed_by_the_next_write(tmp_path: Path) -> None:
    target = tmp_path / "report.json"
    stale = tmp_path / ".report.json.abc123.tmp"
    stale.write_text("half a report", encoding="utf-8")
    old = time.time() - 3600
    os.utime(stale, (old, old))
    in_progress = tmp_path / ".report.json.def456.tmp"
    in_progress.write_text("being written by another run", encoding="utf-8")
    write_atomic(target, "{}")
    assert not stale.exists()
    assert in_progress.exists()
    assert target.read_text(encoding="utf-8") == "{}"


RUNNER = (1001, 1001)
"""The GitHub runner's user: the owner of the workspace mounted into the action's container."""

needs_root = pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0,
    reason="giving files to another user needs root, as the action has in its container",
)


@pytest.fixture
def no_owner() -> Iterator[None]:
    set_owner(None)
    try:
        yield
    finally:
        set_owner(None)


def _owner(path: Path) -> tuple[int, int]:
    info = path.lstat()
    return info.st_uid, info.st_gid


@needs_root
@pytest.mark.usefixtures("no_owner")
def test_files_and_folders_written_as_root_belong_to_the_workspace_owner(tmp_path: Path) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    os.chown(workspace, *RUNNER)
    existing = workspace / "ragaliq.yaml"
    existing.write_text("", encoding="utf-8")
    os.chown(existing, *RUNNER)

    assert own_files_like(workspace) == RUNNER
    write_atomic(workspace / ".ragaliq" / "deep" / "report.json", "{}\n")
    write_atomic(existing, "dataset: d.jsonl\n")  # replaced: a new file, not the old one's owner
    with open_atomic(workspace / "out" / "report.html") as out:
        out.write("<html>")

    written = list(workspace.rglob("*"))
    assert {p.relative_to(workspace).as_posix() for p in written} == {
        ".ragaliq",
        ".ragaliq/deep",
        ".ragaliq/deep/report.json",
        "ragaliq.yaml",
        "out",
        "out/report.html",
    }
    assert {p.relative_to(workspace).as_posix(): _owner(p) for p in written} == {
        p.relative_to(workspace).as_posix(): RUNNER for p in written
    }


@needs_root
@pytest.mark.usefixtures("no_owner")
def test_only_folders_the_write_created_change_owner(tmp_path: Path) -> None:
    outside = tmp_path / "mine"
    outside.mkdir()  # root's, and stays root's
    set_owner(RUNNER)
    make_folders(outside / "a" / "b")
    assert _owner(outside) == (0, 0)
    assert _owner(outside / "a") == RUNNER
    assert _owner(outside / "a" / "b") == RUNNER


@pytest.mark.usefixtures("no_owner")
def test_without_an_owner_files_belong_to_whoever_writes_them(tmp_path: Path) -> None:
    write_atomic(tmp_path / "new" / "r.json", "{}")
    me = (os.getuid(), os.getgid())
    assert _owner(tmp_path / "new") == me
    assert _owner(tmp_path / "new" / "r.json") == me


@pytest.mark.skipif(
    hasattr(os, "geteuid") and os.geteuid() == 0, reason="checks what happens without root"
)
@pytest.mark.usefixtures("no_owner")
def test_without_root_no_owner_is_set(tmp_path: Path) -> None:
    assert own_files_like(tmp_path) is None
    write_atomic(tmp_path / "r.json", "{}")
    assert _owner(tmp_path / "r.json") == (os.getuid(), os.getgid())


@needs_root
@pytest.mark.usefixtures("no_owner")
async def test_the_judge_cache_and_its_side_files_belong_to_the_workspace_owner(
    tmp_path: Path,
) -> None:
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    os.chown(workspace, *RUNNER)
    own_files_like(workspace)
    cached = CachedJudge(FakeJudge(), workspace / ".ragaliq" / "cache" / "judge.sqlite", secret="k")
    await cached.ask([EXTRACT], make_case(id="c1"))
    while_open = {p.relative_to(workspace).as_posix(): _owner(p) for p in workspace.rglob("*")}
    await cached.aclose()
    after = {p.relative_to(workspace).as_posix(): _owner(p) for p in workspace.rglob("*")}

    assert cached.warnings == []
    assert {".ragaliq/cache/judge.sqlite-wal", ".ragaliq/cache/judge.sqlite-shm"} < set(while_open)
    assert set(while_open.values()) == {RUNNER}
    assert set(after) >= {".ragaliq", ".ragaliq/cache", ".ragaliq/cache/judge.sqlite"}
    assert set(after.values()) == {RUNNER}


def test_a_result_never_passes_through_a_link_in_the_current_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / ".ragaliq").symlink_to(outside)
    monkeypatch.chdir(repo)
    with pytest.raises(OutputError, match=r"\.ragaliq is a symbolic link"):
        check_writable(Path(".ragaliq/comment.md"))
    with pytest.raises(OutputError, match=r"\.ragaliq is a symbolic link"):
        check_writable(repo / ".ragaliq" / "sub" / "comment.md")
    # A path the user gives outside the current folder is theirs to choose, links and all.
    (tmp_path / "elsewhere").symlink_to(outside)
    check_writable(tmp_path / "elsewhere" / "report.json")

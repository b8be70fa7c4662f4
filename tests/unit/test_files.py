from __future__ import annotations

import os
import stat
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from ragaliq._files import check_writable, write_atomic
from ragaliq.errors import OutputError


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

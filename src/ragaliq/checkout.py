"""Whether the gate's workspace is what the trusted zone checks out: the base commit, untouched.

The gate must never run where a pull request's code ran. It cannot see the past of its runner,
but the usual way to get that wrong leaves a trace: the job checked out the pull request (its head
or GitHub's merge commit) to run the pipeline before the gate. So in gate mode the action looks at
the workspace before judging:

- no checkout at all: nothing of the pull request is there (the gate reads the base commit through
  the API);
- a checkout of the base commit whose files are the commit's own and no others (the gate's own
  ``.ragaliq`` folder aside, where a restored judge cache lands): the trusted zone;
- anything else (another commit, changed or added files): refused, unless the workflow says
  ``trust-pr-code: true``.

``HEAD`` is read as a file and each tracked file is hashed and compared with the base commit's
blob (read with :class:`~ragaliq.git.GitObjects`), so no git command runs in the workspace: a
Git LFS pointer is compared with the file it points to, a symbolic link with its target.
"""

from __future__ import annotations

import hashlib
import itertools
import os
import stat
from collections.abc import Iterator
from pathlib import Path

from ragaliq.errors import RepositoryError
from ragaliq.git import (
    MODE_LINK,
    MODE_SUBMODULE,
    GitObjects,
    ObjectTooLargeError,
    blob_id,
    git_folder,
    head_commit,
)

__all__ = ["added_files", "changed_files", "unsafe_checkout"]

_LFS_POINTER = b"version https://git-lfs.github.com/spec/v1"
_LISTED = 5


def unsafe_checkout(workspace: Path, base_sha: str) -> str | None:
    """Why the workspace is not the base commit's untouched checkout.

    None when it is, and when there is no checkout at all.
    """
    if git_folder(workspace) is None:
        return None
    head = head_commit(workspace)
    if head is None:
        return "the workspace is a git checkout whose HEAD cannot be read"
    if head != base_sha:
        return (
            f"the workspace has commit {head[:12]} checked out, not the pull request's base "
            f"commit {base_sha[:12]}"
        )
    tracked: set[str] = set()
    try:
        changed = list(itertools.islice(changed_files(workspace, base_sha, tracked), _LISTED + 1))
    except RepositoryError as exc:
        return f"the workspace's checkout cannot be compared with the base commit ({exc})"
    if changed:
        shown = ", ".join(changed[:_LISTED]) + (", …" if len(changed) > _LISTED else "")
        return f"files of the base commit were changed in the workspace ({shown})"
    added = list(itertools.islice(added_files(workspace, tracked), _LISTED + 1))
    if added:
        shown = ", ".join(added[:_LISTED]) + (", …" if len(added) > _LISTED else "")
        return f"files the base commit does not have were added to the workspace ({shown})"
    return None


def changed_files(workspace: Path, commit: str, seen: set[str] | None = None) -> Iterator[str]:
    """The repository paths whose file in ``workspace`` differs from ``commit``'s, in tree order.

    A missing file counts as changed; files the commit does not track are not looked at. Every
    path the commit tracks (a submodule's included) is added to ``seen`` as it is walked.

    Raises:
        RepositoryError: the commit cannot be read.
    """
    with GitObjects(workspace) as objects:
        for path, entry in objects.walk(objects.tree_of(commit)):
            if seen is not None:
                seen.add(path)
            if entry.mode == MODE_SUBMODULE:
                continue
            if not _same(workspace / path, entry.mode, entry.oid, objects):
                yield path


OWN_FOLDERS = (".git", ".ragaliq")
"""Top-level folders of the workspace that are no files of the change: git's, and the gate's
own (its results, and the judge cache a workflow restores there)."""


def added_files(workspace: Path, tracked: set[str]) -> Iterator[str]:
    """Files in ``workspace`` that are none of the ``tracked`` paths, folder by folder.

    A submodule's contents and :data:`OWN_FOLDERS` are not looked at; a link is not followed.
    """
    for folder, subfolders, files in os.walk(workspace):
        relative = Path(folder).relative_to(workspace).as_posix()
        prefix = "" if relative == "." else f"{relative}/"
        links = [n for n in subfolders if os.path.islink(os.path.join(folder, n))]
        subfolders[:] = sorted(
            name
            for name in subfolders
            if name not in links
            and f"{prefix}{name}" not in tracked  # a submodule
            and not (prefix == "" and name in OWN_FOLDERS)
        )
        for name in sorted([*files, *links]):
            if f"{prefix}{name}" not in tracked:
                yield f"{prefix}{name}"


def _same(file: Path, mode: str, oid: str, objects: GitObjects) -> bool:
    try:
        info = file.lstat()
    except OSError:
        return False
    if mode == MODE_LINK:
        return (
            stat.S_ISLNK(info.st_mode)
            and blob_id(os.readlink(file).encode("utf-8", "surrogateescape"), len(oid)) == oid
        )
    if not stat.S_ISREG(info.st_mode):
        return False
    if _file_id(file, info.st_size, len(oid)) == oid:
        return True
    try:
        pointer = objects.read(oid, "blob", limit=1024)
    except ObjectTooLargeError:
        return False
    return _matches_lfs_pointer(file, pointer)


def _file_id(file: Path, size: int, width: int) -> str:
    digest = hashlib.new("sha1" if width == 40 else "sha256")
    digest.update(b"blob %d\0" % size)
    with file.open("rb") as handle:
        while chunk := handle.read(1024 * 1024):
            digest.update(chunk)
    return digest.hexdigest()


def _matches_lfs_pointer(file: Path, pointer: bytes) -> bool:
    """Whether ``pointer`` is a Git LFS pointer to ``file``'s content."""
    if not pointer.startswith(_LFS_POINTER):
        return False
    fields = dict(
        line.split(" ", 1)
        for line in pointer.decode("ascii", "replace").splitlines()
        if " " in line
    )
    oid = fields.get("oid", "")
    if not oid.startswith("sha256:"):
        return False
    digest = hashlib.sha256()
    with file.open("rb") as handle:
        while chunk := handle.read(1024 * 1024):
            digest.update(chunk)
    return digest.hexdigest() == oid.removeprefix("sha256:")

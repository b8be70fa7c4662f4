"""Writing files so that a crash never leaves half of one behind.

In the action, every file and folder written belongs to the workspace's owner, not to the
container's root (see :func:`own_files_like`).
"""

from __future__ import annotations

import glob
import os
import stat
import tempfile
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TextIO

from ragaliq.errors import OutputError
from ragaliq.redaction import redact

__all__ = [
    "AtomicWriter",
    "check_writable",
    "give_to_owner",
    "make_folders",
    "open_atomic",
    "own_files_like",
    "set_owner",
    "write_atomic",
    "write_atomic_bytes",
]

Owner = tuple[int, int]
"""A user id and a group id."""

_owner: Owner | None = None
"""Who gets every file and folder written from now on; None: whoever writes them."""


def own_files_like(folder: Path) -> Owner | None:
    """Give every file and folder written from now on the owner of ``folder``, when run as root.

    The action runs as root in its container, while the workspace mounted into it belongs to the
    runner's user: a report, baseline or cache owned by root could not be replaced or deleted by
    the job's next steps, and ``git checkout`` would fail on a baseline the action wrote. Only
    root can give a file away; anyone else writes files they own, and nothing changes.

    Returned: the owner now in force, or None.
    """
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return None
    try:
        info = folder.stat()
    except OSError:
        return None
    set_owner((info.st_uid, info.st_gid))
    return _owner


def set_owner(owner: Owner | None) -> None:
    """Set who gets every file and folder written from now on; None: whoever writes them."""
    global _owner
    _owner = owner


def give_to_owner(*paths: Path) -> None:
    """Give ``paths`` to the owner set by :func:`own_files_like`, if any; missing ones are skipped.

    Raises:
        OSError: a path could not be given away.
    """
    if _owner is None:
        return
    for path in paths:
        try:
            os.chown(path, *_owner, follow_symlinks=False)
        except FileNotFoundError:
            continue


def make_folders(folder: Path) -> None:
    """Create ``folder`` and its missing parents, each given to the owner (see :func:`set_owner`).

    Raises:
        OSError: a folder could not be created or given away.
    """
    missing: list[Path] = []
    current = folder
    while not os.path.lexists(current) and current.parent != current:
        missing.append(current)
        current = current.parent
    folder.mkdir(parents=True, exist_ok=True)
    give_to_owner(*reversed(missing))


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to a temporary file beside ``path``, then rename it over ``path``.

    The file gets the permissions a plain ``open(path, "w")`` would give it: those of the file it
    replaces, else read-write by everyone less the umask. (A temporary file is private, and the
    action runs as root in its container, so a private report or baseline could not be read by
    the workflow's later steps, such as ``git add`` or an artifact upload.) The file and the
    folders created for it get the owner set by :func:`own_files_like`, if any.

    Every registered secret is redacted from ``text`` first (see :mod:`ragaliq.redaction`).

    Raises:
        OutputError: the file or its folder cannot be written; nothing is left behind.
    """
    with open_atomic(path) as out:
        out.write(text)


def write_atomic_bytes(path: Path, data: bytes) -> None:
    """:func:`write_atomic` for bytes that are already safe to write (compressed data).

    Raises:
        OutputError: the file or its folder cannot be written; nothing is left behind.
    """
    with _replacing(path, binary=True) as handle:
        handle.write(data)


class AtomicWriter:
    """A text file being written in pieces; each piece has every registered secret redacted.

    A secret is redacted only within one ``write``, so write whole lines or records.
    """

    def __init__(self, handle: TextIO) -> None:
        self._handle = handle

    def write(self, text: str) -> None:
        """Append ``text``, redacted."""
        self._handle.write(redact(text))


@contextmanager
def open_atomic(path: Path) -> Iterator[AtomicWriter]:
    """Write ``path`` in pieces through a temporary file that replaces it only when all is written.

    If the block raises, ``path`` is left as it was and the temporary file is removed. The file
    gets the permissions :func:`write_atomic` gives.

    Raises:
        OutputError: the file or its folder cannot be written; nothing is left behind.
    """
    with _replacing(path, binary=False) as handle:
        yield AtomicWriter(handle)


@contextmanager
def _replacing(path: Path, *, binary: bool) -> Iterator[Any]:
    """A temporary file beside ``path`` that replaces it once the block is done without error."""
    try:
        make_folders(path.parent)
        _remove_stale(path)
        mode = _mode_for(path)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise _cannot_write(path, exc) from exc
    try:
        opened = (
            os.fdopen(fd, "wb") if binary else os.fdopen(fd, "w", encoding="utf-8", newline="\n")
        )
        with opened as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        give_to_owner(Path(tmp))
        os.replace(tmp, path)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise _cannot_write(path, exc) from exc
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


STALE_AFTER_S = 600.0
"""A temporary file older than this was left by a write that never finished (a killed run)."""


def _remove_stale(path: Path) -> None:
    """Remove what earlier writes of ``path`` left behind when they were killed mid-write.

    A write in progress elsewhere is recent, so only files older than ``STALE_AFTER_S`` go.
    """
    cutoff = time.time() - STALE_AFTER_S
    for leftover in path.parent.glob(f".{glob.escape(path.name)}.*.tmp"):
        try:
            if leftover.lstat().st_mtime < cutoff:
                leftover.unlink()
        except OSError:
            continue


def check_writable(*paths: Path | None, reads: Iterable[Path | None] = ()) -> None:
    """Fail now, before any judging, if a result could not be written to one of ``paths``.

    Missing folders are left for writing to create. Also refuses a result bound for a file the
    command reads (``reads``: its config, dataset, baseline ...) or for the same file as another
    result, where one would silently replace the other, and a result inside the current folder
    that would pass through a symbolic link there (a repository can commit ``.ragaliq`` as a
    link to anywhere; a path outside the current folder is the user's own choice).

    Raises:
        OutputError: naming the path and what is wrong with it.
    """
    inputs = {p.resolve() for p in reads if p is not None}
    seen: dict[Path, Path] = {}
    for path in paths:
        if path is None:
            continue
        resolved = path.resolve()
        if resolved in inputs:
            raise OutputError(
                f"{path}: is also an input of this command; write the result somewhere else"
            )
        if resolved in seen:
            raise OutputError(
                f"{path}: two results would be written to this one file; give each its own path"
            )
        seen[resolved] = path
        _refuse_links_below_cwd(path)
        if path.is_dir():
            raise OutputError(f"{path}: is a folder; give a file path")
        folder = _nearest_existing(path.parent)
        if not folder.is_dir():
            raise OutputError(f"{path}: cannot be written ({folder} is a file); choose a path")
        if not os.access(folder, os.W_OK | os.X_OK) or (
            path.exists() and not os.access(path, os.W_OK)
        ):
            raise OutputError(
                f"{path}: cannot be written (permission denied); choose a writable path"
            )


def _refuse_links_below_cwd(path: Path) -> None:
    here = Path.cwd()
    try:
        relative = Path(os.path.abspath(path)).relative_to(here)
    except ValueError:
        return
    walked = here
    for part in relative.parts[:-1]:
        walked = walked / part
        if walked.is_symlink():
            raise OutputError(
                f"{path}: {walked.relative_to(here)} is a symbolic link; results are never "
                "written through one (remove the link or give another path)"
            )


def _nearest_existing(folder: Path) -> Path:
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    return folder


def _cannot_write(path: Path, exc: OSError) -> OutputError:
    reason = exc.strerror or type(exc).__name__
    return OutputError(f"{path}: cannot be written ({reason}); choose a writable path")


def _mode_for(path: Path) -> int:
    try:
        return stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask

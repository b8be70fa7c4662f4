"""Git, run so that nothing a repository holds can make it run a program or lie about a commit.

A pull request's code may have written the checkout's ``.git`` before the gate reads it (when a
team runs both in one job), so the gate treats every part of it as hostile:

- **Configuration.** ``.git/config`` can name programs (``core.fsmonitor``, hooks, filters,
  ``credential_process``, promisor remotes reached through ``ext::``), and the environment can add
  more (``GIT_CONFIG_COUNT``, ``GIT_DIR``). Objects are therefore read by ``git cat-file`` in a
  repository of our own (a temporary folder with a config we write) that borrows only the
  workspace's object store; git's environment is rebuilt from nothing, with no system or global
  config, no replace objects, no lazy fetches and no transport allowed.
- **Objects.** An object file can be overwritten, and git does not check a loose object's hash
  when it reads one. Every object read here (the commit, each tree on the way, the blob) is hashed
  again and compared with its id, starting from the commit id the caller trusts (the event's base
  SHA), so a forged file anywhere on the way is refused.
- **Refs.** ``HEAD`` and the refs are read as files, never resolved through git, and
  ``refs/replace`` is never consulted.

Local commands (``ragaliq gate --base main``) also ask git to resolve a branch name or a merge
base in the user's own repository; those calls run with the same stripped environment and with
the settings that run programs switched off on the command line.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO

from ragaliq.errors import RepositoryError

__all__ = [
    "CommitMissingError",
    "GitObjects",
    "ObjectTooLargeError",
    "TreeEntry",
    "blob_id",
    "git_command",
    "git_environment",
    "git_folder",
    "head_commit",
]

_SAFE_SETTINGS = (
    "core.fsmonitor=false",
    "core.hooksPath=/dev/null",
    "core.untrackedCache=false",
    "protocol.allow=never",
    "credential.helper=",
    "core.sshCommand=false",
    "diff.external=",
)
"""Settings that run a program or reach a remote, switched off on git's command line (which
overrides every config file) for the commands that must run in the user's repository."""
_OID = re.compile(r"^(?:[0-9a-f]{40}|[0-9a-f]{64})$")
_HEADER = re.compile(rb"^([0-9a-f]{40,64}) (blob|tree|commit|tag) (\d+)$")
MODE_LINK = "120000"
MODE_TREE = "40000"
MODE_SUBMODULE = "160000"


class CommitMissingError(RepositoryError):
    """The local git repository does not have the commit (a shallow checkout), or has no git."""


def git_environment(home: Path | None = None) -> dict[str, str]:
    """The environment git runs in: nothing inherited but ``PATH``, no config but our own.

    ``GIT_*`` variables an earlier step set (``GIT_CONFIG_COUNT``, ``GIT_DIR``,
    ``GIT_EXEC_PATH``...) are dropped with the rest; system and global config are off; replace
    objects and lazy fetches from promisor remotes are off.
    """
    scratch = str(home) if home is not None else os.devnull
    return {
        "PATH": os.environ.get("PATH", os.defpath),
        "HOME": scratch,
        "XDG_CONFIG_HOME": scratch,
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_ATTR_NOSYSTEM": "1",
        "GIT_NO_REPLACE_OBJECTS": "1",
        "GIT_NO_LAZY_FETCH": "1",
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_OPTIONAL_LOCKS": "0",
        "LC_ALL": "C",
    }


def git_command(root: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    """Run ``git -C root args`` with :func:`git_environment` and programs switched off.

    For the few questions only the user's own repository can answer (a branch name, a merge
    base); objects are read with :class:`GitObjects`.

    Raises:
        CommitMissingError: git is not installed.
    """
    settings = [arg for setting in _SAFE_SETTINGS for arg in ("-c", setting)]
    try:
        return subprocess.run(
            ["git", *settings, "-C", str(root), *args],
            capture_output=True,
            check=False,
            env=git_environment(),
            stdin=subprocess.DEVNULL,
        )
    except FileNotFoundError as exc:
        raise CommitMissingError("git is not installed") from exc


def git_folder(root: Path) -> Path | None:
    """The git folder of the checkout at ``root`` (``.git``, or where a ``.git`` file points).

    Read as files: ``root/.git`` as a folder, or a ``.git`` file's ``gitdir:`` line (a worktree,
    a submodule). None when there is neither.
    """
    dot_git = root / ".git"
    try:
        info = dot_git.lstat()
    except OSError:
        return None
    if stat.S_ISDIR(info.st_mode):
        return dot_git
    if not stat.S_ISREG(info.st_mode):
        return None
    text = _read_small(dot_git)
    if text is None or not text.startswith("gitdir:"):
        return None
    target = Path(text.removeprefix("gitdir:").strip())
    return target if target.is_absolute() else (root / target)


def _common_folder(git_dir: Path) -> Path:
    """Where a worktree's shared refs and objects live (``commondir``), else the folder itself."""
    common = _read_small(git_dir / "commondir")
    if not common:
        return git_dir
    path = Path(common.strip())
    return path if path.is_absolute() else git_dir / path


def head_commit(root: Path) -> str | None:
    """The commit the checkout at ``root`` has checked out, read from its files; None if unknown.

    ``HEAD`` is read as a file, and a symbolic ``HEAD`` through the loose ref or
    ``packed-refs``; git is not run, so nothing in the repository's config takes part.
    """
    git_dir = git_folder(root)
    if git_dir is None:
        return None
    head = _read_small(git_dir / "HEAD")
    if head is None:
        return None
    head = head.strip()
    if _OID.match(head):
        return head
    if not head.startswith("ref: refs/"):
        return None
    ref = head.removeprefix("ref: ").strip()
    if ".." in PurePosixPath(ref).parts:
        return None
    for folder in (git_dir, _common_folder(git_dir)):
        loose = _read_small(folder / ref)
        if loose is not None and _OID.match(loose.strip()):
            return loose.strip()
    packed = _read_small(_common_folder(git_dir) / "packed-refs", limit=64 * 1024 * 1024) or ""
    for line in packed.splitlines():
        sha, _, name = line.partition(" ")
        if name.strip() == ref and _OID.match(sha):
            return sha
    return None


def _read_small(path: Path, limit: int = 64 * 1024) -> str | None:
    """A small regular file's text, never through a symbolic link; None otherwise."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            return None
        data = handle.read(limit + 1)
    if len(data) > limit:
        return None
    return data.decode("utf-8", "replace")


@dataclass(frozen=True, kw_only=True)
class TreeEntry:
    """One entry of a tree object."""

    mode: str
    name: str
    oid: str


def blob_id(data: bytes, width: int = 40) -> str:
    """The git blob id of ``data``: SHA-1 for a 40-character id, SHA-256 for 64."""
    digest = hashlib.new("sha1" if width == 40 else "sha256")
    digest.update(b"blob %d\0" % len(data))
    digest.update(data)
    return digest.hexdigest()


class GitObjects:
    """The object store of the checkout at ``root``, every object checked against its id.

    Objects are read by one ``git cat-file --batch`` running in a repository of our own that
    borrows the checkout's object store (``GIT_OBJECT_DIRECTORY``): the checkout's config, hooks,
    refs, replace objects and promisor remotes play no part. Use as a context manager, or call
    :meth:`close`.

    Raises (from every method):
        CommitMissingError: the checkout has no git folder, git is missing, or an object is not
            in the store (a shallow clone).
        RepositoryError: an object does not hash to its id, or is not of the expected type.
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self._process: subprocess.Popen[bytes] | None = None
        self._scratch: str | None = None

    def __enter__(self) -> GitObjects:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop git and remove the scratch repository."""
        if self._process is not None:
            process, self._process = self._process, None
            for stream in (process.stdin, process.stdout):
                if stream is not None:
                    stream.close()
            process.kill()
            process.wait()
        if self._scratch is not None:
            shutil.rmtree(self._scratch, ignore_errors=True)
            self._scratch = None

    def read(self, oid: str, kind: str, *, limit: int) -> bytes:
        """The content of object ``oid``, which must be a ``kind`` within ``limit`` bytes.

        Raises:
            CommitMissingError: the store does not have the object.
            RepositoryError: the object is of another kind, over ``limit``, or does not hash
                to ``oid``.
        """
        if not _OID.match(oid):
            raise RepositoryError(f"{oid!r} is not a git object id")
        process = self._start(len(oid))
        assert process.stdin is not None and process.stdout is not None
        try:
            process.stdin.write(oid.encode("ascii") + b"\n")
            process.stdin.flush()
            header = process.stdout.readline().rstrip(b"\n")
        except OSError as exc:
            self.close()
            raise CommitMissingError(f"git stopped while reading {oid[:12]} ({exc})") from exc
        if header.endswith(b" missing") or not header:
            raise CommitMissingError(f"the checkout's git has no object {oid[:12]}")
        found = _HEADER.match(header)
        if found is None or found.group(1).decode() != oid:
            self.close()
            raise RepositoryError(f"git gave an unexpected answer for {oid[:12]}")
        found_kind, size = found.group(2).decode(), int(found.group(3))
        if size > limit:
            self.close()  # the content is still in the pipe: start afresh next time
            raise ObjectTooLargeError(oid, size)
        data = _read_exactly(process.stdout, size + 1)[:size]
        if found_kind != kind:
            raise RepositoryError(f"git object {oid[:12]} is a {found_kind}, not a {kind}")
        digest = hashlib.new("sha1" if len(oid) == 40 else "sha256")
        digest.update(f"{kind} {size}\0".encode("ascii"))
        digest.update(data)
        if digest.hexdigest() != oid:
            raise RepositoryError(
                f"git object {oid[:12]} in the checkout does not match its id: the repository's "
                "files were altered; check out the base commit on a fresh runner"
            )
        return data

    def tree_of(self, commit: str) -> str:
        """The id of a commit's root tree."""
        data = self.read(commit, "commit", limit=1024 * 1024)
        first = data.split(b"\n", 1)[0].decode("ascii", "replace")
        kind, _, tree = first.partition(" ")
        if kind != "tree" or not _OID.match(tree) or len(tree) != len(commit):
            raise RepositoryError(f"git commit {commit[:12]} has no tree line")
        return tree

    def first_parent(self, commit: str) -> str | None:
        """The id of a commit's first parent; None for a root commit."""
        data = self.read(commit, "commit", limit=1024 * 1024)
        for line in data.split(b"\n"):
            if not line:
                break  # the headers end at the first blank line
            kind, _, value = line.decode("ascii", "replace").partition(" ")
            if kind == "parent":
                if not _OID.match(value) or len(value) != len(commit):
                    raise RepositoryError(f"git commit {commit[:12]} has a bad parent line")
                return value
        return None

    def entries(self, tree: str) -> Iterator[TreeEntry]:
        """The entries of a tree object, in order."""
        data = self.read(tree, "tree", limit=64 * 1024 * 1024)
        width = len(tree) // 2
        at = 0
        while at < len(data):
            space = data.index(b" ", at)
            nul = data.index(b"\0", space)
            end = nul + 1 + width
            if end > len(data):
                raise RepositoryError(f"git tree {tree[:12]} is truncated")
            yield TreeEntry(
                mode=data[at:space].decode("ascii", "replace"),
                name=data[space + 1 : nul].decode("utf-8", "surrogateescape"),
                oid=data[nul + 1 : end].hex(),
            )
            at = end

    def lookup(self, commit: str, path: str) -> TreeEntry | None:
        """The tree entry at repository path ``path`` in ``commit``; None when absent.

        A symbolic link or a submodule on the way counts as absent (its contents are not
        the commit's).
        """
        tree = self.tree_of(commit)
        parts = PurePosixPath(path).parts
        for i, part in enumerate(parts):
            entry = next((e for e in self.entries(tree) if e.name == part), None)
            if entry is None:
                return None
            if i == len(parts) - 1:
                return entry
            if entry.mode != MODE_TREE:
                return None
            tree = entry.oid
        return None

    def walk(self, tree: str, prefix: str = "") -> Iterator[tuple[str, TreeEntry]]:
        """Every entry under ``tree`` that is not a folder, with its repository path."""
        for entry in self.entries(tree):
            path = f"{prefix}{entry.name}"
            if entry.mode == MODE_TREE:
                yield from self.walk(entry.oid, f"{path}/")
            else:
                yield path, entry

    def _start(self, width: int) -> subprocess.Popen[bytes]:
        if self._process is not None and self._process.poll() is None:
            return self._process
        self.close()
        git_dir = git_folder(self.root)
        if git_dir is None:
            raise CommitMissingError(f"{self.root} is not a git checkout")
        objects = _common_folder(git_dir) / "objects"
        if not objects.is_dir():
            raise CommitMissingError(f"{self.root} has no git object store")
        self._scratch = tempfile.mkdtemp(prefix="ragaliq-git-")
        scratch = Path(self._scratch)
        _write_scratch_repository(scratch, sha256=width == 64)
        env = git_environment(scratch)
        env.update({"GIT_DIR": str(scratch), "GIT_OBJECT_DIRECTORY": str(objects)})
        try:
            self._process = subprocess.Popen(
                ["git", "cat-file", "--batch"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                env=env,
                cwd=scratch,
            )
        except FileNotFoundError as exc:
            raise CommitMissingError("git is not installed") from exc
        return self._process


class ObjectTooLargeError(RepositoryError):
    """An object is larger than the reader's limit; nothing of it was read."""

    def __init__(self, oid: str, size: int) -> None:
        super().__init__(f"git object {oid[:12]} has {size:,} bytes")
        self.size = size


def _write_scratch_repository(folder: Path, *, sha256: bool) -> None:
    """A bare repository with nothing but a config of ours, to run ``cat-file`` in."""
    (folder / "refs").mkdir()
    (folder / "objects").mkdir()
    (folder / "HEAD").write_text("ref: refs/heads/none\n", encoding="ascii")
    version = "1" if sha256 else "0"
    extensions = "[extensions]\n\tobjectformat = sha256\n" if sha256 else ""
    (folder / "config").write_text(
        f"[core]\n\trepositoryformatversion = {version}\n\tbare = true\n"
        "\tfsmonitor = false\n\thooksPath = /dev/null\n"
        f"[protocol]\n\tallow = never\n{extensions}",
        encoding="ascii",
    )


def _read_exactly(stream: IO[bytes], size: int) -> bytes:
    chunks: list[bytes] = []
    left = size
    while left > 0:
        chunk = stream.read(min(left, 1024 * 1024))
        if not chunk:
            raise CommitMissingError("git stopped in the middle of an object")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)

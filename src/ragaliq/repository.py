"""Reading the repository's files: literal paths, and where a file is read from.

Every path the gate reads from a config (the dataset, the baseline, templates, the judge cache) is
a *repository path*: relative, inside the repository, with no ``..``, no ``~``, no absolute root
(:func:`repo_path`). A file is read from a :class:`FileSource`:

- :class:`WorkTree`, the checkout on disk, refuses a path that is or passes through a symbolic
  link, that is not a regular file (``/dev/zero``, a FIFO, a folder), or that is over its size
  limit;
- :class:`GitCommit`, one commit of the local git repository, read object by object with every
  object checked against its id (a symbolic link in the tree is refused, never followed; see
  :mod:`ragaliq.git` for why nothing in the checkout's ``.git`` can change what is read);
- :class:`FallbackSource`, the commit through git, else through the GitHub Contents API when the
  checkout lacks that commit (a shallow clone).

A source answers ``None`` only when the file is known to be absent; anything it cannot be sure
about raises :class:`~ragaliq.errors.RepositoryError`, so that an unreadable baseline is never
mistaken for "no baseline yet".
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Protocol

from ragaliq.errors import ConfigError, RepositoryError
from ragaliq.git import (
    MODE_LINK,
    MODE_SUBMODULE,
    MODE_TREE,
    CommitMissingError,
    GitObjects,
    ObjectTooLargeError,
    git_command,
    head_commit,
)

__all__ = [
    "MAX_TEXT_BYTES",
    "CommitMissingError",
    "ConfigLocation",
    "ConfigPaths",
    "FallbackSource",
    "FileSource",
    "GitCommit",
    "WorkTree",
    "folder_of",
    "git_default_base",
    "git_resolve",
    "git_toplevel",
    "inside",
    "is_tracked",
    "repo_path",
]

MAX_TEXT_BYTES = 1024 * 1024
"""The size limit of a config or template file."""


def repo_path(raw: str, *, folder: str = "", what: str) -> str:
    """A path from a config, as a normalised path from the repository's root.

    Args:
        raw: The path as written, relative to ``folder``.
        folder: The repository path of the folder ``raw`` is relative to (the config's folder).
        what: What the path is, for messages (``templates.comment``).

    Raises:
        ConfigError: the path is empty, absolute, starts with ``~``, has a NUL or a backslash,
            or climbs out of the repository with ``..``.
    """
    if not raw.strip():
        raise ConfigError(f"{what}: the path is empty; name a file inside the repository")
    if "\x00" in raw or "\\" in raw:
        raise ConfigError(
            f"{what}: {raw!r} has a NUL or a backslash; write the path with forward slashes"
        )
    if raw.startswith(("/", "~")) or PurePosixPath(raw).is_absolute():
        raise ConfigError(
            f"{what}: {raw!r} is not a path inside the repository; give a path relative to "
            "the config file"
        )
    if all(part == "." for part in PurePosixPath(raw).parts):
        raise ConfigError(f"{what}: {raw!r} names a folder, not a file")
    parts: list[str] = [p for p in PurePosixPath(folder).parts if p not in ("", ".")]
    for part in PurePosixPath(raw).parts:
        if part == ".":
            continue
        if part == "..":
            if not parts:
                raise ConfigError(
                    f"{what}: {raw!r} leads out of the repository; give a path inside it"
                )
            parts.pop()
            continue
        parts.append(part)
    if not parts:
        raise ConfigError(f"{what}: {raw!r} is the repository's root folder, not a file")
    return "/".join(parts)


def folder_of(file: str) -> str:
    """The repository path of a file's folder, ``""`` for the root."""
    parent = str(PurePosixPath(file).parent)
    return "" if parent == "." else parent


@dataclass(frozen=True)
class ConfigPaths:
    """The one resolver of the paths a config names: relative to its folder, inside the repo.

    Its dataset, baseline, templates and judge cache, literal (:func:`repo_path`).

    The bar read at a commit resolves through it; :class:`ConfigLocation` adds the repository on
    disk. ``ragaliq gate``, ``baseline record``, the action, the Python API and the pytest plugin
    all resolve through it, so no command writes where the gate never reads.
    """

    file: str
    """The config's repository path."""

    @property
    def folder(self) -> str:
        """The repository path of the config's folder (``""`` for the root)."""
        return folder_of(self.file)

    def path(self, raw: str, *, what: str) -> str:
        """A path the config names, as a repository path.

        Raises:
            ConfigError: it is empty, absolute, starts with ``~`` or leaves the repository.
        """
        return repo_path(raw, folder=self.folder, what=what)


@dataclass(frozen=True)
class ConfigLocation(ConfigPaths):
    """Where a config sits: the repository on disk, and the config's repository path.

    Paths it names resolve as :class:`ConfigPaths` does, and on disk never through a symbolic
    link.
    """

    root: Path = field(default=Path("."))

    @classmethod
    def of(cls, config_path: Path) -> ConfigLocation:
        """The location of a config file on disk: its git repository, else its own folder.

        Raises:
            ConfigError: the file is outside the repository it seems to be in.
        """
        folder = config_path.resolve().parent
        root = git_toplevel(folder) or folder
        return cls(file=inside(root, config_path, what="--config"), root=root)

    def local(self, raw: str, *, what: str) -> Path:
        """A path the config names, on disk, passing through no symbolic link.

        Raises:
            ConfigError: as :meth:`path`.
            RepositoryError: it is, or passes through, a symbolic link, or is not a file.
        """
        path = self.path(raw, what=what)
        WorkTree(self.root).check(path, what=what)
        return self.root / path


def inside(root: Path, path: Path, *, what: str) -> str:
    """``path`` (as given on the command line) as a path from the repository's root.

    Raises:
        ConfigError: it is outside the repository.
    """
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError as exc:
        raise ConfigError(
            f"{what} {path}: must be inside the repository {root}, where the gate reads it"
        ) from exc


class FileSource(Protocol):
    """Somewhere the repository's files are read from."""

    @property
    def description(self) -> str:
        """Where the files come from, for messages: ``the base commit 1a2b3c4d5e6f``."""
        ...

    def read(self, path: str, *, limit: int, what: str) -> bytes | None:
        """The file at repository path ``path``, or None when it is known to be absent.

        Raises:
            RepositoryError: the file cannot be read for certain, is a symbolic link, a folder
                or a special file, or is larger than ``limit`` bytes.
        """
        ...


@dataclass(frozen=True)
class WorkTree:
    """The checkout on disk."""

    root: Path
    label: str = "the working tree"

    @property
    def description(self) -> str:
        return self.label

    def local(self, path: str) -> Path:
        """The file on disk for a repository path."""
        return self.root / path

    def check(self, path: str, *, what: str) -> Path | None:
        """The file on disk, or None when absent; refuses links, folders and special files.

        Raises:
            RepositoryError: a part of the path is a symbolic link, or it is not a regular file.
        """
        current = self.root
        parts = PurePosixPath(path).parts
        for i, part in enumerate(parts):
            current = current / part
            try:
                info = current.lstat()
            except FileNotFoundError:
                return None
            except OSError as exc:
                raise RepositoryError(
                    f"{what}: {path} cannot be read ({exc.strerror or type(exc).__name__})"
                ) from exc
            if stat.S_ISLNK(info.st_mode):
                raise RepositoryError(
                    f"{what}: {'/'.join(parts[: i + 1])} is a symbolic link; the gate reads "
                    "only regular files inside the repository, so commit the file itself"
                )
            last = i == len(parts) - 1
            if not last and not stat.S_ISDIR(info.st_mode):
                return None
            if last and not stat.S_ISREG(info.st_mode):
                kind = "a folder" if stat.S_ISDIR(info.st_mode) else "not a regular file"
                raise RepositoryError(f"{what}: {path} is {kind}; name a regular file")
        return current

    def read(self, path: str, *, limit: int, what: str) -> bytes | None:
        found = self.check(path, what=what)
        if found is None:
            return None
        flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
        try:
            fd = os.open(found, flags)
        except OSError as exc:
            raise RepositoryError(
                f"{what}: {path} cannot be read ({exc.strerror or type(exc).__name__})"
            ) from exc
        with os.fdopen(fd, "rb") as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                raise RepositoryError(f"{what}: {path} is not a regular file; name a regular file")
            data = handle.read(limit + 1)
        if len(data) > limit:
            raise RepositoryError(f"{what}: {path} is over the size limit of {limit:,} bytes")
        return data


@dataclass(frozen=True)
class GitCommit:
    """One commit of the git repository at ``root``, read object by object, each object checked.

    The commit, every tree on the way to a file and the file's blob are read with
    :class:`~ragaliq.git.GitObjects` and hashed again against their ids, starting from ``sha``:
    a rewritten ``.git`` (its config, replace refs, an overwritten object) cannot change what is
    read, only make the read fail.
    """

    root: Path
    sha: str
    label: str = ""

    @property
    def description(self) -> str:
        return self.label or f"the commit {self.sha[:12]}"

    def read(self, path: str, *, limit: int, what: str) -> bytes | None:
        with GitObjects(self.root) as objects:
            try:
                entry = objects.lookup(self.sha, path)
            except CommitMissingError as exc:
                raise CommitMissingError(
                    f"the checkout does not have {self.description} ({exc})"
                ) from exc
            except RepositoryError as exc:
                raise RepositoryError(f"{what}: {path} at {self.description}: {exc}") from exc
            if entry is None:
                return None
            if entry.mode == MODE_LINK:
                raise RepositoryError(
                    f"{what}: {path} is a symbolic link at {self.description}; the gate reads "
                    "only regular files, so commit the file itself"
                )
            if entry.mode == MODE_TREE:
                raise RepositoryError(f"{what}: {path} is a folder at {self.description}")
            if entry.mode == MODE_SUBMODULE:
                raise RepositoryError(f"{what}: {path} is a submodule at {self.description}")
            try:
                return objects.read(entry.oid, "blob", limit=limit)
            except ObjectTooLargeError as exc:
                raise RepositoryError(
                    f"{what}: {path} is over the size limit of {limit:,} bytes"
                ) from exc
            except CommitMissingError:
                raise
            except RepositoryError as exc:
                raise RepositoryError(f"{what}: {path} at {self.description}: {exc}") from exc


@dataclass(frozen=True)
class FallbackSource:
    """The first of ``sources`` that has the commit: git, then the GitHub API.

    ``on_fallback`` hears why a source could not serve (git's own words), once per source.
    """

    sources: Sequence[FileSource]
    on_fallback: Callable[[str], None] | None = None
    _told: set[int] = field(default_factory=set, compare=False)

    @property
    def description(self) -> str:
        return self.sources[0].description

    def read(self, path: str, *, limit: int, what: str) -> bytes | None:
        missing: list[str] = []
        for i, source in enumerate(self.sources):
            try:
                return source.read(path, limit=limit, what=what)
            except CommitMissingError as exc:
                missing.append(str(exc))
                if self.on_fallback is not None and i not in self._told:
                    self._told.add(i)
                    self.on_fallback(f"{exc}; trying the next source")
        raise RepositoryError(
            f"{what}: {path} cannot be read at {self.description}: " + "; ".join(missing)
        )


def is_tracked(root: Path, path: str) -> bool | None:
    """Whether the commit checked out at ``root`` has ``path``; None when that cannot be told.

    ``HEAD`` is read as a file and the commit's trees through :class:`~ragaliq.git.GitObjects`,
    so nothing in the repository's config runs.
    """
    head = head_commit(root)
    if head is None:
        return None
    try:
        with GitObjects(root) as objects:
            return objects.lookup(head, path) is not None
    except RepositoryError:
        return None


def git_default_base(root: Path) -> str | None:
    """The merge base of HEAD with the default branch, when git knows a default branch."""
    try:
        candidates = []
        head = git_command(root, "symbolic-ref", "-q", "--short", "refs/remotes/origin/HEAD")
        if head.returncode == 0 and head.stdout.strip():
            candidates.append(head.stdout.decode().strip())
        candidates += ["origin/main", "origin/master", "main", "master"]
        for ref in candidates:
            base = git_command(root, "merge-base", "HEAD", ref)
            if base.returncode == 0 and base.stdout.strip():
                return base.stdout.decode().strip()
    except CommitMissingError:
        return None
    return None


def git_toplevel(folder: Path) -> Path | None:
    """The top folder of the git repository ``folder`` is in, if it is in one."""
    try:
        top = git_command(folder, "rev-parse", "--show-toplevel")
    except CommitMissingError:
        return None
    if top.returncode != 0 or not top.stdout.strip():
        return None
    return Path(top.stdout.decode().strip())


def git_resolve(root: Path, ref: str) -> str | None:
    """The commit ``ref`` names in the repository at ``root``, if any."""
    if ref.startswith("-"):
        return None
    try:
        found = git_command(root, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    except CommitMissingError:
        return None
    if found.returncode != 0 or not found.stdout.strip():
        return None
    return found.stdout.decode().strip()

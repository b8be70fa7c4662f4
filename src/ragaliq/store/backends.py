"""Where a baseline store's files live on this machine: a folder, or a branch git has fetched.

- :class:`FolderBackend`: a folder (``.ragaliq/baselines`` beside the config, kept out of git by
  ``.ragaliq/.gitignore``): ``ragaliq baseline record`` keeps what it records there, and
  ``ragaliq gate`` on the same machine finds it;
- :class:`GitBranchBackend`: the data branch as git last fetched it from a remote
  (``refs/remotes/<remote>/<branch>``), read object by object; never written.

The data branch itself, read and written through GitHub's API, is
:class:`ragaliq.github.data_branch.BranchBackend`.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path

from ragaliq._files import write_atomic_bytes
from ragaliq.errors import OutputError
from ragaliq.repository import GitCommit, WorkTree, git_resolve, repo_path
from ragaliq.store.layout import Snapshot

__all__ = ["FolderBackend", "GitBranchBackend"]


@dataclass(frozen=True)
class FolderBackend:
    """A store in a folder on disk."""

    root: Path

    @property
    def description(self) -> str:
        return f"the folder {self.root}"

    def snapshot(self) -> Snapshot | None:
        if not self.root.is_dir():
            return None
        return Snapshot(files=WorkTree(self.root, label=self.description))

    def commit(
        self,
        base: Snapshot | None,
        *,
        put: Mapping[str, bytes],
        delete: Collection[str],
        message: str,
    ) -> bool:
        del base, message  # one writer at a time on a laptop; a folder has no history
        for path, data in put.items():
            write_atomic_bytes(self.root / repo_path(path, what="baseline store"), data)
        for path in delete:
            try:
                (self.root / repo_path(path, what="baseline store")).unlink(missing_ok=True)
            except OSError as exc:
                raise OutputError(f"{self.root / path}: cannot be removed ({exc})") from exc
        return True


@dataclass(frozen=True)
class GitBranchBackend:
    """The data branch as git fetched it from ``remote`` into the repository at ``root``."""

    root: Path
    remote: str
    branch: str

    @property
    def ref(self) -> str:
        return f"{self.remote}/{self.branch}"

    @property
    def description(self) -> str:
        return f"{self.ref} (fetched by git)"

    def snapshot(self) -> Snapshot | None:
        sha = git_resolve(self.root, f"refs/remotes/{self.ref}")
        if sha is None:
            return None
        return Snapshot(files=GitCommit(self.root, sha, label=self.description), version=sha)

    def commit(
        self,
        base: Snapshot | None,
        *,
        put: Mapping[str, bytes],
        delete: Collection[str],
        message: str,
    ) -> bool:
        raise OutputError(
            f"{self.description} is read-only here: baselines are written to it by the baseline "
            "workflow on the default branch"
        )

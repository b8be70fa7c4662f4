"""The baseline stores a local gate reads: this machine's folder, then the fetched data branch.

``ragaliq gate`` on a laptop compares with the baseline of the merge base, looked up in:

1. ``.ragaliq/baselines`` beside the config: what ``ragaliq baseline record`` kept here;
2. the data branch as git last fetched it: ``upstream/<branch>`` when the clone has a remote
   named ``upstream`` (a clone of a fork, set up as GitHub suggests), else ``origin/<branch>``.
   In a clone of a fork without ``upstream``, ``origin`` is the fork, whose data branch is
   usually missing or stale; the message then says to add the original repository as
   ``upstream`` and fetch it. Nothing is fetched for you: ``git fetch`` brings the branch.

A local gate has no run records to ask which baseline is the base's own: it keeps the nearest
recorded ancestor's and says so; the action decides from its baseline workflow's runs
(:mod:`ragaliq.ci.custody`).
"""

from __future__ import annotations

from pathlib import Path

from ragaliq.config import BaselinesConfig
from ragaliq.errors import RepositoryError
from ragaliq.git import GitObjects, git_command
from ragaliq.repository import CommitMissingError
from ragaliq.store.backends import FolderBackend, GitBranchBackend
from ragaliq.store.finder import StoreFinder
from ragaliq.store.layout import BaselineStore

__all__ = ["LOCAL_STORE", "local_finder", "local_store", "store_remote"]

LOCAL_STORE = ".ragaliq/baselines"
"""This machine's baseline store, relative to the config's folder (git ignores ``.ragaliq``)."""


def store_remote(root: Path) -> str:
    """The remote whose data branch a local gate reads: ``upstream`` if there is one."""
    try:
        found = git_command(root, "remote")
    except CommitMissingError:
        return "origin"
    names = found.stdout.decode("utf-8", "replace").split() if found.returncode == 0 else []
    return "upstream" if "upstream" in names else "origin"


def local_store(folder: Path, settings: BaselinesConfig) -> BaselineStore:
    """This machine's store, in ``folder`` (the config's ``.ragaliq/baselines``)."""
    return BaselineStore(FolderBackend(folder), keep=settings.keep)


def local_finder(*, root: Path, folder: Path, commit: str, base: str) -> StoreFinder:
    """What a local gate reads the baseline of ``commit`` from (see the module's docstring)."""
    remote = store_remote(root)

    def stores(settings: BaselinesConfig) -> tuple[BaselineStore, ...]:
        fetched = GitBranchBackend(root, remote, settings.branch)
        return (local_store(folder, settings), BaselineStore(fetched, keep=settings.keep))

    def parent_of(sha: str) -> str | None:
        try:
            with GitObjects(root) as objects:
                return objects.first_parent(sha)
        except RepositoryError:
            return None  # a shallow history, or a commit git does not have

    hint = (
        f"`git fetch {remote}` brings the data branch (here {remote} is read"
        + (
            ""
            if remote == "upstream"
            else "; in a clone of a fork, add the original repository as `upstream` first"
        )
        + f"), or record one here with `ragaliq baseline record` on {base}"
    )
    return StoreFinder(stores=stores, commit=commit, base=base, parent_of=parent_of, hint=hint)

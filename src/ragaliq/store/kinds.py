"""The kinds of baseline store, one row each: a new store is its backend's module and a row here.

Every question the gate asks of a store's kind is answered from its row, never by comparing
names: whether baselines are kept apart from the base branch (then they are recorded by the
baseline workflow's ``store-baseline`` step, read through a finder, and a baseline counts only
once the host's run records show it is the base's own), how the gate says to record one, and
where the local gate keeps what ``ragaliq baseline record`` writes.

=========  ==========================================  ====================================
kind       where baselines live                        how a baseline is shown to be main's
=========  ==========================================  ====================================
``file``   ``baseline``, committed on the base branch  as trusted as the base commit
``branch`` a data branch, one baseline per commit       the baseline workflow's run records
``artifacts`` the record job's artifacts (GitLab)       the record job's pipeline records
=========  ==========================================  ====================================
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ragaliq.config import BaselinesConfig
    from ragaliq.store.layout import BaselineStore

    StoreOpener = Callable[[BaselinesConfig], BaselineStore]

__all__ = ["STORE_KINDS", "StoreKind", "kind_of", "open_store"]


@dataclass(frozen=True, kw_only=True)
class StoreKind:
    """What the gate needs to know of one kind of baseline store."""

    name: str
    kept_apart: bool
    """Whether baselines are kept off the base branch, one per commit: recorded by the baseline
    workflow's ``store-baseline`` step, found by the host's run records, and kept on this
    machine for the local gate too."""
    record_hint: str
    """How the gate says a recorded baseline reaches where gates read it."""
    opener: StoreOpener | None
    """How the store opens from its settings alone (an object store, say); None when it is
    reached through the code host's API (a branch of the repository, a job's artifacts), by
    the host adapter's ``baseline_store``."""
    update_advice: str
    """How a team updates the baseline with this store (Markdown; ``{branch}``, ``{path}`` and
    ``{workflow}`` filled in): never a command whose result the gate would refuse."""

    def advice(self, settings: BaselinesConfig, path: str) -> str:
        """How to update the baseline, for the comment, the summary and the console."""
        return self.update_advice.format(
            branch=settings.branch, path=path, workflow=settings.workflow
        )


STORE_KINDS: dict[str, StoreKind] = {
    "file": StoreKind(
        name="file",
        kept_apart=False,
        record_hint="commit it to the base branch for pull requests to be compared with it",
        opener=None,
        update_advice=(
            "The baseline is the file `{path}`, committed on the base branch. Once this change "
            "is merged, record it on the base branch with `ragaliq baseline record` and commit "
            "the file in a pull request of its own: later changes are compared with it."
        ),
    ),
    "branch": StoreKind(
        name="branch",
        kept_apart=True,
        record_hint="upload it as the artifact {artifact}, then keep it on {branch} with mode: "
        "store-baseline",
        opener=None,
        update_advice=(
            "The baseline workflow (`{workflow}`) records the base branch's baseline on every "
            "push to it and keeps it on the data branch `{branch}`: merge this change, and its "
            "run records the new scores that later changes are compared with. If that run "
            "failed or was cancelled, re-run it from its page. A baseline recorded by hand, or "
            "by a run started by hand, never counts."
        ),
    ),
    "artifacts": StoreKind(
        name="artifacts",
        kept_apart=True,
        record_hint="the record job keeps it among its artifacts, which never expire",
        opener=None,
        update_advice=(
            "The record job (`{workflow}`) records the default branch's baseline on every push "
            "to it and keeps it among its artifacts: merge this change, and its pipeline "
            "records the new scores that later changes are compared with. If that pipeline "
            "failed or was canceled, retry its record job. A pipeline run by hand, or with "
            "pipeline variables, never counts."
        ),
    ),
}


def kind_of(settings: BaselinesConfig) -> StoreKind:
    """The row of the store the ``baselines`` section names."""
    return STORE_KINDS[settings.store]


def open_store(settings: BaselinesConfig, by_host: StoreOpener) -> BaselineStore:
    """The store the ``baselines`` section names: opened by its row, or by the code host."""
    opener = kind_of(settings).opener
    return (opener or by_host)(settings)

"""Finding the baseline of a base commit in the stores on this machine, for a local gate.

A local ``ragaliq gate`` has no run records to ask which baseline is the base's own (the action
decides that from the host's records: :mod:`ragaliq.ci.custody`). So it takes the base commit's
own baseline when a store on this machine has it, else the nearest first-parent ancestor's,
within the config's ``baselines.ancestors``, and says which it took and that it was not checked.
A baseline found must name the commit it is stored under; anything else stops the gate.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ragaliq.baseline import parse_baseline
from ragaliq.config import BaselinesConfig
from ragaliq.errors import BaselineError
from ragaliq.store.found import FoundBaseline
from ragaliq.store.layout import BaselineStore, StoreView
from ragaliq.text.counts import plural

__all__ = ["NOT_VERIFIED", "StoreFinder"]

NOT_VERIFIED = (
    "not checked for where it came from: a local gate has no run records, so it takes the "
    "nearest recorded baseline in the stores on this machine (the action decides the base's own "
    "from its baseline workflow's runs)"
)


@dataclass(kw_only=True)
class StoreFinder:
    """Finds the baseline of ``commit`` in the stores the settings name."""

    stores: Callable[[BaselinesConfig], Sequence[BaselineStore]]
    """The stores to look in, in order (a local folder, then the fetched branch; or the
    branch through the API)."""
    commit: str
    base: str
    """How messages name the base: ``main@1a2b3c4``."""
    parent_of: Callable[[str], str | None]
    """A commit's first parent; None when unknown (a root commit, a shallow history)."""
    hint: str = ""
    """How to get a baseline when none is found here (a local gate: fetch the branch)."""
    found: FoundBaseline | None = field(default=None, init=False)
    """The baseline the last :meth:`find` found, with the answers its run kept."""
    _parents: dict[str, str | None] = field(default_factory=dict, init=False)

    def find(self, settings: BaselinesConfig) -> FoundBaseline | None:
        for store in self.stores(settings):
            view = store.view()
            if view is None:
                continue
            nearest = self._nearest(view, settings.ancestors)
            if nearest is not None:
                self.found = self._read(view, *nearest)
                return self.found
        return None

    def _nearest(self, view: StoreView, ancestors: int) -> tuple[str, int] | None:
        commit: str | None = self.commit
        for back in range(ancestors + 1):
            if commit is None:
                return None
            if view.has(commit):
                return commit, back
            if back < ancestors:
                if commit not in self._parents:
                    self._parents[commit] = self.parent_of(commit)
                commit = self._parents[commit]
        return None

    def _read(self, view: StoreView, commit: str, back: int) -> FoundBaseline:
        stored = view.baseline(commit)
        source = f"the baseline of {commit[:12]} in {stored.where}"
        baseline = parse_baseline(stored.data, source=source)
        if baseline.commit != commit:
            raise BaselineError(
                f"{source} says it was recorded on {baseline.commit or 'no commit'}, not "
                f"{commit[:12]}: it is not that commit's baseline, so it sets no bar; re-run the "
                "baseline workflow on that commit"
            )
        which = (
            f"the baseline of {self.base}"
            if back == 0
            else f"the baseline of {commit[:7]}, the first-parent ancestor of {self.base} "
            f"{plural(back, 'commit')} back (the base commit's own is not recorded yet)"
        )
        return FoundBaseline(
            baseline=baseline,
            commit=commit,
            description=f"{which}, read from {stored.where}; {NOT_VERIFIED}",
            answers=lambda: view.answers(commit),
        )

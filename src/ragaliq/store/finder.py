"""Finding the baseline of a base commit in the stores a trusted config names.

The base commit's own baseline is the one to compare with. Its baseline run may not have
finished yet (a pull request opened right after a merge), so the nearest first-parent ancestor's
is taken instead, within the config's ``baselines.ancestors``, and the gate says which it took.
A baseline found is checked before it is used: it must name the commit it is stored under, and
(where the API can be asked) come from a ``push`` run of the baseline workflow on the base
branch at that commit (:mod:`ragaliq.github.provenance`); anything else stops the gate.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ragaliq.baseline import Baseline, parse_baseline
from ragaliq.config import BaselinesConfig
from ragaliq.errors import BaselineError
from ragaliq.store.found import FoundBaseline
from ragaliq.store.layout import BaselineStore, StoreView, baseline_digest
from ragaliq.text.counts import plural

__all__ = ["StoreFinder", "Verify"]

Verify = Callable[[Baseline, str, BaselinesConfig], str]
"""``(baseline, sha256, settings)``: how the baseline was shown to come from the baseline
workflow; raises :class:`~ragaliq.errors.BaselineError` when it cannot be."""
NOT_VERIFIED = (
    "not checked for where it came from (the action checks each baseline's run through GitHub's "
    "API; a local gate trusts the stores on this machine)"
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
    verify: Verify | None = None
    """None where no API can be asked: the description says the baseline was not checked."""
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
                self.found = self._read(view, *nearest, settings=settings)
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

    def _read(
        self, view: StoreView, commit: str, back: int, *, settings: BaselinesConfig
    ) -> FoundBaseline:
        stored = view.baseline(commit)
        source = f"the baseline of {commit[:12]} in {stored.where}"
        baseline = parse_baseline(stored.data, source=source)
        if baseline.commit != commit:
            raise BaselineError(
                f"{source} says it was recorded on {baseline.commit or 'no commit'}, not "
                f"{commit[:12]}: it is not that commit's baseline, so it sets no bar; re-run the "
                "baseline workflow on that commit"
            )
        checked = (
            self.verify(baseline, baseline_digest(stored.data), settings)
            if self.verify is not None
            else NOT_VERIFIED
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
            description=f"{which}, read from {stored.where}; {checked}",
            answers=lambda: view.answers(commit),
        )

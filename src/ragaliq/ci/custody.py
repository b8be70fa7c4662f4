"""Which baseline is the base's bar: decided from the host's run records, never a store's silence.

For the base commit, the host lists the baseline workflow's ``push`` runs on the base branch at
that commit (newest first); the newest one, at its latest attempt, decides:

========================================  =====================================================
the newest run                             the outcome
========================================  =====================================================
succeeded, showing one recorded baseline   its SHA-256 is the bar (older runs and attempts never)
waiting or running                         ``pending``: the change is gated again when it lands
succeeded without one, or with several     an error naming the run: re-run it
failed, cancelled, timed out, skipped      an error naming the run and what to re-run
no run at all                              the nearest first-parent ancestor with a run, only
                                           when the trusted baseline workflow's own push filters
                                           show that no run was due for what changed since;
                                           otherwise an error with the recovery
========================================  =====================================================

The baseline store is a cache of what the runs recorded: an entry with the bar's digest is read
from it, a missing one from the run's own artifact (the recording job alone writes it back), and
an entry with another digest is an error. The file read must name the commit and the run it is
the bar of.

A local ``ragaliq gate`` has no run records: it keeps the store's nearest-ancestor rule
(:class:`~ragaliq.store.finder.StoreFinder`) and says so.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from ragaliq.baseline import Baseline, parse_baseline
from ragaliq.config import BaselinesConfig
from ragaliq.errors import BaselineError, BaselineMissingError, BaselinePendingError
from ragaliq.forge import BaselineRuns, RunRecord
from ragaliq.store.found import FoundBaseline
from ragaliq.store.layout import BaselineStore, baseline_digest
from ragaliq.text.counts import plural

__all__ = [
    "PENDING_LIMIT",
    "PENDING_LIMIT_HOURS",
    "BarRun",
    "RunRecordFinder",
    "bar_run",
    "run_outcome",
    "stale",
]

PENDING_LIMIT_HOURS = 6
PENDING_LIMIT = timedelta(hours=PENDING_LIMIT_HOURS)
"""How long a change waits for its base's baseline: a baseline run still waiting or running this
long after it started (GitHub's own limit for a job) is an error, and so is a change's ``pending``
status set this long ago (:mod:`ragaliq.ci.follow`)."""


def stale(since: datetime | None, now: datetime | None = None) -> bool:
    """Whether something that started at ``since`` has waited past :data:`PENDING_LIMIT`."""
    if since is None:
        return False
    return (now or datetime.now(UTC)) - since > PENDING_LIMIT


@dataclass(frozen=True, kw_only=True)
class BarRun:
    """The run whose baseline is the base's bar."""

    commit: str
    """The commit it recorded: the base, or an ancestor no run was due after."""
    run: RunRecord
    digest: str
    """The SHA-256 of the baseline file it recorded."""
    back: int = 0
    """How many first-parent commits back from the base ``commit`` is."""


def run_outcome(
    commit: str, run: RunRecord, *, name: str, workflow: str, now: datetime | None = None
) -> BarRun:
    """The bar of ``commit`` from its newest baseline run.

    ``name`` is how messages name the commit (``main@1a2b3c4``); ``now`` the time a run still
    waiting or running is measured at (:data:`PENDING_LIMIT`).

    Raises:
        BaselinePendingError: the run has not finished.
        BaselineError: it ended without recording exactly one baseline, or has not finished
            :data:`PENDING_LIMIT` after it started.
    """
    where = f"{run.describe()} of {workflow}" + (f" ({run.url})" if run.url else "")
    if not run.over and stale(run.started_at, now):
        raise BaselineMissingError(
            f"{name}'s baseline: {where} is still {run.phase} more than "
            f"{PENDING_LIMIT_HOURS} hours after it started, so it may never finish; cancel it "
            "and re-run it, then the gate again"
        )
    if not run.over:
        raise BaselinePendingError(
            f"{name}'s baseline is being recorded ({where} is {run.phase}); the gate decides "
            "once it lands, and gates this change again then",
            commit=commit,
            run_id=run.id,
        )
    if run.phase != "succeeded":
        raise BaselineMissingError(
            f"{name}'s baseline: {where} ended {run.said}, so {name} has no bar; re-run that "
            "run (its failed jobs, or all of it) from the host's page, then the gate again"
        )
    if len(run.baselines) != 1:
        shown = "no baseline" if not run.baselines else plural(len(run.baselines), "baseline")
        raise BaselineMissingError(
            f"{name}'s baseline: {where} succeeded but showed {shown} recorded by its latest "
            "attempt (one artifact ragaliq-baseline-<sha256>), so it sets no bar; re-run it with "
            f"the baseline workflow `ragaliq init` writes"
        )
    return BarRun(commit=commit, run=run, digest=run.baselines[0])


def bar_run(
    records: BaselineRuns,
    *,
    commit: str,
    branch: str,
    name: str,
    ancestors: int,
    now: datetime | None = None,
) -> BarRun:
    """The run whose baseline is the bar of ``commit`` on ``branch`` (see the module's table).

    Raises:
        BaselinePendingError: that run has not finished.
        BaselineError: there is no such run, or it recorded no usable baseline.
    """
    run = records.newest_run(commit)
    if run is not None:
        return run_outcome(commit, run, name=name, workflow=records.workflow, now=now)
    nearest: str | None = commit
    for back in range(1, ancestors + 1):
        nearest = records.first_parent(nearest) if nearest is not None else None
        if nearest is None:
            break
        run = records.newest_run(nearest)
        if run is None:
            continue
        _no_run_due(records, since=nearest, commit=commit, branch=branch, name=name)
        shown = f"{nearest[:7]}, {plural(back, 'commit')} before {name}"
        found = run_outcome(nearest, run, name=shown, workflow=records.workflow, now=now)
        return BarRun(commit=nearest, run=found.run, digest=found.digest, back=back)
    raise BaselineMissingError(
        f"no baseline run of {records.workflow} is recorded for {name}"
        + (f" nor for its {ancestors} nearest first-parent ancestors" if ancestors else "")
        + f"; {_recovery(records.workflow, branch)}"
    )


def _no_run_due(records: BaselineRuns, *, since: str, commit: str, branch: str, name: str) -> None:
    """Refuse an ancestor's baseline unless no baseline run was due for what changed since it.

    Raises:
        BaselineError: the push filters do not show that no run was due.
    """
    due = records.run_due(since, commit)
    if due is not None:
        raise BaselineMissingError(
            f"no baseline run of {records.workflow} is recorded for {name}, though one may have "
            f"been due ({due}): the run may have been deleted, or never started; "
            f"{_recovery(records.workflow, branch)}"
        )


def _recovery(workflow: str, branch: str) -> str:
    return (
        f"re-run {workflow}'s run for that commit, or if there is none, push a new commit to "
        f"{branch} (a run started by hand does not count), then run the gate again"
    )


@dataclass(kw_only=True)
class RunRecordFinder:
    """Finds the base's baseline as the run records decide it, read from the store or the run."""

    records: Callable[[BaselinesConfig], BaselineRuns]
    """The host's records of the baseline workflow the trusted config names."""
    store: Callable[[BaselinesConfig], BaselineStore]
    """The store the trusted config names (a cache of what the runs recorded)."""
    commit: str
    branch: str
    base: str
    """How messages name the base: ``main@1a2b3c4``."""
    hint: str = ""
    found: FoundBaseline | None = field(default=None, init=False)
    """The baseline the last :meth:`find` found, with the answers its run kept."""
    bar: BarRun | None = field(default=None, init=False)
    """The run whose baseline that is."""

    def find(self, settings: BaselinesConfig) -> FoundBaseline:
        """The bar's baseline (never None: without one the gate cannot be sure).

        Raises:
            BaselinePendingError: it is being recorded.
            BaselineError: it cannot be shown to be the base's own, or cannot be read.
        """
        records = self.records(settings)
        bar = bar_run(
            records,
            commit=self.commit,
            branch=self.branch,
            name=self.base,
            ancestors=settings.ancestors,
        )
        store = self.store(settings)
        view = store.view()
        answers: Callable[[], bytes | None] = lambda: None  # noqa: E731
        if view is not None and view.has(bar.commit):
            stored = view.baseline(bar.commit)
            if baseline_digest(stored.data) != bar.digest:
                raise BaselineError(
                    f"the baseline of {bar.commit[:12]} in {stored.where} is not the file "
                    f"{bar.run.describe()} recorded (sha256 {bar.digest[:16]}): the store was "
                    f"written by something else, so it sets no bar; re-run {bar.run.describe()} "
                    f"of {records.workflow} to write it again"
                )
            data, where = stored.data, stored.where
            answers = lambda: view.answers(bar.commit)  # noqa: E731
        else:
            data = records.recorded_baseline(bar.run, bar.digest)
            if baseline_digest(data) != bar.digest:
                raise BaselineError(
                    f"the baseline {bar.run.describe()} holds is not the one it showed it "
                    "recorded; re-run it"
                )
            where = f"{bar.run.describe()}'s own artifact ({store.description} has no entry)"
            answers = lambda: records.recorded_answers(bar.run)  # noqa: E731
        baseline = _checked(parse_baseline(data, source=where), bar, where)
        self.bar = bar
        self.found = FoundBaseline(
            baseline=baseline,
            commit=bar.commit,
            description=self._which(bar, records.workflow, where),
            answers=answers,
        )
        return self.found

    def _which(self, bar: BarRun, workflow: str, where: str) -> str:
        recorded = (
            f"recorded by {bar.run.describe()} of {workflow} on a push to {self.branch}, which "
            "uploaded this file's digest at its latest attempt"
        )
        if bar.back == 0:
            return f"the baseline of {self.base}, read from {where}; {recorded}"
        return (
            f"the baseline of {bar.commit[:7]}, {plural(bar.back, 'commit')} before {self.base} "
            f"({workflow}'s push filters started no run for the changes since), read from "
            f"{where}; {recorded}"
        )


def _checked(baseline: Baseline, bar: BarRun, where: str) -> Baseline:
    """The baseline, once it names the commit and the run it is the bar of.

    Raises:
        BaselineError: it names another commit or another run.
    """
    if baseline.commit != bar.commit:
        raise BaselineError(
            f"the baseline read from {where} says it was recorded on "
            f"{(baseline.commit or 'no commit')[:12]}, not {bar.commit[:12]}: it sets no bar"
        )
    if baseline.origin is None or baseline.origin.run_id != bar.run.id:
        said = f"run {baseline.origin.run_id}" if baseline.origin is not None else "no run"
        raise BaselineError(
            f"the baseline read from {where} names {said}, not {bar.run.describe()} that "
            "recorded it: it sets no bar"
        )
    return baseline

"""Which baseline is the bar, decided from the run records: every run phase to one outcome, the
ancestor rule, and the store read as a cache of what the run recorded."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from ragaliq.baseline import Origin, write_baseline
from ragaliq.ci.custody import PENDING_LIMIT, RunRecordFinder, bar_run, run_outcome
from ragaliq.config import BaselinesConfig
from ragaliq.errors import BaselineError, BaselinePendingError
from ragaliq.forge import RUN_PHASES, RunRecord
from ragaliq.store.backends import FolderBackend
from ragaliq.store.layout import BaselineStore, baseline_digest
from tests.unit.gate.runs import scored

BASE, PARENT, GRANDPARENT = "b" * 40, "a" * 40, "9" * 40
NOW = datetime(2026, 5, 1, 12, tzinfo=UTC)


def run(phase: str = "succeeded", *, digest: str | None = "d" * 64, **kw) -> RunRecord:
    defaults = dict(id=77, phase=phase, said=phase, started_at=NOW - timedelta(minutes=5))
    baselines = (digest,) if digest else ()
    return RunRecord(**{**defaults, "baselines": baselines, **kw})  # type: ignore[arg-type]


@dataclass
class Records:
    """A host's records, as a test sets them."""

    runs: dict[str, RunRecord] = field(default_factory=dict)
    parents: dict[str, str] = field(default_factory=lambda: {BASE: PARENT, PARENT: GRANDPARENT})
    due: str | None = None
    files: dict[tuple[int, str], bytes] = field(default_factory=dict)
    asked_due: list[tuple[str, str]] = field(default_factory=list)
    workflow: str = "ragaliq-baseline.yml"

    def newest_run(self, commit: str) -> RunRecord | None:
        return self.runs.get(commit)

    def first_parent(self, commit: str) -> str | None:
        return self.parents.get(commit)

    def run_due(self, since: str, commit: str) -> str | None:
        self.asked_due.append((since, commit))
        return self.due

    def recorded_answers(self, run: RunRecord) -> bytes | None:
        return self.files.get((run.id, "answers"))

    def recorded_baseline(self, run: RunRecord, digest: str) -> bytes:
        try:
            return self.files[(run.id, digest)]
        except KeyError:
            raise BaselineError(f"run {run.id} holds no baseline {digest[:8]}") from None


def decide(records: Records, ancestors: int = 20):
    return bar_run(
        records, commit=BASE, branch="main", name="main@bbbbbbb", ancestors=ancestors, now=NOW
    )


def test_a_succeeded_run_with_one_recorded_baseline_sets_the_bar_with_its_digest():
    bar = decide(Records(runs={BASE: run(digest="e" * 64)}))
    assert (bar.commit, bar.digest, bar.back, bar.run.id) == (BASE, "e" * 64, 0, 77)


@pytest.mark.parametrize("phase", ["waiting", "running"])
def test_a_run_still_recording_makes_the_gate_wait(phase):
    said = "main@bbbbbbb's baseline is being recorded"
    with pytest.raises(BaselinePendingError, match=said) as e:
        decide(Records(runs={BASE: run(phase, digest=None)}))
    assert (e.value.commit, e.value.run_id) == (BASE, 77)


@pytest.mark.parametrize("phase", ["failed", "cancelled", "timed_out", "skipped"])
def test_a_run_that_ended_otherwise_is_an_error_naming_it_and_what_to_re_run(phase):
    records = Records(runs={BASE: run(phase, said=f"completed/{phase}", url="https://h/r/77")})
    with pytest.raises(BaselineError, match=f"ended completed/{phase}") as e:
        decide(records)
    assert not isinstance(e.value, BaselinePendingError)
    assert "run 77 of ragaliq-baseline.yml (https://h/r/77)" in str(e.value)
    assert "re-run that run" in str(e.value)


def test_every_phase_has_exactly_one_outcome():
    outcomes = {}
    for phase in RUN_PHASES:
        try:
            run_outcome(BASE, run(phase), name="main@b", workflow="w", now=NOW)
            outcomes[phase] = "bar"
        except BaselinePendingError:
            outcomes[phase] = "pending"
        except BaselineError:
            outcomes[phase] = "error"
    assert outcomes == {
        "waiting": "pending",
        "running": "pending",
        "succeeded": "bar",
        "failed": "error",
        "cancelled": "error",
        "timed_out": "error",
        "skipped": "error",
    }


@pytest.mark.parametrize("digests", [(), ("e" * 64, "f" * 64)])
def test_a_succeeded_run_that_showed_no_baseline_or_several_sets_no_bar(digests):
    records = Records(runs={BASE: run(digest=None, baselines=digests)})
    with pytest.raises(BaselineError, match="succeeded but showed"):
        decide(records)


def test_a_run_recording_past_the_limit_is_an_error_not_a_wait():
    old = NOW - PENDING_LIMIT - timedelta(minutes=1)
    with pytest.raises(BaselineError, match="more than 6 hours after it started") as e:
        decide(Records(runs={BASE: run("running", digest=None, started_at=old)}))
    assert not isinstance(e.value, BaselinePendingError)
    just_in = NOW - PENDING_LIMIT + timedelta(minutes=1)
    with pytest.raises(BaselinePendingError):
        decide(Records(runs={BASE: run("running", digest=None, started_at=just_in)}))


def test_without_a_run_the_nearest_ancestor_counts_only_when_no_run_was_due():
    records = Records(runs={GRANDPARENT: run(digest="e" * 64)})
    bar = decide(records)
    assert (bar.commit, bar.back, bar.digest) == (GRANDPARENT, 2, "e" * 64)
    assert records.asked_due == [(GRANDPARENT, BASE)]  # the changes since that ancestor

    records.due = "its push filters start it for the 3 paths changed since 9999999"
    with pytest.raises(BaselineError, match="though one may have been due") as e:
        decide(records)
    assert "push a new commit to main (a run started by hand does not count)" in str(e.value)


def test_an_ancestors_run_still_recording_makes_the_gate_wait_and_a_failed_one_fails():
    with pytest.raises(BaselinePendingError):
        decide(Records(runs={PARENT: run("waiting", digest=None)}))
    with pytest.raises(BaselineError, match="ended"):
        decide(Records(runs={PARENT: run("cancelled")}))


def test_no_run_at_the_base_nor_within_the_ancestors_searched_is_an_error():
    records = Records(runs={GRANDPARENT: run()})
    with pytest.raises(BaselineError, match="nor for its 1 nearest first-parent ancestors"):
        decide(records, ancestors=1)
    with pytest.raises(BaselineError, match="is recorded for main@bbbbbbb; re-run"):
        decide(records, ancestors=0)
    with pytest.raises(BaselineError, match="no baseline run"):
        decide(Records(runs={}, parents={}))  # a root commit


def baseline_bytes(commit: str, run_id: int) -> bytes:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "b.json"
        report = scored({"a": 0.9})
        write_baseline(
            path,
            head=report.head,
            cases=iter(report.cases),
            commit=commit,
            origin=Origin(repository="acme/bot", run_id=run_id),
        )
        return path.read_bytes()


def finder(records: Records, store: BaselineStore) -> RunRecordFinder:
    return RunRecordFinder(
        records=lambda config: records,
        store=lambda config: store,
        commit=BASE,
        branch="main",
        base="main@bbbbbbb",
    )


def test_the_store_is_a_cache_missing_entries_are_read_from_the_run(tmp_path):
    data = baseline_bytes(BASE, 77)
    records = Records(runs={BASE: run(digest=baseline_digest(data))}, files={})
    store = BaselineStore(FolderBackend(tmp_path), keep=10)
    with pytest.raises(BaselineError, match="holds no baseline"):  # neither store nor run
        finder(records, store).find(BaselinesConfig(store="branch"))
    records.files[(77, baseline_digest(data))] = data
    records.files[(77, "answers")] = b"the run's answers\n"
    found = finder(records, store).find(BaselinesConfig(store="branch"))
    assert found.commit == BASE and found.baseline.origin.run_id == 77
    assert "run 77's own artifact" in found.description
    assert found.answers() == b"the run's answers\n"

    store.put(BASE, data, answers=b"kept answers\n")
    found = finder(records, store).find(BaselinesConfig(store="branch"))
    assert f"read from {store.description}" in found.description
    assert found.answers() == b"kept answers\n"


def test_a_store_entry_with_another_digest_is_an_error_never_the_bar(tmp_path):
    data = baseline_bytes(BASE, 77)
    planted = baseline_bytes(BASE, 77).replace(b'"a"', b'"b"')
    store = BaselineStore(FolderBackend(tmp_path), keep=10)
    store.put(BASE, planted)
    records = Records(runs={BASE: run(digest=baseline_digest(data))})
    with pytest.raises(BaselineError, match="is not the file run 77 recorded"):
        finder(records, store).find(BaselinesConfig(store="branch"))


@pytest.mark.parametrize(
    ("commit", "run_id", "said"),
    [(PARENT, 77, "recorded on aaaaaaaaaaaa"), (BASE, 78, "names run 78, not run 77")],
)
def test_a_file_naming_another_commit_or_run_sets_no_bar(tmp_path, commit, run_id, said):
    data = baseline_bytes(commit, run_id)
    records = Records(runs={BASE: run(digest=baseline_digest(data))})
    records.files[(77, baseline_digest(data))] = data
    store = BaselineStore(FolderBackend(tmp_path), keep=10)
    with pytest.raises(BaselineError, match=said):
        finder(records, store).find(BaselinesConfig(store="branch"))


def test_an_ancestors_baseline_is_named_with_why_it_counts(tmp_path):
    data = baseline_bytes(PARENT, 77)
    records = Records(runs={PARENT: run(digest=baseline_digest(data))})
    records.files[(77, baseline_digest(data))] = data
    store = BaselineStore(FolderBackend(tmp_path), keep=10)
    found = finder(records, store).find(BaselinesConfig(store="branch"))
    assert found.commit == PARENT
    assert found.description.startswith("the baseline of aaaaaaa, 1 commit before main@bbbbbbb")
    assert "push filters started no run" in found.description

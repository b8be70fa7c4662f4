"""The baseline store's layout, in a folder: one baseline per commit, parts under the Contents
API's limit, the newest kept, answers for the newest few, and a write that lost a race done
again on top of the winner's."""

from __future__ import annotations

import gzip
import json
import random

import pytest

from ragaliq.errors import BaselineError, OutputError
from ragaliq.store.backends import FolderBackend
from ragaliq.store.layout import (
    ANSWER_KEEP,
    INDEX_FILE,
    PART_BYTES,
    BaselineStore,
    Snapshot,
    baseline_digest,
)

A, B, C = "a" * 40, "b" * 40, "c" * 40


def commit_id(n: int) -> str:
    return f"{n:040x}"


def test_a_baseline_is_kept_and_read_back_by_its_commit(tmp_path):
    store = BaselineStore(FolderBackend(tmp_path / "store"), keep=10)
    assert store.view() is None  # no store yet
    store.put(A, b'{"a baseline": 1}\n', answers=b'{"k": 1}\n', recorded_at="2025-01-01T00:00:00Z")
    view = store.view()
    assert view is not None and view.has(A) and not view.has(B)
    assert view.baseline(A).data == b'{"a baseline": 1}\n'
    assert view.answers(A) == b'{"k": 1}\n'
    index = json.loads((tmp_path / "store" / INDEX_FILE).read_text())
    assert index["entries"][0]["sha256"] == baseline_digest(b'{"a baseline": 1}\n')
    with pytest.raises(BaselineError, match="keeps no baseline of bbbbbbbbbbbb"):
        view.baseline(B)


def test_a_large_baseline_is_cut_into_parts_under_the_contents_apis_limit(tmp_path):
    store = BaselineStore(FolderBackend(tmp_path), keep=10)
    data = random.Random(7).randbytes(2 * PART_BYTES + 1000)  # incompressible: three parts
    store.put(A, data)
    parts = sorted((tmp_path / "baselines").iterdir())
    assert len(parts) > 1
    assert all(p.stat().st_size <= PART_BYTES for p in parts)
    view = store.view()
    assert view is not None and view.baseline(A).data == data


def test_the_newest_baselines_are_kept_and_answers_only_for_the_newest_few(tmp_path):
    store = BaselineStore(FolderBackend(tmp_path), keep=ANSWER_KEEP + 2)
    for n in range(ANSWER_KEEP + 4):
        store.put(commit_id(n), f"baseline {n}".encode(), answers=f"answers {n}".encode())
    view = store.view()
    assert view is not None
    newest = ANSWER_KEEP + 3
    kept = [n for n in range(newest + 1) if view.has(commit_id(n))]
    assert kept == list(range(2, newest + 1))  # the two oldest are gone, with their files
    assert not (tmp_path / "baselines" / f"{commit_id(0)}.json.gz").exists()
    assert view.answers(commit_id(newest)) == f"answers {newest}".encode()
    # An older baseline's answers are gone; the newest answers stand in for them.
    assert not (tmp_path / "answers" / f"{commit_id(2)}.jsonl.gz").exists()
    assert view.answers(commit_id(2)) == f"answers {newest}".encode()


def test_recording_a_commit_again_replaces_its_baseline(tmp_path):
    store = BaselineStore(FolderBackend(tmp_path), keep=10)
    store.put(A, b"first")
    store.put(B, b"other")
    store.put(A, b"second")
    view = store.view()
    assert view is not None
    assert view.baseline(A).data == b"second"
    assert [e.commit for e in view.index.entries] == [A, B]


class Racing(FolderBackend):
    """A folder another baseline run writes to just before each of the first ``lost`` writes."""

    def __init__(self, root, lost: int) -> None:
        super().__init__(root)
        object.__setattr__(self, "lost", lost)

    def commit(self, base, *, put, delete, message) -> bool:
        if self.lost:
            object.__setattr__(self, "lost", self.lost - 1)
            BaselineStore(FolderBackend(self.root), keep=10).put(C, b"the other run's")
            return False
        return super().commit(base, put=put, delete=delete, message=message)


def test_a_write_that_lost_a_race_is_done_again_on_top_of_the_winners(tmp_path):
    waits: list[float] = []
    store = BaselineStore(Racing(tmp_path, lost=2), keep=10, sleep=waits.append)
    store.put(A, b"mine")
    view = store.view()
    assert view is not None and view.has(A) and view.has(C)
    assert len(waits) == 2
    always = BaselineStore(Racing(tmp_path, lost=99), keep=10, sleep=waits.append, attempts=3)
    with pytest.raises(OutputError, match="changed under every one of 3 attempts"):
        always.put(B, b"never")


@pytest.mark.parametrize(
    ("index", "said"),
    [
        ("not json", "not an index this version reads"),
        ('{"format": 1, "entries": [{"commit": "../../etc"}]}', "entries.0.commit"),
        ('{"format": 9}', "format"),
    ],
)
def test_an_index_that_is_not_one_is_refused_with_one_line(tmp_path, index, said):
    (tmp_path / INDEX_FILE).write_text(index, encoding="utf-8")
    with pytest.raises(BaselineError, match=said):
        BaselineStore(FolderBackend(tmp_path), keep=10).view()


def test_a_part_that_is_missing_cut_or_a_bomb_is_refused(tmp_path, monkeypatch):
    store = BaselineStore(FolderBackend(tmp_path), keep=10)
    store.put(A, b"a baseline")
    part = tmp_path / "baselines" / f"{A}.json.gz"
    part.write_bytes(part.read_bytes()[:-4])
    view = store.view()
    assert view is not None
    with pytest.raises(BaselineError, match="cut short"):
        view.baseline(A)
    part.unlink()
    with pytest.raises(BaselineError, match=r"listed in index\.json but missing"):
        view.baseline(A)
    monkeypatch.setattr("ragaliq.store.layout.MAX_BASELINE_BYTES", 1000)
    part.write_bytes(gzip.compress(b"\0" * 100_000))
    with pytest.raises(BaselineError, match="more than 1,000 bytes"):
        view.baseline(A)


def test_a_snapshot_is_the_store_at_one_moment(tmp_path):
    backend = FolderBackend(tmp_path / "store")
    assert backend.snapshot() is None
    (tmp_path / "store").mkdir()
    snapshot = backend.snapshot()
    assert isinstance(snapshot, Snapshot) and snapshot.version is None


def test_a_store_opens_by_its_kinds_row_or_else_through_the_code_host(tmp_path, monkeypatch):
    from dataclasses import replace

    from ragaliq.config import BaselinesConfig
    from ragaliq.store import kinds

    by_host = BaselineStore(FolderBackend(tmp_path / "host"), keep=5)
    own = BaselineStore(FolderBackend(tmp_path / "own"), keep=5)
    opened: list[str] = []

    def host_opens(settings: BaselinesConfig) -> BaselineStore:
        opened.append(settings.store)
        return by_host

    branch = BaselinesConfig(store="branch")
    assert kinds.open_store(branch, host_opens) is by_host
    assert opened == ["branch"]
    # A kind whose row says how it opens (an object store, say) never asks the host.
    monkeypatch.setitem(
        kinds.STORE_KINDS, "branch", replace(kinds.STORE_KINDS["branch"], opener=lambda s: own)
    )
    assert kinds.open_store(branch, host_opens) is own
    assert opened == ["branch"]

"""The baseline store: one baseline per commit of the base branch, kept off that branch.

The same layout in a folder (a laptop, tests) and on the data branch the baseline workflow
writes (:mod:`ragaliq.github.data_branch`)::

    index.json                          the baselines kept, newest first
    baselines/<commit>.json.gz          one baseline, gzip; cut into parts ``.000``, ``.001``, …
                                        of at most 900 KiB when larger (the Contents API serves a
                                        file inline only up to 1 MB, and git hosts refuse files
                                        over 100 MB)
    answers/<commit>.jsonl.gz[.NNN]     the judge answers of the run that recorded it (signed
                                        rows, :mod:`ragaliq.judges.answers`), for the newest
                                        :data:`ANSWER_KEEP` baselines only

A store is written only by a whole change at once (every file, then the index) on top of the
version it was read at; a write that lost a race to another is done again on the new version.
The index keeps at most ``keep`` baselines, dropping the oldest with their files.

Nothing in the store is trusted for being there: the index is a list of names, every size is
bounded, and the baseline read is checked by the reader for where it came from (the commit it
names, and through the API the run that recorded it).
"""

from __future__ import annotations

import gzip
import hashlib
import re
import time
import zlib
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ragaliq.baseline import MAX_BASELINE_BYTES
from ragaliq.errors import BaselineError, OutputError
from ragaliq.repository import FileSource

__all__ = [
    "ANSWER_KEEP",
    "INDEX_FILE",
    "MAX_ANSWERS_BYTES",
    "PART_BYTES",
    "BaselineStore",
    "Snapshot",
    "StoreBackend",
    "StoreView",
    "StoredBaseline",
    "baseline_digest",
]

INDEX_FILE = "index.json"
PART_BYTES = 900 * 1024
"""The largest part of a stored file: under the Contents API's 1 MB for inline content."""
MAX_PARTS = 400
"""The most parts one stored file has (360 MB compressed)."""
MAX_INDEX_BYTES = 4 * 1024 * 1024
MAX_ANSWERS_BYTES = 256 * 1024 * 1024
"""The largest answers file read, uncompressed."""
ANSWER_KEEP = 10
"""Baselines whose run's judge answers stay in the store; older ones keep their baseline only.
Answers are addressed by what each question reads, so the newest baseline's answers serve a pull
request whose base is older for every case both still share."""
WRITE_ATTEMPTS = 6
_COMMIT = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


def baseline_digest(data: bytes) -> str:
    """The SHA-256 of a baseline file, as its artifact's name carries it."""
    return hashlib.sha256(data).hexdigest()


class _Entry(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    commit: str = Field(pattern=r"^([0-9a-f]{40}|[0-9a-f]{64})$")
    recorded_at: str = Field(max_length=40)
    parts: int = Field(ge=1, le=MAX_PARTS)
    """How many parts the baseline was cut into."""
    answer_parts: int = Field(default=0, ge=0, le=MAX_PARTS)
    """How many parts its run's answers were cut into; 0 when none are kept."""
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    """The SHA-256 of the baseline (uncompressed)."""


class _Index(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    format: Literal[1] = 1
    entries: tuple[_Entry, ...] = Field(default=(), max_length=10_000)


@dataclass(frozen=True, kw_only=True)
class Snapshot:
    """The store as it was at one moment: its files, and the version to write on top of."""

    files: FileSource
    version: str | None = None
    """The data branch's commit; None for a folder."""


class StoreBackend(Protocol):
    """Where a store's files live: a folder, or a branch of the repository."""

    @property
    def description(self) -> str:
        """Where, for messages: ``the branch ragaliq-baselines of acme/bot``."""
        ...

    def snapshot(self) -> Snapshot | None:
        """The store as it is now; None when there is no store yet.

        Raises:
            RepositoryError: it cannot be read for certain.
        """
        ...

    def commit(
        self,
        base: Snapshot | None,
        *,
        put: Mapping[str, bytes],
        delete: Collection[str],
        message: str,
    ) -> bool:
        """Write a whole change on top of ``base``; False when the store moved on since.

        Raises:
            OutputError: the change was refused for another reason (a protected branch, no
                permission); the message says how to fix it.
        """
        ...


@dataclass(frozen=True, kw_only=True)
class StoredBaseline:
    """A baseline file as the store holds it, not yet checked."""

    commit: str
    data: bytes
    """The baseline, uncompressed."""
    where: str
    """Where it was read: ``the branch ragaliq-baselines of acme/bot at 1a2b3c4d5e6f``."""


class StoreView:
    """One snapshot of a store, read through its index."""

    def __init__(self, snapshot: Snapshot, index: _Index, description: str) -> None:
        self.snapshot = snapshot
        self.index = index
        self.description = description
        self._entries = {entry.commit: entry for entry in index.entries}

    def has(self, commit: str) -> bool:
        """Whether the store keeps a baseline of ``commit``."""
        return commit in self._entries

    def newest(self) -> str | None:
        """The commit of the newest baseline kept, if any."""
        return self.index.entries[0].commit if self.index.entries else None

    def baseline(self, commit: str) -> StoredBaseline:
        """The baseline of ``commit``, uncompressed.

        Raises:
            BaselineError: it is not there, or cannot be read within the limits.
        """
        entry = self._entries.get(commit)
        if entry is None:
            raise BaselineError(f"{self.description} keeps no baseline of {commit[:12]}")
        name = f"the baseline of {commit[:12]} in {self.description}"
        data = _gunzip(
            self._joined(_parts(_baseline_file(commit), entry.parts), name),
            limit=MAX_BASELINE_BYTES,
            name=name,
        )
        return StoredBaseline(commit=commit, data=data, where=self.description)

    def answers(self, commit: str | None = None) -> bytes | None:
        """The judge answers kept with ``commit``'s baseline, else with the newest that has them.

        Raises:
            BaselineError: they are listed but cannot be read within the limits.
        """
        entry = self._entries.get(commit or "")
        if entry is None or not entry.answer_parts:
            entry = next((e for e in self.index.entries if e.answer_parts), None)
        if entry is None:
            return None
        name = f"the judge answers of {entry.commit[:12]} in {self.description}"
        return _gunzip(
            self._joined(_parts(_answers_file(entry.commit), entry.answer_parts), name),
            limit=MAX_ANSWERS_BYTES,
            name=name,
        )

    def _joined(self, paths: tuple[str, ...], name: str) -> bytes:
        chunks = []
        for path in paths:
            chunk = self.snapshot.files.read(path, limit=PART_BYTES, what="baseline store")
            if chunk is None:
                raise BaselineError(f"{name}: {path} is listed in {INDEX_FILE} but missing")
            chunks.append(chunk)
        return b"".join(chunks)


class BaselineStore:
    """Reads and writes baselines in a store on ``backend``, keeping the newest ``keep``."""

    def __init__(
        self,
        backend: StoreBackend,
        *,
        keep: int,
        sleep: Callable[[float], None] = time.sleep,
        attempts: int = WRITE_ATTEMPTS,
    ) -> None:
        self.backend = backend
        self.keep = keep
        self.sleep = sleep
        self.attempts = attempts

    @property
    def description(self) -> str:
        return self.backend.description

    def view(self) -> StoreView | None:
        """The store as it is now; None when there is none yet.

        Raises:
            BaselineError: its index is not one this version reads.
            RepositoryError: it cannot be read for certain.
        """
        snapshot = self.backend.snapshot()
        if snapshot is None:
            return None
        return StoreView(snapshot, self._index(snapshot), self._where(snapshot))

    def put(
        self,
        commit: str,
        baseline: bytes,
        *,
        answers: bytes | None = None,
        recorded_at: str | None = None,
    ) -> str:
        """Keep ``baseline`` (and its run's ``answers``) as the baseline of ``commit``.

        Returned: where it was written, for the log.

        Raises:
            OutputError: the store refused the change, or kept moving under it.
            BaselineError: the store's index is not one this version reads.
        """
        if not _COMMIT.fullmatch(commit):
            raise OutputError(f"the baseline store takes a full commit id, not {commit!r}")
        stamp = recorded_at or datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        baseline_parts = _cut(gzip.compress(baseline, mtime=0), what="the baseline")
        answer_parts = _cut(gzip.compress(answers, mtime=0), what="the answers") if answers else []
        entry = _Entry(
            commit=commit,
            recorded_at=stamp,
            parts=len(baseline_parts),
            answer_parts=len(answer_parts),
            sha256=baseline_digest(baseline),
        )
        for attempt in range(self.attempts):
            snapshot = self.backend.snapshot()
            index = self._index(snapshot) if snapshot is not None else _Index()
            put, delete, kept = _change(index, entry, baseline_parts, answer_parts, self.keep)
            put[INDEX_FILE] = kept.model_dump_json(indent=1).encode("utf-8") + b"\n"
            message = f"RagaliQ Gate baseline of {commit[:12]}"
            if self.backend.commit(snapshot, put=put, delete=delete, message=message):
                return f"{self.description} ({len(kept.entries)} baselines kept)"
            self.sleep(min(0.5 * 2**attempt, 8.0))
        raise OutputError(
            f"{self.description} changed under every one of {self.attempts} attempts to store "
            f"the baseline of {commit[:12]} (other baseline runs writing at once); re-run the job"
        )

    def _index(self, snapshot: Snapshot) -> _Index:
        raw = snapshot.files.read(INDEX_FILE, limit=MAX_INDEX_BYTES, what="baseline store")
        if raw is None:
            return _Index()
        try:
            return _Index.model_validate_json(raw)
        except ValidationError as exc:
            first = exc.errors(include_url=False)[0]
            loc = ".".join(str(p) for p in first["loc"])
            raise BaselineError(
                f"{INDEX_FILE} of {self._where(snapshot)} is not an index this version reads "
                f"({loc}: {first['msg']}); re-run the baseline workflow, or delete the store to "
                "start it again"
            ) from exc

    def _where(self, snapshot: Snapshot) -> str:
        if snapshot.version is None:
            return self.description
        return f"{self.description} at {snapshot.version[:12]}"


def _change(
    index: _Index,
    entry: _Entry,
    baseline_parts: list[bytes],
    answer_parts: list[bytes],
    keep: int,
) -> tuple[dict[str, bytes], set[str], _Index]:
    """The files to write and delete to add ``entry``, and the index after it."""
    put: dict[str, bytes] = {}
    delete: set[str] = set()
    old = next((e for e in index.entries if e.commit == entry.commit), None)
    for path, data in zip(
        _parts(_baseline_file(entry.commit), len(baseline_parts)), baseline_parts, strict=True
    ):
        put[path] = data
    for path, data in zip(
        _parts(_answers_file(entry.commit), len(answer_parts)), answer_parts, strict=True
    ):
        put[path] = data
    if old is not None:
        delete |= _files_of(old)
    entries = [entry, *(e for e in index.entries if e.commit != entry.commit)]
    kept: list[_Entry] = []
    for position, kept_entry in enumerate(entries):
        if position >= keep:
            delete |= _files_of(kept_entry)
            continue
        if position >= ANSWER_KEEP and kept_entry.answer_parts:
            delete |= set(_parts(_answers_file(kept_entry.commit), kept_entry.answer_parts))
            kept_entry = kept_entry.model_copy(update={"answer_parts": 0})
        kept.append(kept_entry)
    delete -= set(put)
    return put, delete, _Index(entries=tuple(kept))


def _files_of(entry: _Entry) -> set[str]:
    return {
        *_parts(_baseline_file(entry.commit), entry.parts),
        *_parts(_answers_file(entry.commit), entry.answer_parts),
    }


def _baseline_file(commit: str) -> str:
    return f"baselines/{commit}.json.gz"


def _answers_file(commit: str) -> str:
    return f"answers/{commit}.jsonl.gz"


def _parts(file: str, count: int) -> tuple[str, ...]:
    """The names of a file cut into ``count`` parts: the file itself when it is one."""
    if count == 1:
        return (file,)
    return tuple(f"{file}.{n:03d}" for n in range(count))


def _cut(data: bytes, *, what: str) -> list[bytes]:
    parts = [data[i : i + PART_BYTES] for i in range(0, len(data), PART_BYTES)] or [b""]
    if len(parts) > MAX_PARTS:
        raise OutputError(
            f"{what} is {len(data):,} bytes compressed, over the store's limit of "
            f"{MAX_PARTS * PART_BYTES:,}"
        )
    return parts


def _gunzip(data: bytes, *, limit: int, name: str) -> bytes:
    """``data`` decompressed, within ``limit`` bytes.

    Raises:
        BaselineError: it is not gzip, is cut short, or holds more than ``limit`` bytes.
    """
    inflater = zlib.decompressobj(wbits=31)
    try:
        out = inflater.decompress(data, limit + 1)
    except zlib.error as exc:
        raise BaselineError(
            f"{name}: not a gzip file ({exc}); re-run the baseline workflow"
        ) from exc
    if len(out) > limit:
        raise BaselineError(f"{name}: holds more than {limit:,} bytes, over the limit")
    if not inflater.eof or inflater.unused_data:
        raise BaselineError(
            f"{name}: cut short or followed by other data; re-run the baseline workflow"
        )
    return out

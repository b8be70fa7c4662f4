"""The one store of judge answers a run may reuse: keyed by what was asked, signed by who asked.

A key (:func:`answer_key`) is the SHA-256 of the store's format, the judge's provenance
(provider, model, endpoint), the question and the version of how the judge asks it, and exactly
what that question reads of a case (:func:`~ragaliq.judges.questions.cache_payload`): any change
to the prompt, the judge or what the question shows it misses. A value is the judge's validated
answer, as JSON. Every answer is signed with HMAC-SHA-256 under a key derived from the judge's
secret (the Anthropic API key, or the ``cache-secret`` input on Bedrock and Vertex), which a job
that runs a pull request's code never holds: answers are data wherever they were kept, and one
whose signature does not match is dropped and asked again.

Two stores, one interface (:class:`AnswerStore`: get and put an answer by key):

- :class:`SqliteAnswers`: a SQLite file on this machine (``judge.cache_path``), the local cache
  of ``ragaliq run`` and ``ragaliq gate``;
- :class:`AnswerRows`: rows in memory, loaded from signed-row files (JSON lines) and written
  out as one. The action reads them from the baseline store (the answers of the run that
  recorded the base's baseline: every unchanged case costs nothing) and from the artifacts
  (``ragaliq-answers``) earlier gates uploaded, through the API and never unpacked onto the
  runner, and writes the answers its own run used for the workflow to upload.

An answers file is also signed as a whole: its last line carries an HMAC of everything before
it, under the same key. A file is held unread until the judge's key is known, and a file whose
signature does not verify is dropped before a single row of it is read; only then are its rows
taken (each still checked on its own when asked for).

Bounds: a row is at most :data:`MAX_ROW_BYTES`, a file at most :data:`MAX_ANSWER_FILE_BYTES`, and
all the files one run loads at most :data:`MAX_LOADED_BYTES`; an artifact keeps a gate's answers
for its ``retention-days`` (7 in the workflows ``ragaliq init`` writes), the baseline store those
of its newest ten baselines.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import sqlite3
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Protocol

from ragaliq._files import give_to_owner, make_folders
from ragaliq.models import JudgeInfo

__all__ = [
    "ANSWER_FORMAT",
    "MAX_ANSWER_FILE_BYTES",
    "MAX_LOADED_BYTES",
    "MAX_ROW_BYTES",
    "AnswerRows",
    "AnswerStore",
    "Signer",
    "SqliteAnswers",
    "answer_key",
]

ANSWER_FORMAT = 3
"""Part of every key: bumped when the stored layout changes, so old answers are never misread."""
MAX_ROW_BYTES = 1024 * 1024
"""The longest row of an answers file: one answer, its key and its signature."""
MAX_ANSWER_FILE_BYTES = 256 * 1024 * 1024
"""The largest answers file read (uncompressed)."""
MAX_LOADED_BYTES = 320 * 1024 * 1024
"""The most bytes of answers files one run holds, all files together (the baseline run's, up to
:data:`MAX_ANSWER_FILE_BYTES`, and earlier gates'): a file past it is not read (answers only ever
save calls)."""
FILE_TRAILER = "ragaliq-answers"
"""The key of an answers file's last line, which signs the file as a whole."""
TABLE = "signed_results"
LOCK_TIMEOUT_S = 15.0
"""How long a run waits for another run that is writing the same cache file before giving up on
the cache; runs that share one file (shards on one runner, a rerun) share its answers."""
UNSIGNED_WARNING = (
    "judge cache {path}: entries not signed with this judge's key were ignored and judged again "
    "(a cache from another key, or a planted one)"
)


class AnswerStore(Protocol):
    """Judge answers by key (:func:`answer_key`); each store checks its own signatures."""

    @property
    def warnings(self) -> list[str]:
        """What went wrong reading or writing it (the run goes on without what failed)."""
        ...

    def get(self, key: str) -> str | None:
        """The answer stored under ``key``, signed with this judge's key; None otherwise."""
        ...

    def put(self, key: str, value: str) -> None:
        """Store ``value`` (a validated answer, as JSON) under ``key``, signed."""
        ...

    def forget(self, key: str) -> None:
        """Drop the answer under ``key`` (it no longer reads as an answer)."""
        ...

    def close(self) -> None:
        """Release what the store holds open."""
        ...


def answer_key(info: JudgeInfo, question: str, version: str, payload: Any) -> str:
    """The key of one question asked of one judge.

    Its provenance, the question, the version of how the judge asks it, and its input.
    """
    material = [ANSWER_FORMAT, info.provider, info.model, info.endpoint, question, version, payload]
    canonical = json.dumps(material, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


class Signer:
    """Signs and checks answers under a key derived from the judge's secret."""

    def __init__(self, secret: str) -> None:
        self._key = hashlib.sha256(b"ragaliq-judge-cache\x00" + secret.encode()).digest()

    def sign(self, key: str, value: str) -> str:
        message = f"{key}\x00{value}".encode()
        return hmac.new(self._key, message, hashlib.sha256).hexdigest()

    def verify(self, key: str, value: str, signature: str) -> bool:
        return hmac.compare_digest(signature, self.sign(key, value))

    def sign_file(self, body: bytes) -> str:
        """The signature of an answers file's rows, as a whole."""
        return hmac.new(self._key, b"ragaliq-answers-file\x00" + body, hashlib.sha256).hexdigest()

    def verify_file(self, body: bytes, signature: str) -> bool:
        return hmac.compare_digest(signature, self.sign_file(body))


class SqliteAnswers:
    """Answers in a SQLite file; a corrupt or locked file is a warning, and the run goes on."""

    def __init__(self, path: Path, *, secret: str, lock_timeout_s: float = LOCK_TIMEOUT_S) -> None:
        self.path = path
        self.signer = Signer(secret)
        self.lock_timeout_s = lock_timeout_s
        self.warnings: list[str] = []
        self._db = self._open()

    def get(self, key: str) -> str | None:
        if self._db is None:
            return None
        try:
            row = self._db.execute(
                f"SELECT value, signature FROM {TABLE} WHERE key = ?", (key,)
            ).fetchone()
        except sqlite3.Error as exc:
            self._disable(exc)
            return None
        if row is None:
            return None
        value, signature = str(row[0]), str(row[1])
        if not self.signer.verify(key, value, signature):
            _warn_once(self.warnings, UNSIGNED_WARNING.format(path=self.path))
            self.forget(key)
            return None
        return value

    def put(self, key: str, value: str) -> None:
        if self._db is None:
            return
        try:
            self._db.execute(
                f"INSERT OR REPLACE INTO {TABLE} (key, value, signature, created) "
                "VALUES (?, ?, ?, ?)",
                (key, value, self.signer.sign(key, value), time.time()),
            )
        except sqlite3.Error as exc:
            self._disable(exc)

    def forget(self, key: str) -> None:
        if self._db is None:
            return
        try:
            self._db.execute(f"DELETE FROM {TABLE} WHERE key = ?", (key,))
        except sqlite3.Error as exc:
            self._disable(exc)

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None
            try:
                give_to_owner(*self.side_files())
            except OSError as exc:
                self._warn(exc)

    def side_files(self) -> tuple[Path, ...]:
        """The files SQLite keeps beside the database while it is open, or after a crash."""
        return tuple(self.path.with_name(self.path.name + s) for s in ("-wal", "-shm", "-journal"))

    def _open(self) -> sqlite3.Connection | None:
        try:
            make_folders(self.path.parent)
            db = sqlite3.connect(self.path, timeout=self.lock_timeout_s, isolation_level=None)
            try:
                # Owned by the workspace's owner before SQLite makes its side files: running as
                # root, SQLite gives them the database's owner.
                give_to_owner(self.path)
                db.execute("PRAGMA journal_mode=WAL")
                # A cache: a commit need not wait for the disk (WAL stays consistent; a power cut
                # may lose the last answers, which are asked again), so storing one answer does not
                # hold up the judging of the others.
                db.execute("PRAGMA synchronous=NORMAL")
                db.execute(
                    f"CREATE TABLE IF NOT EXISTS {TABLE} (key TEXT PRIMARY KEY, "
                    "value TEXT NOT NULL, signature TEXT NOT NULL, created REAL NOT NULL)"
                )
                db.execute(f"SELECT count(*) FROM {TABLE}").fetchone()
                give_to_owner(*self.side_files())
            except BaseException:
                db.close()
                raise
            return db
        except (sqlite3.Error, OSError) as exc:
            self._warn(exc)
            return None

    def _disable(self, exc: Exception) -> None:
        self._warn(exc)
        if self._db is not None:
            self._db.close()
            self._db = None

    def _warn(self, exc: Exception) -> None:
        self.warnings.append(
            f"judge cache {self.path} is unusable ({exc}); continuing without it. "
            "Delete the file to start a fresh cache."
        )


class AnswerRows:
    """Signed answers in memory: loaded from answer files as data, written out as one.

    A file loaded is held unread until the judge's secret is known (:meth:`bind`); then a file
    whose whole-file signature does not verify is dropped unread, and the rows of the others are
    taken. Each row is checked again when asked for. :meth:`export` writes the rows this run used
    (asked or answered), signed row by row and as a whole, one JSON object per line.
    """

    def __init__(self, *, limit: int = MAX_LOADED_BYTES) -> None:
        self._rows: dict[str, tuple[str, str, str]] = {}
        """key -> (value, signature, where it was read)."""
        self._used: set[str] = set()
        self._signer: Signer | None = None
        self._held: list[tuple[bytes, str]] = []
        """Files loaded before the key was known: (content, where it was read)."""
        self._loaded = 0
        self._limit = limit
        self.taken: dict[str, int] = {}
        """Rows taken from each file, by where it was read (files that verified only)."""
        self.warnings: list[str] = []

    def bind(self, secret: str) -> None:
        """Check and sign under the key derived from ``secret`` from now on.

        Files loaded so far are checked as wholes now, and the rows of those that verify taken.
        """
        self._signer = Signer(secret)
        held, self._held = self._held, []
        for data, source in held:
            self._take(data, source)

    @property
    def bound(self) -> bool:
        return self._signer is not None

    def load(self, data: bytes, *, source: str) -> None:
        """Take one answers file (JSON lines, signed as a whole), once the key can check it.

        A file over :data:`MAX_ANSWER_FILE_BYTES`, past :data:`MAX_LOADED_BYTES` in all, or not
        signed as a whole with this judge's key is skipped with a warning: answers only ever
        save calls.
        """
        if len(data) > MAX_ANSWER_FILE_BYTES or self._loaded + len(data) > self._limit:
            self.warnings.append(f"judge answers from {source}: over the size limit, not read")
            return
        self._loaded += len(data)
        if self._signer is None:
            self._held.append((data, source))
        else:
            self._take(data, source)

    def _take(self, data: bytes, source: str) -> None:
        assert self._signer is not None
        body, _, last = data.rstrip(b"\n").rpartition(b"\n")
        trailer = _trailer(last)
        if body:
            body += b"\n"
        if trailer is None or not self._signer.verify_file(body, trailer):
            self.warnings.append(
                f"judge answers from {source}: not signed as a whole with this judge's key, so "
                "no row of it was read (answers from another key, an older version, or forged)"
            )
            return
        taken = bad = 0
        for line in body.splitlines():
            row = _row(line)
            if row is None:
                bad += bool(line.strip())
                continue
            key, value, signature = row
            if key not in self._rows:
                self._rows[key] = (value, signature, source)
                taken += 1
        self.taken[source] = self.taken.get(source, 0) + taken
        if bad:
            self.warnings.append(
                f"judge answers from {source}: {bad} rows that are not signed answers were skipped"
            )

    def get(self, key: str) -> str | None:
        row = self._rows.get(key)
        if row is None or self._signer is None:
            return None
        value, signature, source = row
        if not self._signer.verify(key, value, signature):
            _warn_once(
                self.warnings,
                f"judge answers from {source}: rows not signed with this judge's key were "
                "ignored and asked again (answers from another key, or forged ones)",
            )
            del self._rows[key]
            return None
        self._used.add(key)
        return value

    def put(self, key: str, value: str) -> None:
        if self._signer is None:
            return
        self._rows[key] = (value, self._signer.sign(key, value), "this run")
        self._used.add(key)

    def forget(self, key: str) -> None:
        self._rows.pop(key, None)
        self._used.discard(key)

    def close(self) -> None:
        """Nothing is held open."""

    def export(self, *, skip: Iterable[str] = ()) -> bytes:
        """The rows this run used, as an answers file signed as a whole (empty without rows).

        Rows read from a source in ``skip`` are left out: the next run reads them there.
        """
        skipped = set(skip)
        lines = [
            json.dumps({"k": key, "v": value, "s": signature}, separators=(",", ":"))
            for key in sorted(self._used)
            if key in self._rows
            for value, signature, source in (self._rows[key],)
            if source not in skipped
        ]
        if not lines or self._signer is None:
            return b""
        body = "".join(line + "\n" for line in lines).encode("utf-8")
        trailer = {FILE_TRAILER: 1, "rows": len(lines), "sig": self._signer.sign_file(body)}
        return body + json.dumps(trailer, separators=(",", ":")).encode("ascii") + b"\n"


def _trailer(line: bytes) -> str | None:
    """The whole-file signature an answers file's last line carries; None when it is not one."""
    if len(line) > 512:
        return None
    try:
        data = json.loads(line)
    except (ValueError, UnicodeDecodeError):
        return None
    if not isinstance(data, dict) or data.get(FILE_TRAILER) != 1:
        return None
    signature = data.get("sig")
    return signature if isinstance(signature, str) and len(signature) == 64 else None


def _row(line: bytes) -> tuple[str, str, str] | None:
    """``(key, value, signature)`` of one answers-file line; None when it is not one."""
    if len(line) > MAX_ROW_BYTES:
        return None
    try:
        data = json.loads(line)
    except (ValueError, UnicodeDecodeError):
        return None
    if not isinstance(data, dict) or set(data) != {"k", "v", "s"}:
        return None
    key, value, signature = data["k"], data["v"], data["s"]
    if not all(isinstance(x, str) for x in (key, value, signature)) or len(key) != 64:
        return None
    return key, value, signature


def _warn_once(warnings: list[str], warning: str) -> None:
    if warning not in warnings:
        warnings.append(warning)

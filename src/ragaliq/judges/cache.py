"""A content-addressed cache of judge results in one SQLite file.

The key is the sha256 of the judge's identity (provider, model, prompt version, endpoint), the
operation and its canonical input (what the operation's question shows Claude,
:func:`~ragaliq.judges.questions.cache_payload`), so an unchanged case costs no call on the next
run and any change to the prompt, the model, the endpoint or the case misses. Only validated
results are stored. A corrupt or locked file is reported as a warning and the run goes on without
the cache.

A cache file can be planted (a pull request's code runs before the gate in the same job), so every
entry is signed with a key derived from the judge's API key, which the pull request's code does not
have; an entry whose signature does not match is ignored. And a cached SUPPORTED verdict has its
evidence checked against the case's context again, exactly as a fresh one.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import sqlite3
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from pydantic import ValidationError

from ragaliq._files import give_to_owner, make_folders
from ragaliq.errors import JudgeError
from ragaliq.judges.base import EstimatingJudge, Judge, Operation, verified_evidence
from ragaliq.judges.questions import cache_payload
from ragaliq.models import (
    ChunkRatings,
    ClaimsResult,
    JudgeInfo,
    JudgeResult,
    RelevanceResult,
    TestCase,
    Usage,
    VerificationResult,
)

__all__ = ["CACHE_FORMAT", "CachedJudge"]

CACHE_FORMAT = 2
"""Part of every key: bumped when the stored layout changes, so old entries are never misread."""
TABLE = "signed_results"
LOCK_TIMEOUT_S = 15.0
"""How long a run waits for another run that is writing the same cache file before giving up on
the cache; runs that share one file (shards on one runner, a rerun) share its answers."""
UNSIGNED_WARNING = (
    "judge cache {path}: entries not signed with this judge's key were ignored and judged again "
    "(a cache from another key, or a planted one)"
)

R = TypeVar("R", bound=JudgeResult)


class CachedJudge:
    """Wraps any judge; answers repeated questions from ``path`` without calling it."""

    def __init__(
        self, inner: Judge, path: Path, *, secret: str, lock_timeout_s: float = LOCK_TIMEOUT_S
    ) -> None:
        self.inner = inner
        self.path = path
        self._signing_key = hashlib.sha256(b"ragaliq-judge-cache\x00" + secret.encode()).digest()
        self.lock_timeout_s = lock_timeout_s
        self.warnings: list[str] = []
        self._pending: dict[str, asyncio.Future[str]] = {}
        self._db = self._open()

    @property
    def info(self) -> JudgeInfo:
        return self.inner.info

    async def extract_claims(self, case: TestCase) -> ClaimsResult:
        key = self.key_for("extract_claims", case)
        return await self._cached(key, ClaimsResult, lambda: self.inner.extract_claims(case))

    async def verify_claims(
        self,
        case: TestCase,
        claims: Sequence[str],
        *,
        sample: int = 0,
        facts: Sequence[str] = (),
    ) -> VerificationResult:
        key = self.key_for("verify_claims", case, claims, sample=sample, facts=facts)
        result = await self._cached(
            key,
            VerificationResult,
            lambda: self.inner.verify_claims(case, claims, sample=sample, facts=facts),
        )
        verdicts = tuple(verified_evidence(v, case.context) for v in result.verdicts)
        fact_verdicts = tuple(verified_evidence(v, case.context) for v in result.fact_verdicts)
        if (verdicts, fact_verdicts) == (result.verdicts, result.fact_verdicts):
            return result
        return result.model_copy(update={"verdicts": verdicts, "fact_verdicts": fact_verdicts})

    async def rate_chunks(self, case: TestCase) -> ChunkRatings:
        key = self.key_for("rate_chunks", case)
        return await self._cached(key, ChunkRatings, lambda: self.inner.rate_chunks(case))

    async def evaluate_relevance(self, case: TestCase) -> RelevanceResult:
        key = self.key_for("evaluate_relevance", case)
        return await self._cached(key, RelevanceResult, lambda: self.inner.evaluate_relevance(case))

    def planned_claims(self, case: TestCase) -> tuple[str, ...] | None:
        """The cached claims of a case, if extraction is cached; nothing is called."""
        stored = self._load(self.key_for("extract_claims", case), ClaimsResult)
        if stored is not None:
            return stored.claims
        return self.inner.planned_claims(case) if isinstance(self.inner, EstimatingJudge) else None

    def estimate(
        self,
        operation: Operation,
        case: TestCase,
        claims: Sequence[str] = (),
        *,
        sample: int = 0,
        facts: Sequence[str] = (),
    ) -> Usage:
        """A cache hit costs nothing; anything else costs what the judge behind says."""
        if self.contains(operation, case, claims, sample=sample, facts=facts):
            return Usage(cache_hits=1)
        if isinstance(self.inner, EstimatingJudge):
            return self.inner.estimate(operation, case, claims, sample=sample, facts=facts)
        return Usage()

    def contains(
        self,
        operation: Operation,
        case: TestCase,
        claims: Sequence[str] = (),
        *,
        sample: int = 0,
        facts: Sequence[str] = (),
    ) -> bool:
        """Whether an operation's result is cached; nothing is called."""
        key = self.key_for(operation, case, claims, sample=sample, facts=facts)
        return self._get(key) is not None

    def key_for(
        self,
        operation: Operation,
        case: TestCase,
        claims: Sequence[str] = (),
        *,
        sample: int = 0,
        facts: Sequence[str] = (),
    ) -> str:
        """The cache key of one operation on one case: exactly what the operation reads."""
        payload = cache_payload(operation, case, claims, sample=sample, facts=facts)
        return self._key(operation, payload)

    async def aclose(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None
            try:
                give_to_owner(*self._side_files())
            except OSError as exc:
                self._warn(exc)
        await self.inner.aclose()

    def _side_files(self) -> tuple[Path, ...]:
        """The files SQLite keeps beside the database while it is open, or after a crash."""
        return tuple(self.path.with_name(self.path.name + s) for s in ("-wal", "-shm", "-journal"))

    def _key(self, operation: str, payload: dict[str, Any]) -> str:
        info = self.inner.info
        material = [
            CACHE_FORMAT,
            info.provider,
            info.model,
            info.prompt_version,
            info.endpoint,
            operation,
            payload,
        ]
        canonical = json.dumps(material, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(canonical.encode("utf-8")).hexdigest()

    async def _cached(self, key: str, kind: type[R], compute: Callable[[], Awaitable[R]]) -> R:
        hit = self._load(key, kind)
        if hit is None and key in self._pending:
            try:  # the same question is already in flight: share its answer
                hit = kind.model_validate_json(await asyncio.shield(self._pending[key]))
            except JudgeError as exc:
                # The asking case counts what the failure cost; this one must not count it again.
                raise type(exc)(str(exc)) from exc
        if hit is not None:
            return hit.model_copy(update={"usage": Usage(cache_hits=1)})
        future: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self._pending[key] = future
        try:
            result = await compute()
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # retrieved here, so an unawaited failure is not logged
            raise
        finally:
            self._pending.pop(key, None)
        value = result.model_dump_json()
        future.set_result(value)
        self._put(key, value)
        return result

    def _load(self, key: str, kind: type[R]) -> R | None:
        """The stored result, or None; a row that no longer reads as a result is dropped."""
        stored = self._get(key)
        if stored is None:
            return None
        try:
            return kind.model_validate_json(stored)
        except ValidationError:
            warning = (
                f"judge cache {self.path}: stored results that could not be read were dropped; "
                "those questions are judged again"
            )
            if warning not in self.warnings:
                self.warnings.append(warning)
            self._delete(key)
            return None

    def _delete(self, key: str) -> None:
        if self._db is None:
            return
        try:
            self._db.execute(f"DELETE FROM {TABLE} WHERE key = ?", (key,))
        except sqlite3.Error as exc:
            self._disable(exc)

    def _open(self) -> sqlite3.Connection | None:
        try:
            make_folders(self.path.parent)
            db = sqlite3.connect(self.path, timeout=self.lock_timeout_s, isolation_level=None)
            try:
                # Owned by the workspace's owner before SQLite makes its side files: running as
                # root, SQLite gives them the database's owner.
                give_to_owner(self.path)
                db.execute("PRAGMA journal_mode=WAL")
                db.execute(
                    f"CREATE TABLE IF NOT EXISTS {TABLE} (key TEXT PRIMARY KEY, "
                    "value TEXT NOT NULL, signature TEXT NOT NULL, created REAL NOT NULL)"
                )
                db.execute(f"SELECT count(*) FROM {TABLE}").fetchone()
                give_to_owner(*self._side_files())
            except BaseException:
                db.close()
                raise
            return db
        except (sqlite3.Error, OSError) as exc:
            self._warn(exc)
            return None

    def _get(self, key: str) -> str | None:
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
        if not hmac.compare_digest(signature, self._sign(key, value)):
            warning = UNSIGNED_WARNING.format(path=self.path)
            if warning not in self.warnings:
                self.warnings.append(warning)
            self._delete(key)
            return None
        return value

    def _put(self, key: str, value: str) -> None:
        if self._db is None:
            return
        try:
            self._db.execute(
                f"INSERT OR REPLACE INTO {TABLE} (key, value, signature, created) "
                "VALUES (?, ?, ?, ?)",
                (key, value, self._sign(key, value), time.time()),
            )
        except sqlite3.Error as exc:
            self._disable(exc)

    def _sign(self, key: str, value: str) -> str:
        message = f"{key}\x00{value}".encode()
        return hmac.new(self._signing_key, message, hashlib.sha256).hexdigest()

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

"""A content-addressed cache of judge answers, one per question, in one SQLite file.

Each question's answer is kept on its own. The key is the sha256 of the judge's identity
(provider, model, endpoint), the question and the version of how the judge asks it, and exactly
what the question reads of the case
(:func:`~ragaliq.judges.questions.cache_payload`): an unchanged case costs no call on the next run,
a case whose context alone changed asks again only the questions that read the context, and a
change to one question's prompt asks again that question alone. Only validated answers are
stored. A corrupt or locked file is reported as a warning and the run goes on without the cache.

The keying (:class:`CachedJudge`) is kept apart from the storage (:class:`SignedStore`, behind the
:class:`AnswerStore` protocol). A cache file can be planted (a pull request's code runs before the
gate in the same job), so every entry is signed with a key derived from the judge's API key, which
the pull request's code does not have; an entry whose signature does not match is ignored. And a
cached SUPPORTED verdict has its evidence checked against the case's context again, exactly as a
fresh one.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import sqlite3
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol, TypeVar

from pydantic import BaseModel, ValidationError

from ragaliq._files import give_to_owner, make_folders
from ragaliq.errors import JudgeError, JudgeUnavailableError
from ragaliq.evaluators.questions import EXTRACT, Answers, Question, Questions
from ragaliq.judges.base import EstimatingJudge, Judge, verified_evidence
from ragaliq.judges.questions import cache_payload
from ragaliq.models import ClaimsResult, JudgeInfo, TestCase, Usage, VerificationResult

__all__ = ["CACHE_FORMAT", "AnswerStore", "CachedJudge", "SignedStore"]

CACHE_FORMAT = 3
"""Part of every key: bumped when the stored layout changes, so old entries are never misread."""
TABLE = "signed_results"
LOCK_TIMEOUT_S = 15.0
"""How long a run waits for another run that is writing the same cache file before giving up on
the cache; runs that share one file (shards on one runner, a rerun) share its answers."""
UNSIGNED_WARNING = (
    "judge cache {path}: entries not signed with this judge's key were ignored and judged again "
    "(a cache from another key, or a planted one)"
)
UNREADABLE_WARNING = (
    "judge cache {path}: stored results that could not be read were dropped; those questions "
    "are judged again"
)

A = TypeVar("A", bound=BaseModel)


class AnswerStore(Protocol):
    """Where the cache keeps answers: text values by key, only what was stored by the gate."""

    warnings: list[str]
    """What the run should say about the store (unusable, unsigned entries...)."""

    def get(self, key: str) -> str | None:
        """The value stored under ``key``, if any (and trusted)."""
        ...

    def put(self, key: str, value: str) -> None:
        """Keep ``value`` under ``key``."""
        ...

    def delete(self, key: str) -> None:
        """Forget ``key`` (its value no longer reads as an answer)."""
        ...

    def close(self) -> None:
        """Release the store's files."""
        ...


class CachedJudge:
    """Wraps any judge; answers repeated questions from its store without asking the judge."""

    def __init__(
        self,
        inner: Judge,
        path: Path,
        *,
        secret: str,
        lock_timeout_s: float = LOCK_TIMEOUT_S,
        store: AnswerStore | None = None,
    ) -> None:
        """Cache ``inner``'s answers in ``store``, by default a :class:`SignedStore` at ``path``."""
        self.inner = inner
        self.path = path
        self.store = store or SignedStore(path, secret=secret, lock_timeout_s=lock_timeout_s)
        self._pending: dict[str, asyncio.Future[str]] = {}
        """Answers being asked for now, by key: a second case asking the same shares them."""

    @property
    def info(self) -> JudgeInfo:
        return self.inner.info

    @property
    def warnings(self) -> list[str]:
        return self.store.warnings

    def version_of(self, question: Question[Any]) -> str:
        return self.inner.version_of(question)

    async def ask(
        self, questions: Questions, case: TestCase, *, claims: Sequence[str] = (), sample: int = 0
    ) -> Answers:
        """The stored answers, and the judge's for the rest (asked together, then stored)."""
        keys = {q.name: self.key_for(q, case, claims, sample=sample) for q in questions}
        found: dict[str, BaseModel] = {}
        hits = 0
        missing: list[Question[Any]] = []
        shared: list[tuple[Question[Any], asyncio.Future[str]]] = []
        for question in questions:
            key = keys[question.name]
            hit = self._load(key, question.answer)
            if hit is not None:
                found[question.name] = hit
                hits += 1
            elif key in self._pending:  # the same question is in flight: share its answer
                shared.append((question, self._pending[key]))
            else:
                missing.append(question)
        answers = Answers(found=found, usage=Usage(cache_hits=hits))
        answers += await self._ask_missing(missing, keys, case, claims, sample)
        for question, future in shared:
            answers += await _shared(question, future)
        found = {name: _rechecked(answer, case) for name, answer in answers.found.items()}
        return Answers(found=found, failed=answers.failed, usage=answers.usage)

    def planned_claims(self, case: TestCase) -> tuple[str, ...] | None:
        """The cached claims of a case, if extraction is cached; nothing is called."""
        stored = self._load(self.key_for(EXTRACT, case), ClaimsResult)
        if stored is not None:
            return stored.claims
        return self.inner.planned_claims(case) if isinstance(self.inner, EstimatingJudge) else None

    def estimate(
        self, questions: Questions, case: TestCase, *, claims: Sequence[str] = (), sample: int = 0
    ) -> Usage:
        """A cached answer costs nothing; the rest costs what the judge behind says."""
        keys = {q.name: self.key_for(q, case, claims, sample=sample) for q in questions}
        rest = [q for q in questions if self.store.get(keys[q.name]) is None]
        usage = Usage(cache_hits=len(questions) - len(rest))
        if rest and isinstance(self.inner, EstimatingJudge):
            usage += self.inner.estimate(rest, case, claims=claims, sample=sample)
        return usage

    def key_for(
        self,
        question: Question[Any],
        case: TestCase,
        claims: Sequence[str] = (),
        *,
        sample: int = 0,
    ) -> str:
        """The cache key of one question on one case: exactly what the question reads."""
        info = self.inner.info
        material = [
            CACHE_FORMAT,
            info.provider,
            info.model,
            info.endpoint,
            question.name,
            self.inner.version_of(question),
            cache_payload(question, case, claims, sample=sample),
        ]
        canonical = json.dumps(material, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(canonical.encode("utf-8")).hexdigest()

    async def aclose(self) -> None:
        self.store.close()
        await self.inner.aclose()

    async def _ask_missing(
        self,
        missing: list[Question[Any]],
        keys: dict[str, str],
        case: TestCase,
        claims: Sequence[str],
        sample: int,
    ) -> Answers:
        """Ask the judge the questions nobody asked yet, and store each valid answer."""
        if not missing:
            return Answers()
        loop = asyncio.get_running_loop()
        futures = {q.name: loop.create_future() for q in missing}
        for question in missing:
            self._pending[keys[question.name]] = futures[question.name]
        try:
            asked = await self.inner.ask(missing, case, claims=claims, sample=sample)
        except BaseException as exc:
            for future in futures.values():
                future.set_exception(exc)
                future.exception()  # retrieved here, so an unawaited failure is not logged
            raise
        finally:
            for question in missing:
                self._pending.pop(keys[question.name], None)
        for question in missing:
            future = futures[question.name]
            answer = asked.found.get(question.name)
            if answer is None:
                future.set_exception(JudgeError(asked.failed.get(question.name, "no answer")))
                future.exception()
                continue
            value = answer.model_dump_json()
            future.set_result(value)
            self.store.put(keys[question.name], value)
        return asked

    def _load(self, key: str, kind: type[A]) -> A | None:
        """The stored answer, or None; a row that no longer reads as an answer is dropped."""
        stored = self.store.get(key)
        if stored is None:
            return None
        try:
            return kind.model_validate_json(stored)
        except ValidationError:
            warning = UNREADABLE_WARNING.format(path=self.path)
            if warning not in self.store.warnings:
                self.store.warnings.append(warning)
            self.store.delete(key)
            return None


async def _shared(question: Question[Any], future: asyncio.Future[str]) -> Answers:
    """The answer another case is asking for now: a hit, or its failure (whose cost it counts)."""
    try:
        value = await asyncio.shield(future)
    except JudgeUnavailableError:
        raise
    except JudgeError as exc:
        return Answers(failed={question.name: str(exc)})
    answer = question.answer.model_validate_json(value)
    return Answers(found={question.name: answer}, usage=Usage(cache_hits=1))


def _rechecked(answer: BaseModel, case: TestCase) -> BaseModel:
    """An answer's SUPPORTED verdicts, with their quotes checked against the context (again)."""
    if not isinstance(answer, VerificationResult):
        return answer
    verdicts = tuple(verified_evidence(v, case.context) for v in answer.verdicts)
    if verdicts == answer.verdicts:
        return answer
    return answer.model_copy(update={"verdicts": verdicts})


class SignedStore:
    """Answers in one SQLite file, each signed with a key only the gate's judge holds."""

    def __init__(self, path: Path, *, secret: str, lock_timeout_s: float = LOCK_TIMEOUT_S) -> None:
        self.path = path
        self._signing_key = hashlib.sha256(b"ragaliq-judge-cache\x00" + secret.encode()).digest()
        self.lock_timeout_s = lock_timeout_s
        self.warnings: list[str] = []
        self._db = self._open()

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None
            try:
                give_to_owner(*self._side_files())
            except OSError as exc:
                self._warn(exc)

    def _side_files(self) -> tuple[Path, ...]:
        """The files SQLite keeps beside the database while it is open, or after a crash."""
        return tuple(self.path.with_name(self.path.name + s) for s in ("-wal", "-shm", "-journal"))

    def delete(self, key: str) -> None:
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
        if not hmac.compare_digest(signature, self._sign(key, value)):
            warning = UNSIGNED_WARNING.format(path=self.path)
            if warning not in self.warnings:
                self.warnings.append(warning)
            self.delete(key)
            return None
        return value

    def put(self, key: str, value: str) -> None:
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

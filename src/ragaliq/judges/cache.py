"""Judge answers reused by what was asked: any judge, wrapped around one answer store.

The key is the sha256 of the judge's identity (provider, model, prompt version, endpoint), the
operation and its canonical input (what the operation's question shows Claude,
:func:`~ragaliq.judges.questions.cache_payload`), so an unchanged case costs no call on the next
run and any change to the prompt, the model, the endpoint or the case misses. Only validated
results are stored, in the one store of answers (:mod:`ragaliq.judges.answers`): a SQLite file on
this machine, or the signed rows the action reads from the baseline store and earlier gates'
artifacts. A store that fails is reported as a warning and the run goes on without it.

A store can be planted (a pull request's code runs before the gate in the same job), so every
answer is signed with a key derived from the judge's API key, which the pull request's code does
not have; an answer whose signature does not match is ignored. And a cached SUPPORTED verdict has
its evidence checked against the case's context again, exactly as a fresh one.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from pydantic import ValidationError

from ragaliq.errors import JudgeError
from ragaliq.judges.answers import (
    ANSWER_FORMAT,
    LOCK_TIMEOUT_S,
    TABLE,
    UNSIGNED_WARNING,
    AnswerStore,
    SqliteAnswers,
    answer_key,
)
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

__all__ = ["CACHE_FORMAT", "LOCK_TIMEOUT_S", "TABLE", "UNSIGNED_WARNING", "CachedJudge"]

CACHE_FORMAT = ANSWER_FORMAT
"""Part of every key (see :data:`~ragaliq.judges.answers.ANSWER_FORMAT`)."""

R = TypeVar("R", bound=JudgeResult)


class CachedJudge:
    """Wraps any judge; answers repeated questions from a store without calling it.

    The store is ``store`` when given (the action's signed rows), else a SQLite file at
    ``path`` signed with ``secret``.
    """

    def __init__(
        self,
        inner: Judge,
        path: Path | None = None,
        *,
        secret: str = "",
        lock_timeout_s: float = LOCK_TIMEOUT_S,
        store: AnswerStore | None = None,
    ) -> None:
        self.inner = inner
        self.path = path
        if store is None:
            if path is None:
                raise ValueError("a cached judge needs a store or a path")
            store = SqliteAnswers(path, secret=secret, lock_timeout_s=lock_timeout_s)
        self.store = store
        self._warnings: list[str] = []
        self._pending: dict[str, asyncio.Future[str]] = {}

    @property
    def warnings(self) -> list[str]:
        """What the store and the answers read from it ran into."""
        return [*self.store.warnings, *self._warnings]

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
        return self.store.get(key) is not None

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
        self.store.close()
        await self.inner.aclose()

    def _key(self, operation: str, payload: dict[str, Any]) -> str:
        return answer_key(self.inner.info, operation, payload)

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
        self.store.put(key, value)
        return result

    def _load(self, key: str, kind: type[R]) -> R | None:
        """The stored result, or None; a row that no longer reads as a result is dropped."""
        stored = self.store.get(key)
        if stored is None:
            return None
        try:
            return kind.model_validate_json(stored)
        except ValidationError:
            warning = (
                f"judge cache {self.path or 'answers'}: stored results that could not be read "
                "were dropped; those questions are judged again"
            )
            if warning not in self._warnings:
                self._warnings.append(warning)
            self.store.forget(key)
            return None

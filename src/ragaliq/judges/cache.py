"""Judge answers reused by what was asked, one per question: any judge, around one answer store.

Each question's answer is kept on its own. The key (:func:`~ragaliq.judges.answers.answer_key`) is
the sha256 of the judge's identity (provider, model, endpoint), the question and the version of
how the judge asks it, and exactly what the question reads of the case
(:func:`~ragaliq.judges.questions.cache_payload`): an unchanged case costs no call on the next run,
a case whose context alone changed asks again only the questions that read the context, and a
change to one question's prompt asks again that question alone. Only validated answers are
stored, in the one store of answers (:mod:`ragaliq.judges.answers`): a SQLite file on this
machine, or the signed rows the action reads from the baseline store and earlier gates'
artifacts. A store that fails is reported as a warning and the run goes on without it.

A store can be planted (a pull request's code runs before the gate in the same job), so every
answer is signed with a key derived from the judge's API key, which the pull request's code does
not have; an answer whose signature does not match is ignored. And a cached SUPPORTED verdict has
its evidence checked against the case's context again, exactly as a fresh one.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from ragaliq.errors import JudgeError, JudgeUnavailableError
from ragaliq.evaluators.questions import EXTRACT, Answers, Question, Questions
from ragaliq.judges.answers import LOCK_TIMEOUT_S, AnswerStore, SqliteAnswers, answer_key
from ragaliq.judges.base import EstimatingJudge, Judge, verified_evidence
from ragaliq.judges.questions import cache_payload
from ragaliq.models import ClaimsResult, JudgeInfo, TestCase, Usage, VerificationResult

__all__ = ["CachedJudge"]

UNREADABLE_WARNING = (
    "judge cache {path}: stored results that could not be read were dropped; those questions "
    "are judged again"
)

A = TypeVar("A", bound=BaseModel)


class CachedJudge:
    """Wraps any judge; answers repeated questions from its store without asking the judge."""

    def __init__(
        self,
        inner: Judge,
        path: Path | None = None,
        *,
        secret: str = "",
        lock_timeout_s: float = LOCK_TIMEOUT_S,
        store: AnswerStore | None = None,
    ) -> None:
        """Cache ``inner``'s answers in ``store``, else in a SQLite file at ``path``.

        ``store`` is the action's signed rows; the file is signed with ``secret``.
        """
        self.inner = inner
        self.path = path
        if store is None:
            if path is None:
                raise ValueError("a cached judge needs a store or a path")
            store = SqliteAnswers(path, secret=secret, lock_timeout_s=lock_timeout_s)
        self.store = store
        self._warnings: list[str] = []
        self._pending: dict[str, asyncio.Future[str]] = {}
        """Answers being asked for now, by key: a second case asking the same shares them."""

    @property
    def info(self) -> JudgeInfo:
        return self.inner.info

    @property
    def warnings(self) -> list[str]:
        """What the store and the answers read from it ran into."""
        return [*self.store.warnings, *self._warnings]

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
        payload = cache_payload(question, case, claims, sample=sample)
        return answer_key(self.inner.info, question.name, self.inner.version_of(question), payload)

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
            warning = UNREADABLE_WARNING.format(path=self.path or "answers")
            if warning not in self._warnings:
                self._warnings.append(warning)
            self.store.forget(key)
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

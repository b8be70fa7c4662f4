"""A scripted in-memory judge that records its calls."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from pydantic import BaseModel

from ragaliq.errors import JudgeError, JudgeUnavailableError
from ragaliq.evaluators.questions import Answers, Question, Questions
from ragaliq.models import (
    ChunkRating,
    ChunkRatings,
    ClaimsResult,
    ClaimVerdict,
    JudgeInfo,
    RelevanceResult,
    TestCase,
    Usage,
    Verdict,
    VerificationResult,
)


@dataclass
class FakeJudge:
    """Claims, verdicts and relevance scripted per case id; anything unscripted is a default.

    Each question asked is recorded as one call (``extract``, ``verify``, ``facts``,
    ``relevance``, ``chunks``) costing ``usage_per_call``, and ``asks`` records the questions of
    each ask together. ``claims[id]``: the claims extracted; ``verdicts[id]``: one Verdict per
    claim; ``fact_verdicts[id]``: one per needed fact; ``chunks[id]``: relevance of each chunk;
    ``relevance[id]``: a score; ``fail[id]``: an exception raised by every operation on the case;
    ``free``: cases whose calls cost nothing (as cache hits do); ``pause``: seconds each call
    waits, so that cases in flight overlap.
    """

    claims: dict[str, list[str]] = field(default_factory=dict)
    verdicts: dict[str, list[Verdict]] = field(default_factory=dict)
    fact_verdicts: dict[str, list[Verdict]] = field(default_factory=dict)
    chunks: dict[str, list[bool]] = field(default_factory=dict)
    """Per case, whether each retrieved chunk is relevant (all are, unless scripted)."""
    relevance: dict[str, float] = field(default_factory=dict)
    fail: dict[str, Exception] = field(default_factory=dict)
    usage_per_call: Usage = field(default_factory=lambda: Usage(calls=1, input_tokens=100))
    on_call: Callable[[str, TestCase], None] | None = None
    free: set[str] = field(default_factory=set)
    pause: float = 0.0
    calls: list[tuple[str, str]] = field(default_factory=list)
    asks: list[tuple[tuple[str, ...], str]] = field(default_factory=list)

    @property
    def info(self) -> JudgeInfo:
        return JudgeInfo(provider="fake", model="fake-1", prompt_version="p1")

    async def _record(self, op: str, case: TestCase) -> Usage:
        self.calls.append((op, case.id))
        if self.on_call is not None:
            self.on_call(op, case)
        if self.pause:
            await asyncio.sleep(self.pause)
        if case.id in self.fail:
            raise self.fail[case.id]
        return Usage() if case.id in self.free else self.usage_per_call

    def count(self, op: str) -> int:
        return sum(1 for name, _ in self.calls if name == op)

    def version_of(self, question: Question) -> str:
        return self.info.prompt_version

    async def ask(
        self, questions: Questions, case: TestCase, *, claims: Sequence[str] = (), sample: int = 0
    ) -> Answers:
        self.asks.append((tuple(q.name for q in questions), case.id))
        found: dict[str, BaseModel] = {}
        failed: dict[str, str] = {}
        usage = Usage()
        for question in questions:
            try:
                answer = await self._answer(question.name, case, claims, sample)
            except JudgeUnavailableError:
                raise
            except JudgeError as exc:  # that question's failure; the others stand
                failed[question.name] = str(exc)
                usage += exc.usage or Usage()
                continue
            usage += answer.usage
            found[question.name] = answer.model_copy(update={"usage": Usage()})
        return Answers(found=found, failed=failed, usage=usage)

    async def _answer(self, name: str, case: TestCase, claims: Sequence[str], sample: int):
        if name == "extract_claims":
            return await self.extract_claims(case)
        if name == "verify_claims":
            return await self.verify_claims(case, claims, sample=sample)
        if name == "verify_facts":
            usage = await self._record("facts", case)
            facts = case.needed_facts
            scripted = self.fact_verdicts.get(case.id, [Verdict.SUPPORTED] * len(facts))
            return VerificationResult(verdicts=tuple(map(_verdict, facts, scripted)), usage=usage)
        if name == "evaluate_relevance":
            return await self.evaluate_relevance(case)
        return await self.rate_chunks(case)

    async def extract_claims(self, case: TestCase) -> ClaimsResult:
        usage = await self._record("extract", case)
        claims = self.claims.get(case.id, [case.response])
        return ClaimsResult(claims=tuple(claims), usage=usage)

    async def verify_claims(
        self,
        case: TestCase,
        claims: Sequence[str],
        *,
        sample: int = 0,
        facts: Sequence[str] = (),
    ) -> VerificationResult:
        usage = await self._record("verify", case)
        scripted = self.verdicts.get(case.id, [Verdict.SUPPORTED] * len(claims))
        scripted_facts = self.fact_verdicts.get(case.id, [Verdict.SUPPORTED] * len(facts))
        return VerificationResult(
            verdicts=tuple(map(_verdict, claims, scripted)),
            fact_verdicts=tuple(map(_verdict, facts, scripted_facts)),
            usage=usage,
        )

    async def rate_chunks(self, case: TestCase) -> ChunkRatings:
        usage = await self._record("chunks", case)
        relevant = self.chunks.get(case.id, [True] * len(case.context))
        return ChunkRatings(
            ratings=tuple(ChunkRating(relevant=r, reason="scripted") for r in relevant),
            usage=usage,
        )

    async def evaluate_relevance(self, case: TestCase) -> RelevanceResult:
        usage = await self._record("relevance", case)
        return RelevanceResult(
            score=self.relevance.get(case.id, 1.0), reasoning="scripted", usage=usage
        )

    async def aclose(self) -> None:
        return None


def _verdict(text: str, value: Verdict) -> ClaimVerdict:
    return ClaimVerdict(text=text, verdict=value, evidence=None, reason="scripted", confidence=0.9)


def failing(message: str = "scripted failure") -> JudgeError:
    return JudgeError(message)


class Opener:
    """A judge opener for the command line (``Collaborators(open_judge=...)``): hands out ``judge``
    and records the judge configs it was asked for."""

    def __init__(self, judge: object) -> None:
        self.judge = judge
        self.opened: list[object] = []

    @contextlib.asynccontextmanager
    async def __call__(self, config: object, **_: object):
        from ragaliq.judges import JudgeChoice

        self.opened.append(config)
        yield JudgeChoice(judge=self.judge)

"""A scripted in-memory judge that records its calls."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ragaliq.errors import JudgeError
from ragaliq.models import (
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

    ``claims[id]``: the claims extracted; ``verdicts[id]``: one Verdict per claim;
    ``relevance[id]``: a score; ``fail[id]``: an exception raised by every operation on the case;
    ``free``: cases whose calls cost nothing (as cache hits do); ``pause``: seconds each call
    waits, so that cases in flight overlap.
    """

    claims: dict[str, list[str]] = field(default_factory=dict)
    verdicts: dict[str, list[Verdict]] = field(default_factory=dict)
    relevance: dict[str, float] = field(default_factory=dict)
    fail: dict[str, Exception] = field(default_factory=dict)
    usage_per_call: Usage = field(default_factory=lambda: Usage(calls=1, input_tokens=100))
    on_call: Callable[[str, TestCase], None] | None = None
    free: set[str] = field(default_factory=set)
    pause: float = 0.0
    calls: list[tuple[str, str]] = field(default_factory=list)

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

    async def extract_claims(self, case: TestCase) -> ClaimsResult:
        usage = await self._record("extract", case)
        claims = self.claims.get(case.id, [case.response])
        return ClaimsResult(claims=tuple(claims), usage=usage)

    async def verify_claims(
        self, case: TestCase, claims: Sequence[str], *, sample: int = 0
    ) -> VerificationResult:
        usage = await self._record("verify", case)
        scripted = self.verdicts.get(case.id, [Verdict.SUPPORTED] * len(claims))
        return VerificationResult(
            verdicts=tuple(
                ClaimVerdict(text=c, verdict=v, evidence=None, reason="scripted", confidence=0.9)
                for c, v in zip(claims, scripted, strict=False)
            ),
            usage=usage,
        )

    async def evaluate_relevance(self, case: TestCase) -> RelevanceResult:
        usage = await self._record("relevance", case)
        return RelevanceResult(
            score=self.relevance.get(case.id, 1.0), reasoning="scripted", usage=usage
        )

    async def aclose(self) -> None:
        return None


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

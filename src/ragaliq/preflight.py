"""Pre-flight: what a run would cost, with no judge call.

Cache hits are looked up in the judge cache; for a case whose claims are not cached yet, the
claims are estimated from the response's sentences. Token counts are estimates (four characters a
token, typical reply sizes); the run's report has the real figures.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragaliq.config import JudgeConfig
from ragaliq.evaluators.base import Evaluator
from ragaliq.judges.cache import CachedJudge
from ragaliq.judges.cascade import CascadeJudge
from ragaliq.judges.claude import ClaudeJudge
from ragaliq.judges.factory import build_judge
from ragaliq.judges.offline import extract_sentence_claims
from ragaliq.models import JudgeInfo, TestCase, Usage

__all__ = ["CLAIMS_PER_SENTENCE", "CasePlan", "Preflight", "preflight"]

CLAIMS_PER_SENTENCE = 1.3
"""Atomic claims per response sentence, for responses whose claims are not cached yet."""


@dataclass(frozen=True, kw_only=True)
class CasePlan:
    """What one case would need."""

    case_id: str
    operations: int
    cache_hits: int
    calls: int


@dataclass(frozen=True, kw_only=True)
class Preflight:
    """The estimate for a whole run."""

    judge: JudgeInfo
    cases: tuple[CasePlan, ...]
    usage: Usage
    """Estimated calls, tokens and USD; ``cache_hits`` counts operations the cache answers."""
    notices: tuple[str, ...] = field(default_factory=tuple)


async def preflight(
    cases: Sequence[TestCase],
    *,
    config: JudgeConfig,
    env: Mapping[str, str],
    cache_path: Path | None,
    evaluators: Sequence[Evaluator[Any]],
) -> Preflight:
    """Estimate a run's judge calls, cache hits, tokens and cost without calling the judge."""
    choice = build_judge(config, env=env, cache_path=cache_path)
    try:
        judge = choice.judge
        cascade = isinstance(judge, CascadeJudge)
        inner = judge.claude if isinstance(judge, CascadeJudge) else judge
        cache = inner if isinstance(inner, CachedJudge) else None
        claude = cache.inner if cache is not None else inner
        if not isinstance(claude, ClaudeJudge):
            plans = tuple(
                CasePlan(case_id=c.id, operations=0, cache_hits=0, calls=0) for c in cases
            )
            return Preflight(judge=judge.info, cases=plans, usage=Usage(), notices=choice.notices)
        needs_claims = any(e.needs_claims for e in evaluators)
        needs_relevance = any(e.needs_relevance for e in evaluators)
        plans_list: list[CasePlan] = []
        total = Usage()
        for case in cases:
            plan, usage = _plan(
                case, claude, cache, needs_claims, needs_relevance, repeat=config.repeat
            )
            plans_list.append(plan)
            total += usage
        notices = choice.all_notices()
        if cascade:
            notices += (
                "cascade: the estimate assumes Claude verifies every claim; the offline judge "
                "settles some of them in the run, so it will cost less",
            )
        return Preflight(judge=judge.info, cases=tuple(plans_list), usage=total, notices=notices)
    finally:
        await choice.judge.aclose()


def _plan(
    case: TestCase,
    claude: ClaudeJudge,
    cache: CachedJudge | None,
    needs_claims: bool,
    needs_relevance: bool,
    *,
    repeat: int,
) -> tuple[CasePlan, Usage]:
    usage = Usage()
    operations = hits = 0

    def account(operation: str, claims: Sequence[str] = (), sample: int = 0) -> None:
        nonlocal usage, operations, hits
        operations += 1
        if cache is not None and cache.contains(operation, case, claims, sample=sample):
            hits += 1
            usage += Usage(cache_hits=1)
        else:
            usage += claude.estimate(operation, case, claims)

    if needs_claims:
        account("extract_claims")
        claims = cache.peek_claims(case) if cache is not None else None
        if claims is None:
            sentences = len(extract_sentence_claims(case.response))
            claims = tuple(f"claim {i}" for i in range(math.ceil(sentences * CLAIMS_PER_SENTENCE)))
        if claims and case.has_context:
            for sample in range(repeat):
                account("verify_claims", claims, sample)
    if needs_relevance:
        account("evaluate_relevance")
    plan = CasePlan(case_id=case.id, operations=operations, cache_hits=hits, calls=usage.calls)
    return plan, usage

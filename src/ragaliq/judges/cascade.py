"""The cascade judge: the offline judge settles what it is sure of, Claude judges the rest.

Per case the runner asks for the claims once and for their verification once. The cascade:

- **extracts** with Claude. Claims are then the same atomic, self-contained facts a
  ``provider: claude`` run gets, so verdicts, the PR comment and the claim diff read the same;
  extraction reads only the query and the response, so it is the cheap call, while verification
  carries the whole context and is the one worth saving. Atomic claims are short, which also makes
  verbatim support (the offline judge's surest case) common.
- **verifies** every claim with the offline judge first. Only what it grounds is settled there:
  a claim it rates SUPPORTED (the ``offline_confident`` flag: its evidence, the context sentence
  the claim rests on, states every content word of the claim and its negations) keeps that
  verdict and never reaches the API. Everything else goes to Claude, the offline judge's
  accusations included (a figure or a name it cannot find may be said otherwise in the
  context), and so do claims it could not check: all in one ``verify_claims`` call (batched only
  past ``judge.claims_per_call``), the verdicts merged back in the claims' order. A case whose
  claims are all settled costs no verification call; a case the offline judge stops on (its
  work bound) sends every claim to Claude.
- **rates relevance** with Claude.

Counters on the judge object (:attr:`CascadeJudge.stats`) say how many claims were settled
offline and sent on, and how many verification calls were saved, and the run's notices say so;
the ``Usage`` of each result is Claude's alone, as the offline judge costs nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ragaliq.errors import JudgeWorkError
from ragaliq.judges.base import (
    EstimatingJudge,
    Judge,
    Operation,
    check_verdict_count,
    no_context_verdicts,
)
from ragaliq.judges.offline import CONFIDENT, OfflineJudge
from ragaliq.models import (
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
from ragaliq.text.counts import plural

__all__ = ["SETTLED_OFFLINE", "CascadeJudge", "CascadeStats", "cascade_info", "settles_offline"]

SETTLED_OFFLINE = "settled_offline"
"""Flag on a verdict the offline judge gave in a cascade run, without asking Claude."""


def settles_offline(verdict: ClaimVerdict) -> bool:
    """Whether the cascade keeps an offline verdict: a SUPPORTED the offline judge grounded.

    Accusations, claims not verifiable offline and anything else go to Claude.
    """
    return verdict.verdict is Verdict.SUPPORTED and CONFIDENT in verdict.flags


def cascade_info(claude: JudgeInfo, offline: JudgeInfo) -> JudgeInfo:
    """The cascade's provenance: Claude's model, and both judges' versions in the prompt version.

    A change to Claude's prompts or to the offline judge (its code or its model file) changes the
    prompt version, so a baseline judged otherwise is never silently compared with it.
    """
    return JudgeInfo(
        provider="cascade",
        model=claude.model,
        prompt_version=f"{claude.prompt_version}+offline-{offline.prompt_version}",
        heuristic=False,
    )


@dataclass
class CascadeStats:
    """What the cascade did so far, summed over the cases it verified."""

    cases: int = 0
    """Cases verified (with context and at least one claim)."""
    claims: int = 0
    settled_offline: int = 0
    """Claims whose offline SUPPORTED verdict was kept."""
    sent_to_claude: int = 0
    verify_calls_saved: int = 0
    """Cases that needed no verification call at all, because every claim was settled offline."""
    unchecked_cases: int = 0
    """Cases the offline judge stopped on (its work bound): every claim went to Claude."""

    @property
    def sent_share(self) -> float:
        """The share of claims Claude verified."""
        return self.sent_to_claude / self.claims if self.claims else 0.0

    def notice(self) -> str | None:
        """What the cascade saved, for the report's notices; None before any claim."""
        if not self.claims:
            return None
        saved = (
            f", and {plural(self.verify_calls_saved, 'case')} needed no verification call"
            if self.verify_calls_saved
            else ""
        )
        stopped = (
            f"; the offline judge stopped on {plural(self.unchecked_cases, 'case')} (its work "
            "bound), whose claims all went to Claude"
            if self.unchecked_cases
            else ""
        )
        return (
            f"The cascade settled {self.settled_offline:,} of {plural(self.claims, 'claim')} "
            "offline (SUPPORTED verdicts the offline judge grounded in the context) and sent "
            f"{self.sent_to_claude:,} to Claude (everything else, the offline judge's "
            f"accusations included){saved}{stopped}."
        )


class CascadeJudge:
    """The offline judge in front of Claude; implements the ``Judge`` protocol."""

    def __init__(self, offline: OfflineJudge, claude: Judge) -> None:
        self.offline = offline
        self.claude = claude
        self.stats = CascadeStats()
        self._info = cascade_info(claude.info, offline.info)

    @property
    def info(self) -> JudgeInfo:
        return self._info

    async def extract_claims(self, case: TestCase) -> ClaimsResult:
        return await self.claude.extract_claims(case)

    async def verify_claims(
        self,
        case: TestCase,
        claims: Sequence[str],
        *,
        sample: int = 0,
        facts: Sequence[str] = (),
    ) -> VerificationResult:
        """Offline first; the claims (and needed facts) it does not settle go to Claude at once.

        ``sample`` (``judge.repeat``) is passed on to Claude; the offline verdicts are the same
        in every repetition, so a settled claim stays settled.
        """
        if not case.has_context:
            return no_context_verdicts(claims, facts)
        texts = [*claims, *facts]
        try:
            first = await self.offline.verify_claims(case, claims, facts=facts)
            offline: tuple[ClaimVerdict | None, ...] = (*first.verdicts, *first.fact_verdicts)
        except JudgeWorkError:
            offline = (None,) * len(texts)
            self.stats.unchecked_cases += 1
        merged: list[ClaimVerdict | None] = [None] * len(texts)
        rest: list[int] = []
        for i, verdict in enumerate(offline):
            if verdict is not None and settles_offline(verdict):
                merged[i] = verdict.model_copy(update={"flags": (*verdict.flags, SETTLED_OFFLINE)})
            else:
                rest.append(i)
        self.stats.cases += 1
        self.stats.claims += len(texts)
        self.stats.settled_offline += len(texts) - len(rest)
        self.stats.sent_to_claude += len(rest)
        second = VerificationResult(verdicts=())
        if rest:
            asked_claims = [texts[i] for i in rest if i < len(claims)]
            asked_facts = [texts[i] for i in rest if i >= len(claims)]
            second = check_verdict_count(
                asked_claims,
                await self.claude.verify_claims(
                    case, asked_claims, sample=sample, facts=asked_facts
                ),
                asked_facts,
            )
            for i, verdict in zip(rest, (*second.verdicts, *second.fact_verdicts), strict=True):
                merged[i] = verdict
        else:
            self.stats.verify_calls_saved += 1
        verdicts = tuple(v for v in merged if v is not None)
        result = VerificationResult(
            verdicts=verdicts[: len(claims)],
            fact_verdicts=verdicts[len(claims) :],
            usage=second.usage,
        )
        return check_verdict_count(claims, result, facts)

    async def rate_chunks(self, case: TestCase) -> ChunkRatings:
        return await self.claude.rate_chunks(case)

    async def evaluate_relevance(self, case: TestCase) -> RelevanceResult:
        return await self.claude.evaluate_relevance(case)

    def planned_claims(self, case: TestCase) -> tuple[str, ...] | None:
        """Claude's claims, if the judge behind it knows them without a call."""
        if isinstance(self.claude, EstimatingJudge):
            return self.claude.planned_claims(case)
        return None

    def estimate(
        self,
        operation: Operation,
        case: TestCase,
        claims: Sequence[str] = (),
        *,
        sample: int = 0,
        facts: Sequence[str] = (),
    ) -> Usage:
        """An upper bound: as if Claude verified every claim (the offline judge settles some)."""
        if isinstance(self.claude, EstimatingJudge):
            return self.claude.estimate(operation, case, claims, sample=sample, facts=facts)
        return Usage()

    async def aclose(self) -> None:
        await self.offline.aclose()
        await self.claude.aclose()

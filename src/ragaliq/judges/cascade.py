"""The cascade judge: the offline judge settles what it is sure of, Claude judges the rest.

The cascade answers the questions a case needs (:meth:`CascadeJudge.ask`) in one call to Claude
per part of the case they read, as Claude alone would, with the verdicts the offline judge is
sure of taken out first:

- **extracts** with Claude. Claims are then the same atomic, self-contained facts a
  ``provider: claude`` run gets, so verdicts, the PR comment and the claim diff read the same;
  extraction reads only the query and the response, so it is the cheap call, while verification
  carries the whole context and is the one worth saving. Atomic claims are short, which also makes
  verbatim support (the offline judge's surest case) common.
- **verifies** every claim with the offline judge first. Only what it grounds is settled there:
  a claim it rates SUPPORTED (the ``offline_confident`` flag: its evidence, the context sentence
  the claim rests on, states every content word of the claim and its negations, writes its
  words of reach and comparison and states its relation verb, and the claim says more than a
  name) keeps that verdict and never reaches the API. Everything else goes to Claude, the
  offline judge's accusations included (a figure or a name it cannot find may be said otherwise
  in the context), and so do claims it could not check: all in the call that reads the context
  (batched only past ``judge.claims_per_call``), the verdicts merged back in the claims' order.
  A case whose claims are all settled costs no verification call; a case the offline judge
  stops on (its work bound) sends every claim to Claude.
- **rates relevance** and the chunks with Claude.

Counters on the judge object (:attr:`CascadeJudge.stats`) say how many claims were settled
offline and sent on, and how many verification calls were saved, and the run's notices say so;
the ``Usage`` of each result is Claude's alone, as the offline judge costs nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from ragaliq.errors import JudgeWorkError
from ragaliq.evaluators.questions import FACTS, VERIFY, Answers, Question, Questions
from ragaliq.judges.base import EstimatingJudge, Judge
from ragaliq.judges.questions import answered_without_judge
from ragaliq.models import ClaimVerdict, JudgeInfo, TestCase, Usage, Verdict, VerificationResult
from ragaliq.offline import CONFIDENT, OfflineJudge
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

    def version_of(self, question: Question[Any]) -> str:
        return self.claude.version_of(question)

    async def ask(
        self, questions: Questions, case: TestCase, *, claims: Sequence[str] = (), sample: int = 0
    ) -> Answers:
        """Offline first for the verdicts; everything it does not settle goes to Claude at once.

        ``sample`` (``judge.repeat``) is passed on to Claude; the offline verdicts are the same
        in every repetition, so a settled claim stays settled.
        """
        known, left = answered_without_judge(questions, case, claims)
        verdicts = [q for q in left if q in (VERIFY, FACTS)]
        if not verdicts:
            return known + await self.claude.ask(left, case, claims=claims, sample=sample)
        try:
            offline = await self.offline.ask(verdicts, case, claims=claims)
        except JudgeWorkError:
            offline = Answers()
            self.stats.unchecked_cases += 1
        settled: dict[str, list[ClaimVerdict | None]] = {}
        rest: dict[str, list[str]] = {}
        for question in verdicts:
            first = offline.get(question)
            items = question.items(case, claims)
            merged, unsettled = _settle(items, first.verdicts if first else ())
            settled[question.name] = merged
            rest[question.name] = unsettled
        self._count(settled, rest)
        asked = [q for q in left if q not in verdicts or rest[q.name]]
        facts = tuple(rest.get(FACTS.name, ()))
        narrowed = case.model_copy(update={"expected_facts": facts, "expected_answer": None})
        second = await self.claude.ask(
            asked, narrowed, claims=rest.get(VERIFY.name, ()), sample=sample
        )
        found: dict[str, BaseModel] = dict(second.found)
        failed = dict(second.failed)
        for question in verdicts:
            if question.name in failed:
                continue
            sent = second.get(question)
            answered = sent.verdicts if sent else ()
            if len(answered) != len(rest[question.name]):
                failed[question.name] = (
                    f"the judge returned {plural(len(answered), 'verdict')} for "
                    f"{plural(len(rest[question.name]), 'item')}"
                )
                continue
            found[question.name] = VerificationResult(
                verdicts=_merged(settled[question.name], answered)
            )
        return known + Answers(found=found, failed=failed, usage=second.usage)

    def planned_claims(self, case: TestCase) -> tuple[str, ...] | None:
        """Claude's claims, if the judge behind it knows them without a call."""
        if isinstance(self.claude, EstimatingJudge):
            return self.claude.planned_claims(case)
        return None

    def estimate(
        self, questions: Questions, case: TestCase, *, claims: Sequence[str] = (), sample: int = 0
    ) -> Usage:
        """An upper bound: as if Claude verified every claim (the offline judge settles some)."""
        if isinstance(self.claude, EstimatingJudge):
            return self.claude.estimate(questions, case, claims=claims, sample=sample)
        return Usage()

    def _count(
        self, settled: dict[str, list[ClaimVerdict | None]], rest: dict[str, list[str]]
    ) -> None:
        """What this case's verification settled offline and sent on, in the stats."""
        items = sum(len(verdicts) for verdicts in settled.values())
        sent = sum(len(texts) for texts in rest.values())
        if not items:
            return
        self.stats.cases += 1
        self.stats.claims += items
        self.stats.settled_offline += items - sent
        self.stats.sent_to_claude += sent
        if not sent:
            self.stats.verify_calls_saved += 1

    async def aclose(self) -> None:
        await self.offline.aclose()
        await self.claude.aclose()


def _settle(
    items: Sequence[str], offline: Sequence[ClaimVerdict]
) -> tuple[list[ClaimVerdict | None], list[str]]:
    """The offline verdicts the cascade keeps (flagged), in place; and the items left for Claude.

    Without an offline verdict for every item, none is kept: Claude is asked them all.
    """
    if len(offline) != len(items):
        return [None] * len(items), list(items)
    merged: list[ClaimVerdict | None] = []
    rest: list[str] = []
    for text, verdict in zip(items, offline, strict=True):
        if settles_offline(verdict):
            merged.append(verdict.model_copy(update={"flags": (*verdict.flags, SETTLED_OFFLINE)}))
        else:
            merged.append(None)
            rest.append(text)
    return merged, rest


def _merged(
    settled: Sequence[ClaimVerdict | None], sent: Sequence[ClaimVerdict]
) -> tuple[ClaimVerdict, ...]:
    """The settled verdicts with Claude's in the places left open, in the items' order."""
    answers = iter(sent)
    return tuple(verdict if verdict is not None else next(answers) for verdict in settled)

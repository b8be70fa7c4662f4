"""Judging one case: each question its evaluators need, asked once, and their scores.

The judge extracts the claims once and verifies them once (faithfulness and hallucination both
read those verdicts), with the other questions that read the context (the needed facts, the chunk
ratings) asked alongside the verification, and relevance alongside the extraction; which
questions a case asks, and when, is :class:`~ragaliq.runner.passes.Passes`. A question the judge
fails on is an error of the evaluators that need it, never a score; a judge that cannot be used
at all stops the run.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import BaseModel

from ragaliq.errors import BudgetError, JudgeError, JudgeUnavailableError
from ragaliq.evaluators.base import CaseJudgement, Evaluator
from ragaliq.evaluators.hallucination import HallucinationEvaluator
from ragaliq.evaluators.questions import EXTRACT, FACTS, VERIFY, Answers, Question, Questions
from ragaliq.evaluators.retrieval import text_digest
from ragaliq.judges.base import EstimatingJudge, Judge
from ragaliq.models import (
    CaseResult,
    ChunkRatings,
    ClaimVerdict,
    EvaluationResult,
    TestCase,
    Usage,
    Verdict,
    VerificationResult,
)
from ragaliq.redaction import redact
from ragaliq.runner.confirm import (
    CONFIRMING,
    UNSTABLE,
    UNSTABLE_BELOW,
    ToConfirm,
    confirmed_verdicts,
    confirming_order,
)
from ragaliq.runner.passes import Ask, Passes, needed_by, planned_asks
from ragaliq.runner.settings import RunSettings
from ragaliq.text.counts import plural

__all__ = ["UNSTABLE_BELOW", "CaseBudget", "CaseRun", "majority_verdicts"]

T = TypeVar("T")

_SEVERITY = (
    Verdict.CONTRADICTED,
    Verdict.NOT_ENOUGH_INFO,
    Verdict.PARTIALLY_SUPPORTED,
    Verdict.SUPPORTED,
)


@dataclass(frozen=True, kw_only=True)
class CaseBudget:
    """What one case may spend (a gate's budget per case), checked on what it really spent.

    The pre-flight estimate holds the response's sentences for its claims; once the judge has
    extracted the claims, the verification is estimated again from them, and a case whose
    claims would take it past the budget is an error instead of a paid call.
    """

    tokens: int | None = None
    usd: float | None = None

    @classmethod
    def of(cls, settings: RunSettings) -> CaseBudget | None:
        if settings.case_tokens is None and settings.case_usd is None:
            return None
        return cls(tokens=settings.case_tokens, usd=settings.case_usd)

    def check(self, spent: Usage, ahead: Usage, doing: str) -> None:
        """Stop before ``doing`` when what it would take, on top of ``spent``, passes the budget.

        Raises:
            BudgetError: naming both figures and the budget.
        """
        total = spent + ahead
        tokens = total.input_tokens + total.output_tokens
        if (self.tokens is None or tokens <= self.tokens) and (
            self.usd is None or total.cost_usd <= self.usd
        ):
            return
        limits = " and ".join(
            shown
            for shown in (
                f"{self.tokens:,} tokens" if self.tokens is not None else "",
                f"${self.usd:g}" if self.usd is not None else "",
            )
            if shown
        )
        raise BudgetError(
            f"over the gate's budget per case ({limits}): {doing} would take about "
            f"{tokens:,} tokens (${total.cost_usd:.2f}) in all; not judged. Raise "
            "gate.budget.case_tokens or case_usd in the base commit's config, or split the case"
        )


class CaseRun:
    """The judge and the evaluators of one run, asked once per case."""

    def __init__(
        self,
        judge: Judge,
        evaluators: Sequence[Evaluator[Any]],
        *,
        concurrency: int = 8,
        repeat: int = 1,
        case_budget: CaseBudget | None = None,
        confirm: ToConfirm | None = None,
    ) -> None:
        self.judge = judge
        self.evaluators = evaluators
        self.repeat = repeat
        """Verifications per case; with more than one, each claim gets the majority verdict."""
        self.slots = asyncio.Semaphore(concurrency)
        self.case_budget = case_budget
        self.confirm = confirm if repeat == 1 and not judge.info.heuristic else None
        """Which claims of a judged case would fail the gate, to ask again before it decides
        (:mod:`ragaliq.runner.confirm`); never with ``repeat``, whose asks already agree or not,
        nor for a judge that gives the same verdict every time."""

    async def call(self, operation: Callable[[], Awaitable[T]]) -> T:
        async with self.slots:
            return await operation()

    async def judge_case(self, case: TestCase) -> tuple[CaseResult, Usage]:
        passes = Passes.of(case, self.evaluators)
        blank = passes.unjudgeable
        answers = await self.ask(case, passes.first)
        if passes.second:
            extracted = answers.get(EXTRACT)
            claims = extracted.claims if extracted is not None else ()
            second = [q for q in passes.second if extracted is not None or "claims" not in q.reads]
            answers += await self.ask(case, second, claims, spent=answers.usage)
        judgement = CaseJudgement.of(case, answers)
        results: dict[str, EvaluationResult] = {}
        for evaluator in self.evaluators:
            failure = blank.get(evaluator.name) or _failure(answers, needed_by(evaluator))
            results[evaluator.name] = (
                evaluator.error(failure) if failure else evaluator.evaluate(judgement)
            )
        failed = [_labelled(q, answers) for q in passes.questions if answers.error(q)]
        errors = [*dict.fromkeys(blank.values()), *failed]
        result = CaseResult(
            id=case.id,
            input_hash=case.input_hash,
            status="error" if errors else "ok",
            query=case.query,
            claims=judgement.verdicts or (),
            facts=judgement.facts or (),
            chunks=judgement.chunks or (),
            retrieved=case.chunk_refs,
            retrieved_texts=tuple(map(text_digest, case.context)) if case.chunk_refs else (),
            labels=case.labels,
            results=results,
            error="; ".join(errors) or None,
        )
        if self.confirm is None or result.status != "ok":
            return result, answers.usage
        return await self._confirmed(case, result, answers.usage)

    async def _confirmed(
        self, case: TestCase, result: CaseResult, spent: Usage
    ) -> tuple[CaseResult, Usage]:
        """The case with the claims that would fail the gate asked again, in one call.

        A case with nothing to confirm costs nothing more. A confirming ask that fails, or that
        the case's budget does not allow, leaves the first verdicts as they are.
        """
        assert self.confirm is not None
        places = confirming_order(self.confirm(result))
        held = next((e for e in self.evaluators if isinstance(e, HallucinationEvaluator)), None)
        if not places or held is None:
            return result, spent
        claims = [result.claims[i].text for i in places]
        try:
            self._check_budget(case, [((VERIFY,), CONFIRMING)], claims, spent)
        except BudgetError:
            return result, spent
        again = await self._asked(case, (VERIFY,), claims, CONFIRMING)
        second = again.get(VERIFY)
        if second is None:
            return result, spent + again.usage
        first = [result.claims[i] for i in places]
        verdicts = list(result.claims)
        for place, verdict in zip(
            places, confirmed_verdicts(first, second.verdicts, held.is_hallucinated), strict=True
        ):
            verdicts[place] = verdict
        return result.model_copy(update={"claims": tuple(verdicts)}), spent + again.usage

    async def ask(
        self,
        case: TestCase,
        questions: Questions,
        claims: Sequence[str] = (),
        *,
        spent: Usage | None = None,
    ) -> Answers:
        """Ask ``questions`` once, or the ones over items ``repeat`` times (the majority kept).

        What is known without a judge is not asked; a case whose asking would pass its budget is
        not asked either (its questions fail with the budget's words).
        """
        known, asks = planned_asks(questions, case, claims, repeat=self.repeat)
        if not asks:
            return known
        try:
            self._check_budget(case, asks, claims, spent or Usage())
        except BudgetError as exc:
            return known + Answers.failing(asks[0][0], str(exc))
        results = await asyncio.gather(
            *(self._asked(case, asked, claims, sample) for asked, sample in asks),
            return_exceptions=True,
        )
        answers: list[Answers] = []
        for result in results:
            if isinstance(result, BaseException):
                raise result  # the judge cannot be used at all
            answers.append(result)
        if len(answers) == 1:
            return known + answers[0]
        return known + _majority(answers, asks[1][0])

    async def _asked(
        self, case: TestCase, questions: Questions, claims: Sequence[str], sample: int
    ) -> Answers:
        """One ask of the judge; a failure of it is the failure of every question asked.

        A judge that cannot be used at all still stops the run. The errors are data that every
        output carries (the report, the Python API's results, a test's failure), so no secret
        stays in them.
        """
        try:
            answers = await self.call(
                lambda: self.judge.ask(questions, case, claims=claims, sample=sample)
            )
        except JudgeUnavailableError:
            raise
        except JudgeError as exc:
            return Answers.failing(questions, redact(str(exc)), exc.usage)
        except Exception as exc:  # a bug in one case must not lose the rest of the run
            return Answers.failing(questions, redact(f"unexpected {type(exc).__name__}: {exc}"))
        return _checked(answers, questions, case, claims)

    def _check_budget(
        self,
        case: TestCase,
        asks: Sequence[Ask],
        claims: Sequence[str],
        spent: Usage,
    ) -> None:
        """Stop before asking what would take the case past its budget (claims known by now)."""
        if self.case_budget is None or not claims or not isinstance(self.judge, EstimatingJudge):
            return
        ahead = Usage()
        for questions, sample in asks:
            ahead += self.judge.estimate(questions, case, claims=claims, sample=sample)
        doing = f"verifying its {plural(len(claims), 'claim')}"
        self.case_budget.check(spent, ahead, doing)


def _checked(
    answers: Answers, questions: Questions, case: TestCase, claims: Sequence[str]
) -> Answers:
    """The judge's answers, with any it left out or gave for other items than asked as failures.

    An answer the evaluators could misread (a verdict too few, a chunk unrated, no answer at
    all) is never scored. The reasons are data every output carries, so no secret stays in them.
    """
    found: dict[str, BaseModel] = {}
    failed = {name: redact(reason) for name, reason in answers.failed.items()}
    for question in questions:
        if question.name in failed:
            continue
        answer = answers.get(question)
        wrong = _miscounted(question, answer, case, claims)
        if wrong is None and answer is not None:
            found[question.name] = answer
        else:
            failed[question.name] = wrong or "the judge gave no answer"
    return Answers(found=found, failed=failed, usage=answers.usage)


def _miscounted(
    question: Question[Any], answer: BaseModel | None, case: TestCase, claims: Sequence[str]
) -> str | None:
    if isinstance(answer, VerificationResult):
        items = question.items(case, claims)
        if len(answer.verdicts) != len(items):
            noun = "fact" if question is FACTS else "claim"
            return (
                f"the judge returned {plural(len(answer.verdicts), 'verdict')} for "
                f"{plural(len(items), noun)}"
            )
    if isinstance(answer, ChunkRatings) and len(answer.ratings) != len(case.context):
        return f"the judge rated {plural(len(answer.ratings), 'chunk')} of {len(case.context)}"
    return None


def _majority(samples: Sequence[Answers], repeated: Questions) -> Answers:
    """The first ask's answers, with each repeated question's majority verdict per item.

    A question any repetition failed on has failed.
    """
    first = samples[0]
    found = dict(first.found)
    failed = dict(first.failed)
    for question in repeated:
        error = next((s.error(question) for s in samples if s.error(question)), None)
        if error is not None:
            failed[question.name] = error
            found.pop(question.name, None)
            continue
        results = [r for s in samples if (r := s.get(question)) is not None]
        found[question.name] = VerificationResult(
            verdicts=majority_verdicts(results, unstable_below=UNSTABLE_BELOW)
        )
    usage = Usage()
    for sample in samples:
        usage += sample.usage
    return Answers(found=found, failed=failed, usage=usage)


def _failure(answers: Answers, questions: Questions) -> str | None:
    """Why an evaluator cannot score the case: the first question it needs that failed."""
    return next((_labelled(q, answers) for q in questions if answers.error(q)), None)


def _labelled(question: Question[Any], answers: Answers) -> str:
    return f"{question.label}: {answers.error(question)}"


def majority_verdicts(
    results: Sequence[VerificationResult], *, unstable_below: float
) -> tuple[ClaimVerdict, ...]:
    """Per claim, the verdict most repetitions gave, with its agreement.

    A tie goes to the verdict that backs the claim least, so doubt never passes as support; a
    claim whose agreement is below ``unstable_below`` is flagged ``unstable``.
    """
    merged: list[ClaimVerdict] = []
    for votes in zip(*(r.verdicts for r in results), strict=True):
        counts = Counter(v.verdict for v in votes)
        top = max(counts.values())
        tied = [v for v in _SEVERITY if counts.get(v) == top]
        winner = tied[0]
        chosen = [v for v in votes if v.verdict is winner]
        agreement = round(top / len(votes), 6)
        flags = tuple(dict.fromkeys(f for v in chosen for f in v.flags))
        if agreement < unstable_below:
            flags = (*flags, UNSTABLE)
        merged.append(
            chosen[0].model_copy(
                update={
                    "confidence": round(sum(v.confidence for v in chosen) / len(chosen), 6),
                    "agreement": agreement,
                    "flags": flags,
                }
            )
        )
    return tuple(merged)

"""Running a suite: every case judged once, evaluators scored from the shared answers.

Per case the judge extracts claims once and verifies them once (faithfulness and hallucination
both read those verdicts) while relevance is rated alongside. Judge requests in flight are bounded
by a semaphore; cases are pulled by a fixed pool of workers, so a suite of any size holds only a
few cases in memory at once. A case the judge fails on becomes an ``error`` result and the run
goes on; a judge that cannot be used at all stops the run.
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import contextlib
import itertools
import multiprocessing
import multiprocessing.connection
import multiprocessing.context
import os
import signal
import threading
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from ragaliq.errors import JudgeError, JudgeUnavailableError
from ragaliq.evaluators.base import CaseJudgement, Evaluator
from ragaliq.exits import stop_held
from ragaliq.judges.base import (
    ForkableJudge,
    Judge,
    check_chunk_count,
    check_verdict_count,
    no_context_verdicts,
)
from ragaliq.models import (
    CaseResult,
    ChunkRating,
    ClaimVerdict,
    EvaluationResult,
    Progress,
    RelevanceResult,
    RunReport,
    RunSummary,
    TestCase,
    Usage,
    Verdict,
    VerificationResult,
)
from ragaliq.pool import PoolRun, first_leaf, leaves, run_bounded
from ragaliq.redaction import redact

__all__ = [
    "UNSTABLE_BELOW",
    "RunEnd",
    "RunSettings",
    "majority_verdicts",
    "run_suite",
    "stream_suite",
]

T = TypeVar("T")

UNSTABLE_BELOW = 2 / 3
"""Agreement under which a repeated verdict is ``unstable``."""
_SEVERITY = (
    Verdict.CONTRADICTED,
    Verdict.NOT_ENOUGH_INFO,
    Verdict.PARTIALLY_SUPPORTED,
    Verdict.SUPPORTED,
)


@dataclass(frozen=True, kw_only=True)
class RunSettings:
    """How a run may use the judge."""

    concurrency: int = 8
    """Judge requests in flight at once."""
    processes: int = 1
    """Processes to spread a judge that runs on the CPU alone (the offline judge) over."""
    budget_usd: float | None = None
    """Stop starting new cases when the next one would probably take the spend past this."""
    budget_tokens: int | None = None
    """The same for the tokens used, in and out."""
    on_progress: Callable[[Progress], None] | None = None
    repeat: int = 1
    """Verifications per case; with more than one, each claim gets the majority verdict."""


@dataclass(kw_only=True)
class _CaseAnswers:
    verdicts: tuple[ClaimVerdict, ...] | None = None
    facts: tuple[ClaimVerdict, ...] | None = None
    relevance: RelevanceResult | None = None
    chunks: tuple[ChunkRating, ...] | None = None
    claims_error: str | None = None
    relevance_error: str | None = None
    chunks_error: str | None = None
    usage: Usage

    def failure_for(self, evaluator: Evaluator[Any]) -> str | None:
        """Why an evaluator cannot score the case: a pass it needs failed."""
        needs = (
            (evaluator.needs_claims or evaluator.needs_facts, self.claims_error),
            (evaluator.needs_relevance, self.relevance_error),
            (evaluator.needs_chunks, self.chunks_error),
        )
        return next((error for needed, error in needs if needed and error), None)

    @property
    def errors(self) -> list[str]:
        return [e for e in (self.claims_error, self.relevance_error, self.chunks_error) if e]


class _Run:
    """The judge and the evaluators of one run, asked once per case."""

    def __init__(
        self,
        judge: Judge,
        evaluators: Sequence[Evaluator[Any]],
        settings: RunSettings,
    ) -> None:
        self.judge = judge
        self.evaluators = evaluators
        self.settings = settings
        self.slots = asyncio.Semaphore(settings.concurrency)

    async def call(self, operation: Callable[[], Awaitable[T]]) -> T:
        async with self.slots:
            return await operation()

    async def judge_case(self, case: TestCase) -> tuple[CaseResult, Usage]:
        answers = _CaseAnswers(usage=Usage())
        # An evaluator that cannot judge the case (a blank response or query) asks for nothing.
        blank = {e.name: e.unjudgeable(case) for e in self.evaluators}
        able = [e for e in self.evaluators if blank[e.name] is None]
        claims, facts = any(e.needs_claims for e in able), any(e.needs_facts for e in able)
        try:
            async with asyncio.TaskGroup() as group:
                if claims or facts:
                    group.create_task(self.claims_pass(case, answers, claims=claims, facts=facts))
                if any(e.needs_relevance for e in able):
                    group.create_task(self.relevance_pass(case, answers))
                if any(e.needs_chunks for e in able):
                    group.create_task(self.chunks_pass(case, answers))
        except* JudgeUnavailableError as group_error:
            raise first_leaf(group_error) from None
        judgement = CaseJudgement(
            case=case,
            verdicts=answers.verdicts,
            facts=answers.facts,
            relevance=answers.relevance,
            chunks=answers.chunks,
        )
        results: dict[str, EvaluationResult] = {}
        for evaluator in self.evaluators:
            failure = blank[evaluator.name] or answers.failure_for(evaluator)
            results[evaluator.name] = (
                evaluator.error(failure) if failure else evaluator.evaluate(judgement)
            )
        errors = [*dict.fromkeys(reason for reason in blank.values() if reason), *answers.errors]
        return (
            CaseResult(
                id=case.id,
                input_hash=case.input_hash,
                status="error" if errors else "ok",
                query=case.query,
                claims=answers.verdicts or (),
                facts=answers.facts or (),
                chunks=answers.chunks or (),
                results=results,
                error="; ".join(errors) or None,
            ),
            answers.usage,
        )

    async def claims_pass(
        self, case: TestCase, answers: _CaseAnswers, *, claims: bool, facts: bool
    ) -> None:
        answers.claims_error = await _guarded(
            "claims", answers, self._claims(case, answers, with_claims=claims, with_facts=facts)
        )

    async def _claims(
        self, case: TestCase, answers: _CaseAnswers, *, with_claims: bool, with_facts: bool
    ) -> None:
        """The claims, extracted once, and with the needed facts verified in one call."""
        claims: tuple[str, ...] = ()
        if with_claims:
            extraction = await self.call(lambda: self.judge.extract_claims(case))
            answers.usage += extraction.usage
            claims = extraction.claims
        facts = case.needed_facts if with_facts else ()
        if not claims and not facts:
            answers.verdicts, answers.facts = (), ()
        elif not case.has_context:
            unsupported = no_context_verdicts(claims, facts)
            answers.verdicts, answers.facts = unsupported.verdicts, unsupported.fact_verdicts
        else:
            answers.verdicts, answers.facts = await self.verify(case, claims, facts, answers)

    async def verify(
        self, case: TestCase, claims: Sequence[str], facts: Sequence[str], answers: _CaseAnswers
    ) -> tuple[tuple[ClaimVerdict, ...], tuple[ClaimVerdict, ...]]:
        """Verify once, or ``repeat`` times at once and keep the majority verdict per claim."""
        results: list[VerificationResult] = []

        async def one(sample: int) -> None:
            result = await self.call(
                lambda: self.judge.verify_claims(case, claims, sample=sample, facts=facts)
            )
            results.append(check_verdict_count(claims, result, facts))

        try:
            async with asyncio.TaskGroup() as group:
                for sample in range(self.settings.repeat):
                    group.create_task(one(sample))
        except* JudgeError as group_error:
            for result in results:
                answers.usage += result.usage
            first = first_leaf(group_error)
            for failure in leaves(group_error):  # the first one's usage is counted where caught
                if failure is not first:
                    answers.usage += failure.usage or Usage()
            raise first from None
        for result in results:
            answers.usage += result.usage
        if len(results) == 1:
            return results[0].verdicts, results[0].fact_verdicts
        as_facts = [VerificationResult(verdicts=r.fact_verdicts) for r in results]
        return (
            majority_verdicts(results, unstable_below=UNSTABLE_BELOW),
            majority_verdicts(as_facts, unstable_below=UNSTABLE_BELOW),
        )

    async def relevance_pass(self, case: TestCase, answers: _CaseAnswers) -> None:
        answers.relevance_error = await _guarded(
            "relevance", answers, self._relevance(case, answers)
        )

    async def _relevance(self, case: TestCase, answers: _CaseAnswers) -> None:
        relevance = await self.call(lambda: self.judge.evaluate_relevance(case))
        answers.usage += relevance.usage
        answers.relevance = relevance

    async def chunks_pass(self, case: TestCase, answers: _CaseAnswers) -> None:
        answers.chunks_error = await _guarded("chunks", answers, self._chunks(case, answers))

    async def _chunks(self, case: TestCase, answers: _CaseAnswers) -> None:
        if not case.context:
            answers.chunks = ()
            return
        ratings = await self.call(lambda: self.judge.rate_chunks(case))
        answers.usage += ratings.usage
        answers.chunks = check_chunk_count(case, ratings).ratings


async def _guarded(label: str, answers: _CaseAnswers, work: Awaitable[None]) -> str | None:
    """Run one pass of a case; a judge failure is the case's error, not the run's end.

    A judge that cannot be used at all still stops the run. The error is data that every output
    carries (the report, the Python API's results, a test's failure), so no secret stays in it.
    """
    try:
        await work
    except JudgeUnavailableError:
        raise
    except JudgeError as exc:
        answers.usage += exc.usage or Usage()
        return redact(f"{label}: {exc}")
    except Exception as exc:  # a bug in one case must not lose the rest of the run
        return redact(f"{label}: unexpected {type(exc).__name__}: {exc}")
    return None


@dataclass(frozen=True, kw_only=True)
class RunEnd:
    """How a streamed run ended: what it cost, and why it stopped early, if it did."""

    usage: Usage
    stopped_early: str | None = None


async def stream_suite(
    cases: Iterable[TestCase],
    *,
    judge: Judge,
    evaluators: Sequence[Evaluator[Any]],
    on_case: Callable[[CaseResult], None],
    settings: RunSettings | None = None,
    total: int | None = None,
) -> RunEnd:
    """Judge the cases as they are read, handing each result to ``on_case`` in the cases' order.

    Only the cases in flight (and those finished ahead of a slower earlier one) are held; the
    results go to ``on_case`` (a report writer) as soon as every earlier case has gone. Cases
    left unjudged when the budget stops the run are handed on as ``skipped``.

    Args:
        cases: The cases, read lazily; each is taken only when a worker is free.
        judge: The judge.
        evaluators: The evaluators to score each case with.
        on_case: Hears each case's result, in the order of ``cases``.
        settings: Concurrency, budget, progress and repetitions.
        total: How many cases there are, for progress.

    Raises:
        JudgeUnavailableError: the judge cannot be used at all; nothing more is scheduled.
    """
    settings = settings or RunSettings()
    if (
        settings.processes > 1
        and isinstance(judge, ForkableJudge)
        and (total is None or total >= MIN_CASES_FOR_PROCESSES)
    ):
        return await _stream_in_processes(
            cases,
            factory=judge.process_factory(),
            evaluators=evaluators,
            on_case=on_case,
            settings=settings,
            total=total,
        )
    run = _Run(judge, evaluators, settings)
    ahead: dict[int, CaseResult] = {}
    emitted = 0
    errors = 0
    remaining = iter(cases)

    async def work(index: int, case: TestCase) -> Usage:
        result, usage = await run.judge_case(case)
        ahead[index] = result
        return usage

    def done(index: int, pool: PoolRun) -> None:
        nonlocal emitted, errors
        errors += ahead[index].status == "error"
        while emitted in ahead:
            on_case(ahead.pop(emitted))
            emitted += 1
        if settings.on_progress is not None:
            settings.on_progress(
                Progress(done=pool.done, total=total or pool.done, errors=errors, usage=pool.usage)
            )

    pool = await run_bounded(
        remaining,
        work,
        workers=settings.concurrency * 2,
        budget_usd=settings.budget_usd,
        budget_tokens=settings.budget_tokens,
        on_done=done,
        noun="cases",
    )
    for case in remaining:  # left unstarted by the budget
        on_case(
            CaseResult(
                id=case.id,
                input_hash=case.input_hash,
                status="skipped",
                query=case.query,
                error=pool.stopped_early,
            )
        )
    return RunEnd(usage=pool.usage, stopped_early=pool.stopped_early)


MIN_CASES_FOR_PROCESSES = 200
"""Below this many cases, starting processes costs more than it saves."""
_BATCH = 8
"""Cases sent to a process at once."""
_WORKER: tuple[_Run, asyncio.AbstractEventLoop] | None = None
"""In a judging process: its copy of the run, and its event loop."""


_SHIELDED = frozenset(
    getattr(signal, name) for name in ("SIGINT", "SIGHUP") if hasattr(signal, name)
)
"""What a terminal sends its whole process group (Ctrl-C, a closed window): for the parent alone,
which ends its workers itself (:func:`_end_workers`). Not SIGTERM: the pool ends the workers of a
broken pool with it."""


class _ShieldedProcess(multiprocessing.context.SpawnProcess):
    """A judging process that starts with :data:`_SHIELDED` blocked, so none can end it early.

    Blocked from the start rather than ignored once started, so that a worker still starting
    (the pool starts them as work comes) cannot die of a Ctrl-C and break the pool.
    """

    def start(self) -> None:
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, _SHIELDED)
        try:
            super().start()
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)


class _ShieldedContext(multiprocessing.context.SpawnContext):
    Process = _ShieldedProcess


def _worker_context() -> multiprocessing.context.SpawnContext:
    if hasattr(signal, "pthread_sigmask"):
        return _ShieldedContext()
    return multiprocessing.get_context("spawn")  # no signal masks (Windows)


Batch = list[tuple[CaseResult, Usage]]
"""What a judging process hands back for a batch of cases."""


def _submit(
    loop: asyncio.AbstractEventLoop,
    pool: concurrent.futures.ProcessPoolExecutor,
    cases: list[TestCase],
) -> asyncio.Future[Batch]:
    """Send a batch to the pool; its outcome is relayed to the loop, one way.

    Unlike ``run_in_executor``, cancelling what is returned cancels nothing in the pool: a
    stopped run ends the pool's work itself (:func:`_end_workers`), and a batch cancelled under
    the pool while the pool marks it broken is an error of Python 3.11's pool.
    """
    waiter: asyncio.Future[Batch] = loop.create_future()

    def settle(done: concurrent.futures.Future[Batch]) -> None:
        if waiter.done():  # the run stopped waiting for it
            return
        if done.cancelled():
            waiter.cancel()
        elif (error := done.exception()) is not None:
            waiter.set_exception(error)
        else:
            waiter.set_result(done.result())

    def relay(done: concurrent.futures.Future[Batch]) -> None:
        with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits any more
            loop.call_soon_threadsafe(settle, done)

    pool.submit(_judge_batch, cases).add_done_callback(relay)
    return waiter


def _end_workers(
    pool: concurrent.futures.ProcessPoolExecutor, in_flight: Iterable[asyncio.Future[Batch]]
) -> None:
    """Stop waiting for the batches in flight and end the pool's processes now.

    Their batches are pure computation, with nothing to finish. What a batch already ended with
    is read, so that nothing is logged about it.
    """
    for waiter in in_flight:
        if waiter.done() and not waiter.cancelled():
            waiter.exception()
        waiter.cancel()
    processes = list((pool._processes or {}).values())  # no public way before Python 3.14
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        process.kill()


def _exit_with_parent() -> None:
    """End this worker when its parent ends, however it ends (SIGKILL included)."""
    parent = multiprocessing.parent_process()
    if parent is None:
        return

    def watch() -> None:
        multiprocessing.connection.wait([parent.sentinel])
        os._exit(1)

    threading.Thread(target=watch, name="ragaliq-parent-watch", daemon=True).start()


def _start_worker(
    factory: Callable[[], Judge], evaluators: Sequence[Evaluator[Any]], repeat: int
) -> None:
    global _WORKER
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    _exit_with_parent()
    _WORKER = (_Run(factory(), evaluators, RunSettings(repeat=repeat)), asyncio.new_event_loop())


def _judge_batch(cases: list[TestCase]) -> list[tuple[CaseResult, Usage]]:
    assert _WORKER is not None  # set by the pool's initializer
    run, loop = _WORKER
    return [loop.run_until_complete(run.judge_case(case)) for case in cases]


async def _stream_in_processes(
    cases: Iterable[TestCase],
    *,
    factory: Callable[[], Judge],
    evaluators: Sequence[Evaluator[Any]],
    on_case: Callable[[CaseResult], None],
    settings: RunSettings,
    total: int | None,
) -> RunEnd:
    """:func:`stream_suite` for a judge on the CPU alone: batches of cases judged by processes.

    Each process builds its own judge and evaluators once; batches go out in order and their
    results come back in order, with a bounded number of batches in flight.
    """
    loop = asyncio.get_running_loop()
    usage = Usage()
    done = errors = 0
    in_flight: collections.deque[asyncio.Future[Batch]] = collections.deque()
    remaining = iter(cases)

    def collect(batch: Batch) -> None:
        nonlocal usage, done, errors
        for result, cost in batch:
            usage += cost
            done += 1
            errors += result.status == "error"
            on_case(result)
        if settings.on_progress is not None:
            settings.on_progress(
                Progress(done=done, total=total or done, errors=errors, usage=usage)
            )

    with concurrent.futures.ProcessPoolExecutor(
        max_workers=settings.processes,
        mp_context=_worker_context(),
        initializer=_start_worker,
        initargs=(factory, list(evaluators), settings.repeat),
    ) as pool:
        try:
            while batch := list(itertools.islice(remaining, _BATCH)):
                # Submitting may start a worker: a SIGTERM in the middle would leave it half
                # started and unknown to the pool, which could then not end it.
                with stop_held():
                    in_flight.append(_submit(loop, pool, batch))
                if len(in_flight) >= 4 * settings.processes:
                    collect(await in_flight[0])  # kept in flight until done (_end_workers)
                    in_flight.popleft()
            while in_flight:
                collect(await in_flight[0])
                in_flight.popleft()
        except BaseException:  # Ctrl-C, SIGTERM, a cancelled run, a failing judge
            _end_workers(pool, in_flight)
            raise
    return RunEnd(usage=usage)


async def run_suite(
    cases: Iterable[TestCase],
    *,
    judge: Judge,
    evaluators: Sequence[Evaluator[Any]],
    settings: RunSettings | None = None,
    notices: Sequence[str] = (),
) -> RunReport:
    """Judge every case and build the run report in memory (see :func:`stream_suite`).

    Raises:
        JudgeUnavailableError: the judge cannot be used at all; nothing more is scheduled.
    """
    results: list[CaseResult] = []
    cases = list(cases)
    end = await stream_suite(
        cases,
        judge=judge,
        evaluators=evaluators,
        on_case=results.append,
        settings=settings,
        total=len(cases),
    )
    infos = {e.name: e.info() for e in evaluators}
    return RunReport(
        judge=judge.info,
        evaluators=infos,
        summary=RunSummary.of(results, infos),
        usage=end.usage,
        cases=tuple(results),
        notices=tuple(notices),
        stopped_early=end.stopped_early,
    )


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
            flags = (*flags, "unstable")
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

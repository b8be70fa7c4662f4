"""Running a suite: every case judged once, in order, within the run's bounds.

Cases are pulled by a fixed pool of workers, so a suite of any size holds only a few cases in
memory at once; judge requests in flight are bounded by a semaphore, the spend by the run's
budget. A judge on the CPU alone (the offline judge) runs on the machine's cores instead
(:mod:`ragaliq.runner.processes`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from ragaliq.evaluators.base import Evaluator
from ragaliq.judges.base import ForkableJudge, Judge
from ragaliq.models import CaseResult, Progress, RunReport, RunSummary, TestCase, Usage
from ragaliq.pool import PoolRun, run_bounded
from ragaliq.runner.case import CaseBudget, CaseRun
from ragaliq.runner.processes import MIN_CASES_FOR_PROCESSES, stream_in_processes
from ragaliq.runner.settings import RunEnd, RunSettings

__all__ = ["run_suite", "stream_suite"]


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
    if _on_cores(judge, settings, total):
        assert isinstance(judge, ForkableJudge)
        return await stream_in_processes(
            cases,
            factory=judge.process_factory(),
            evaluators=evaluators,
            on_case=on_case,
            settings=settings,
            total=total,
        )
    run = CaseRun(
        judge,
        evaluators,
        concurrency=settings.concurrency,
        repeat=settings.repeat,
        case_budget=CaseBudget.of(settings),
        confirm=settings.confirm,
    )
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
        noun="case",
    )
    for case in remaining:  # left unstarted by the budget
        on_case(_unstarted(case, pool.stopped_early))
    return RunEnd(usage=pool.usage, stopped_early=pool.stopped_early)


def _on_cores(judge: Judge, settings: RunSettings, total: int | None) -> bool:
    """Whether a judge on the CPU alone is run on the machine's cores: worth it for many cases."""
    return (
        settings.processes > 1
        and isinstance(judge, ForkableJudge)
        and (total is None or total >= MIN_CASES_FOR_PROCESSES)
    )


def _unstarted(case: TestCase, why: str | None) -> CaseResult:
    """A case the budget left unstarted: ``skipped``, with the budget's words."""
    return CaseResult(
        id=case.id, input_hash=case.input_hash, status="skipped", query=case.query, error=why
    )


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

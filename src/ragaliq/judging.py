"""Judging a run's inputs: the suite streamed through the judge, its report written case by case.

Each function takes its collaborators as parameters and returns plain models; only the CLI and
the action build real objects and turn results into exit codes and messages.
"""

from __future__ import annotations

import heapq
import itertools
import os
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from ragaliq._files import open_atomic
from ragaliq.config import JudgeConfig
from ragaliq.evaluators import build_evaluators
from ragaliq.inputs import Inputs
from ragaliq.judges import JudgeChoice
from ragaliq.judges.answers import AnswerRows
from ragaliq.judges.factory import JudgeOpener, describe_judge
from ragaliq.models import (
    CaseResult,
    ClaimVerdict,
    Progress,
    ReportHead,
    RunReport,
    RunSummary,
    Usage,
)
from ragaliq.policy import Budget
from ragaliq.preflight import check_budget
from ragaliq.run_report import DISCARD, ReportWriter, TextSink
from ragaliq.runner import RunSettings, stream_suite
from ragaliq.runner.confirm import ToConfirm

__all__ = [
    "MOST_FAILING_SHOWN",
    "CaseSink",
    "JudgedRun",
    "WorstFailing",
    "empty_report",
    "judge_inputs",
    "judge_with",
    "kept_report",
    "run_settings",
]


def run_settings(
    config: JudgeConfig,
    on_progress: Callable[[Progress], None] | None = None,
    budget: Budget | None = None,
    confirm: ToConfirm | None = None,
) -> RunSettings:
    """How a run may use the judge a config describes, within a gate's ``budget`` if any."""
    most_usd = [b for b in (config.budget_usd, budget.run_usd if budget else None) if b]
    return RunSettings(
        concurrency=config.requests_in_flight,  # many more when they wait as batches
        budget_usd=min(most_usd) if most_usd else None,
        budget_tokens=budget.run_tokens if budget else None,
        on_progress=on_progress,
        repeat=config.repeat,
        processes=min(config.concurrency, os.cpu_count() or 1),
        case_tokens=budget.case_tokens if budget else None,
        case_usd=budget.case_usd if budget else None,
        confirm=confirm,
    )


class CaseSink(Protocol):
    """Takes a run's cases one at a time (a report writer, the comparison, a digest)."""

    def add(self, case: CaseResult) -> None:
        """Take one case."""
        ...


@dataclass(frozen=True, kw_only=True)
class JudgedRun:
    """A finished run: its report without the cases, and the first cases that failed to judge."""

    head: ReportHead
    errored: tuple[CaseResult, ...] = ()
    """Up to five cases that could not be judged, for the terminal."""
    failing: tuple[CaseResult, ...] = ()
    """Up to ten cases below an evaluator's threshold, worst first, for the terminal."""
    failing_count: int = 0
    """How many cases were below an evaluator's threshold in all."""
    unchecked: tuple[tuple[str, ClaimVerdict], ...] = ()
    """The first claims the offline judge could not check, each with its case's id."""
    unchecked_count: int = 0
    """How many claims the offline judge could not check in all."""


class _FirstErrors:
    """Keeps the first five cases that could not be judged."""

    def __init__(self) -> None:
        self.cases: list[CaseResult] = []

    def add(self, case: CaseResult) -> None:
        if case.status == "error" and len(self.cases) < 5:
            self.cases.append(case)


MOST_UNCHECKED_SHOWN = 10
"""How many claims the offline judge could not check a run keeps for the terminal."""


class FirstUnchecked:
    """Keeps the first claims the offline judge could not check, and counts them all."""

    def __init__(self, most: int = MOST_UNCHECKED_SHOWN) -> None:
        self.most = most
        self.count = 0
        self.claims: list[tuple[str, ClaimVerdict]] = []

    def add(self, case: CaseResult) -> None:
        if case.status != "ok":
            return
        for claim in case.claims:
            if not claim.verifiable:
                self.count += 1
                if len(self.claims) < self.most:
                    self.claims.append((case.id, claim))


MOST_FAILING_SHOWN = 10
"""How many failing cases a run keeps for the terminal."""


def _badness(case: CaseResult) -> tuple[int, float]:
    """Larger is worse: more failing evaluators, then a lower failing score."""
    scores = [case.results[name].score for name in case.failing_evaluators()]
    return len(scores), -min((s for s in scores if s is not None), default=1.0)


class WorstFailing:
    """Keeps the ``most`` worst cases below a threshold, in memory bounded by ``most``."""

    def __init__(self, most: int = MOST_FAILING_SHOWN) -> None:
        self.most = most
        self.count = 0
        self._heap: list[tuple[tuple[int, float], int, CaseResult]] = []
        self._order = itertools.count()

    def add(self, case: CaseResult) -> None:
        if case.status != "ok" or not case.failing_evaluators():
            return
        self.count += 1
        # Ties keep the case that came first: a later one ranks lower.
        item = (_badness(case), -next(self._order), case)
        if len(self._heap) < self.most:
            heapq.heappush(self._heap, item)
        elif item[:2] > self._heap[0][:2]:
            heapq.heapreplace(self._heap, item)

    @property
    def cases(self) -> tuple[CaseResult, ...]:
        """The kept cases, worst first."""
        return tuple(case for *_, case in sorted(self._heap, key=lambda i: i[:2], reverse=True))


async def judge_inputs(
    inputs: Inputs,
    *,
    choice: JudgeChoice,
    judge_config: JudgeConfig,
    report_path: Path | None = None,
    sinks: Sequence[CaseSink] = (),
    on_progress: Callable[[Progress], None] | None = None,
    shard: str | None = None,
    budget: Budget | None = None,
    confirm: ToConfirm | None = None,
) -> JudgedRun:
    """Judge the inputs' cases with ``choice`` as they are read, writing the report as it goes.

    ``judge_config`` (the config the judge was opened from) bounds the run: concurrency, budget
    and repeated verifications; a gate's ``budget`` bounds it further: the run is estimated
    against it before any call (a cache hit costs nothing), no case starts that would probably
    take the run past it, and a case whose claims would pass its budget per case is an error.
    ``confirm`` picks the claims of a judged case that would fail a gate, to be asked again
    first (:mod:`ragaliq.runner.confirm`); the estimate counts the confirming call.
    Each case goes to the report at ``report_path`` (written atomically: the old file stays
    until the run has finished) and to every one of ``sinks``; no case is held longer than that.

    Raises:
        BudgetError: the run, or one case, would pass ``budget``; nothing was judged.
        JudgeUnavailableError: the judge cannot be used at all.
        OutputError: the report cannot be written.
    """
    evaluators = build_evaluators(inputs.config.evaluators)
    if budget is not None:
        check_budget(
            inputs.cases,
            judge=choice.judge,
            evaluators=evaluators,
            repeat=judge_config.repeat,
            budget=budget,
            confirm=confirm is not None,
        )
    infos = {e.name: e.info() for e in evaluators}
    errored = _FirstErrors()
    failing = WorstFailing()
    unchecked = FirstUnchecked()
    with _report_out(report_path) as out:
        writer = ReportWriter(out, judge=choice.judge.info, evaluators=infos, shard=shard)
        consumers: tuple[CaseSink, ...] = (writer, errored, failing, unchecked, *sinks)

        def on_case(case: CaseResult) -> None:
            for consumer in consumers:
                consumer.add(case)

        end = await stream_suite(
            inputs.cases,
            judge=choice.judge,
            evaluators=evaluators,
            on_case=on_case,
            settings=run_settings(judge_config, on_progress, budget, confirm),
            total=len(inputs.cases),
        )
        head = writer.finish(
            usage=end.usage, notices=choice.all_notices(), stopped_early=end.stopped_early
        )
    return JudgedRun(
        head=head,
        errored=tuple(errored.cases),
        failing=failing.cases,
        failing_count=failing.count,
        unchecked=tuple(unchecked.claims),
        unchecked_count=unchecked.count,
    )


async def judge_with(
    inputs: Inputs,
    judge_config: JudgeConfig,
    *,
    open_judge: JudgeOpener,
    env: Mapping[str, str],
    report_path: Path | None,
    sinks: Sequence[CaseSink] = (),
    on_progress: Callable[[Progress], None] | None = None,
    shard: str | None = None,
    budget: Budget | None = None,
    answers: AnswerRows | None = None,
) -> JudgedRun:
    """Open the judge ``judge_config`` describes, judge the inputs with it, close it.

    ``answers`` is the store of signed judge answers to reuse and add to, in place of the
    config's cache file. See :func:`judge_inputs` for the rest.
    """
    store = {"answers": answers} if answers is not None else {}
    async with open_judge(judge_config, env=env, cache_path=inputs.cache_path, **store) as choice:
        return await judge_inputs(
            inputs,
            choice=choice,
            judge_config=judge_config,
            report_path=report_path,
            sinks=sinks,
            on_progress=on_progress,
            shard=shard,
            budget=budget,
        )


@contextmanager
def _report_out(path: Path | None) -> Iterator[TextSink]:
    if path is None:
        yield DISCARD
        return
    with open_atomic(path) as out:
        yield out


def empty_report(inputs: Inputs, *, env: Mapping[str, str]) -> RunReport:
    """The report of a run with no case (a shard no case falls in)."""
    infos = {e.name: e.info() for e in build_evaluators(inputs.config.evaluators)}
    return RunReport(
        judge=describe_judge(inputs.config.judge, env=env),
        evaluators=infos,
        summary=RunSummary.of([], infos),
        usage=Usage(),
        cases=(),
    )


@contextmanager
def kept_report(path: Path | None, *, needed: bool) -> Iterator[Path | None]:
    """Where a run writes its report: ``path``, or a temporary file when none is asked for.

    The temporary file (removed at the end) is used only when the report is ``needed`` after the
    run, by the HTML report.
    """
    if path is not None or not needed:
        yield path
        return
    with tempfile.TemporaryDirectory(prefix="ragaliq-") as folder:
        yield Path(folder) / "report.json"

"""Judging on the machine's cores: batches of cases sent to processes, for a judge on the CPU alone.

Each process builds its own judge and evaluators once; batches go out in order and their results
come back in order, with a bounded number in flight. The processes start with Ctrl-C and SIGHUP
blocked, end with the run however it stops (SIGTERM, Ctrl-C, a failing judge) and on their own
when the parent dies.
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
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from ragaliq.evaluators.base import Evaluator
from ragaliq.judges.base import Judge
from ragaliq.models import CaseResult, Progress, TestCase, Usage
from ragaliq.runner.case import CaseRun
from ragaliq.runner.settings import RunEnd, RunSettings
from ragaliq.signals import stop_held

__all__ = ["MIN_CASES_FOR_PROCESSES", "stream_in_processes"]

MIN_CASES_FOR_PROCESSES = 200
"""Below this many cases, starting processes costs more than it saves."""
_BATCH = 8
"""Cases sent to a process at once."""
_WORKER: tuple[CaseRun, asyncio.AbstractEventLoop] | None = None
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
    _WORKER = (CaseRun(factory(), evaluators, repeat=repeat), asyncio.new_event_loop())


def _judge_batch(cases: list[TestCase]) -> list[tuple[CaseResult, Usage]]:
    assert _WORKER is not None  # set by the pool's initializer
    run, loop = _WORKER
    return [loop.run_until_complete(run.judge_case(case)) for case in cases]


async def stream_in_processes(
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

"""Running judged work: a fixed pool of workers over items, bounded in money.

The suite runner (cases) and calibration (labelled claims) both hand their items to
:func:`run_bounded`. A fixed number of workers pull items in order from an iterable, so a suite of
any length (read from its file as it goes) holds only a few items in flight. With a budget, an
item starts only while the spend so far, plus the dearest item so far for each item in flight
and the next one, stays within it; until an item that cost something has finished there is
nothing to estimate from, so items then run one at a time. An exception that escapes ``work``
stops the pool and is raised (items must turn their own failures into data).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from ragaliq.models import Usage

__all__ = ["PoolRun", "first_leaf", "leaves", "run_bounded"]

E = TypeVar("E", bound=BaseException)
T = TypeVar("T")


@dataclass(kw_only=True)
class PoolRun:
    """What a pool did: the items it finished, what they cost, and why it stopped early."""

    done: int = 0
    """How many items finished."""
    usage: Usage = field(default_factory=Usage)
    stopped_early: str | None = None
    """Why items were left unstarted (the budget); None when every item ran."""


async def run_bounded(
    items: Iterable[T],
    work: Callable[[int, T], Awaitable[Usage]],
    *,
    workers: int,
    budget_usd: float | None = None,
    on_done: Callable[[int, PoolRun], None] | None = None,
    noun: str = "items",
) -> PoolRun:
    """Run ``work(i, item)`` for each item (numbered from 0), ``workers`` at a time, within budget.

    ``work`` returns what the item cost; ``on_done`` hears each finished item's number with the
    run so far; ``noun`` names the items in the budget's message. Items are taken from ``items``
    only as workers free up; when the budget stops the pool, the rest are left untaken.

    Raises:
        BaseException: the first exception that escaped ``work``; nothing more is started.
    """
    pool = _Pool(items=iter(items), work=work, budget_usd=budget_usd, on_done=on_done, noun=noun)
    try:
        async with asyncio.TaskGroup() as group:
            for _ in range(max(1, workers)):
                group.create_task(pool.worker())
    except* BaseException as failure:
        raise first_leaf(failure) from None
    return pool.run


@dataclass(kw_only=True)
class _Pool(Generic[T]):
    items: Iterator[T]
    work: Callable[[int, T], Awaitable[Usage]]
    budget_usd: float | None
    on_done: Callable[[int, PoolRun], None] | None
    noun: str
    run: PoolRun = field(default_factory=PoolRun)
    next_index: int = 0
    exhausted: bool = False
    in_flight: int = 0
    dearest: float = 0.0
    priced: int = 0
    """Finished items that cost something: what the budget's estimate rests on."""
    finished: asyncio.Condition = field(default_factory=asyncio.Condition)

    def over_budget(self) -> bool:
        if self.budget_usd is None or self.priced == 0:
            return False
        return self.run.usage.cost_usd + self.dearest * (self.in_flight + 1) > self.budget_usd

    async def worker(self) -> None:
        while self.run.stopped_early is None and not self.exhausted:
            if self.budget_usd is not None and self.priced == 0 and self.in_flight:
                async with self.finished:
                    await self.finished.wait()
                continue
            if self.over_budget():
                self.run.stopped_early = (
                    f"budget_usd {self.budget_usd:g} reached: spent "
                    f"${self.run.usage.cost_usd:.4f} on {self.run.done} {self.noun}; the "
                    "next would pass the budget"
                )
                return
            try:
                item = next(self.items)
            except StopIteration:
                self.exhausted = True
                return
            index = self.next_index
            self.next_index += 1
            self.in_flight += 1
            try:
                usage = await self.work(index, item)
            finally:
                self.in_flight -= 1
            self.run.usage += usage
            self.run.done += 1
            self.dearest = max(self.dearest, usage.cost_usd)
            self.priced += usage.cost_usd > 0
            async with self.finished:
                self.finished.notify_all()
            if self.on_done is not None:
                self.on_done(index, self.run)


def first_leaf(group: BaseExceptionGroup[E]) -> E:
    """The first exception in a (possibly nested) exception group."""
    first = group.exceptions[0]
    return first_leaf(first) if isinstance(first, BaseExceptionGroup) else first


def leaves(group: BaseExceptionGroup[E]) -> list[E]:
    """Every exception in a (possibly nested) exception group, in order."""
    found: list[E] = []
    for exc in group.exceptions:
        found += leaves(exc) if isinstance(exc, BaseExceptionGroup) else [exc]
    return found

"""Running judged work: a fixed pool of workers over items, bounded in money and tokens.

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
from ragaliq.text.counts import plural

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
    budget_tokens: int | None = None,
    on_done: Callable[[int, PoolRun], None] | None = None,
    noun: str = "item",
) -> PoolRun:
    """Run ``work(i, item)`` for each item (numbered from 0), ``workers`` at a time, within budget.

    ``work`` returns what the item cost; ``on_done`` hears each finished item's number with the
    run so far; ``noun`` names an item in the budget's message. Items are taken from ``items``
    only as workers free up; when the budget stops the pool, the rest are left untaken.

    Raises:
        BaseException: the first exception that escaped ``work``; nothing more is started.
    """
    limits = tuple(
        limit
        for limit in (
            _Limit("budget_usd", budget_usd, lambda u: u.cost_usd, "$"),
            _Limit("the budget of tokens", budget_tokens, _tokens, ""),
        )
        if limit.most is not None
    )
    pool = _Pool(items=iter(items), work=work, limits=limits, on_done=on_done, noun=noun)
    try:
        async with asyncio.TaskGroup() as group:
            for _ in range(max(1, workers)):
                group.create_task(pool.worker())
    except* BaseException as failure:
        raise first_leaf(failure) from None
    return pool.run


def _tokens(usage: Usage) -> float:
    return usage.input_tokens + usage.output_tokens


@dataclass(frozen=True)
class _Limit:
    """One budget: its name in messages, the most, and what of a usage it counts."""

    name: str
    most: float | None
    measure: Callable[[Usage], float]
    unit: str


@dataclass(kw_only=True)
class _Pool(Generic[T]):
    items: Iterator[T]
    work: Callable[[int, T], Awaitable[Usage]]
    limits: tuple[_Limit, ...]
    on_done: Callable[[int, PoolRun], None] | None
    noun: str
    run: PoolRun = field(default_factory=PoolRun)
    next_index: int = 0
    exhausted: bool = False
    in_flight: int = 0
    dearest: Usage = field(default_factory=Usage)
    """The most any finished item took, by each measure (its calls and tokens are maxima)."""
    priced: int = 0
    """Finished items that cost something: what the budget's estimate rests on."""
    finished: asyncio.Condition = field(default_factory=asyncio.Condition)

    def over_budget(self) -> str | None:
        """Why the next item may not start, when the next would probably pass a budget."""
        if not self.limits or self.priced == 0:
            return None
        for limit in self.limits:
            spent = limit.measure(self.run.usage)
            assert limit.most is not None
            if spent + limit.measure(self.dearest) * (self.in_flight + 1) > limit.most:
                shown = f"{limit.unit}{spent:.4f}" if limit.unit else f"{spent:,.0f}"
                return (
                    f"{limit.name} {limit.most:g} reached: spent {shown} on "
                    f"{plural(self.run.done, self.noun)}; the next would pass the budget"
                )
        return None

    async def worker(self) -> None:
        while self.run.stopped_early is None and not self.exhausted:
            if self.limits and self.priced == 0 and self.in_flight:
                async with self.finished:
                    await self.finished.wait()
                continue
            reached = self.over_budget()
            if reached is not None:
                self.run.stopped_early = reached
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
            self.dearest = Usage(
                cost_usd=max(self.dearest.cost_usd, usage.cost_usd),
                input_tokens=max(self.dearest.input_tokens, usage.input_tokens),
                output_tokens=max(self.dearest.output_tokens, usage.output_tokens),
            )
            self.priced += usage.cost_usd > 0 or _tokens(usage) > 0
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

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from ragaliq.models import Usage
from ragaliq.pool import PoolRun, first_leaf, leaves, run_bounded


def run(coro):
    return asyncio.run(coro)


def test_every_item_runs_once_numbered_in_order_and_no_more_than_workers_at_a_time():
    seen: list[tuple[int, str]] = []
    in_flight = most = 0

    async def work(index: int, item: str) -> Usage:
        nonlocal in_flight, most
        in_flight += 1
        most = max(most, in_flight)
        await asyncio.sleep(0)
        seen.append((index, item))
        in_flight -= 1
        return Usage(calls=1)

    items = [f"item {i}" for i in range(10)]
    pool = run(run_bounded(items, work, workers=3))
    assert sorted(seen) == list(enumerate(items))
    assert most == 3
    assert (pool.done, pool.usage.calls, pool.stopped_early) == (10, 10, None)


def test_items_are_taken_only_as_workers_free_up():
    taken: list[int] = []

    def source() -> Iterator[int]:
        for i in range(1000):
            taken.append(i)
            yield i

    async def work(index: int, item: int) -> Usage:
        if index == 4:
            raise RuntimeError("stop here")
        await asyncio.sleep(0)
        return Usage()

    with pytest.raises(RuntimeError, match="stop here"):
        run(run_bounded(source(), work, workers=2))
    assert len(taken) <= 6  # a long source is read a few items ahead at most


def test_the_budget_leaves_the_rest_unstarted_and_says_why_in_the_items_noun():
    done: list[int] = []

    async def work(index: int, item: int) -> Usage:
        return Usage(calls=1, cost_usd=0.4)

    def on_done(index: int, pool: PoolRun) -> None:
        done.append(pool.done)

    pool = run(
        run_bounded(range(10), work, workers=4, budget_usd=1.0, on_done=on_done, noun="claim")
    )
    # Nothing priced yet: one at a time; then $0.4 each, so a third would pass $1.
    assert pool.done == 2
    assert done == [1, 2]
    assert pool.stopped_early == (
        "budget_usd 1 reached: spent $0.8000 on 2 claims; the next would pass the budget"
    )


def test_a_budget_of_tokens_stops_the_pool_too():
    async def work(index: int, item: int) -> Usage:
        return Usage(calls=1, input_tokens=300, output_tokens=100)

    pool = run(run_bounded(range(10), work, workers=4, budget_tokens=1000, noun="case"))
    assert pool.done == 2  # 400 tokens each: a third would pass 1,000
    assert pool.stopped_early == (
        "the budget of tokens 1000 reached: spent 800 on 2 cases; the next would pass the budget"
    )


def test_free_items_never_stop_the_pool():
    async def work(index: int, item: int) -> Usage:
        return Usage(cache_hits=1)

    pool = run(run_bounded(range(50), work, workers=4, budget_usd=0.0))
    assert (pool.done, pool.stopped_early) == (50, None)


def test_nested_exception_groups_give_their_leaves_in_order():
    a, b, c = ValueError("a"), KeyError("b"), TypeError("c")
    group = ExceptionGroup("outer", [ExceptionGroup("inner", [a, b]), c])
    assert first_leaf(group) is a
    assert leaves(group) == [a, b, c]

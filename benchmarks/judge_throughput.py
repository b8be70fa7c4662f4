"""Claude judge throughput against the local fake Messages API with injected latency.

Usage: python benchmarks/judge_throughput.py [--cases 500] [--latency 0.4] [--concurrency 8]
                                             [--repeat 3]

Runs the three claim and answer evaluators over synthetic cases of about six claims each, through
the real `anthropic` SDK and the judge cache, twice: cold (empty cache) and warm (same dataset).
Prints judge calls and tokens per case. Then the cold run's wall time against the ideal
`calls x latency / concurrency`, asked both ways (the questions a case needs composed by what they
read, and each in a call of its own), taking turns `--repeat` times, the median printed: against
a fake API in a process of its own (a real API does not share the judge's interpreter), after a
warm-up run of other cases (the SDK's and the client's first-use costs, which a suite pays once;
the first run's figure is printed beside). Then the same cases with two expected facts each,
judged by all five evaluators (context precision and recall too), cold and warm, for the calls
per changed and per unchanged case. Then the three evaluators' cold run again through the fake
Message Batches API (`judge.batch`), for its cost next to the interactive run's: every token at
half price. Then one case of more claims than `judge.claims_per_call`, for what a larger case
costs, and the cold runs again with `judge.one_question_per_call` (each question in a call of its
own). The last line is machine-readable.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import multiprocessing.connection
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.fakes.anthropic_server import FakeAnthropic
from tests.fakes.claude_sim import claude_like

from ragaliq.config import JudgeConfig
from ragaliq.evaluators import (
    ContextPrecisionEvaluator,
    ContextRecallEvaluator,
    Evaluator,
    FaithfulnessEvaluator,
    HallucinationEvaluator,
    RelevanceEvaluator,
)
from ragaliq.judges.cache import CachedJudge
from ragaliq.judges.claude import ClaudeJudge
from ragaliq.models import RunReport, TestCase
from ragaliq.runner import RunSettings, run_suite

PLANS = ["Free", "Personal", "Team", "Business", "Enterprise"]


def make_cases(n: int) -> list[TestCase]:
    cases = []
    for i in range(n):
        plan = PLANS[i % len(PLANS)]
        storage, price, seats, days = 5 * (i % 7 + 1), 4 + i % 20, 3 + i % 50, 7 + i % 30
        context = (
            f"The {plan} plan of account {i} includes {storage} GB of storage per user. "
            f"It costs ${price} per user per month, billed annually. "
            f"Up to {seats} members can join one workspace on the {plan} plan.",
            f"Deleted files stay recoverable for {days} days on the {plan} plan. "
            "Support answers by email within one business day. "
            "Single sign-on is available on Business and Enterprise plans.",
        )
        response = (
            f"The {plan} plan includes {storage} GB of storage per user. "
            f"It costs ${price} per user per month, billed annually. "
            f"Up to {seats} members can join one workspace. "
            f"Deleted files stay recoverable for {days + (i % 3 == 0) * 10} days. "
            "Support answers by email within one business day. "
            "Phone support is included at no extra cost."
        )
        cases.append(
            TestCase(
                id=f"case-{i:05d}",
                query=f"What does the {plan} plan include for account {i}?",
                context=context,
                response=response,
            )
        )
    return cases


def long_case(claims: int) -> TestCase:
    """One case whose response makes ``claims`` claims, each backed by the context."""
    facts = [
        f"Region {i} of the account keeps its backups for {i + 3} days." for i in range(claims)
    ]
    return TestCase(
        id="long",
        query="How long does each region keep its backups?",
        context=(" ".join(facts),),
        response=" ".join(facts),
    )


def three() -> list[Evaluator[Any]]:
    return [FaithfulnessEvaluator(), HallucinationEvaluator(), RelevanceEvaluator()]


def five() -> list[Evaluator[Any]]:
    return [
        *three(),
        ContextPrecisionEvaluator(enabled=True),
        ContextRecallEvaluator(enabled=True),
    ]


def with_facts(cases: list[TestCase]) -> list[TestCase]:
    """Each case with two needed facts: one its context holds, one it does not."""
    return [
        c.model_copy(
            update={
                "expected_facts": (
                    c.context[1].split(". ")[0] + ".",
                    "Refunds are available within 30 days of purchase.",
                )
            }
        )
        for c in cases
    ]


async def run_once(
    cases: list[TestCase],
    base_url: str,
    cache: Path,
    concurrency: int,
    evaluators: list[Evaluator[Any]] | None = None,
    *,
    batch: bool = False,
    apart: bool = False,
) -> tuple[RunReport, float]:
    config = JudgeConfig(
        model="claude-sonnet-5-5",
        concurrency=concurrency,
        max_retries=4,
        batch=batch,
        one_question_per_call=apart,
    )
    claude = ClaudeJudge(
        config, api_key="sk-bench", base_url=base_url, batch_state=cache.with_suffix(".batches")
    )
    judge = CachedJudge(claude, cache, secret="sk-bench")
    start = time.perf_counter()
    try:
        report = await run_suite(
            cases,
            judge=judge,
            evaluators=evaluators or three(),
            settings=RunSettings(concurrency=config.requests_in_flight),
        )
    finally:
        await judge.aclose()
    return report, time.perf_counter() - start


def _serve(latency: float, conn: multiprocessing.connection.Connection) -> None:
    """In a process of its own: the fake API, its address sent, its peak sent when told to stop."""
    with FakeAnthropic(claude_like(), latency=latency) as fake:
        conn.send(fake.base_url)
        conn.recv()
        conn.send(fake.peak_in_flight)


@contextmanager
def fake_elsewhere(latency: float) -> Iterator[tuple[str, list[int]]]:
    """The fake API's address in another process; the list gets its peak requests in flight."""
    ours, theirs = multiprocessing.get_context("spawn").Pipe()
    process = multiprocessing.get_context("spawn").Process(target=_serve, args=(latency, theirs))
    process.start()
    peak: list[int] = []
    try:
        yield ours.recv(), peak
        ours.send("stop")
        peak.append(ours.recv())
    finally:
        process.join(timeout=10)
        if process.is_alive():
            process.kill()


@dataclass
class WallOverIdeal:
    """Cold runs' wall time over their ideal, against a fake API in a process of its own."""

    first: float
    """The process's first run, composed: with the SDK's and the client's first-use costs."""
    together: list[float] = field(default_factory=list)
    """After a warm-up, the questions a case needs composed by what they read."""
    apart: list[float] = field(default_factory=list)
    """After a warm-up, each question in a call of its own."""
    peak_in_flight: int = 0


def wall_over_ideal(cases: list[TestCase], args: argparse.Namespace, tmp: Path) -> WallOverIdeal:
    """Each way's cold-run wall time over its ideal, ``args.repeat`` times, the ways in turn."""
    warm_up = make_cases(len(cases) + 8)[len(cases) :]

    def ratio(name: str, batch: list[TestCase], *, apart: bool = False) -> float:
        cache = tmp / f"{name}.sqlite"
        report, wall = asyncio.run(run_once(batch, url, cache, args.concurrency, apart=apart))
        return wall / (report.usage.calls * args.latency / args.concurrency)

    with fake_elsewhere(args.latency) as (url, peak):
        measured = WallOverIdeal(first=ratio("first", cases))
        ratio("warm-up", warm_up, apart=True)
        for k in range(args.repeat):
            measured.together.append(ratio(f"together-{k}", cases))
            measured.apart.append(ratio(f"apart-{k}", cases, apart=True))
    measured.peak_in_flight = peak[0]
    return measured


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", type=int, default=500)
    parser.add_argument("--latency", type=float, default=0.4)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    cases = make_cases(args.cases)
    with tempfile.TemporaryDirectory() as tmp:
        ratios = wall_over_ideal(cases, args, Path(tmp))  # first: its first run is the process's
    with (
        tempfile.TemporaryDirectory() as tmp,
        FakeAnthropic(claude_like(), latency=args.latency) as fake,
    ):
        cache = Path(tmp) / "cache.sqlite"
        cold, cold_wall = asyncio.run(run_once(cases, fake.base_url, cache, args.concurrency))
        warm, warm_wall = asyncio.run(run_once(cases, fake.base_url, cache, args.concurrency))
        peak = fake.peak_in_flight
        retrieval = with_facts(cases)
        cache5 = Path(tmp) / "cache-five.sqlite"
        cold5, _ = asyncio.run(run_once(retrieval, fake.base_url, cache5, args.concurrency, five()))
        warm5, _ = asyncio.run(run_once(retrieval, fake.base_url, cache5, args.concurrency, five()))
        per_call = JudgeConfig().claims_per_call
        big = [long_case(2 * per_call + 10)]
        large, _ = asyncio.run(
            run_once(big, fake.base_url, Path(tmp) / "long.sqlite", args.concurrency)
        )
        apart, apart_wall = asyncio.run(
            run_once(cases, fake.base_url, Path(tmp) / "a.sqlite", args.concurrency, apart=True)
        )
        apart5, _ = asyncio.run(
            run_once(
                retrieval,
                fake.base_url,
                Path(tmp) / "a5.sqlite",
                args.concurrency,
                five(),
                apart=True,
            )
        )
    with tempfile.TemporaryDirectory() as tmp, FakeAnthropic(claude_like()) as batches:
        batches.batches.polls = 0  # a real batch takes minutes; the fake's end when sent
        batched, batched_wall = asyncio.run(
            run_once(cases, batches.base_url, Path(tmp) / "c.sqlite", args.concurrency, batch=True)
        )
        sent = len(batches.batches.created)
    n = len(cases)
    claims = sum(len(c.claims) for c in cold.cases)
    ideal = cold.usage.calls * args.latency / args.concurrency
    print(f"cases={n} claims_per_case={claims / n:.2f} errors={cold.summary.errors}")
    print(f"latency_s={args.latency} concurrency={args.concurrency} peak_in_flight={peak}")
    print(
        f"cold: calls={cold.usage.calls} input_tokens={cold.usage.input_tokens} "
        f"output_tokens={cold.usage.output_tokens} cost_usd={cold.usage.cost_usd:.4f} "
        f"wall_s={cold_wall:.2f} ideal_s={ideal:.2f}"
    )
    print(
        f"warm: calls={warm.usage.calls} cache_hits={warm.usage.cache_hits} wall_s={warm_wall:.2f}"
    )
    ratio = batched.usage.cost_usd / cold.usage.cost_usd
    print(
        f"batched: calls={batched.usage.calls} batches={sent} errors={batched.summary.errors} "
        f"cost_usd={batched.usage.cost_usd:.4f} (interactive {cold.usage.cost_usd:.4f}, "
        f"ratio {ratio:.3f}) wall_s={batched_wall:.2f}"
    )
    recall = cold5.summary.evaluators["context_recall"].score
    precision = cold5.summary.evaluators["context_precision"].score
    print(
        f"five evaluators: cold calls={cold5.usage.calls} warm calls={warm5.usage.calls} "
        f"cache_hits={warm5.usage.cache_hits} errors={cold5.summary.errors} "
        f"context_recall={recall} context_precision={precision}"
    )
    claims_large = len(large.cases[0].claims)
    print(
        f"larger case: claims={claims_large} claims_per_call={per_call} "
        f"calls={large.usage.calls} (1 + ceil({claims_large} / {per_call})) "
        f"errors={large.summary.errors}"
    )
    print(
        f"one question per call: calls_per_case={apart.usage.calls / n:.2f} "
        f"five_calls_per_case={apart5.usage.calls / n:.2f} "
        f"input_tokens_per_case={apart.usage.input_tokens // n} wall_s={apart_wall:.2f}"
    )
    together, apart_ratio = statistics.median(ratios.together), statistics.median(ratios.apart)
    print(
        f"wall over ideal, fake API in its own process, after a warm-up, median of {args.repeat}: "
        f"composed {together:.3f} ({_listed(ratios.together)}), one question per call "
        f"{apart_ratio:.3f} ({_listed(ratios.apart)}); the process's first run, composed: "
        f"{ratios.first:.3f}; peak_in_flight={ratios.peak_in_flight}"
    )
    print(
        f"calls_per_case_cold={cold.usage.calls / n:.2f} "
        f"calls_per_case_warm={warm.usage.calls / n:.2f} "
        f"wall_over_ideal={together:.3f} wall_over_ideal_apart={apart_ratio:.3f} "
        f"input_tokens_per_case={cold.usage.input_tokens // n} "
        f"five_calls_per_changed_case={cold5.usage.calls / n:.2f} "
        f"five_calls_per_unchanged_case={warm5.usage.calls / n:.2f} "
        f"batch_cost_ratio={ratio:.3f} "
        f"larger_case_claims={claims_large} larger_case_calls={large.usage.calls}"
    )


def _listed(values: list[float]) -> str:
    return " ".join(f"{v:.3f}" for v in values)


if __name__ == "__main__":
    main()

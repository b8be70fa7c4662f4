"""Both ways of asking Claude, against the real API, on the labelled claims of the calibration set.

Usage: ANTHROPIC_API_KEY=... python benchmarks/judge_ways.py [--labels FILE] [--limit N]
       [--model MODEL] [--concurrency 4]

Opt-in: without ANTHROPIC_API_KEY it says so and exits 0, calling nothing (ANTHROPIC_BASE_URL, when
set, points it at another endpoint). With a key, each
labelled claim of `examples/calibration/golden.jsonl` is judged as the context call of a case:
its verdict (`verify_claims`) and the rating of each chunk against it (`rate_chunks`, the claim
standing for the query), once composed in one call (the default) and once with each question in
a call of its own (`judge.one_question_per_call`). Prints, for each way, the agreement of the
verdicts with the labels (accuracy, balanced accuracy, Cohen's kappa, four-way and
hallucinated-or-not), the calls and the cost; then how often the two ways agree with each other on
the verdict and on the chunks; and the repeat agreement: the composed way asked a second time, the
same claims, and how often it gives the same verdict (the noise a confirmation before failing
answers, docs/scoring.md). Each case is judged fresh (no judge cache).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ragaliq.config import JudgeConfig
from ragaliq.evaluators.questions import CHUNKS, VERIFY, Answers
from ragaliq.labels import LabelledClaim, load_labels
from ragaliq.metrics import Calibration, ClaimPrediction, JudgeFailure, measure
from ragaliq.models import TestCase, Usage

GOLDEN = Path(__file__).resolve().parents[1] / "examples" / "calibration" / "golden.jsonl"


def case_of(item: LabelledClaim) -> TestCase:
    """The claim as a case's response and query, with its context."""
    return TestCase(id=item.id, query=item.claim, context=item.context, response=item.claim)


async def judge_all(
    labels: list[LabelledClaim], *, apart: bool, model: str, concurrency: int
) -> list[Answers | BaseException]:
    from ragaliq.judges.claude import ClaudeJudge

    config = JudgeConfig(model=model, one_question_per_call=apart, concurrency=concurrency)
    judge = ClaudeJudge(
        config,
        api_key=os.environ["ANTHROPIC_API_KEY"],
        base_url=os.environ.get("ANTHROPIC_BASE_URL") or None,
    )
    slots = asyncio.Semaphore(concurrency)

    async def one(item: LabelledClaim) -> Answers:
        async with slots:
            return await judge.ask([VERIFY, CHUNKS], case_of(item), claims=[item.claim])

    try:
        return list(await asyncio.gather(*map(one, labels), return_exceptions=True))
    finally:
        await judge.aclose()


def calibration(labels: list[LabelledClaim], answers: list[Any]) -> Calibration:
    predictions, errors, usage = [], [], Usage()
    for item, answer in zip(labels, answers, strict=True):
        verdicts = answer.get(VERIFY) if isinstance(answer, Answers) else None
        if isinstance(answer, Answers):
            usage += answer.usage
        if verdicts is None or len(verdicts.verdicts) != 1:
            reason = answer.error(VERIFY) if isinstance(answer, Answers) else str(answer)
            errors.append(JudgeFailure(id=item.id, message=reason or "no verdict"))
            continue
        (v,) = verdicts.verdicts
        predictions.append(
            ClaimPrediction(
                id=item.id, gold=item.label, predicted=v.verdict, confidence=v.confidence
            )
        )
    return measure(predictions, errors=errors, usage=usage)


def agreement(first: list[Any], second: list[Any]) -> tuple[float, float, int]:
    """The share of claims both ways gave the same verdict, and the same chunk ratings."""
    verdicts = chunks = both = 0
    for a, b in zip(first, second, strict=True):
        if not (isinstance(a, Answers) and isinstance(b, Answers)):
            continue
        va, vb, ca, cb = a.get(VERIFY), b.get(VERIFY), a.get(CHUNKS), b.get(CHUNKS)
        if va is None or vb is None or ca is None or cb is None:
            continue
        both += 1
        verdicts += [v.verdict for v in va.verdicts] == [v.verdict for v in vb.verdicts]
        chunks += [r.relevant for r in ca.ratings] == [r.relevant for r in cb.ratings]
    if not both:
        return float("nan"), float("nan"), 0
    return verdicts / both, chunks / both, both


def line(name: str, c: Calibration) -> str:
    return (
        f"{name}: judged={c.n} errors={len(c.errors)} accuracy={c.accuracy:.3f} "
        f"balanced_accuracy={c.balanced_accuracy:.3f} kappa={c.kappa:.3f} "
        f"binary_accuracy={c.binary.accuracy:.3f} binary_kappa={c.binary.kappa:.3f} "
        f"calls={c.usage.calls} cost_usd={c.usage.cost_usd:.4f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--labels", type=Path, default=GOLDEN)
    parser.add_argument("--limit", type=int, default=0)
    parser.add_argument("--model", default=JudgeConfig().model)
    parser.add_argument("--concurrency", type=int, default=4)
    args = parser.parse_args()
    if not os.environ.get("ANTHROPIC_API_KEY"):
        print(f"skipped: set ANTHROPIC_API_KEY to judge {args.labels.name} both ways")
        return
    labels = load_labels(args.labels)
    labels = labels[: args.limit] if args.limit else labels
    together = asyncio.run(
        judge_all(labels, apart=False, model=args.model, concurrency=args.concurrency)
    )
    apart = asyncio.run(
        judge_all(labels, apart=True, model=args.model, concurrency=args.concurrency)
    )
    print(f"labels={len(labels)} file={args.labels.name} model={args.model}")
    print(line("together", calibration(labels, together)))
    print(line("apart", calibration(labels, apart)))
    verdicts, chunks, both = agreement(together, apart)
    print(f"between: claims={both} same_verdict={verdicts:.3f} same_chunk_ratings={chunks:.3f}")
    again = asyncio.run(
        judge_all(labels, apart=False, model=args.model, concurrency=args.concurrency)
    )
    verdicts, _, both = agreement(together, again)
    print(f"repeat: claims={both} same_verdict={verdicts:.3f}")


if __name__ == "__main__":
    main()

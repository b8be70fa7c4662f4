"""How a noisy judge moves the gate, with and without confirming a claim before it fails.

Usage::

    python benchmarks/judge_noise.py [--cases 200] [--seed 7] [--rates 0 0.05 0.1 0.2]

The judge is the fake Claude behind the fake Messages API (``tests/fakes/claude_sim.py``), a
careful judge made wrong at a chance ``p`` per claim: one seeded stream draws for every claim of
every verification in the order the requests come, whatever the request (a first ask or a
confirmation). ``independent`` gives each claim the same chance; ``last`` puts it on the last
claims of a call (place i of n: ``p * 2i / (n + 1)``, the same ``p`` on average).

The changes are generated: a product's help page of seven facts (each a figure), a baseline
answer that states six of them, and per product two changed answers: the same six facts
reworded (sentences reordered, one opened with "Also,") and, in the other, one fact given an
invented figure. Every claim of the baseline is supported, so any claim the gate holds against
a changed answer is new. The gate fails as with ``gate.fail_on_new_hallucinations: true``: on a
newly hallucinated claim that is not unstable (``gate.count_unstable`` off, the default).

Printed per ``p`` and way: the flip rate measured (wrong verdicts over verdicts given), the share
of faithful changes whose gate fails, the share of injected details caught (failing; failing or
listed as unstable), and judge calls per changed case (faithful and injected apart), without and
with confirmation. At ``p = 0.05`` the bar is: faithful failing at most 2%, injected failing at
least 90% and failing or unstable at least 99%, at most 2.3 calls per faithful changed case.
Only the claims the first ask holds against an answer are asked again: an invented detail whose
first verdict is a wrong SUPPORTED (that the judge's check of its quote lets through) is never
confirmed, so the share failing or unstable stays below what one verdict catches plus the
details the confirmation turns unstable; it cannot reach 100% at any p above 0.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.fakes.anthropic_server import FakeAnthropic
from tests.fakes.claude_sim import Noise, noisy_claude

from ragaliq.config import JudgeConfig
from ragaliq.evaluators import FaithfulnessEvaluator, HallucinationEvaluator
from ragaliq.judges.claude import ClaudeJudge
from ragaliq.models import CaseResult, TestCase
from ragaliq.runner.case import CaseRun
from ragaliq.runner.confirm import UNSTABLE, confirmable

RATES = (0.0, 0.05, 0.10, 0.20)
WAYS = ("independent", "last")
AT = 0.05
MAX_FAITHFUL_FAILING = 0.02
MIN_INJECTED_FAILING = 0.90
MIN_INJECTED_CAUGHT = 0.99
MAX_CALLS = 2.3

NAMES = (
    "Alder", "Birch", "Cedar", "Dune", "Ember", "Fjord", "Grove", "Harbor", "Iris", "Juniper",
    "Kestrel", "Lumen", "Maple", "Nimbus", "Orchid", "Pebble", "Quartz", "Ridge", "Sable", "Tundra",
)  # fmt: skip
KINDS = ("kettle", "lamp", "backpack", "heater", "blender", "speaker", "drill", "scooter", "tent",
         "monitor")  # fmt: skip
FACTS = (
    ("weighs {} kilograms", 2, 19),
    ("costs {} dollars", 20, 400),
    ("ships within {} days", 2, 14),
    ("has a warranty of {} years", 1, 6),
    ("holds {} litres", 1, 30),
    ("was released in {}", 2011, 2024),
    ("draws {} watts", 5, 900),
)


@dataclass(frozen=True)
class Change:
    """One changed answer, and whether it invents a detail."""

    case: TestCase
    injected: str | None = None
    """The claim with the invented figure, if the answer has one."""


def changes(count: int, seed: int) -> list[Change]:
    """``count`` faithful rewordings and ``count`` answers with one invented figure."""
    draw = random.Random(seed)
    made: list[Change] = []
    for n in range(count):
        line = ("", " Pro", " Max", " Mini")[n // 200 % 4]  # no figure in a name
        name = f"The {NAMES[n % len(NAMES)]} {KINDS[n // len(NAMES) % len(KINDS)]}{line}"
        values = [draw.randint(low, high) for _, low, high in FACTS]
        facts = [f"{name} {form.format(v)}." for (form, _, _), v in zip(FACTS, values, strict=True)]
        context = (" ".join(facts),)
        said = draw.sample(range(len(facts)), 6)
        order = said[1:] + said[:1]  # reworded: another order, and one sentence opened anew
        reworded = _reworded([facts[i] for i in order])
        wrong = draw.randrange(6)
        form = FACTS[order[wrong]][0]
        figure = values[order[wrong]] + draw.randint(1, 5)
        invented = [facts[i] for i in order]
        invented[wrong] = f"{name} {form.format(figure)}."
        invented = _reworded(invented)
        query = f"Tell me about {name[4:]}."
        for injected, answer in ((None, reworded), (invented[wrong], invented)):
            kind = "faithful" if injected is None else "injected"
            response = " ".join(answer)
            case = TestCase(id=f"{kind}-{n}", query=query, context=context, response=response)
            made.append(Change(case=case, injected=injected))
    return made


def _reworded(sentences: list[str]) -> list[str]:
    second = sentences[1]
    return [sentences[0], "Also, " + second[0].lower() + second[1:], *sentences[2:]]


def all_new(case: CaseResult) -> tuple[int, ...]:
    """Every claim held against a changed answer is new: the baseline supported them all."""
    held = HallucinationEvaluator()
    return tuple(i for i, c in enumerate(case.claims) if held.is_hallucinated(c) and confirmable(c))


@dataclass
class Tally:
    cases: int = 0
    failing: int = 0
    """Changes whose gate fails (a newly hallucinated claim that is not unstable)."""
    caught: int = 0
    """Changes whose invented detail fails the gate."""
    listed: int = 0
    """Changes whose invented detail fails the gate or is listed as unstable."""
    calls: int = 0

    def share(self, count: int) -> float:
        return count / self.cases if self.cases else 0.0


async def gate_each(
    changed: Sequence[Change], noise: Noise, *, confirm: bool
) -> tuple[Tally, Tally]:
    """Judge every change in turn (one stream, drawn in order); the tallies of both kinds."""
    tallies = (Tally(), Tally())
    evaluators = [FaithfulnessEvaluator(), HallucinationEvaluator()]
    with FakeAnthropic(noisy_claude(noise)) as fake:
        config = JudgeConfig(model="claude-sonnet-5-5", structured_output="schema", max_retries=0)
        judge = ClaudeJudge(config, api_key="sk-ant-noise", base_url=fake.base_url)
        run = CaseRun(judge, evaluators, concurrency=1, confirm=all_new if confirm else None)
        try:
            for change in changed:
                result, usage = await run.judge_case(change.case)
                assert result.status == "ok", result.error
                held = [c for c in result.claims if HallucinationEvaluator().is_hallucinated(c)]
                tally = tallies[change.injected is not None]
                tally.cases += 1
                tally.calls += usage.calls
                tally.failing += any(UNSTABLE not in c.flags for c in held)
                detail = [c for c in held if c.text == change.injected]
                tally.caught += any(UNSTABLE not in c.flags for c in detail)
                tally.listed += bool(detail)
        finally:
            await judge.aclose()
    return tallies


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=200, help="changes of each kind")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--rates", type=float, nargs="+", default=list(RATES), help="chances of a wrong verdict"
    )
    args = parser.parse_args(argv)
    changed = changes(args.cases, args.seed)
    claims = sum(len(c.case.response.split(". ")) for c in changed) / len(changed)
    print(
        f"{args.cases} faithful reworded changes and {args.cases} with one invented figure, "
        f"about {claims:.1f} claims each; seed {args.seed}"
    )
    print(
        f"{'p':>5} {'way':<12} {'confirm':<8} {'flips':>6} {'faithful failing':>17} "
        f"{'detail failing':>17} {'or unstable':>14} {'calls faithful':>15} "
        f"{'calls injected':>15}"
    )
    met = True
    for p in args.rates:
        for way in WAYS if p else WAYS[:1]:
            for confirm in (False, True):
                noise = Noise(p, seed=args.seed, bias=way)
                faithful, injected = asyncio.run(gate_each(changed, noise, confirm=confirm))
                flips = noise.flips / noise.verdicts if noise.verdicts else 0.0
                caught = injected.share(injected.caught)
                either = injected.share(injected.listed)
                calls_f = faithful.calls / faithful.cases
                calls_i = injected.calls / injected.cases
                print(
                    f"{p:>5.2f} {way:<12} {'yes' if confirm else 'no':<8} {flips:>6.1%} "
                    f"{faithful.share(faithful.failing):>17.1%} {caught:>17.1%} "
                    f"{either:>14.1%} {calls_f:>15.2f} {calls_i:>15.2f}"
                )
                if p == AT and confirm:
                    met &= (
                        faithful.share(faithful.failing) <= MAX_FAITHFUL_FAILING
                        and caught >= MIN_INJECTED_FAILING
                        and either >= MIN_INJECTED_CAUGHT
                        and calls_f <= MAX_CALLS
                    )
    print(
        f"bar at p = {AT} with confirmation: faithful failing <= {MAX_FAITHFUL_FAILING:.0%}, "
        f"injected failing >= {MIN_INJECTED_FAILING:.0%}, failing or unstable >= "
        f"{MIN_INJECTED_CAUGHT:.0%}, calls per faithful change <= {MAX_CALLS}: "
        + ("met" if met else "NOT met")
    )
    return 0 if met else 1


if __name__ == "__main__":
    raise SystemExit(main())

"""The offline judge on single-sentence probes: false alarms and catches per kind of change.

Usage::

    python benchmarks/offline_probes.py [--data PATH] [--list]

``benchmarks/data/offline_probes.jsonl`` holds claims written for this benchmark, each against a
short context (product, policy and news text, and JSON records), labelled faithful or not, in the
categories of the offline judge's findings: figures (digits, words, units), names, negation,
opposites, widened scope, swapped roles, record values, and faithful rewordings (imperatives,
units, figures in words, abbreviations, dates). Each claim is verified alone, as a run verifies
a response's claim.

A claim is *flagged* when the judge calls it hallucinated (any verdict but SUPPORTED, except
NOT_ENOUGH_INFO flagged ``not_verifiable_offline``); *not verifiable* when it carries that flag.
Printed per category: on faithful claims the false alarms (flagged) and the not verifiable ones;
on unfaithful claims the catches (flagged) and the not verifiable ones.

The probes are split in two halves by ``sha256(group) mod 2`` (a group is one context and its
claims): the judge was developed on the ``tune`` half only, and the ``test`` half is the figure.
The bar: at most 5% of faithful claims flagged, at least 70% of unfaithful ones caught.
``--list`` prints every tune-half outcome with its reason (never the test half's); ``--half tune``
prints the tune half alone, for development.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from ragaliq.evaluators.hallucination import HallucinationEvaluator  # noqa: E402
from ragaliq.models import ClaimVerdict, TestCase, Verdict  # noqa: E402
from ragaliq.offline import OfflineJudge  # noqa: E402

DEFAULT_DATA = ROOT / "benchmarks" / "data" / "offline_probes.jsonl"
CATEGORIES = (
    "figures",
    "names",
    "negation",
    "opposites",
    "scope",
    "roles",
    "records",
    "rewordings",
)
MAX_FALSE_ALARMS = 0.05
MIN_CATCHES = 0.70
Half = Literal["tune", "test"]
Outcome = Literal["flagged", "not verifiable", "supported"]


@dataclass(frozen=True)
class Probe:
    """One claim against its context, labelled faithful or not."""

    id: str
    group: str
    category: str
    faithful: bool
    query: str
    context: tuple[str, ...]
    claim: str

    @property
    def half(self) -> Half:
        """``test`` when sha256(group) is even, else ``tune``."""
        digest = int(hashlib.sha256(self.group.encode("utf-8")).hexdigest(), 16)
        return "test" if digest % 2 == 0 else "tune"


def load_probes(path: Path) -> list[Probe]:
    probes = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            probes.append(
                Probe(
                    id=row["id"],
                    group=row["group"],
                    category=row["category"],
                    faithful=bool(row["faithful"]),
                    query=row.get("query", ""),
                    context=tuple(row["context"]),
                    claim=row["claim"],
                )
            )
    return probes


def outcome_of(verdict: ClaimVerdict) -> Outcome:
    """What the gate makes of a verdict: hallucinated, not verifiable offline, or supported."""
    if HallucinationEvaluator().is_hallucinated(verdict):
        return "flagged"
    return "supported" if verdict.verdict is Verdict.SUPPORTED else "not verifiable"


async def judge_probes(probes: Sequence[Probe]) -> list[ClaimVerdict]:
    judge = OfflineJudge()
    verdicts = []
    for probe in probes:
        case = TestCase(id=probe.id, query=probe.query, context=probe.context, response=probe.claim)
        verdicts.append((await judge.verify_claims(case, [probe.claim])).verdicts[0])
    return verdicts


def _share(part: int, whole: int) -> str:
    return f"{part:>3}/{whole:<3} {part / whole:>4.0%}" if whole else f"{'-':>8}     "


def table(probes: Sequence[Probe], outcomes: Sequence[Outcome], half: str) -> tuple[str, bool]:
    """The per-category table of one half, and whether it meets the bar."""
    counts: Counter[tuple[str, bool, Outcome]] = Counter()
    for probe, outcome in zip(probes, outcomes, strict=True):
        counts[(probe.category, probe.faithful, outcome)] += 1
    lines = [
        f"{half} half",
        f"{'category':<11} {'false alarms':>13} {'not verif.':>13}   "
        f"{'caught':>13} {'not verif.':>13} {'passed':>13}",
    ]
    totals: Counter[tuple[bool, Outcome]] = Counter()
    for category in CATEGORIES:
        faithful = sum(
            counts[(category, True, o)] for o in ("flagged", "not verifiable", "supported")
        )
        unfaithful = sum(
            counts[(category, False, o)] for o in ("flagged", "not verifiable", "supported")
        )
        for (cat, label, outcome), n in counts.items():
            if cat == category:
                totals[(label, outcome)] += n
        lines.append(
            f"{category:<11} {_share(counts[(category, True, 'flagged')], faithful):>13} "
            f"{_share(counts[(category, True, 'not verifiable')], faithful):>13}   "
            f"{_share(counts[(category, False, 'flagged')], unfaithful):>13} "
            f"{_share(counts[(category, False, 'not verifiable')], unfaithful):>13} "
            f"{_share(counts[(category, False, 'supported')], unfaithful):>13}"
        )
    faithful = sum(n for (label, _), n in totals.items() if label)
    unfaithful = sum(n for (label, _), n in totals.items() if not label)
    alarms, caught = totals[(True, "flagged")], totals[(False, "flagged")]
    lines.append(
        f"{'all':<11} {_share(alarms, faithful):>13} "
        f"{_share(totals[(True, 'not verifiable')], faithful):>13}   "
        f"{_share(caught, unfaithful):>13} "
        f"{_share(totals[(False, 'not verifiable')], unfaithful):>13} "
        f"{_share(totals[(False, 'supported')], unfaithful):>13}"
    )
    alarm_rate = alarms / faithful if faithful else 0.0
    catch_rate = caught / unfaithful if unfaithful else 0.0
    met = alarm_rate <= MAX_FALSE_ALARMS and catch_rate >= MIN_CATCHES
    unchecked = totals[(True, "not verifiable")] / faithful if faithful else 0.0
    lines.append(
        f"{half}: false_alarms={alarm_rate:.3f} (bar <= {MAX_FALSE_ALARMS}) "
        f"catches={catch_rate:.3f} (bar >= {MIN_CATCHES}) -> {'met' if met else 'NOT met'}; "
        f"faithful claims not verifiable offline={unchecked:.3f}"
    )
    return "\n".join(lines), met


def halves_parser(doc: str, data: Path, what: str) -> argparse.ArgumentParser:
    """The options of a benchmark split in a tune half and a test half."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=data, help=f"{what} (JSONL)")
    parser.add_argument("--list", action="store_true", help="print each tune-half outcome")
    parser.add_argument(
        "--half", choices=("tune", "test", "both"), default="both", help="the halves to print"
    )
    return parser


def main(argv: Sequence[str] | None = None) -> None:
    args = halves_parser(__doc__, DEFAULT_DATA, "probes").parse_args(argv)
    probes = load_probes(args.data)
    verdicts = asyncio.run(judge_probes(probes))
    outcomes = [outcome_of(v) for v in verdicts]
    judge = OfflineJudge().info
    print(f"probes {args.data.relative_to(ROOT) if args.data.is_relative_to(ROOT) else args.data}")
    print(f"judge: {judge.provider}/{judge.model} version {judge.prompt_version}")
    print(
        "faithful claims: false alarms, not verifiable; unfaithful: caught, not verifiable, "
        "passed as supported"
    )
    for half in ("tune", "test") if args.half == "both" else (args.half,):
        chosen = [(p, o) for p, o in zip(probes, outcomes, strict=True) if p.half == half]
        text, _ = table([p for p, _ in chosen], [o for _, o in chosen], half)
        print()
        print(text)
    if args.list:
        print()
        for probe, verdict, outcome in zip(probes, verdicts, outcomes, strict=True):
            if probe.half != "tune":
                continue
            label = "faithful  " if probe.faithful else "unfaithful"
            print(f"[{probe.category}] {label} {outcome:<15} {probe.claim}\n    {verdict.reason}")


if __name__ == "__main__":
    main()

"""Time to split long responses into claims, and to judge them offline, by response length.

Usage::

    python benchmarks/claim_splitting.py [--sizes 10000,50000,100000]

Each response is one text shape repeated to the length: plain prose; quoted speech with full
stops inside the quotes; one long sentence of clauses joined by ", and"; abbreviations, initials
and times ("Dr.", "a.m.", "e.g."); capitalised words (names everywhere); a bullet list. Printed
per shape and length: the wall time of the offline judge's claim splitting and of its verifying
the claims against a short context, each the best of three runs. Linear splitting keeps the time
per 10,000 characters flat as the length grows (a quadratic splitter took 20-50 s on 99,000
characters). Tests never assert on these times.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from ragaliq.models import TestCase  # noqa: E402
from ragaliq.offline import OfflineJudge, extract_sentence_claims  # noqa: E402

SHAPES = {
    "prose": "The thermostat keeps its schedule when the Wi-Fi is down. Refunds take 14 days. ",
    "quotes": 'He said "yes. no. maybe." and left. She wrote "it works. it is fast." It does. ',
    "clauses": "the plan costs $12, and the team grows, and it ships fast, and it works, ",
    "abbreviations": "Dr. Smith met Mr. Jones at 4 p.m. on Jan. 5, e.g. at approx. 3 sites etc. ",
    "capitals": "Alpha Beta said Gamma Delta met Epsilon Zeta in Paris and London with Rome. ",
    "bullets": "- Open Settings and tap Devices\n- The code expires after 30 minutes\n",
}
CONTEXT = (
    "The thermostat keeps its schedule when the Wi-Fi is down. Refunds take 14 days of purchase.",
)
REPEATS = 3


def best_of(run: Callable[[], object]) -> float:
    times = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000,50000,100000", help="response lengths")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    judge = OfflineJudge()
    print(f"{'shape':<14} {'chars':>8} {'claims':>7} {'split s':>9} {'verify s':>9}  per 10k chars")
    for name, unit in SHAPES.items():
        for size in sizes:
            text = (unit * (size // len(unit) + 1))[:size]
            claims = extract_sentence_claims(text)
            split = best_of(lambda text=text: extract_sentence_claims(text))
            case = TestCase(id=name, query="", context=CONTEXT, response=text)
            verify = best_of(
                lambda case=case, claims=claims: asyncio.run(judge.verify_claims(case, claims))
            )
            print(
                f"{name:<14} {size:>8,} {len(claims):>7,} {split:>9.3f} {verify:>9.3f}  "
                f"split {split / size * 10_000:.4f} s, verify {verify / size * 10_000:.4f} s"
            )


if __name__ == "__main__":
    main()

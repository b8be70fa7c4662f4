"""How long `ragaliq --help` and `ragaliq --version` take, next to importing their libraries alone.

Usage: python benchmarks/cli_startup.py [--runs 21]

Runs each command ``--runs`` times as a fresh process (the console script of the Python running
this, as a user's shell runs it) and prints the median and the fastest wall time of each, beside a
bare `python -c "import click, pydantic, yaml"`: the floor any command line built on those
libraries starts from. The help and the version load no judge, GitHub client or template engine
(tests/unit/cli/test_startup.py lists what they import).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

BIN = Path(sys.executable).parent


def timed(argv: list[str], runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
    return times


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=21)
    args = parser.parse_args()
    ragaliq = str(BIN / "ragaliq")
    rows = {
        'python -c "import click, pydantic, yaml"': [
            sys.executable,
            "-c",
            "import click, pydantic, yaml",
        ],
        "ragaliq --help": [ragaliq, "--help"],
        "ragaliq --version": [ragaliq, "--version"],
    }
    results = {name: timed(argv, args.runs) for name, argv in rows.items()}
    floor = statistics.median(next(iter(results.values())))
    print(f"{args.runs} runs each, wall time of a fresh process")
    print(f"{'command':<45} {'median':>8} {'fastest':>8} {'x floor':>8}")
    for name, times in results.items():
        median = statistics.median(times)
        print(f"{name:<45} {median:>7.3f}s {min(times):>7.3f}s {median / floor:>8.2f}")


if __name__ == "__main__":
    main()

"""How the gate scales with the suite: wall time, cases per second and peak memory per step.

Usage: python benchmarks/scale.py [--sizes 1000,10000,100000] [--data ../shared/data/ragtruth-dev]
                                  [--steps run,baseline,compare,html]

For each size, builds a JSONL dataset of real RAG outputs (RAGTruth qa, summary and data2txt
responses with their sources as context, repeated with fresh ids to reach the size), then runs
each step as its own `ragaliq` process with the offline judge:

- run:      `ragaliq run -o report.json` (the judge on the run's processes: judge.concurrency)
- baseline: `ragaliq baseline update --report report.json` (the baseline's compact index)
- compare:  `ragaliq compare` of the report against that baseline (N against N cases)
- html:     `ragaliq report --html` (the self-contained HTML report)

Peak memory is the largest sum of the resident memory of the step's process and its children,
sampled every 20 ms from /proc. One line per step and size, then a last line with the largest
size's figures as key=value pairs.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from offline_throughput import ragtruth_cases

ROOT = Path(__file__).resolve().parents[1]
STEPS = ("run", "baseline", "compare", "html")


def _children(pid: int) -> list[int]:
    found: list[int] = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            text = Path(f"/proc/{pid}/task/{task}/children").read_text()
            found += [int(p) for p in text.split()]
    except OSError:
        pass
    return found


def _rss(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _tree_rss(pid: int) -> int:
    total, todo = 0, [pid]
    while todo:
        current = todo.pop()
        total += _rss(current)
        todo += _children(current)
    return total


def measure(args: list[str], cwd: Path) -> tuple[float, int, int]:
    """Run one step; return its wall time, peak memory of its process tree, and exit code."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "ragaliq", *args],
        cwd=cwd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={**os.environ, "ANTHROPIC_API_KEY": ""},
    )
    peak = 0
    while proc.poll() is None:
        peak = max(peak, _tree_rss(proc.pid))
        time.sleep(0.02)
    wall = time.perf_counter() - start
    stderr = proc.stderr.read().decode() if proc.stderr else ""
    if proc.returncode not in (0, 1):
        sys.exit(f"ragaliq {' '.join(args)} exited {proc.returncode}:\n{stderr[-2000:]}")
    return wall, peak, proc.returncode


def dataset(rows: list[dict], size: int, path: Path) -> None:
    with path.open("w", encoding="utf-8") as out:
        for i in range(size):
            row = rows[i % len(rows)]
            out.write(json.dumps({**row, "id": f"{row['id']}-n{i}"}) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared/data/ragtruth-dev")
    parser.add_argument("--steps", default=",".join(STEPS))
    parser.add_argument("--concurrency", type=int, default=None, help="judge.concurrency")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    steps = [s for s in args.steps.split(",") if s]
    rows = ragtruth_cases(args.data, 1262)
    last: dict[str, str] = {}
    print(f"{'cases':>8} {'step':<9} {'wall s':>8} {'cases/s':>9} {'peak MiB':>9} {'file MiB':>9}")
    for size in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp)
            dataset(rows, size, work / "cases.jsonl")
            judge = "{provider: offline"
            if args.concurrency is not None:
                judge += f", concurrency: {args.concurrency}"
            (work / "ragaliq.yaml").write_text(
                f"dataset: cases.jsonl\njudge: {judge}}}\nbaseline: baseline.json\n",
                encoding="utf-8",
            )
            commands = {
                "run": (["run", "--config", "ragaliq.yaml", "-o", "report.json"], "report.json"),
                "baseline": (
                    ["baseline", "update", "--report", "report.json", "--config", "ragaliq.yaml"],
                    "baseline.json",
                ),
                "compare": (
                    ["compare", "--report", "report.json", "--baseline", "baseline.json"],
                    None,
                ),
                "html": (
                    ["report", "--html", "report.html", "--report", "report.json"],
                    "report.html",
                ),
            }
            for step in steps:
                command, output = commands[step]
                wall, peak, _ = measure(command, work)
                size_mib = (work / output).stat().st_size / 2**20 if output else 0.0
                rate = size / wall
                print(
                    f"{size:>8,} {step:<9} {wall:>8.1f} {rate:>9.0f} {peak / 2**20:>9.0f} "
                    f"{size_mib:>9.1f}",
                    flush=True,
                )
                last[f"{step}_wall_s"] = f"{wall:.1f}"
                last[f"{step}_cases_per_s"] = f"{rate:.0f}"
                last[f"{step}_peak_mib"] = f"{peak / 2**20:.0f}"
    print(f"cases={sizes[-1]} " + " ".join(f"{k}={v}" for k, v in last.items()))


if __name__ == "__main__":
    main()

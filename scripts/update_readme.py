"""Regenerate the README's example PR comment and terminal output from the quick-start example.

Usage: python scripts/update_readme.py [--check]

The comment is what the gate renders for `examples/quickstart/rag_outputs_pr.jsonl` (the quick-start
outputs after a change that makes three answers state wrong figures) against the baseline recorded
from `examples/quickstart/rag_outputs.jsonl`, judged by the offline judge. With --check, exit 1 when
the README is out of date instead of writing it.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
QUICKSTART = ROOT / "examples" / "quickstart"
README = ROOT / "README.md"
START = "<!-- example-comment:start -->"
END = "<!-- example-comment:end -->"


def render_example() -> str:
    from ragaliq.baseline import load_baseline
    from ragaliq.config import load_config
    from ragaliq.dataset import load_dataset
    from ragaliq.evaluators import build_evaluators
    from ragaliq.gate_sequence import GateWatch, decide_gate
    from ragaliq.inputs import load_inputs
    from ragaliq.judges import OfflineJudge
    from ragaliq.judging import JudgedRun
    from ragaliq.repository import ConfigLocation
    from ragaliq.runner import run_suite

    config_path = QUICKSTART / "ragaliq.yaml"
    inputs = load_inputs(config_path, QUICKSTART / "rag_outputs_pr.jsonl")
    config = load_config(config_path)
    baseline_path = ConfigLocation.of(config_path).local(config.baseline, what="baseline")
    baseline = load_baseline(baseline_path)
    if baseline is None:
        sys.exit(f"no baseline at {baseline_path}; run `--record-baseline` first")
    report = asyncio.run(
        run_suite(
            load_dataset(QUICKSTART / "rag_outputs_pr.jsonl"),
            judge=OfflineJudge(),
            evaluators=build_evaluators(config.evaluators),
        )
    )
    watch = GateWatch.of(inputs, baseline)
    for case in report.cases:
        for sink in watch.sinks:
            sink.add(case)
    outcome = decide_gate(
        inputs,
        run=JudgedRun(head=report.head),
        watch=watch,
        details_url="https://github.com/acme/support-bot/actions/runs/1234",
    )
    return outcome.comment


def record_baseline() -> None:
    from ragaliq.baseline import write_baseline
    from ragaliq.config import load_config
    from ragaliq.dataset import load_dataset
    from ragaliq.evaluators import build_evaluators
    from ragaliq.judges import OfflineJudge
    from ragaliq.repository import ConfigLocation
    from ragaliq.runner import run_suite

    config_path = QUICKSTART / "ragaliq.yaml"
    config = load_config(config_path)
    report = asyncio.run(
        run_suite(
            load_dataset(QUICKSTART / "rag_outputs.jsonl"),
            judge=OfflineJudge(),
            evaluators=build_evaluators(config.evaluators),
        )
    )
    path = ConfigLocation.of(config_path).local(config.baseline, what="baseline")
    policy = config.rules().recorded(report.evaluators)
    write_baseline(
        path, head=report.head, cases=iter(report.cases), commit="0000000", policy=policy
    )
    print(f"baseline written to {path.relative_to(ROOT)}")


def splice(readme: str, comment: str) -> str:
    head, rest = readme.split(START, 1)
    _, tail = rest.split(END, 1)
    block = f"{START}\n\n{comment.rstrip()}\n\n{END}"
    return head + block + tail


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--record-baseline", action="store_true")
    args = parser.parse_args()
    if args.record_baseline:
        record_baseline()
    readme = README.read_text(encoding="utf-8")
    updated = splice(readme, render_example())
    if args.check:
        if updated != readme:
            sys.exit("README.md's example comment is out of date: run scripts/update_readme.py")
        return
    README.write_text(updated, encoding="utf-8")
    print("README.md updated")


if __name__ == "__main__":
    main()

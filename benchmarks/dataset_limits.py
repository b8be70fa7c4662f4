"""Peak memory of reading datasets: `ragaliq validate` on a large JSONL, and hostile inputs.

Usage: python benchmarks/dataset_limits.py [--cases 1000000] [--keep DIR]

Writes a JSONL dataset of N generated cases (about 330 bytes each: a query, two context chunks, a
response, a tag and a metadata field), then runs each command below in its own process and prints
its exit code, wall time and peak resident memory (from the kernel's accounting of the child):

- `ragaliq validate` on the N-case JSONL (the whole file checked as a stream);
- `ragaliq validate` on a YAML "billion laughs" dataset (nine levels of nine aliases);
- `ragaliq validate` with `dataset: /dev/zero`;
- `ragaliq validate` on a JSON and a YAML dataset just under their size limits.

The last line carries the N-case figures.
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

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from ragaliq.dataset import MAX_DOCUMENT_BYTES, MAX_YAML_BYTES  # noqa: E402


def case(i: int) -> dict:
    return {
        "id": f"case-{i:07d}",
        "query": f"What is the refund window for plan {i}?",
        "context": [
            f"Plan {i} can be refunded within 14 days of purchase.",
            "Monthly plans are not refundable.",
        ],
        "response": f"Plan {i} can be refunded within 14 days of purchase.",
        "tags": ["billing"],
        "metadata": {"plan": i},
    }


def write_jsonl(path: Path, n: int) -> None:
    with path.open("w", encoding="utf-8") as out:
        for i in range(n):
            out.write(json.dumps(case(i)) + "\n")


def document(n: int, suffix: str) -> str:
    """N cases as a JSON or a YAML document."""
    if suffix == ".json":
        return json.dumps({"cases": [case(i) for i in range(n)]}, indent=2)
    lines = ["cases:"]
    for i in range(n):
        c = case(i)
        lines += [
            f"  - id: {c['id']}",
            f"    query: {json.dumps(c['query'])}",
            "    context:",
            *(f"      - {json.dumps(chunk)}" for chunk in c["context"]),
            f"    response: {json.dumps(c['response'])}",
            "    tags: [billing]",
            f"    metadata: {{plan: {i}}}",
        ]
    return "\n".join(lines) + "\n"


def write_document(path: Path, limit: int) -> int:
    """As many cases as fit in about 95% of ``limit`` bytes, as JSON or YAML (by the suffix)."""
    per_case = len(document(1000, path.suffix).encode()) / 1000
    n = int(limit * 0.95 / per_case)
    text = document(n, path.suffix)
    while len(text.encode()) > limit:
        n = n * 95 // 100
        text = document(n, path.suffix)
    path.write_text(text, encoding="utf-8")
    return n


BILLION_LAUGHS = "\n".join(
    ['a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    + [
        f"{name}: &{name} [{', '.join(['*' + prev] * 9)}]"
        for prev, name in zip("abcdefgh", "bcdefghi", strict=True)
    ]
    + ["cases: *i", ""]
)


def measure(label: str, config: Path, dataset: str) -> tuple[int, float, float]:
    """Run `ragaliq validate` in a child and return (exit code, seconds, peak MiB)."""
    command = [
        sys.executable,
        "-m",
        "ragaliq",
        "validate",
        "--config",
        str(config),
        "--dataset",
        dataset,
    ]
    # One child per measurement, started from a fresh helper process, so that the peak resident
    # size RUSAGE_CHILDREN reports belongs to this command alone.
    probe = (
        "import resource, subprocess, sys, time\n"
        "start = time.perf_counter()\n"
        "done = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
        "wall = time.perf_counter() - start\n"
        "peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024\n"
        "print(done.returncode, wall, peak)\n"
        "sys.stderr.write((done.stdout + done.stderr)[-400:])\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    result = subprocess.run(
        [sys.executable, "-c", probe, *command], capture_output=True, text=True, env=env
    )
    code, wall, peak = result.stdout.split()
    message = result.stderr.strip().splitlines()[-1] if result.stderr.strip() else ""
    print(
        f"{label}: exit {code}, {float(wall):.1f} s, peak {float(peak):.0f} MiB | {message[:160]}"
    )
    return int(code), float(wall), float(peak)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", type=int, default=1_000_000)
    parser.add_argument("--keep", type=Path, default=None, help="Write the files here.")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        config = folder / "ragaliq.yaml"
        config.write_text("judge: {provider: offline}\n", encoding="utf-8")
        started = time.perf_counter()
        big = folder / "cases.jsonl"
        write_jsonl(big, args.cases)
        size = big.stat().st_size / 2**20
        print(
            f"wrote {args.cases:,} cases ({size:.0f} MiB) in {time.perf_counter() - started:.0f} s"
        )
        laughs = folder / "laughs.yaml"
        laughs.write_text(BILLION_LAUGHS, encoding="utf-8")
        measure("billion laughs (YAML)", config, str(laughs))
        measure("dataset: /dev/zero", config, "/dev/zero")
        document = folder / "limit.json"
        n = write_document(document, MAX_DOCUMENT_BYTES)
        measure(f"JSON at the size limit ({n:,} cases)", config, str(document))
        document = folder / "limit.yaml"
        n = write_document(document, MAX_YAML_BYTES)
        measure(f"YAML at the size limit ({n:,} cases)", config, str(document))
        code, wall, peak = measure(f"validate {args.cases:,} cases (JSONL)", config, str(big))
        rate = args.cases / wall if wall else 0.0
        print(
            f"validate {args.cases:,} JSONL cases: exit {code}, {wall:.1f} s "
            f"({rate:,.0f} cases/s), peak {peak:.0f} MiB"
        )


if __name__ == "__main__":
    main()

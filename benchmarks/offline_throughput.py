"""Offline judge throughput: one `ragaliq run` over N cases built from ../shared RAGTruth data.

Usage: python benchmarks/offline_throughput.py [--cases 1000] [--data ../shared/data/ragtruth-dev]

Builds a JSONL dataset of N real RAG outputs (RAGTruth qa, summary and data2txt responses with
their sources as context), runs `ragaliq run` on it once with the offline judge, and prints the
wall time and cases per second.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def ragtruth_cases(data: Path, limit: int) -> list[dict]:
    cases: list[dict] = []
    for task in ("qa", "summary", "data2txt"):
        for line in (data / f"ragtruth_{task}.jsonl").read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            source = row["source"]
            if task == "qa":
                query, context = source["question"], [source["passages"]]
            elif task == "summary":
                query, context = "Summarize the following news article.", [source]
            else:
                query, context = "Describe this business from its record.", [json.dumps(source)]
            for i, response in enumerate(row["responses"]):
                cases.append(
                    {
                        "id": f"{task}-{row['source_id']}-{i}",
                        "query": query,
                        "context": context,
                        "response": response["response"],
                    }
                )
    out = []
    while len(out) < limit:
        for case in cases[: limit - len(out)]:
            out.append({**case, "id": f"{case['id']}-r{len(out)}"})
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", type=int, default=1000)
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared/data/ragtruth-dev")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        dataset = Path(tmp) / "cases.jsonl"
        rows = ragtruth_cases(args.data, args.cases)
        dataset.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        config = Path(tmp) / "ragaliq.yaml"
        config.write_text("dataset: cases.jsonl\njudge: {provider: offline}\n", encoding="utf-8")
        start = time.perf_counter()
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "ragaliq",
                "run",
                "--config",
                str(config),
                "-o",
                f"{tmp}/r.json",
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        wall = time.perf_counter() - start
        if proc.returncode == 2:
            sys.exit(proc.stderr)
        report = json.loads(Path(f"{tmp}/r.json").read_text(encoding="utf-8"))
    claims = sum(len(c["claims"]) for c in report["cases"])
    print(proc.stdout)
    print(f"cases={len(rows)} claims={claims} wall_s={wall:.2f} (whole process, incl. startup)")
    print(f"cases_per_s={len(rows) / wall:.1f}")


if __name__ == "__main__":
    main()

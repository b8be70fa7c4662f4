"""Offline judge throughput and the largest case, for one or more source trees in one run.

Usage::

    python benchmarks/offline_throughput.py [--cases 20000] [--repeat 3] [--src DIR ...]
                                            [--largest] [--data ../shared/data/ragtruth-dev]

**Throughput**: builds a JSONL dataset of N real RAG outputs (RAGTruth qa, summary and data2txt
responses with their sources as context, repeated to N), runs ``ragaliq run`` on it with the
offline judge, and prints the wall time and cases per second. **Largest case** (``--largest``):
the largest case within the dataset's field limits, a 100,000-character response and a
500,000-character context, built from RAGTruth responses and sources, and three hostile shapes,
each at half and at full size so that a doubling shows linear growth: a crafted case whose every
claim matches its own sentence, one whose every context sentence holds every word of every claim
(at the field limits), and a 99,002-character response of one word, 99,000 spaces and one word;
printed: the claims, the wall and CPU seconds to split the response and to verify the claims,
and the seconds of the verification spent in Python's cycle collector.

Each ``--src`` is a source tree's ``src`` folder (default: this checkout's), run as
``PYTHONPATH=DIR``, so that two versions are measured in one run on the same machine: the
sources take turns in every repetition, and the median is printed. The machine's load average
is printed before and after: other work on the machine slows the wall times, not the CPU times
(the CPU seconds of the run and its worker processes), which are printed beside them as cases
per CPU second.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESPONSE_CHARS = 100_000
CONTEXT_CHARS = 500_000
_LARGEST = """
import asyncio, gc, json, sys, time
from ragaliq.offline import OfflineJudge, extract_sentence_claims
from ragaliq.models import TestCase
data = json.load(open(sys.argv[1], encoding="utf-8"))
judge = OfflineJudge()
case = TestCase(id="largest", query="", context=(data["context"],), response=data["response"])
t, c = time.perf_counter(), time.process_time()
claims = extract_sentence_claims(case.response)
split = (time.perf_counter() - t, time.process_time() - c)
collecting = [0.0, 0.0]  # seconds spent in the cycle collector, and when the last one began
def collector(phase, info):
    if phase == "start":
        collecting[1] = time.perf_counter()
    else:
        collecting[0] += time.perf_counter() - collecting[1]
gc.callbacks.append(collector)
t, c = time.perf_counter(), time.process_time()
try:
    verdicts = asyncio.run(judge.verify_claims(case, claims)).verdicts
    error = None
except Exception as exc:
    verdicts, error = (), str(exc)
verify = (time.perf_counter() - t, time.process_time() - c)
print(json.dumps({"claims": len(claims), "split": split, "verify": verify, "error": error,
                  "collector": collecting[0],
                  "supported": sum(v.verdict.value == "SUPPORTED" for v in verdicts)}))
"""


def _sources(data: Path) -> tuple[list[dict], list[str], list[str]]:
    """RAGTruth's cases, its responses and its prose sources."""
    cases: list[dict] = []
    responses: list[str] = []
    sources: list[str] = []
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
            if task != "data2txt":
                sources.append(context[0])
            for i, response in enumerate(row["responses"]):
                responses.append(response["response"])
                cases.append(
                    {
                        "id": f"{task}-{row['source_id']}-{i}",
                        "query": query,
                        "context": context,
                        "response": response["response"],
                    }
                )
    return cases, responses, sources


def ragtruth_cases(data: Path, limit: int) -> list[dict]:
    cases, _, _ = _sources(data)
    out = []
    while len(out) < limit:
        for case in cases[: limit - len(out)]:
            out.append({**case, "id": f"{case['id']}-r{len(out)}"})
    return out


def _fill(texts: Sequence[str], limit: int) -> str:
    """Texts joined by blank lines, repeated, up to ``limit`` characters."""
    out: list[str] = []
    size = 0
    while True:
        for text in texts:
            if size + len(text) + 2 > limit:
                return "\n\n".join(out)
            out.append(text)
            size += len(text) + 2


SHARED_WORDS = (
    "council approved harbour ferry plan district budget Mayor Okafor Tuesday March 12 percent"
).split()
SPACES = 99_000


def _shared_words(response_chars: int, context_chars: int) -> dict[str, str]:
    """A case whose every context sentence holds every word of every claim, in another order.

    Each sentence and each claim has a word of its own, so that no two are the same text.
    """
    rng = random.Random(7)

    def sentences(limit: int, label: str) -> str:
        out: list[str] = []
        size = 0
        while size < limit:
            words = SHARED_WORDS[:]
            rng.shuffle(words)
            out.append(f"The {' '.join(words)} {label}{len(out)}.")
            size += len(out[-1]) + 1
        return " ".join(out)[:limit]

    return {
        "response": sentences(response_chars, "item"),
        "context": sentences(context_chars, "ref"),
    }


def largest_cases(data: Path) -> dict[str, dict[str, str]]:
    """The largest in-limit cases: from RAGTruth, and hostile shapes at half and full size.

    The hostile shapes: one crafted so every sentence matches its claim, one whose every context
    sentence holds every word of every claim, and a response of one word, 99,000 spaces and one
    word. Each is printed at half its size too, so that a doubling shows how the time grows.
    """
    _, responses, sources = _sources(data)
    cases = {
        "ragtruth": {
            "response": _fill(responses, RESPONSE_CHARS),
            "context": _fill(sources, CONTEXT_CHARS),
        }
    }
    for label, scale in (("half", 2), ("full", 1)):
        crafted = " ".join(
            f"The city council approved the harbour ferry plan for district {i} after a long "
            "debate."
            for i in range(CONTEXT_CHARS // 80 // scale)
        )[: CONTEXT_CHARS // scale]
        claims = " ".join(
            f"The city council approved the harbour ferry plan for district {i}."
            for i in range(RESPONSE_CHARS // 60 // scale)
        )[: RESPONSE_CHARS // scale]
        cases[f"crafted-{label}"] = {"response": claims, "context": crafted}
        cases[f"shared-words-{label}"] = _shared_words(
            RESPONSE_CHARS // scale, CONTEXT_CHARS // scale
        )
        cases[f"spaces-{label}"] = {
            "response": "A" + " " * (SPACES // scale) + "B",
            "context": "A is the first letter. B is the second letter.",
        }
    return cases


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _run(
    command: list[str], src: Path, cwd: Path
) -> tuple[subprocess.CompletedProcess[str], float]:
    env = {**os.environ, "PYTHONPATH": str(src)}
    before = _children_cpu()
    proc = subprocess.run(command, capture_output=True, text=True, check=False, env=env, cwd=cwd)
    return proc, _children_cpu() - before


def throughput(src: Path, dataset: Path, count: int) -> tuple[float, float, int]:
    """Wall seconds, CPU seconds and claims of one ``ragaliq run`` over the dataset."""
    folder = dataset.parent
    config = folder / "ragaliq.yaml"
    config.write_text(f"dataset: {dataset.name}\njudge: {{provider: offline}}\n", "utf-8")
    report = folder / "report.json"
    start = time.perf_counter()
    command = [sys.executable, "-m", "ragaliq", "run", "--config", str(config), "-o", str(report)]
    proc, cpu = _run(command, src, folder)
    wall = time.perf_counter() - start
    if proc.returncode == 2:
        sys.exit(proc.stderr)
    cases = json.loads(report.read_text(encoding="utf-8"))["cases"]
    assert len(cases) == count
    return wall, cpu, sum(len(c["claims"]) for c in cases)


def _load() -> str:
    """The machine's load, and the time it takes now for a fixed pure-Python loop.

    The loop (ten million additions) takes about 0.4 s of CPU on a quiet modern core: the ratio
    says how much other work on the machine slows every figure printed beside it.
    """
    one, five, _ = os.getloadavg()
    cpu, wall = time.process_time(), time.perf_counter()
    total = 0
    for i in range(10_000_000):
        total += i
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    return (
        f"load average {one:.2f} (1 min), {five:.2f} (5 min) on {os.cpu_count()} cores; "
        f"a fixed loop took {cpu:.2f} s of CPU, {wall:.2f} s of wall time"
    )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--src", type=Path, action="append", help="a source tree's src folder")
    parser.add_argument("--largest", action="store_true", help="time the largest case instead")
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared/data/ragtruth-dev")
    args = parser.parse_args(argv)
    sources = [s.resolve() for s in (args.src or [ROOT / "src"])]
    print(_load())
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        if args.largest:
            _largest(folder, sources, args)
        else:
            _throughput(folder, sources, args)
    print(_load())


def _throughput(folder: Path, sources: list[Path], args: argparse.Namespace) -> None:
    dataset = folder / "cases.jsonl"
    rows = ragtruth_cases(args.data, args.cases)
    dataset.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    runs: dict[Path, list[tuple[float, float, int]]] = {src: [] for src in sources}
    for k in range(args.repeat):
        for src in sources:
            wall, cpu, claims = throughput(src, dataset, len(rows))
            runs[src].append((wall, cpu, claims))
            print(
                f"run {k + 1} {src}: wall_s={wall:.1f} cpu_s={cpu:.1f} claims={claims} "
                f"cases_per_s={len(rows) / wall:.1f}",
                flush=True,
            )
    for src, done in runs.items():
        walls = statistics.median(w for w, _, _ in done)
        cpus = statistics.median(c for _, c, _ in done)
        print(
            f"{src}: cases={len(rows)} claims={done[0][2]} median wall_s={walls:.1f} "
            f"cases_per_s={len(rows) / walls:.1f} (whole process, incl. startup) "
            f"cases_per_cpu_s={len(rows) / cpus:.1f}"
        )


def _largest(folder: Path, sources: list[Path], args: argparse.Namespace) -> None:
    for name, case in largest_cases(args.data).items():
        path = folder / f"{name}.json"
        path.write_text(json.dumps(case), encoding="utf-8")
        print(
            f"{name}: response {len(case['response']):,} chars, context "
            f"{len(case['context']):,} chars"
        )
        results: dict[Path, list[dict]] = {src: [] for src in sources}
        for _ in range(args.repeat):
            for src in sources:
                proc, _ = _run([sys.executable, "-c", _LARGEST, str(path)], src, folder)
                if proc.returncode:
                    sys.exit(proc.stderr)
                results[src].append(json.loads(proc.stdout))
        for src, done in results.items():
            verify = statistics.median(r["verify"][0] for r in done)
            verify_cpu = statistics.median(r["verify"][1] for r in done)
            split = statistics.median(r["split"][0] for r in done)
            collector = statistics.median(r["collector"] for r in done)
            error = done[0]["error"]
            print(
                f"  {src}: claims={done[0]['claims']} supported={done[0]['supported']} "
                f"split_s={split:.2f} verify_s={verify:.2f} verify_cpu_s={verify_cpu:.2f} "
                f"collector_s={collector:.2f}" + (f" error={error}" if error else ""),
                flush=True,
            )


if __name__ == "__main__":
    main()

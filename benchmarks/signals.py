"""What a signal does to a large offline run: time to exit, processes and temporary files left.

Usage: python benchmarks/signals.py [--cases 30000] [--signal TERM|HUP|INT|KILL] [--group]
                                    [--after 3] [--data ../shared/data/ragtruth-dev]

Builds a JSONL dataset of N real RAG outputs (RAGTruth responses, as benchmarks/scale.py does),
starts `ragaliq run -o report.json` on it with the offline judge (which judges on the machine's
cores, in worker processes) in a session of its own, waits until it is judging (its workers are
up and the report is being written) plus ``--after`` seconds, and sends the signal: to the main
process alone, as a CI runner cancelling a step does (SIGTERM), or with ``--group`` to its whole
process group, as a terminal's Ctrl-C does. Prints the seconds from the signal to the exit, the
exit code, the processes of the run still alive at that moment and a second later, and the
temporary files left beside the report; then kills whatever is left. ``--signal KILL`` shows
what no program can clean up after (its temporary file); its workers still end within a second.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from offline_throughput import ragtruth_cases
from tests.integration.processes import session_processes

ROOT = Path(__file__).resolve().parents[1]


def has_workers(pid: int) -> bool:
    return len(session_processes(pid)) > 1


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", type=int, default=30_000)
    parser.add_argument("--signal", choices=("TERM", "HUP", "INT", "KILL"), default="TERM")
    parser.add_argument("--group", action="store_true", help="signal the whole process group")
    parser.add_argument("--after", type=float, default=3.0, help="seconds of judging first")
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared/data/ragtruth-dev")
    args = parser.parse_args()
    signum = getattr(signal, f"SIG{args.signal}")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        rows = ragtruth_cases(args.data, args.cases)
        (folder / "cases.jsonl").write_text(
            "".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8"
        )
        (folder / "ragaliq.yaml").write_text(
            "dataset: cases.jsonl\njudge: {provider: offline, cache: false}\n", encoding="utf-8"
        )
        # stderr to a file, not a pipe: a worker left alive would hold a pipe open.
        log = (folder / "stderr.txt").open("wb")
        proc = subprocess.Popen(
            [sys.executable, "-m", "ragaliq", "run", "-o", "report.json"],
            cwd=folder,
            stdout=subprocess.DEVNULL,
            stderr=log,
            env={**os.environ, "ANTHROPIC_API_KEY": ""},
            start_new_session=True,
        )
        deadline = time.monotonic() + 120
        while not (has_workers(proc.pid) and list(folder.glob(".report.json.*.tmp"))):
            if proc.poll() is not None or time.monotonic() > deadline:
                sys.exit(f"the run ended or never started judging: exit {proc.returncode}")
            time.sleep(0.05)
        time.sleep(args.after)
        started = len(session_processes(proc.pid))
        sent = time.monotonic()
        if args.group:
            os.killpg(proc.pid, signum)
        else:
            os.kill(proc.pid, signum)
        try:
            code = proc.wait(timeout=300)
        except subprocess.TimeoutExpired:
            code = None
        exited = time.monotonic() - sent
        left_at_exit = session_processes(proc.pid)
        time.sleep(1.0)
        left_after = session_processes(proc.pid)
        temporary = sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))
        log.close()
        stderr = (folder / "stderr.txt").read_text(errors="replace").strip()
        for pid in left_after:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        proc.wait()
    target = "process group" if args.group else "main process"
    print(f"{args.cases:,} cases, SIG{args.signal} to the {target} after {args.after:g} s judging")
    print(f"processes of the run when signalled: {started}")
    print(f"seconds to exit: {exited:.2f}" if code is not None else "did not exit in 300 s")
    print(f"exit code: {code}")
    print(f"processes left at exit: {len(left_at_exit)} {left_at_exit}")
    print(f"processes left 1 s later: {len(left_after)} {left_after}")
    print(f"temporary files left: {len(temporary)} {temporary}")
    print(f"last line on stderr: {stderr.splitlines()[-1] if stderr else ''}")


if __name__ == "__main__":
    main()

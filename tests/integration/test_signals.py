"""A CI runner cancelling a step, a closed terminal, Ctrl-C: `ragaliq run` stops cleanly on each.

The run is a real `ragaliq` process judging on the offline judge's worker processes, in a session
of its own so that every process it started can be found afterwards. The figures for a
30,000-case run come from `python benchmarks/signals.py`.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.integration.processes import HAS_PROC, session_processes

pytestmark = pytest.mark.skipif(not HAS_PROC, reason="needs /proc")

HANG_GUARD_S = 60.0
"""Only so that a hang fails the test instead of stalling the suite; never a measure of speed."""


def write_suite(folder: Path, cases: int) -> None:
    context = [
        "Annual plans can be refunded within 14 days of purchase. Monthly plans are not "
        "refundable. Refunds are paid to the original payment method within 5 business days."
    ]
    rows = (
        {
            "id": f"case-{i}",
            "query": f"Can plan {i} be refunded?",
            "context": context,
            "response": f"Plan {i} can be refunded within {i % 30} days, paid in cash.",
        }
        for i in range(cases)
    )
    (folder / "cases.jsonl").write_text(
        "".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8"
    )
    (folder / "ragaliq.yaml").write_text(
        "dataset: cases.jsonl\njudge: {provider: offline, cache: false, concurrency: 2}\n",
        encoding="utf-8",
    )


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("signals")
    write_suite(folder, 20_000)
    return folder


def stop_once_judging(
    proc: subprocess.Popen[bytes],
    signum: int,
    *,
    judging: Callable[[], bool],
    group: bool = False,
) -> int:
    """Signal ``proc`` (or its process group) once ``judging()``; its exit code, once every
    process of its session has ended (any left are killed, and fail the test)."""
    try:
        deadline = time.monotonic() + HANG_GUARD_S
        while not judging():
            assert proc.poll() is None, "the process ended before it was signalled"
            assert time.monotonic() < deadline, "the process never started judging"
            time.sleep(0.02)
        if group:
            os.killpg(proc.pid, signum)
        else:
            os.kill(proc.pid, signum)
        code = proc.wait(timeout=HANG_GUARD_S)
        while session_processes(proc.pid):
            assert time.monotonic() < deadline + HANG_GUARD_S, session_processes(proc.pid)
            time.sleep(0.05)
        return code
    finally:
        for pid in session_processes(proc.pid):
            os.kill(pid, signal.SIGKILL)
        proc.wait()


RUN = ["run", "-o", "report.json"]
GATE = ["gate", "--base", "none", "-o", "report.json", "--comment-out", "comment.md"]


@pytest.mark.parametrize(
    ("command", "name", "group", "code", "said"),
    [
        (RUN, "SIGTERM", False, 143, "terminated by SIGTERM"),
        (RUN, "SIGHUP", False, 129, "terminated by SIGHUP"),
        (RUN, "SIGTERM", True, 143, "terminated by SIGTERM"),
        (RUN, "SIGINT", True, 130, "interrupted"),
        (GATE, "SIGTERM", False, 143, "terminated by SIGTERM"),
    ],
    ids=["run-TERM", "run-HUP", "run-TERM-group", "run-INT-group", "gate-TERM"],
)
def test_a_signal_stops_the_run_its_workers_and_leaves_no_file(
    suite, command, name, group, code, said
):
    (suite / "report.json").write_text("previous", encoding="utf-8")
    temporary = suite / "tmp"  # the process's TMPDIR, where the gate keeps its working files
    temporary.mkdir(exist_ok=True)
    log = (suite / "stderr.txt").open("wb")  # not a pipe: a worker left alive would hold it
    proc = subprocess.Popen(
        [sys.executable, "-m", "ragaliq", *command],
        cwd=suite,
        stdout=subprocess.DEVNULL,
        stderr=log,
        env={**os.environ, "ANTHROPIC_API_KEY": "", "TMPDIR": str(temporary)},
        start_new_session=True,
    )
    try:
        exited = stop_once_judging(
            proc,
            getattr(signal, name),
            group=group,
            judging=lambda: len(session_processes(proc.pid)) >= 3 and any(suite.rglob("*.tmp")),
        )
    finally:
        log.close()
    assert exited == code
    assert sorted(p.name for p in suite.rglob("*.tmp")) == []
    assert list(temporary.iterdir()) == []
    assert (suite / "report.json").read_text(encoding="utf-8") == "previous"
    assert not (suite / "comment.md").exists()
    last = (suite / "stderr.txt").read_text(encoding="utf-8").strip().splitlines()[-1]
    assert last == f"{said}: nothing more was written"


def test_a_cancelled_actions_sigterm_stops_it_as_the_command_line_does(suite, tmp_path):
    """GitHub cancels a job with SIGINT, then SIGTERM; ``docker stop`` sends SIGTERM."""
    (suite / "report.json").unlink(missing_ok=True)
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path),
        "GITHUB_ACTIONS": "true",
        "GITHUB_WORKSPACE": str(suite),
        "GITHUB_EVENT_NAME": "push",
        "GITHUB_EVENT_PATH": str(tmp_path / "event.json"),
        "GITHUB_REPOSITORY": "acme/rag",
        "GITHUB_OUTPUT": str(tmp_path / "output"),
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
        "INPUT_CONFIG": "ragaliq.yaml",
        "INPUT_MODE": "update-baseline",
        "INPUT_COMMENT": "off",
        "INPUT_COMMIT-STATUS": "false",
        "TMPDIR": str(tmp_path),
    }
    (tmp_path / "event.json").write_text("{}", encoding="utf-8")
    log = (tmp_path / "stderr.txt").open("wb")
    proc = subprocess.Popen(
        [sys.executable, "-I", "-m", "ragaliq", "action"],
        cwd=suite,
        stdout=log,
        stderr=subprocess.STDOUT,
        env=env,
        start_new_session=True,
    )
    try:
        exited = stop_once_judging(
            proc, signal.SIGTERM, judging=lambda: len(session_processes(proc.pid)) >= 3
        )
    finally:
        log.close()
    assert exited == 143
    said = (tmp_path / "stderr.txt").read_text(encoding="utf-8")
    assert "terminated by SIGTERM: nothing more was written" in said
    assert (tmp_path / "output").read_text(encoding="utf-8").split("\n")[1] == "false"  # passed
    assert not (suite / ".ragaliq" / "baseline.json").exists()

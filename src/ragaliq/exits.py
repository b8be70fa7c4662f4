"""Exit codes: what a run or a gate means for the CI job; every rule that picks one is here.

A signal that ends a command is one of them: Ctrl-C (SIGINT) exits 130, and SIGTERM and SIGHUP
(which :mod:`ragaliq.signals` turns into a stop like Ctrl-C's) exit 128 plus the signal's number,
as shells report it.
"""

from __future__ import annotations

import signal
from enum import IntEnum
from typing import TYPE_CHECKING

from ragaliq.signals import Terminated
from ragaliq.text.counts import plural

if TYPE_CHECKING:  # only types: the entry point imports this module before anything heavy
    from ragaliq.config import GatePolicy
    from ragaliq.gate import GateDecision
    from ragaliq.metrics import Calibration
    from ragaliq.models import ReportHead, RunReport

__all__ = [
    "ExitCode",
    "calibration_exit_code",
    "gate_exit_code",
    "run_exit_code",
    "run_failures",
    "stopped_exit",
]


class ExitCode(IntEnum):
    """The process exit codes of every command."""

    PASSED = 0
    """The gate passed, or was skipped by policy with a notice."""
    FAILED = 1
    """An evaluator fell below its threshold or regressed, or cases failed to judge."""
    UNJUDGED = 2
    """Nothing could be judged: bad config or dataset, judge unavailable, budget exceeded."""
    INTERRUPTED = 130
    """Ctrl-C, as shells report a process ended by SIGINT."""
    HUNG_UP = 129
    """SIGHUP: the terminal closed."""
    TERMINATED = 143
    """SIGTERM: a CI runner cancelled the step, or ``docker stop``."""


def stopped_exit(stop: KeyboardInterrupt) -> tuple[ExitCode, str]:
    """The exit code and the one line of a command stopped by a signal."""
    if isinstance(stop, Terminated):
        code = ExitCode.HUNG_UP if stop.signum == signal.SIGHUP else ExitCode.TERMINATED
        return code, f"terminated by {signal.Signals(stop.signum).name}: nothing more was written"
    return ExitCode.INTERRUPTED, "interrupted: nothing more was written"


def _unjudged(report: RunReport | ReportHead) -> bool:
    """Nothing could be judged, or the run stopped before every case was."""
    judged = any(s.judged for s in report.summary.evaluators.values())
    return report.stopped_early is not None or not judged


def run_exit_code(
    report: RunReport | ReportHead, policy: GatePolicy, *, shard: bool = False
) -> ExitCode:
    """The exit code of ``ragaliq run`` for a finished report.

    A shard exits 0 once judged: thresholds and case errors apply to the merged report.
    """
    if _unjudged(report):
        return ExitCode.UNJUDGED
    if shard:
        return ExitCode.PASSED
    return ExitCode.FAILED if run_failures(report, policy) else ExitCode.PASSED


def run_failures(report: RunReport | ReportHead, policy: GatePolicy) -> list[str]:
    """Why ``ragaliq run`` fails a judged run; empty when it passes.

    Each evaluator that falls short (below its threshold, or no case could be scored), and the
    cases that failed to judge unless ``gate.on_error: ignore``.
    """
    failures = list(report.summary.shortfalls)
    errors = report.summary.errors
    if errors and policy.on_error == "fail":
        failures.append(f"{plural(errors, 'case')} could not be judged (gate.on_error: fail)")
    return failures


def gate_exit_code(report: RunReport | ReportHead, decision: GateDecision) -> ExitCode:
    """2 when nothing could be judged or the run stopped early, else 0 or 1 by the decision."""
    if _unjudged(report):
        return ExitCode.UNJUDGED
    return ExitCode.PASSED if decision.passed else ExitCode.FAILED


def calibration_exit_code(
    result: Calibration, *, min_kappa: float | None
) -> tuple[ExitCode, str | None]:
    """The exit code of ``ragaliq calibrate``, and why it is not 0."""
    if result.n == 0:
        return ExitCode.UNJUDGED, "no labelled claim could be judged; see the errors above"
    if min_kappa is None:
        return ExitCode.PASSED, None
    kappa = result.binary.kappa
    if kappa != kappa:  # NaN: every label or every verdict in one class
        return ExitCode.FAILED, (
            "the hallucinated-or-not kappa is undefined (every label or every verdict is in one "
            "class), so --min-kappa cannot be checked; label both kinds of claim"
        )
    if kappa < min_kappa:
        return ExitCode.FAILED, (
            f"hallucinated-or-not kappa {kappa:.3f} is below --min-kappa {min_kappa:g}"
        )
    return ExitCode.PASSED, None

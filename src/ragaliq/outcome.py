"""Exit codes: what a run or a gate means for the CI job."""

from __future__ import annotations

from enum import IntEnum
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # only types: the entry point imports this module before anything heavy
    from ragaliq.config import GatePolicy
    from ragaliq.models import RunReport

__all__ = ["ExitCode", "run_exit_code"]


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


def run_exit_code(report: RunReport, policy: GatePolicy) -> ExitCode:
    """The exit code of ``ragaliq run`` for a finished report."""
    judged = any(s.judged for s in report.summary.evaluators.values())
    if report.stopped_early or not judged:
        return ExitCode.UNJUDGED
    if not all(s.passed for s in report.summary.evaluators.values()):
        return ExitCode.FAILED
    if report.summary.errors and policy.on_error == "fail":
        return ExitCode.FAILED
    return ExitCode.PASSED

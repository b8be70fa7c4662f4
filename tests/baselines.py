"""Baselines for tests, recorded the way ragaliq records them: written to a file, read back."""

from __future__ import annotations

import tempfile
from pathlib import Path

from ragaliq.baseline import Baseline, load_baseline, write_baseline
from ragaliq.models import RunReport
from ragaliq.policy import GateRules


def record_baseline(
    report: RunReport,
    *,
    allow_errors: bool = False,
    commit: str | None = None,
    policy: GateRules | None = None,
) -> Baseline:
    """The baseline ``ragaliq`` records for a report held in memory."""
    with tempfile.TemporaryDirectory(prefix="ragaliq-test-") as folder:
        path = Path(folder) / "baseline.json"
        write_baseline(
            path,
            head=report.head,
            cases=iter(report.cases),
            allow_errors=allow_errors,
            commit=commit,
            policy=policy,
        )
        recorded = load_baseline(path)
    assert recorded is not None
    return recorded

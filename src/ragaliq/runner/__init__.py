"""Running a suite: every case judged once, evaluators scored from the shared answers.

- :mod:`~ragaliq.runner.suite`: the cases in order, within the run's bounds;
- :mod:`~ragaliq.runner.case`: one case, each pass its evaluators need asked once;
- :mod:`~ragaliq.runner.passes`: which passes a case needs (the pre-flight estimates the same);
- :mod:`~ragaliq.runner.processes`: a CPU-only judge on the machine's cores;
- :mod:`~ragaliq.runner.settings`: how a run may use its judge, and how it ended.
"""

from __future__ import annotations

from ragaliq.runner.case import UNSTABLE_BELOW, CaseRun, majority_verdicts
from ragaliq.runner.passes import Passes
from ragaliq.runner.processes import MIN_CASES_FOR_PROCESSES
from ragaliq.runner.settings import RunEnd, RunSettings
from ragaliq.runner.suite import run_suite, stream_suite

__all__ = [
    "MIN_CASES_FOR_PROCESSES",
    "UNSTABLE_BELOW",
    "CaseRun",
    "Passes",
    "RunEnd",
    "RunSettings",
    "majority_verdicts",
    "run_suite",
    "stream_suite",
]

"""The GitHub Action's entry (:func:`~ragaliq.action.main.main`); the gate's job is the core's.

- :mod:`ragaliq.ci.job`: the gate on a change, recording and keeping the baseline, the follower;
- :mod:`ragaliq.github`: GitHub's adapter (the event, the inputs, the API).
"""

from __future__ import annotations

from ragaliq.action.main import main
from ragaliq.ci.outputs import DECISION_PATH, REPORT_PATH

__all__ = ["DECISION_PATH", "REPORT_PATH", "main"]

"""Judges: the ``Judge`` protocol, its implementations, and opening the configured one."""

from __future__ import annotations

from ragaliq.judges.base import EstimatingJudge, Judge
from ragaliq.judges.factory import JudgeChoice, JudgeOpener, build_judge, open_judge
from ragaliq.judges.offline import OfflineJudge

__all__ = [
    "EstimatingJudge",
    "Judge",
    "JudgeChoice",
    "JudgeOpener",
    "OfflineJudge",
    "build_judge",
    "open_judge",
]

"""Judges: the ``Judge`` protocol and its implementations."""

from __future__ import annotations

from ragaliq.judges.base import Judge
from ragaliq.judges.factory import JudgeChoice, build_judge
from ragaliq.judges.offline import OfflineJudge

__all__ = ["Judge", "JudgeChoice", "OfflineJudge", "build_judge"]

"""The gate: its rules, the comparison of a run with the baseline, and the decision it makes."""

from __future__ import annotations

from ragaliq.evaluators.hallucination import hallucinated_claims
from ragaliq.gate.compare import Comparison, compare
from ragaliq.gate.decision import (
    CaseFailure,
    ClaimChange,
    EvaluatorDecision,
    EvaluatorStatus,
    Finding,
    GateDecision,
    IrrelevantChunk,
    RegressedCase,
)
from ragaliq.policy import GateRules

__all__ = [
    "CaseFailure",
    "ClaimChange",
    "Comparison",
    "EvaluatorDecision",
    "EvaluatorStatus",
    "Finding",
    "GateDecision",
    "GateRules",
    "IrrelevantChunk",
    "RegressedCase",
    "compare",
    "hallucinated_claims",
]

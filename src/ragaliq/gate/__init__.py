"""The gate: its rules, the comparison of a run with the baseline, and the decision it makes."""

from __future__ import annotations

from ragaliq.gate.compare import HALLUCINATION, compare, hallucinated_claims
from ragaliq.gate.decision import (
    CaseFailure,
    ClaimChange,
    EvaluatorDecision,
    EvaluatorStatus,
    GateDecision,
    IrrelevantChunk,
    RegressedCase,
)
from ragaliq.gate.rules import GateRules

__all__ = [
    "HALLUCINATION",
    "CaseFailure",
    "ClaimChange",
    "EvaluatorDecision",
    "EvaluatorStatus",
    "GateDecision",
    "GateRules",
    "IrrelevantChunk",
    "RegressedCase",
    "compare",
    "hallucinated_claims",
]

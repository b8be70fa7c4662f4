"""RagaliQ Gate: a pre-merge quality gate for RAG systems."""

from __future__ import annotations

from ragaliq.config import GateConfig, load_config
from ragaliq.dataset import load_dataset
from ragaliq.errors import RagaliqError
from ragaliq.models import CaseResult, ClaimVerdict, RunReport, TestCase, Verdict
from ragaliq.writer import DatasetWriter

__all__ = [
    "CaseResult",
    "ClaimVerdict",
    "DatasetWriter",
    "GateConfig",
    "RagaliqError",
    "RunReport",
    "TestCase",
    "Verdict",
    "__version__",
    "load_config",
    "load_dataset",
]

__version__ = "0.1.0"

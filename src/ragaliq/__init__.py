"""RagaliQ Gate: a pre-merge quality gate for RAG systems.

The public names below are imported on first use, so that ``import ragaliq`` (and the command
line's start-up) loads nothing it does not need.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ragaliq import _lazy

if TYPE_CHECKING:
    from ragaliq.config import GateConfig, load_config
    from ragaliq.dataset import load_dataset
    from ragaliq.dataset.writer import DatasetWriter
    from ragaliq.errors import RagaliqError
    from ragaliq.models import CaseResult, ClaimVerdict, RunReport, TestCase, Verdict
    from ragaliq.python_api import evaluate

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
    "evaluate",
    "load_config",
    "load_dataset",
]

from ragaliq._version import __version__

_HOMES = {
    "CaseResult": "ragaliq.models",
    "ClaimVerdict": "ragaliq.models",
    "DatasetWriter": "ragaliq.dataset.writer",
    "GateConfig": "ragaliq.config",
    "RagaliqError": "ragaliq.errors",
    "RunReport": "ragaliq.models",
    "TestCase": "ragaliq.models",
    "Verdict": "ragaliq.models",
    "evaluate": "ragaliq.python_api",
    "load_config": "ragaliq.config",
    "load_dataset": "ragaliq.dataset",
}


__getattr__, __dir__ = _lazy.lazy_exports(__name__, _HOMES, globals())

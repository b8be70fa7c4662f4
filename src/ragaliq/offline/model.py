"""The offline judge's claim model, one per kind of case.

A logistic regression over a claim's grounding features, shipped as ``model.json`` beside this
module and trained by ``scripts/train_offline.py``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Literal

from ragaliq.offline.context import ContextIndex
from ragaliq.offline.features import FEATURES

MODEL_RESOURCE = "model.json"
"""The claim model, shipped in this package next to this module."""


@dataclass(frozen=True)
class ClaimModel:
    """The logistic regression that turns a claim's features into P(hallucinated)."""

    means: tuple[float, ...]
    stds: tuple[float, ...]
    bias: float
    weights: tuple[float, ...]
    threshold: float
    """A grounded claim at or above this probability is not SUPPORTED."""

    def probability(self, features: Sequence[float]) -> float:
        """P(hallucinated) for one claim's feature vector."""
        z = self.bias
        for x, mean, std, weight in zip(features, self.means, self.stds, self.weights, strict=True):
            z += weight * (x - mean) / std
        return 1 / (1 + math.exp(-z)) if z >= 0 else math.exp(z) / (1 + math.exp(z))


CaseKind = Literal["answer", "summary", "record"]


def case_kind(index: ContextIndex) -> CaseKind:
    """What kind of case a context makes, which decides the model and thresholds that apply.

    ``record`` when the context holds a JSON record; otherwise ``answer`` when there is a
    question and ``summary`` when there is none (a response restating the context as a whole).
    """
    if index.records:
        return "record"
    return "answer" if index.asked else "summary"


def model_of_kind(kind: str) -> str:
    """The weights a kind of case uses: answers and summaries share the prose model."""
    return "record" if kind == "record" else "prose"


@dataclass(frozen=True)
class Models:
    """The claim model, with its thresholds, for each kind of case."""

    answer: ClaimModel
    summary: ClaimModel
    record: ClaimModel

    def for_index(self, index: ContextIndex) -> ClaimModel:
        """The model for a context."""
        model: ClaimModel = getattr(self, case_kind(index))
        return model


@cache
def load_model() -> Models:
    """The shipped claim models.

    Raises:
        RuntimeError: the file does not match the features this code computes (a packaging bug).
    """
    package = resources.files("ragaliq.offline")
    data = json.loads(package.joinpath(MODEL_RESOURCE).read_text(encoding="utf-8"))
    if tuple(data["features"]) != FEATURES:
        raise RuntimeError(
            f"{MODEL_RESOURCE} was trained on other features than the judge computes; "
            "run scripts/train_offline.py"
        )
    models = {}
    for kind, decision in data["kinds"].items():
        m = data["models"][decision["model"]]
        models[kind] = ClaimModel(
            means=tuple(m["means"]),
            stds=tuple(m["stds"]),
            bias=float(m["bias"]),
            weights=tuple(m["weights"]),
            threshold=float(decision["threshold"]),
        )
    return Models(answer=models["answer"], summary=models["summary"], record=models["record"])


MODEL_PATH = Path(__file__).with_name(MODEL_RESOURCE)
"""Where scripts/train_offline.py writes the model in a source checkout."""

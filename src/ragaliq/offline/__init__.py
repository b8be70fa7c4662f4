"""The offline judge: deterministic verdicts from grounding features, with no network or key."""

from __future__ import annotations

from ragaliq.offline.judge import CONFIDENT, OFFLINE_JUDGE_NAME, OfflineJudge
from ragaliq.offline.model import case_kind, load_model, model_of_kind
from ragaliq.offline.sentence_claims import extract_sentence_claims

__all__ = [
    "CONFIDENT",
    "OFFLINE_JUDGE_NAME",
    "OfflineJudge",
    "case_kind",
    "extract_sentence_claims",
    "load_model",
    "model_of_kind",
]

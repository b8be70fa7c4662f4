"""Retrieval without a judge: hit rate, recall at k, MRR and nDCG against each case's labels.

A case names what its retrieval should find (``relevant_chunks``, by chunk id, or
``relevant_sources``, by document id); each evaluator scores the retrieved chunks' ids (or
sources) in rank order against those labels, with the formulas of
:mod:`ragaliq.evaluators.ranking`, cut at the option ``k`` (every retrieved chunk by default).
No judge is asked anything, so they cost nothing and carry no judge's noise.

A case without labels, with an empty list of them, or whose labels grade every id 0, is skipped
with its reason, never scored. They have no absolute threshold by default (0): they are held to
the baseline by ``max_drop`` and the paired statistics, like every evaluator.
"""

from __future__ import annotations

from abc import abstractmethod
from typing import Annotated, Any, ClassVar

from pydantic import Field

from ragaliq._fields import Count, Flag
from ragaliq.evaluators.base import CaseJudgement, Evaluator, EvaluatorOptions, VerdictLabel
from ragaliq.evaluators.ranking import Ranking, hit_rate, mrr, ndcg, recall_at_k
from ragaliq.models import CaseResult, ChunkRef, EvaluationResult, Labels
from ragaliq.text.counts import plural

__all__ = [
    "HitRateEvaluator",
    "MrrEvaluator",
    "NdcgEvaluator",
    "RecallAtKEvaluator",
    "RetrievalOptions",
    "rank_items",
]


class RetrievalOptions(EvaluatorOptions):
    """A retrieval metric: off unless written; scored on the first ``k`` chunks."""

    enabled: Flag = False
    k: Annotated[Count, Field(ge=1)] | None = None
    """The ranks scored: the first k retrieved chunks; every retrieved chunk when left out."""


def rank_items(
    retrieved: tuple[ChunkRef, ...], labels: Labels, k: int | None
) -> tuple[Ranking, str]:
    """The retrieval ranked against the labels, and what the items are called (``chunk``)."""
    ranking = Ranking.of(labels.ranked_items(retrieved), labels.relevant, k)
    return ranking, "chunk" if labels.level == "chunk" else "document"


def _unlabelled(labels: Labels | None) -> str | None:
    """Why a case's labels give nothing to score, if they do not."""
    if labels is None:
        return (
            "The case names no relevant_chunks or relevant_sources, so there is nothing its "
            "retrieval had to find."
        )
    if not labels.grades:
        return f"The case's {labels.field} is empty, so there is nothing its retrieval had to find."
    if not labels.relevant:
        return (
            f"The case's {labels.field} grades every id 0 (not relevant), so there is nothing its "
            "retrieval had to find."
        )
    return None


class _RankEvaluator(Evaluator[RetrievalOptions]):
    """One rank metric of the retrieved chunks against the case's labels; no judge call."""

    version: ClassVar[str] = "1"
    default_threshold: ClassVar[float] = 0.0
    Options = RetrievalOptions

    @staticmethod
    @abstractmethod
    def measure(ranking: Ranking) -> float:
        """The metric of one ranking."""

    def evaluate(self, judgement: CaseJudgement) -> EvaluationResult:
        return self.score(judgement.case.chunk_refs, judgement.case.labels)

    def score(self, retrieved: tuple[ChunkRef, ...], labels: Labels | None) -> EvaluationResult:
        """The metric of ``retrieved`` (ids and sources, in rank order) under ``labels``.

        Skipped, with the reason, when the labels name nothing relevant.
        """
        why = _unlabelled(labels)
        if why is not None:
            return self.skipped(why)
        assert labels is not None
        ranking, noun = rank_items(retrieved, labels, self.settings.k)
        within = f"the first {ranking.cut}" if self.settings.k is not None else "the"
        ranks = sorted(ranking.found.values())
        if ranks:
            shown = ", ".join(str(rank) for rank in ranks)
            reasoning = (
                f"{len(ranks):,} of {plural(ranking.relevant, f'relevant {noun}')} "
                f"{'is' if len(ranks) == 1 else 'are'} among {within} retrieved chunks "
                f"({'rank' if len(ranks) == 1 else 'ranks'} {shown})."
            )
        else:
            reasoning = (
                f"None of the {plural(ranking.relevant, f'relevant {noun}')} is among {within} "
                "retrieved chunks."
            )
        details: dict[str, Any] = {"k": self.settings.k, "relevant": ranking.relevant}
        return self.result(self.measure(ranking), reasoning, details)

    def describe_shortfall(self, case: CaseResult, *, label: VerdictLabel) -> list[str]:
        """The relevant items not retrieved within ``k``, most relevant first."""
        labels = case.labels
        if labels is None or _unlabelled(labels) is not None:
            return []
        ranking, noun = rank_items(case.retrieved, labels, self.settings.k)
        within = f"the first {ranking.cut}" if self.settings.k is not None else "the"
        relevant = labels.relevant
        missed = sorted((i for i in relevant if i not in ranking.found), key=lambda i: -relevant[i])
        return [
            f"relevant {noun} {item} (relevance {relevant[item]}) is not among {within} "
            "retrieved chunks"
            for item in missed
        ]


class HitRateEvaluator(_RankEvaluator):
    """1 when a relevant chunk (or document) is among the first k retrieved, else 0."""

    name: ClassVar[str] = "hit_rate"
    measure = staticmethod(hit_rate)


class RecallAtKEvaluator(_RankEvaluator):
    """The share of the relevant chunks (or documents) among the first k retrieved."""

    name: ClassVar[str] = "recall_at_k"
    measure = staticmethod(recall_at_k)


class MrrEvaluator(_RankEvaluator):
    """1 / the rank of the first relevant chunk (or document) within k; 0 without one."""

    name: ClassVar[str] = "mrr"
    measure = staticmethod(mrr)


class NdcgEvaluator(_RankEvaluator):
    """nDCG at k with graded relevance: gain 2^rel - 1, log2 discount, the ideal over all labels."""

    name: ClassVar[str] = "ndcg"
    measure = staticmethod(ndcg)

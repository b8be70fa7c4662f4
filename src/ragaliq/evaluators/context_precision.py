"""Context precision: whether the retrieved chunks are relevant to the query, relevant ones first.

Each chunk gets a relevance rating (all of a case's chunks in one judge call, cached like the
rest; the offline judge's rating is a heuristic and says so), and the score is the rank-weighted
precision ``sum(relevant_i / i) / sum(1 / i)`` over the chunks in retrieval order.

Why this and not mean average precision (as RAGAS): average precision ignores irrelevant chunks
ranked after the last relevant one, but those still cost prompt tokens and distract the model;
the rank-weighted precision counts every irrelevant chunk, more so the higher it is ranked. All
relevant scores 1.0, none 0.0; a single chunk scores its own rating; a case without chunks is
skipped (there is nothing to rate), never 0 or 1.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from ragaliq._fields import Flag
from ragaliq.evaluators._claims import all_are, of_total_are
from ragaliq.evaluators.base import CaseJudgement, Evaluator, EvaluatorOptions, VerdictLabel
from ragaliq.evaluators.findings import Before, Emit, Finding, FindingKind
from ragaliq.evaluators.questions import CHUNKS, Question
from ragaliq.models import CaseResult, EvaluationResult

__all__ = [
    "ContextPrecisionEvaluator",
    "ContextPrecisionOptions",
    "IrrelevantChunk",
    "IrrelevantChunks",
    "rank_weighted_precision",
]


class ContextPrecisionOptions(EvaluatorOptions):
    """Context precision: are the chunks relevant, relevant ones first (off unless written)."""

    enabled: Flag = False


def rank_weighted_precision(relevant: list[bool]) -> float:
    """``sum(relevant_i / i) / sum(1 / i)`` over ranks ``i`` from 1."""
    weights = [1 / rank for rank in range(1, len(relevant) + 1)]
    return sum(w for w, r in zip(weights, relevant, strict=True) if r) / sum(weights)


class IrrelevantChunk(Finding):
    """A retrieved chunk the judge rated irrelevant to the query."""

    noun: ClassVar[str] = "irrelevant chunk"

    rank: int
    """Its place in the retrieval's order, from 1."""
    reason: str = ""

    @property
    def text(self) -> str:
        return f"chunk {self.rank}" + (f": {self.reason}" if self.reason else "")


class IrrelevantChunks(FindingKind):
    """The chunks of this run rated irrelevant to their query."""

    name: ClassVar[str] = "irrelevant_chunks"
    lists: ClassVar[Mapping[str, type[Finding]]] = {"irrelevant_chunks": IrrelevantChunk}

    def find(self, case: CaseResult, before: Before | None, *, first_run: bool, emit: Emit) -> None:
        for rank, rating in enumerate(case.chunks, start=1):
            if not rating.relevant:
                emit(
                    "irrelevant_chunks",
                    IrrelevantChunk(
                        case_id=case.id, query=case.query, rank=rank, reason=rating.reason
                    ),
                )


class ContextPrecisionEvaluator(Evaluator[ContextPrecisionOptions]):
    """The rank-weighted share of relevant chunks."""

    name: ClassVar[str] = "context_precision"
    version: ClassVar[str] = "1"
    default_threshold: ClassVar[float] = 0.6
    questions: ClassVar[tuple[Question[Any], ...]] = (CHUNKS,)
    Options = ContextPrecisionOptions
    findings = (IrrelevantChunks,)

    def describe_shortfall(self, case: CaseResult, *, label: VerdictLabel) -> list[str]:
        """The chunks judged not relevant to the query, by rank."""
        return [
            f"chunk {rank} is not relevant: {r.reason}"
            for rank, r in enumerate(case.chunks, start=1)
            if not r.relevant
        ]

    def evaluate(self, judgement: CaseJudgement) -> EvaluationResult:
        ratings = judgement.chunks or ()
        if not ratings:
            return self.skipped("The case has no retrieved chunks to rate.")
        relevant = [r.relevant for r in ratings]
        irrelevant = [rank for rank, r in enumerate(relevant, start=1) if not r]
        heuristic = " (a heuristic rating)" if any(r.heuristic for r in ratings) else ""
        if irrelevant:
            ranks = ", ".join(str(rank) for rank in irrelevant)
            reasoning = (
                f"{of_total_are(len(irrelevant), len(ratings), 'chunk')} not relevant to the query "
                f"({'rank' if len(irrelevant) == 1 else 'ranks'} {ranks}){heuristic}."
            )
        else:
            reasoning = f"{all_are(len(ratings), 'chunk')} relevant to the query{heuristic}."
        return self.result(
            rank_weighted_precision(relevant),
            reasoning,
            {"chunks": len(ratings), "irrelevant_ranks": irrelevant},
        )

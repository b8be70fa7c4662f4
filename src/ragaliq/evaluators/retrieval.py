"""Retrieval without a judge: hit rate, recall at k, MRR and nDCG against each case's labels.

A case names what its retrieval should find (``relevant_chunks``, by chunk id, or
``relevant_sources``, by document id); each evaluator scores the retrieved chunks' ids (or
sources) in rank order against those labels, with the formulas of
:mod:`ragaliq.evaluators.ranking`, cut at the option ``k`` (every retrieved chunk by default).
No judge is asked anything, so they cost nothing and carry no judge's noise.

A case without labels, with an empty list of them, or whose labels grade every id 0, is skipped
with its reason, never scored. They have no absolute threshold by default (0): they are held to
the baseline by ``max_drop`` and the paired statistics, like every evaluator.

The labels are part of the bar (:class:`RetrievedRelevant`): the baseline keeps each case's
labels and the rank of each relevant item its retrieval found, however deep; a later run is
scored against the baseline's labels (a change to them is a proposal, applied once merged), and
the comparison lists the relevant items it no longer retrieves within ``k`` (lost), the ones it
newly finds, and the ones whose rank moved.

For chunk labels the baseline also keeps a digest of each relevant chunk's text, so that a notice
says which side changed before it suspects the labels: the chunk's text (same id, other text),
its id (its text retrieved under another id), or the ranking (same id and text, ranked past ``k``
or not retrieved at all).
"""

from __future__ import annotations

import hashlib
from abc import abstractmethod
from collections.abc import Mapping
from typing import Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from ragaliq._fields import Count, Flag
from ragaliq.evaluators.base import CaseJudgement, Evaluator, EvaluatorOptions, VerdictLabel
from ragaliq.evaluators.findings import Before, Emit, Finding, FindingKind
from ragaliq.evaluators.ranking import Ranking, hit_rate, mrr, ndcg, recall_at_k
from ragaliq.models import CaseResult, ChunkRef, EvaluationResult, Labels
from ragaliq.text.counts import plural

__all__ = [
    "FoundChunk",
    "HitRateEvaluator",
    "LostChunk",
    "MovedChunk",
    "MrrEvaluator",
    "NdcgEvaluator",
    "RecallAtKEvaluator",
    "RetrievalChange",
    "RetrievalKept",
    "RetrievalOptions",
    "RetrievedRelevant",
    "rank_items",
    "text_digest",
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


class RetrievalChange(Finding):
    """A relevant chunk (or document) the change retrieves differently within ``k``."""

    item: str
    """The chunk's id, or the document's."""
    level: Literal["chunk", "source"]
    relevance: int
    """Its grade under the labels of the bar (the baseline's)."""
    rank_before: int | None
    """Its rank in the baseline's retrieval, however deep; None when it was not retrieved."""
    rank_after: int | None
    """Its rank in this run's retrieval; None when it is not retrieved at all."""
    k: int | None
    """The ranks that count; None for every retrieved chunk."""

    @property
    def noun_of_item(self) -> str:
        return "chunk" if self.level == "chunk" else "document"

    def _rank(self, rank: int | None) -> str:
        if rank is None:
            return "not retrieved"
        past = self.k is not None and rank > self.k
        return f"rank {rank}" + (f" (past k={self.k})" if past else "")

    def _within(self, rank: int | None) -> bool:
        return rank is not None and (self.k is None or rank <= self.k)

    @property
    def headline(self) -> str:
        """``lost``, ``found``, or the way it moved: ``up``, ``down``."""
        if not self._within(self.rank_before):
            return "found"
        if not self._within(self.rank_after):
            return "lost"
        assert self.rank_before is not None and self.rank_after is not None
        return "down" if self.rank_after > self.rank_before else "up"

    @property
    def text(self) -> str:
        return (
            f"{self.noun_of_item} {self.item} (relevance {self.relevance}): "
            f"{self._rank(self.rank_before)} → {self._rank(self.rank_after)}"
        )


class LostChunk(RetrievalChange):
    """A relevant item the baseline retrieved within ``k`` and this run does not."""

    title: ClassVar[str] = "Relevant chunks lost"
    noun: ClassVar[str] = "lost relevant chunk"
    worst_first: ClassVar[bool] = True
    weight: ClassVar[int] = 2

    def severity(self) -> tuple[Any, ...]:
        return (-self.relevance, self.rank_before or 0, self.case_id, self.item)


class FoundChunk(RetrievalChange):
    """A relevant item this run retrieves within ``k`` and the baseline did not."""

    title: ClassVar[str] = "Relevant chunks newly found"
    noun: ClassVar[str] = "newly found relevant chunk"


class MovedChunk(RetrievalChange):
    """A relevant item both retrieve within ``k``, at another rank."""

    title: ClassVar[str] = "Relevant chunks at another rank"
    noun: ClassVar[str] = "moved relevant chunk"
    worst_first: ClassVar[bool] = True

    def severity(self) -> tuple[Any, ...]:
        moved = (self.rank_after or 0) - (self.rank_before or 0)
        return (-moved, self.case_id, self.item)


class RetrievalKept(BaseModel):
    """What the baseline keeps of a case's retrieval: its labels and what it found."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    labels: Labels | None = None
    """The case's labels when the baseline was recorded; None when it had none."""
    found: dict[str, int] = Field(default_factory=dict)
    """Each relevant item retrieved, and its rank, however deep: a later run cuts both at its
    ``k``, and names the rank a newly found item had."""
    texts: dict[str, str] = Field(default_factory=dict)
    """For chunk labels: each relevant chunk retrieved, and the digest of its text."""


def text_digest(text: str) -> str:
    """A chunk's text as a run keeps it: a short digest."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def _texts(case: CaseResult) -> dict[str, str]:
    """Each retrieved chunk's id, and the digest of its text (the first, for a repeated id)."""
    texts: dict[str, str] = {}
    for ref, digest in zip(case.retrieved, case.retrieved_texts, strict=False):
        if ref.id is not None:
            texts.setdefault(ref.id, digest)
    return texts


def _cut(case: CaseResult) -> tuple[bool, int | None]:
    """Whether a retrieval metric scored the case, and the ranks that count for listing.

    The largest ``k`` of the metrics the run has (None, every chunk, when one counts them all):
    a relevant item whose rank changes a metric's score moves within the largest ``k``, or
    crosses it, so it is listed as moved, lost or found.
    """
    ks = [
        r.details.get("k")
        for name, r in case.results.items()
        if name in _METRICS and r.status != "error"
    ]
    if not ks:
        return False, None
    return True, None if None in ks else max(k for k in ks if k is not None)


def _ranks(retrieved: tuple[ChunkRef, ...], labels: Labels) -> dict[str, int]:
    """The rank each relevant item is first retrieved at, however deep."""
    relevant = labels.relevant
    ranks: dict[str, int] = {}
    for rank, item in enumerate(labels.ranked_items(retrieved), start=1):
        if item is not None and item in relevant:
            ranks.setdefault(item, rank)
    return ranks


def _within(ranks: Mapping[str, int], k: int | None) -> dict[str, int]:
    return {item: rank for item, rank in ranks.items() if k is None or rank <= k}


class RetrievedRelevant(FindingKind):
    """The relevant items a change stopped retrieving within ``k``, found anew, or moved.

    The baseline keeps each case's labels and what its retrieval found; a later run is held to
    those labels (its own, when they differ, are a proposal shown in a notice and applied once
    merged).
    """

    name: ClassVar[str] = "retrieval"
    lists: ClassVar[Mapping[str, type[Finding]]] = {
        "lost_chunks": LostChunk,
        "found_chunks": FoundChunk,
        "moved_chunks": MovedChunk,
    }
    kept: ClassVar[Any] = RetrievalKept

    def __init__(self) -> None:
        self._proposals: list[tuple[str, Labels | None, Labels | None]] = []
        self._proposed = 0
        self._unkept = 0
        self._causes: list[str] = []
        """Why relevant chunks changed, the first :data:`_SHOWN` of them."""
        self._caused = 0
        self._stale = False
        """Whether a relevant chunk's id or text changed: the labels may no longer fit."""

    @classmethod
    def keep(cls, case: CaseResult) -> RetrievalKept | None:
        scored, _ = _cut(case)
        if not scored:
            return None
        labels = case.labels
        found = _ranks(case.retrieved, labels) if labels is not None else {}
        texts = _texts(case) if labels is not None and labels.level == "chunk" else {}
        return RetrievalKept(
            labels=labels, found=found, texts={i: t for i, t in texts.items() if i in found}
        )

    def as_decided(
        self, case: CaseResult, before: Before, thresholds: Mapping[str, float]
    ) -> CaseResult:
        """The case's retrieval scored against the baseline's labels, where its own differ."""
        kept = before.kept
        if not isinstance(kept, RetrievalKept) or kept.labels == case.labels:
            return case
        results = dict(case.results)
        for name, result in case.results.items():
            metric = _METRICS.get(name)
            if metric is None or result.status == "error":
                continue
            threshold = thresholds.get(name)
            evaluator = metric(k=result.details.get("k"), threshold=threshold)
            results[name] = evaluator.score(case.retrieved, kept.labels)
        return case.model_copy(update={"results": results, "labels": kept.labels})

    def find(self, case: CaseResult, before: Before | None, *, first_run: bool, emit: Emit) -> None:
        scored, k = _cut(case)
        if not scored or before is None:
            return
        kept = before.kept
        if not isinstance(kept, RetrievalKept):
            self._unkept += 1
            return
        if kept.labels != case.labels:
            self._proposed += 1
            if len(self._proposals) < _SHOWN:
                self._proposals.append((case.id, kept.labels, case.labels))
        if kept.labels is None or not kept.labels.relevant:
            return
        ranks = _ranks(case.retrieved, kept.labels)
        was, now = _within(kept.found, k), _within(ranks, k)
        relevant = kept.labels.relevant

        def change(entry: type[RetrievalChange], item: str) -> RetrievalChange:
            assert kept is not None and kept.labels is not None
            return entry(
                case_id=case.id,
                query=case.query,
                item=item,
                level=kept.labels.level,
                relevance=relevant.get(item, 0),
                rank_before=kept.found.get(item),
                rank_after=ranks.get(item),
                k=k,
            )

        for item in was:
            if item not in now:
                emit("lost_chunks", change(LostChunk, item))
            elif now[item] != was[item]:
                emit("moved_chunks", change(MovedChunk, item))
        for item in now:
            if item not in was:
                emit("found_chunks", change(FoundChunk, item))
        self._explain(case, kept, ranks, lost=[item for item in was if item not in now])

    def _explain(
        self, case: CaseResult, kept: RetrievalKept, ranks: Mapping[str, int], lost: list[str]
    ) -> None:
        """Which side changed for each relevant chunk whose text or id changed, or that was lost.

        Only where the baseline kept the chunk's text, and this run has its chunks' texts.
        """
        if not kept.texts or not case.retrieved_texts:
            return
        texts = _texts(case)
        ids = {digest: chunk_id for chunk_id, digest in reversed(texts.items())}
        for item, before in kept.texts.items():
            after = texts.get(item)
            renamed = ids.get(before)
            stale = True
            if after is not None and after != before:
                cause = f"chunk {item}'s text changed since the baseline"
            elif after is None and renamed is not None:
                cause = f"chunk {item}'s text is retrieved as {renamed}: its id changed"
            elif item not in lost:
                continue
            elif after is None:
                stale = False
                cause = f"neither chunk {item} nor its text is retrieved: the ranking dropped it"
            else:
                stale = False
                cause = (
                    f"chunk {item} has the id and text it had, at rank {ranks[item]}: the "
                    "ranking moved it"
                )
            self._stale |= stale
            self._caused += 1
            if len(self._causes) < _SHOWN:
                self._causes.append(f"{case.id}: {cause}")

    def notices(self) -> list[str]:
        notices = []
        if self._caused:
            more = self._caused - len(self._causes)
            notices.append(
                f"What changed for {plural(self._caused, 'relevant chunk')} the baseline "
                f"retrieved: {'; '.join(self._causes)}"
                + (f"; ... and {more:,} more" if more else "")
                + (
                    ". Where a chunk's id or text changed, the labels may no longer fit the "
                    "chunking: check that they name the chunks that hold the answers."
                    if self._stale
                    else ". No chunk's id or text is seen to have changed, so the labels are "
                    "not in question: the retrieval ranks the chunks differently."
                )
            )
        if self._proposed:
            shown = "; ".join(_proposal(*p) for p in self._proposals)
            more = self._proposed - len(self._proposals)
            notices.append(
                f"This change proposes new relevance labels for "
                f"{plural(self._proposed, 'case')} ({shown}"
                + (f"; ... and {plural(more, 'more case')}" if more else "")
                + "). Labels are part of the bar: until the change is merged and the baseline "
                "updated, its retrieval is scored against the baseline's labels."
            )
        if self._unkept:
            notices.append(
                f"The baseline keeps no relevance labels for {plural(self._unkept, 'case')} "
                "the retrieval metrics scored (it was recorded before they were on, or by an "
                "earlier version), so those cases are scored against their own labels and no "
                "lost chunk is listed for them; record the baseline on main again to hold "
                "later changes to the labels."
            )
        return notices


_SHOWN = 3
"""Cases whose proposed labels a notice spells out; the rest are counted."""
_IDS_SHOWN = 5
"""Changed ids a notice spells out per case; the rest are counted."""


def _proposal(case_id: str, before: Labels | None, after: Labels | None) -> str:
    """``refunds: relevant_chunks +doc-9, -doc-2, doc-3 1 → 3``, at most :data:`_IDS_SHOWN` ids."""
    if before is None or after is None or before.level != after.level:
        was = "none" if before is None else before.field
        now = "none" if after is None else after.field
        return f"{case_id}: {was} → {now}"
    added = [f"+{i}" for i in after.grades if i not in before.grades]
    removed = [f"-{i}" for i in before.grades if i not in after.grades]
    regraded = [
        f"{i} {before.grades[i]} → {after.grades[i]}"
        for i in after.grades
        if i in before.grades and before.grades[i] != after.grades[i]
    ]
    changes = [*added, *removed, *regraded]
    more = len(changes) - _IDS_SHOWN
    shown = ", ".join(changes[:_IDS_SHOWN])
    if more > 0:
        shown += f", ... and {plural(more, 'more id')}"
    return f"{case_id}: {after.field} {shown}"


class _RankEvaluator(Evaluator[RetrievalOptions]):
    """One rank metric of the retrieved chunks against the case's labels; no judge call."""

    version: ClassVar[str] = "1"
    default_threshold: ClassVar[float] = 0.0
    Options = RetrievalOptions
    findings = (RetrievedRelevant,)

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
            return self.skipped(why).model_copy(update={"details": {"k": self.settings.k}})
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
    """1 when a relevant chunk (or document) is among the first k retrieved."""

    name: ClassVar[str] = "hit_rate"
    measure = staticmethod(hit_rate)


class RecallAtKEvaluator(_RankEvaluator):
    """The share of the relevant chunks among the first k retrieved."""

    name: ClassVar[str] = "recall_at_k"
    measure = staticmethod(recall_at_k)


class MrrEvaluator(_RankEvaluator):
    """1 / the rank of the first relevant chunk within k; 0 without one."""

    name: ClassVar[str] = "mrr"
    measure = staticmethod(mrr)


class NdcgEvaluator(_RankEvaluator):
    """nDCG at k: gain 2^rel - 1, log2 discount, the ideal over all the labels."""

    name: ClassVar[str] = "ndcg"
    version: ClassVar[str] = "2"
    """2: the ideal ranking over every labelled item, not only those retrieved."""
    measure = staticmethod(ndcg)


_METRICS: dict[str, type[_RankEvaluator]] = {
    e.name: e for e in (HitRateEvaluator, RecallAtKEvaluator, MrrEvaluator, NdcgEvaluator)
}
"""The retrieval metrics by name: the results a case's retrieval is scored in."""

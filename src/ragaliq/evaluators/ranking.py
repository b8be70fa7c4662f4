"""Rank metrics of one retrieval against its labels: hit rate, recall at k, MRR and nDCG.

A retrieval is read as the item each retrieved chunk stands for (its id, or its document's id),
in rank order, cut at ``k`` (every retrieved chunk when ``k`` is None). An item counts once, at
its first rank: a later copy is irrelevant. A labelled item never retrieved counts against recall
and nDCG. With ``rel_i`` the grade of the item at rank ``i`` (0 when it is not labelled relevant)
and ``R`` the labelled items of grade 1 or more:

- hit rate: 1 when some ``rel_i > 0`` for ``i <= k``, else 0;
- recall at k: ``|{i <= k: rel_i > 0}| / R``;
- MRR: ``1 / i`` for the first ``i <= k`` with ``rel_i > 0``, else 0;
- nDCG: ``DCG / IDCG`` with ``DCG = sum_{i <= k} (2^rel_i - 1) / log2(i + 1)`` and IDCG the same
  sum over the ideal ranking of every labelled item (grades in decreasing order), cut at ``k``
  when it is set: with ``k`` unset, a short list is measured against every labelled item, so
  one that retrieves 1 of 3 relevant items scores below 1.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

__all__ = ["Ranking", "hit_rate", "mrr", "ndcg", "recall_at_k"]


@dataclass(frozen=True, kw_only=True)
class Ranking:
    """A retrieval as the rank metrics read it: the grade at each rank within the cut."""

    grades: tuple[int, ...]
    """The grade of the item at each rank from 1, up to the cut (0: not relevant, a repeat, or
    a chunk that stands for nothing)."""
    ideal: tuple[int, ...]
    """Every relevant label's grade, highest first: the best a retrieval could do."""
    cut: int
    """The ranks counted: ``k``, or every retrieved chunk."""
    k: int | None
    """The option ``k``; None for every retrieved chunk (the ideal ranking is then uncut)."""
    found: dict[str, int]
    """Each relevant item retrieved within the cut, and its rank."""

    @classmethod
    def of(cls, items: Sequence[str | None], relevant: Mapping[str, int], k: int | None) -> Ranking:
        """The ranking of ``items`` (rank order, repeats already None) under ``relevant`` labels.

        ``relevant`` names at least one item (a case without one is not scored).
        """
        cut = len(items) if k is None else k
        found: dict[str, int] = {}
        grades = []
        for rank, item in enumerate(items[:cut], start=1):
            grade = relevant.get(item, 0) if item is not None else 0
            grades.append(grade)
            if grade:
                found[item] = rank  # type: ignore[index]  # a grade means an item
        return cls(
            grades=tuple(grades),
            ideal=tuple(sorted(relevant.values(), reverse=True)),
            cut=cut,
            k=k,
            found=found,
        )

    @property
    def relevant(self) -> int:
        """How many items are labelled relevant."""
        return len(self.ideal)


def hit_rate(ranking: Ranking) -> float:
    """1 when a relevant item is within the cut, else 0."""
    return 1.0 if ranking.found else 0.0


def recall_at_k(ranking: Ranking) -> float:
    """The share of the relevant items retrieved within the cut."""
    return len(ranking.found) / ranking.relevant


def mrr(ranking: Ranking) -> float:
    """The reciprocal rank of the first relevant item within the cut; 0 when there is none."""
    return 1.0 / min(ranking.found.values()) if ranking.found else 0.0


def _dcg(grades: Sequence[int]) -> float:
    return math.fsum(
        (2.0**grade - 1.0) / math.log2(rank + 1) for rank, grade in enumerate(grades, start=1)
    )


def ndcg(ranking: Ranking) -> float:
    """The discounted gain within the cut over the ideal ranking's, over ``k`` or every label."""
    ideal = _dcg(ranking.ideal if ranking.k is None else ranking.ideal[: ranking.k])
    return _dcg(ranking.grades) / ideal

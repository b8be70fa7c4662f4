"""Which questions one case asks the judge, and when: derived once, for the run and the estimate.

A case asks each question some evaluator that can judge it declares, once (an evaluator that
cannot judge a blank response or query asks nothing). The claims come first and are verified
second: when a question reads the claims, the questions that read the context wait for them, so
that the judge asks them all in one call over the context; the others go first. Without such a
question, all go at once. The runner asks these (:mod:`ragaliq.runner.case`); the pre-flight
estimates the same ones (:mod:`ragaliq.preflight`), so the two cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ragaliq.evaluators.base import Evaluator
from ragaliq.evaluators.questions import EXTRACT, Answers, Question, Questions
from ragaliq.judges.questions import answered_without_judge
from ragaliq.models import TestCase

__all__ = ["Ask", "Passes", "needed_by", "planned_asks"]

Ask = tuple[tuple[Question[Any], ...], int]
"""Questions asked together, and the repetition they are asked in (``judge.repeat``)."""


def needed_by(evaluator: type[Evaluator[Any]] | Evaluator[Any]) -> tuple[Question[Any], ...]:
    """The questions an evaluator's score rests on: its own, after the claims they read."""
    questions = evaluator.questions
    if any("claims" in q.reads for q in questions) and EXTRACT not in questions:
        return (EXTRACT, *questions)
    return questions


@dataclass(frozen=True, kw_only=True)
class Passes:
    """The questions one case asks of the judge, in two stages."""

    first: tuple[Question[Any], ...]
    """Asked at once: everything, unless some question reads the claims; then what does not
    wait for them (the claims themselves, and what reads only the query and the response)."""
    second: tuple[Question[Any], ...]
    """Asked once the claims are known: what reads them, and what reads the context with them."""
    unjudgeable: dict[str, str]
    """Evaluators that cannot judge this case, and why (a blank response or query)."""

    @classmethod
    def of(cls, case: TestCase, evaluators: Sequence[Evaluator[Any]]) -> Passes:
        """What the evaluators that can judge ``case`` ask of the judge for it."""
        blank = {e.name: why for e in evaluators if (why := e.unjudgeable(case)) is not None}
        able = [e for e in evaluators if e.name not in blank]
        questions = tuple(dict.fromkeys(q for e in able for q in needed_by(e)))
        if not any("claims" in q.reads for q in questions):
            return cls(first=questions, second=(), unjudgeable=blank)
        late = tuple(q for q in questions if "claims" in q.reads or q.reads_context)
        early = tuple(q for q in questions if q not in late)
        return cls(first=early, second=late, unjudgeable=blank)

    @property
    def questions(self) -> tuple[Question[Any], ...]:
        """Every question the case asks."""
        return (*self.first, *self.second)


def planned_asks(
    questions: Questions, case: TestCase, claims: Sequence[str], *, repeat: int
) -> tuple[Answers, list[Ask]]:
    """The answers known without a judge, and the asks of the rest.

    The first ask has every question left; with ``repeat``, the questions over items (claims,
    needed facts) are asked again, each repetition numbered, for a majority verdict.
    """
    known, left = answered_without_judge(questions, case, claims)
    if not left:
        return known, []
    repeated = tuple(q for q in left if q.items(case, claims))
    again: list[Ask] = [(repeated, sample) for sample in range(1, repeat)] if repeated else []
    return known, [(tuple(left), 0), *again]

"""Which judge passes one case needs: derived once, for the run that makes them and the estimate.

A case is asked for its claims once and their verification once (the needed facts ride in the
same call), its relevance, and its chunk ratings, as far as the evaluators that can judge it ask
(an evaluator that cannot judge a blank response or query asks for nothing). The runner makes
these passes (:mod:`ragaliq.runner.case`); the pre-flight estimates the same ones
(:mod:`ragaliq.preflight`), so the two cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ragaliq.evaluators.base import Evaluator
from ragaliq.models import TestCase

__all__ = ["Passes"]


@dataclass(frozen=True, kw_only=True)
class Passes:
    """The passes one case needs of the judge."""

    claims: bool
    """Extract the response's claims (and verify them)."""
    facts: bool
    """Verify the needed facts, in the claims' verification call."""
    relevance: bool
    """Rate how well the response answers the query."""
    chunks: bool
    """Rate each retrieved chunk (only when there is context)."""
    unjudgeable: dict[str, str]
    """Evaluators that cannot judge this case, and why (a blank response or query)."""

    @classmethod
    def of(cls, case: TestCase, evaluators: Sequence[Evaluator[Any]]) -> Passes:
        """What the evaluators that can judge ``case`` ask of the judge for it."""
        blank = {e.name: why for e in evaluators if (why := e.unjudgeable(case)) is not None}
        able = [e for e in evaluators if e.name not in blank]
        return cls(
            claims=any(e.needs_claims for e in able),
            facts=any(e.needs_facts for e in able),
            relevance=any(e.needs_relevance for e in able),
            chunks=any(e.needs_chunks for e in able),
            unjudgeable=blank,
        )

    @property
    def verification(self) -> bool:
        """Whether the claims pass runs at all (to extract claims, or verify needed facts)."""
        return self.claims or self.facts

    @staticmethod
    def verifies(case: TestCase, claims: Sequence[str], facts: Sequence[str]) -> bool:
        """Whether claims or facts go to the judge: only against a context, and only some."""
        return bool(claims or facts) and case.has_context

    def rates(self, case: TestCase) -> bool:
        """Whether the chunks go to the judge: only when asked and there are some."""
        return self.chunks and bool(case.context)

"""Confirmed before it fails: a claim that would fail the gate is asked again first.

A language-model judge does not give the same verdict twice. With one ask per claim, a single
wrong verdict on a faithful, reworded answer makes a claim "newly hallucinated". So before the
gate decides, the claims of a case that would fail it (hallucinated now, and matching none the
baseline held against the same case) are asked once more: one call per case, listing only those
claims, in the reverse order, against the same context. The confirming ask is kept apart from the
first in the judge's answer cache (its own ``sample``), so the first answer never stands in for
it, and both are stored: an unchanged push asks nothing again.

Held against the response by both asks: hallucinated, as before. By one only: ``unstable``, the
same flag, threshold and treatment as a claim whose repeated verdicts disagree under
``judge.repeat`` (:data:`UNSTABLE_BELOW`); the gate lists it apart and counts it only under
``gate.count_unstable``. The offline judge is deterministic and is never asked twice; the cascade
confirms only what Claude decided (a claim settled offline is never hallucinated).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ragaliq.judges.cascade import SETTLED_OFFLINE
from ragaliq.models import CaseResult, ClaimVerdict

__all__ = [
    "CONFIRMING",
    "UNSTABLE",
    "UNSTABLE_BELOW",
    "ToConfirm",
    "confirmable",
    "confirmed_verdicts",
    "confirming_order",
    "is_unstable",
]

UNSTABLE = "unstable"
"""The flag of a claim whose verdicts, asked more than once, disagree."""
UNSTABLE_BELOW = 2 / 3
"""Agreement under which a claim asked more than once is ``unstable``: for ``judge.repeat`` the
share of repetitions that gave the majority verdict, for a confirmation the share of the two asks
that held the claim against the response."""
CONFIRMING = 100
"""The ``sample`` a confirming ask is made under: its own key in the judge's answer cache, beyond
any ``judge.repeat`` repetition (at most 9)."""

ToConfirm = Callable[[CaseResult], tuple[int, ...]]
"""Which claims of a judged case would fail the gate, by their place in the case's claims."""


def is_unstable(agreement: float) -> bool:
    """Whether verdicts that agree this much are ``unstable``: the one rule for both ways."""
    return agreement < UNSTABLE_BELOW


def confirmable(verdict: ClaimVerdict) -> bool:
    """Whether a claim may be asked again: one a language model decided, not already unstable."""
    return (
        verdict.verifiable
        and SETTLED_OFFLINE not in verdict.flags
        and UNSTABLE not in verdict.flags
        and not verdict.asked
    )


def confirming_order(places: Sequence[int]) -> tuple[int, ...]:
    """The order the confirming ask lists the claims in: the reverse of the first ask's.

    A verdict that leaned on its neighbours or its place in the list is not simply repeated.
    """
    return tuple(sorted(places, reverse=True))


def confirmed_verdicts(
    first: Sequence[ClaimVerdict],
    second: Sequence[ClaimVerdict],
    held: Callable[[ClaimVerdict], bool],
) -> tuple[ClaimVerdict, ...]:
    """Each claim's first verdict, with both asks' verdicts, and ``unstable`` unless confirmed.

    ``held`` says whether a verdict holds the claim against the response (the hallucination
    evaluator's own rule). The first verdict is kept: it is the one that backs the claim least,
    so doubt never passes as support; whether the gate counts an unstable claim is its policy.
    """
    confirmed: list[ClaimVerdict] = []
    for one, two in zip(first, second, strict=True):
        agreement = round(sum(held(v) for v in (one, two)) / 2, 6)
        flags = (*one.flags, UNSTABLE) if is_unstable(agreement) else one.flags
        confirmed.append(
            one.model_copy(
                update={"agreement": agreement, "flags": flags, "asked": (one.verdict, two.verdict)}
            )
        )
    return tuple(confirmed)

"""Fitting a rendering under GitHub's limit by showing less, never by cutting the text.

GitHub caps a comment at 65,536 characters and a job summary at 1 MiB. A rendering that is too
long is rendered again with less detail: the template receives ``limits`` (how many entries of
each list to show, and whether to show the evidence and reasons of claims) and writes a "… and N
more" line for what it leaves out. The rendered text is never cut, so no table or ``<details>``
block is left half open.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ragaliq.errors import TemplateError
from ragaliq.evaluators.registry import finding_lists
from ragaliq.gate import GateDecision
from ragaliq.report._rendering import TooLong
from ragaliq.report.filters import listed_apart

__all__ = ["COMMENT_STEPS", "SUMMARY_STEPS", "Limits", "Step", "fit", "full_limits"]

Limits = dict[str, int | bool]
"""What the template shows: entries per list, and ``detail`` (evidence and reasons)."""
Step = tuple[str, int | bool]
"""One cut: a key of :data:`Limits` and the value to bring it down to."""
_OVER = "\x00over the cap\x00"
"""What a rendering stopped at its cap gives :func:`fit` (compared by identity)."""
_APART = tuple(sorted(listed_apart(), key=lambda name: finding_lists()[name].weight))
"""The lists of findings the ``findings`` block shows, the least telling first."""


def _apart(to: int) -> tuple[Step, ...]:
    return tuple((name, to) for name in _APART)


COMMENT_STEPS: tuple[Step, ...] = (
    ("unverifiable", 5),
    ("chunks", 10),
    *_apart(10),
    ("lost_facts", 10),
    ("fixed", 5),
    ("unstable", 5),
    ("regressed", 5),
    ("errors", 5),
    ("detail", False),
    ("new", 10),
    ("fixed", 0),
    ("unstable", 0),
    ("unverifiable", 0),
    ("regressed", 0),
    ("chunks", 0),
    *_apart(0),
    ("lost_facts", 0),
    ("errors", 0),
    ("new", 0),
    ("notices", 0),
)
"""The comment's cuts, in order: the least telling lists first, the new hallucinations last."""
SUMMARY_STEPS: tuple[Step, ...] = (
    ("cases", 50),
    ("chunks", 50),
    *_apart(50),
    ("lost_facts", 50),
    ("added", 20),
    ("removed", 20),
    ("fixed", 20),
    ("unstable", 20),
    ("unverifiable", 20),
    ("regressed", 20),
    ("errors", 20),
    ("detail", False),
    ("new", 20),
    ("cases", 0),
    ("added", 0),
    ("removed", 0),
    ("fixed", 0),
    ("unstable", 0),
    ("unverifiable", 0),
    ("regressed", 0),
    ("chunks", 0),
    *_apart(0),
    ("lost_facts", 0),
    ("errors", 0),
    ("new", 0),
    ("notices", 0),
)
"""The summary's cuts, in order."""


def full_limits(decision: GateDecision, cases: int = 0) -> Limits:
    """Limits that show everything: every list in full, with detail."""
    return {
        "detail": True,
        "new": len(decision.hallucinations if decision.first_run else decision.new_hallucinations),
        "fixed": len(decision.fixed_hallucinations),
        "unstable": len(decision.unstable_claims),
        "unverifiable": len(decision.unverifiable_claims),
        "regressed": len(decision.regressed_cases),
        "lost_facts": len(decision.lost_facts),
        "chunks": len(decision.irrelevant_chunks),
        "errors": len(decision.errors),
        "added": len(decision.added_cases),
        "removed": len(decision.removed_cases),
        "notices": len(decision.notices),
        "cases": cases,
    } | {name: len(decision.listed(name)) for name in _APART}


def fit(
    render: Callable[[Limits], str],
    *,
    limits: Limits,
    steps: Sequence[Step],
    size: Callable[[str], int],
    limit: int,
    what: str,
) -> str:
    """The fullest rendering within ``limit``, cutting the lists in ``steps`` order.

    A rendering that passes ``4 * limit`` characters is stopped there and counts as too long.

    Raises:
        TemplateError: even with every list cut, the rendering is over ``limit``.
    """

    def attempt(limits: Limits) -> str:
        try:
            return render(limits)
        except TooLong:
            return _OVER

    text = attempt(limits)
    if text is not _OVER and size(text) <= limit:
        return text
    for key, target in steps:
        current = limits[key]
        if isinstance(target, bool):
            if current == target:
                continue
            limits[key] = target
            text = attempt(limits)
            if text is not _OVER and size(text) <= limit:
                return text
            continue
        if current <= target:
            continue
        low, high, best = target, int(current) - 1, None
        while low <= high:
            middle = (low + high) // 2
            candidate = attempt({**limits, key: middle})
            if candidate is not _OVER and size(candidate) <= limit:
                best, low = candidate, middle + 1
            else:
                high = middle - 1
        if best is not None:
            return best
        limits[key] = target
        text = attempt(limits)
    taken = "more than four times that" if text is _OVER else f"{size(text):,}"
    raise TemplateError(
        f"the {what} takes {taken} of at most {limit:,} even with every list cut; "
        "shorten the notices or the template"
    )

"""Helpers shared by the claim-based evaluators."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable

from ragaliq.models import ClaimVerdict, Verdict
from ragaliq.text.plain import plural

NO_CLAIMS_NOTE = "no_claims"


def verdict_counts(verdicts: tuple[ClaimVerdict, ...]) -> str:
    """``3 supported, 1 contradicted`` in a fixed verdict order."""
    counts = Counter(v.verdict for v in verdicts)
    return ", ".join(
        f"{counts[verdict]} {verdict.value.lower().replace('_', ' ')}"
        for verdict in Verdict
        if counts[verdict]
    )


def describe_claims(claims: Iterable[ClaimVerdict], label: Callable[[Verdict], str]) -> list[str]:
    """``contradicted: Refunds take 30 days. (the context says 14)``, one line per claim."""
    return [
        f"{label(c.verdict)}: {c.text}" + (f" ({c.reason})" if c.reason else "") for c in claims
    ]


def all_are(count: int, word: str) -> str:
    """``All 3 claims are``, or ``The one claim is``: the start of a sentence about every item."""
    return f"The one {word} is" if count == 1 else f"All {count:,} {word}s are"


def of_total_are(part: int, total: int, word: str) -> str:
    """``2 of 5 claims are``, ``1 of 1 claim is``: the start of a sentence about some items."""
    return f"{part:,} of {plural(total, word)} {'is' if total == 1 else 'are'}"

"""Helpers shared by the claim-based evaluators."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable

from ragaliq.models import ClaimVerdict, Verdict

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

"""Helpers shared by the claim-based evaluators."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable

from ragaliq.models import CLAIMS_DETAIL, UNCHECKED_DETAIL, ClaimVerdict, Verdict
from ragaliq.text.counts import plural, plural_is

NO_CLAIMS_NOTE = "no_claims"
NOT_VERIFIABLE_NOTE = UNCHECKED_DETAIL


def checkable(verdicts: tuple[ClaimVerdict, ...]) -> tuple[ClaimVerdict, ...]:
    """The verdicts that count in a score: all but those the offline judge could not verify.

    A claim flagged ``not_verifiable_offline`` is neither credited nor held against a response:
    the offline judge found nothing in the context to ground it and nothing to fault it, and a
    score must not guess. Claude never sets the flag, so its scores are unchanged, and the
    evaluators keep their versions: only the offline judge's verdicts change, and its version
    (in every report's provenance) changes with them, so a baseline judged before is never
    compared silently.
    """
    return tuple(v for v in verdicts if v.verifiable)


def unchecked_details(verdicts: tuple[ClaimVerdict, ...]) -> dict[str, int]:
    """The claims a case made and, when some are, how many the judge could not check.

    The run's summary adds them up into the coverage beside each score over claims.
    """
    unchecked = sum(not v.verifiable for v in verdicts)
    details = {CLAIMS_DETAIL: len(verdicts)}
    if unchecked:
        details[UNCHECKED_DETAIL] = unchecked
    return details


def not_verifiable_note(count: int) -> str:
    """`` 2 claims not verifiable offline are left out.``, or nothing."""
    if not count:
        return ""
    verb = "is" if count == 1 else "are"
    return f" {plural(count, 'claim')} not verifiable offline {verb} left out."


def none_verifiable(count: int, word: str = "claim") -> str:
    """Why a case whose every claim is not verifiable offline has no score."""
    them = "it" if count == 1 else "them"
    return (
        f"{all_are(count, word)} not verifiable offline (the offline judge could neither ground "
        f"nor fault {them}), so the case has no score."
    )


def verdict_counts(verdicts: tuple[ClaimVerdict, ...]) -> str:
    """``3 supported, 1 contradicted, 2 not verifiable offline`` in a fixed verdict order."""
    counts = Counter(v.verdict for v in verdicts if v.verifiable)
    parts = [
        f"{counts[verdict]} {verdict.value.lower().replace('_', ' ')}"
        for verdict in Verdict
        if counts[verdict]
    ]
    unverifiable = len(verdicts) - sum(counts.values())
    if unverifiable:
        parts.append(f"{unverifiable} not verifiable offline")
    return ", ".join(parts)


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
    return f"{part:,} of {plural_is(total, word)}"

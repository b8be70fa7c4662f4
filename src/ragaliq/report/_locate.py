"""Finding each claim's place in the response, for highlighting it in the HTML report.

The offline judge's claims are the response's own sentences (a part that adds to one, split off
as "… including a bag.", is found without its mark); Claude's are rewrites. A claim is found
verbatim first, then ignoring case, spacing, quote and dash styles and trailing punctuation; a
claim that cannot be found gets no place and is listed beside the response instead.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence

from ragaliq.text.sentences import CONTINUATION

__all__ = ["Span", "locate_claims"]

Span = tuple[int, int]
"""Start and end offsets of a claim in the response."""

_FOLD = str.maketrans(
    {
        "\u2018": "'",
        "\u2019": "'",
        "\u201a": "'",
        "\u201b": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u201e": '"',
        "\u2010": "-",
        "\u2011": "-",
        "\u2012": "-",
        "\u2013": "-",
        "\u2014": "-",
        "\u2212": "-",
        "\u2026": "...",
    }
)
_TRAILING = ".!?;:,"


def _fold(text: str) -> tuple[str, list[int]]:
    """Casefolded text with runs of whitespace as one space and typographic quotes made plain.

    Returns the folded text and, for each of its characters, the index in ``text`` it came from.
    """
    out: list[str] = []
    origin: list[int] = []
    for i, char in enumerate(text):
        if char.isspace():
            if out and out[-1] == " ":
                continue
            out.append(" ")
            origin.append(i)
            continue
        for folded in char.translate(_FOLD).casefold():
            out.append(folded)
            origin.append(i)
    return "".join(out), origin


def _free(span: Span, taken: Sequence[Span]) -> bool:
    return all(span[1] <= start or span[0] >= end for start, end in taken)


def _occurrences(haystack: str, needle: str, start: int) -> Iterable[int]:
    """Where ``needle`` occurs in ``haystack``: from ``start`` on, then before it."""
    at = haystack.find(needle, start)
    while at != -1:
        yield at
        at = haystack.find(needle, at + 1)
    at = haystack.find(needle)
    while at != -1 and at < start:
        yield at
        at = haystack.find(needle, at + 1)


def _find(
    response: str, claim: str, folded: str, origin: list[int], taken: Sequence[Span], cursor: int
) -> Span | None:
    needle = claim.strip().removeprefix(CONTINUATION)
    if not needle:
        return None
    for at in _occurrences(response, needle, cursor):
        span = (at, at + len(needle))
        if _free(span, taken):
            return span
    folded_needle, _ = _fold(needle)
    candidates = [folded_needle]
    trimmed = folded_needle.rstrip(_TRAILING + " ")
    if trimmed and trimmed != folded_needle:
        candidates.append(trimmed)
    start = bisect.bisect_left(origin, cursor)
    for candidate in candidates:
        for at in _occurrences(folded, candidate, start):
            span = (origin[at], origin[at + len(candidate) - 1] + 1)
            if _free(span, taken):
                return span
    return None


def locate_claims(response: str, claims: Sequence[str]) -> list[Span | None]:
    """Where each claim sits in the response, as ``(start, end)`` offsets, or None if nowhere.

    A claim is looked for verbatim, then with case, whitespace, typographic quotes and dashes
    folded, then also without its final punctuation. The search for each claim starts where the
    previous one ended (claims usually come in the response's order) and wraps around; no two
    claims get overlapping spans, so a repeated claim takes the next occurrence or none.

    Args:
        response: The response the claims were extracted from.
        claims: The claims' texts, in the judge's order.

    Returns:
        One span or None per claim, in the claims' order.
    """
    folded, origin = _fold(response)
    taken: list[Span] = []
    cursor = 0
    spans: list[Span | None] = []
    for claim in claims:
        span = _find(response, claim, folded, origin, taken, cursor)
        spans.append(span)
        if span is not None:
            taken.append(span)
            cursor = span[1]
    return spans

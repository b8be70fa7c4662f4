"""Counts with their nouns: the one way every message, table and template writes one.

``1 claim``, ``3 claims``, ``1,200 cases``: never "1 claims".
"""

from __future__ import annotations

__all__ = ["plural", "plural_is"]


def plural(count: int, word: str, plural_form: str | None = None) -> str:
    """``1 claim``, ``3 claims``: a count with its noun, for every message and renderer."""
    return f"{count:,} {word if count == 1 else plural_form or word + 's'}"


def plural_is(count: int, word: str) -> str:
    """``1 case is``, ``3 cases are``: a count with its noun and the verb that agrees with it."""
    return f"{plural(count, word)} {'is' if count == 1 else 'are'}"

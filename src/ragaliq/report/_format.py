"""Number formatting shared by the Markdown and HTML reports (registered as Jinja filters)."""

from __future__ import annotations

from ragaliq.text.plain import plural

__all__ = [
    "MISSING",
    "VERDICT_LABELS",
    "delta",
    "interval",
    "pct",
    "plural",
    "score",
    "usd",
    "verdict_label",
]

MISSING = "\N{EN DASH}"
"""Shown for a value that does not exist (no baseline, no score)."""
VERDICT_LABELS = {
    "SUPPORTED": "supported",
    "PARTIALLY_SUPPORTED": "partly supported",
    "NOT_ENOUGH_INFO": "not in the context",
    "CONTRADICTED": "contradicted",
}
"""The one label of each verdict, in every rendering: the terminal, the comment and the report."""


def score(value: float | None, digits: int = 3) -> str:
    """``0.876``, or the dash."""
    return MISSING if value is None else f"{value:.{digits}f}"


def pct(value: float | None, digits: int = 1) -> str:
    """``85.0%``, or the dash."""
    return MISSING if value is None else f"{value:.{digits}%}"


def delta(value: float | None) -> str:
    """A signed change, ``+0.012``; a drop gets a real minus sign (U+2212), not a hyphen."""
    if value is None:
        return MISSING
    rounded = round(value, 3)
    if rounded == 0:
        return "\N{PLUS-MINUS SIGN}0.000"
    return f"+{rounded:.3f}" if rounded > 0 else f"\N{MINUS SIGN}{-rounded:.3f}"


def interval(value: tuple[float, float] | None) -> str:
    """``[-0.101, +0.004]`` with real minus signs, as :func:`delta` shows each end."""
    if value is None:
        return MISSING
    return f"[{delta(value[0])}, {delta(value[1])}]"


def usd(value: float | None) -> str:
    """``$0.0123``, or the dash."""
    return MISSING if value is None else f"${value:,.4f}"


def verdict_label(value: object) -> str:
    """A verdict (or its value) as people read it: ``not in the context``."""
    key = str(getattr(value, "value", value))
    return VERDICT_LABELS.get(key, key)

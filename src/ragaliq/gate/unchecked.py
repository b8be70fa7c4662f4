"""How the gate speaks of the claims the offline judge could not check.

The offline judge says SUPPORTED only where a claim's evidence states every one of its words; a
claim with a word it cannot ground (and nothing to fault) is *not verifiable offline*. Such
claims are left out of the scores, so the comment, the summary, the console and the HTML report
headline them, list them with the words their evidence does not state, and say how to have them
judged; ``gate.fail_on_unchecked_claims`` fails the gate on them.
"""

from __future__ import annotations

from ragaliq.text.counts import plural

__all__ = ["JUDGE_THEM", "coverage_note", "unchecked_headline"]

JUDGE_THEM = (
    "Judge them with Claude (judge.provider: claude), or with the cascade (judge.provider: "
    "cascade), which keeps the offline judge's grounded verdicts and sends only the rest to "
    "Claude."
)
"""The line that follows every headline of unchecked claims."""


def unchecked_headline(count: int, *, new: bool) -> str:
    """``3 new claims could not be checked offline`` (``new``: since the baseline)."""
    return f"{plural(count, 'new claim' if new else 'claim')} could not be checked offline"


def coverage_note(checked: int | None, claims: int | None) -> str:
    """``12 of 40 claims checked``, beside a score over claims; empty for another score."""
    if claims is None or checked is None:
        return ""
    return f"{checked:,} of {plural(claims, 'claim')} checked"

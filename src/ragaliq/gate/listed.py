"""Retrieval and citations that hold the bar: lost relevant chunks and newly miscited claims.

Beside the scores, two lists of findings can fail the gate by themselves, each by its own
setting: ``gate.fail_on_lost_chunks`` on a relevant chunk (or document) that a case the baseline
has no longer retrieves within ``k`` (:mod:`ragaliq.evaluators.retrieval`), and
``gate.fail_on_miscited_claims`` on a claim credited to chunks that do not back it, or to a chunk
not retrieved, that the baseline's same case did not miscite
(:mod:`ragaliq.evaluators.citations`). The failure names the first few, so the check's line
already says which chunk or claim to look at; with the setting off, a notice says that they are
listed and do not fail the gate.
"""

from __future__ import annotations

from collections.abc import Sequence

from ragaliq.evaluators.findings import Finding
from ragaliq.policy import GatePolicy
from ragaliq.text.counts import plural

__all__ = ["SHOWN", "listed_failures"]

SHOWN = 3
"""Entries a failure line names; the rest are counted."""


def listed_failures(
    rules: GatePolicy,
    lost: Sequence[Finding],
    lost_total: int,
    miscited: Sequence[Finding],
    miscited_total: int,
) -> tuple[list[str], list[str]]:
    """The failures these findings make under ``rules``, and the notices when they make none.

    Args:
        rules: The rules in force.
        lost: The lost relevant chunks, worst first (at least the first :data:`SHOWN`).
        lost_total: How many were lost in all.
        miscited: The newly miscited claims, in the cases' order (the first :data:`SHOWN`).
        miscited_total: How many were newly miscited in all.
    """
    failures: list[str] = []
    notices: list[str] = []
    for entries, total, noun, option, on in (
        (lost, lost_total, "lost relevant chunk", "fail_on_lost_chunks", rules.fail_on_lost_chunks),
        (
            miscited,
            miscited_total,
            "newly miscited claim",
            "fail_on_miscited_claims",
            rules.fail_on_miscited_claims,
        ),
    ):
        if not total:
            continue
        if on:
            named = _named(entries, total)
            failures.append(f"{plural(total, noun)} (gate.{option}: true): {named}")
        else:
            notices.append(
                f"{plural(total, noun)} {'is' if total == 1 else 'are'} listed but do"
                f"{'es' if total == 1 else ''} not fail this gate (gate.{option}: false)."
            )
    return failures, notices


def _named(entries: Sequence[Finding], total: int) -> str:
    """``refunds: chunk export#2 (relevance 1): rank 2 → not retrieved; and 2 more``."""
    shown = [f"{entry.case_id}: {entry.text}" for entry in entries[:SHOWN]]
    more = total - len(shown)
    return "; ".join(shown) + (f"; and {more:,} more" if more > 0 else "")

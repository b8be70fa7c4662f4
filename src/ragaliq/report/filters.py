"""The Jinja filters of our templates, one function under one name in every template.

:data:`SHARED_FILTERS` are registered in both the Markdown environment (the comment, the
summary, and a user template that extends them) and the HTML report's:

==============  ===============================================================================
``score``       ``0.876`` (``score(2)``: two digits), or the dash
``pct``         ``85.0%`` (``pct(0)``: ``85%``), or the dash
``delta``       a signed change, ``+0.012``, a drop with a real minus sign (U+2212)
``interval``    ``[-0.101, +0.004]``, each end as ``delta`` shows it
``usd``         ``$0.0123``
``plural``      ``1 claim``, ``3 claims``
``verdict``     a verdict as people read it: ``not in the context``
``findings``    the decision's lists of findings that no block of their own shows (lost
                relevant chunks ...), each with its title, noun and total
``coverage``    beside a score over claims: ``12 of 40 claims checked`` (empty for another)
``unchecked``   ``3 new claims could not be checked offline`` (``unchecked(new=False)``: no
                "new")
==============  ===============================================================================

:data:`MARKDOWN_FILTERS` add ``md`` (escape untrusted text), ``shorten`` and ``by_case``;
:data:`HTML_FILTERS` add ``csp_hash``, ``options`` and ``case_href`` (the HTML template escapes
on its own). The filter names are part of what a user template may use: rename none.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from ragaliq.evaluators.registry import finding_lists
from ragaliq.gate import Finding, GateDecision
from ragaliq.gate.unchecked import coverage_note, unchecked_headline
from ragaliq.report._escape import md, shorten_redacted
from ragaliq.text.counts import plural

__all__ = [
    "HTML_FILTERS",
    "IN_BLOCKS",
    "MARKDOWN_FILTERS",
    "MISSING",
    "SHARED_FILTERS",
    "VERDICT_LABELS",
    "CaseGroup",
    "FindingList",
    "by_case",
    "case_href",
    "coverage",
    "csp_hash",
    "delta",
    "findings",
    "interval",
    "listed_apart",
    "options",
    "pct",
    "score",
    "unchecked",
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


@dataclass(frozen=True, kw_only=True)
class CaseGroup:
    """Findings of one case, for templates: ``{% for group in claims | by_case %}``."""

    case_id: str
    query: str
    claims: tuple[Finding, ...]
    """The case's entries, in the list's order."""


def by_case(changes: Iterable[Finding]) -> list[CaseGroup]:
    """The claims (or other findings) grouped by case, in the order each case first comes."""
    grouped: dict[str, list[Finding]] = {}
    for change in changes:
        grouped.setdefault(change.case_id, []).append(change)
    return [
        CaseGroup(case_id=case_id, query=claims[0].query, claims=tuple(claims))
        for case_id, claims in grouped.items()
    ]


IN_BLOCKS = frozenset(
    {
        "new_hallucinations",
        "hallucinations",
        "fixed_hallucinations",
        "unstable_claims",
        "unverifiable_claims",
        "lost_facts",
        "irrelevant_chunks",
    }
)
"""The lists of findings our templates show in blocks of their own; :func:`findings` gives
every other one, so that an evaluator's new list is shown without a block of its own."""


def listed_apart() -> tuple[str, ...]:
    """The names of the lists of findings no block of their own shows, in the registry's order."""
    return tuple(name for name in finding_lists() if name not in IN_BLOCKS)


@dataclass(frozen=True, kw_only=True)
class FindingList:
    """One list of findings as a template shows it: ``{% for found in decision | findings %}``."""

    name: str
    """Its name in the decision, and in the template's ``limits``."""
    title: str
    noun: str
    weight: int
    entries: tuple[Finding, ...]
    """The entries the decision kept (``total`` counts the ones it left out too)."""
    total: int


def findings(decision: GateDecision) -> list[FindingList]:
    """The decision's non-empty lists of findings that no block of their own shows."""
    lists = finding_lists()
    return [
        FindingList(
            name=name,
            title=lists[name].title,
            noun=lists[name].noun,
            weight=lists[name].weight,
            entries=decision.listed(name),
            total=decision.count(name),
        )
        for name in listed_apart()
        if decision.count(name)
    ]


def csp_hash(text: str) -> str:
    """The Content-Security-Policy source that allows exactly this inline script or style."""
    digest = hashlib.sha256(str(text).encode("utf-8")).digest()
    return "'sha256-" + base64.b64encode(digest).decode("ascii") + "'"


def options(values: Mapping[str, Any]) -> str:
    """An evaluator's options on one line: ``preset: standard, weights: {S: 1}``."""

    def show(value: Any) -> str:
        if isinstance(value, Mapping):
            return "{" + ", ".join(f"{k}: {show(v)}" for k, v in value.items()) + "}"
        return "none" if value is None else str(value)

    return ", ".join(f"{key}: {show(value)}" for key, value in values.items())


def case_href(case_id: str) -> str:
    """The link to a case in the list: the script finds it in the data, whatever page it is on."""
    return "#case=" + quote(case_id, safe="")


def coverage(scored: Any) -> str:
    """``12 of 40 claims checked`` for an evaluator's decision or summary over claims, else ``""``.

    The claims not checked are those the offline judge could not verify, left out of the score.
    """
    return coverage_note(getattr(scored, "checked", None), getattr(scored, "claims", None))


def unchecked(count: int, new: bool = True) -> str:
    """``3 new claims could not be checked offline``."""
    return unchecked_headline(count, new=new)


SHARED_FILTERS: dict[str, Callable[..., Any]] = {
    "score": score,
    "pct": pct,
    "delta": delta,
    "interval": interval,
    "usd": usd,
    "plural": plural,
    "verdict": verdict_label,
    "findings": findings,
    "coverage": coverage,
    "unchecked": unchecked,
}
"""What the Markdown and the HTML templates both show, under the same names."""
MARKDOWN_FILTERS: dict[str, Callable[..., Any]] = {
    **SHARED_FILTERS,
    "md": md,
    "shorten": shorten_redacted,
    "by_case": by_case,
}
HTML_FILTERS: dict[str, Callable[..., Any]] = {
    **SHARED_FILTERS,
    "csp_hash": csp_hash,
    "options": options,
    "case_href": case_href,
}

"""The HTML report: one self-contained page to review a run claim by claim.

The page is rendered from ``report.html.j2`` (shipped in the wheel under ``ragaliq/templates``) in
a sandboxed Jinja environment with autoescaping and ``StrictUndefined``, so any text a dataset or
a judge supplies (a response, a claim, evidence, a case id) shows as text, never as markup.

It needs nothing but itself: the CSS, a small vanilla script and the chart (inline SVG) are all in
the file, and a Content-Security-Policy ``<meta>`` forbids every fetch and allows only that one
script, by its hash. Without JavaScript everything still reads (claims expand with ``<details>``);
only the filters need it.

The run report keeps each case's query and claims but not its response. Given the dataset's cases,
the page shows each response with its claims highlighted in place: :func:`locate_claims` finds
each claim verbatim (the offline judge's claims are the response's sentences) or with case, spacing
and quote style folded; a claim it cannot find (a model judge's claims are rewrites) is listed
under the response instead.
"""

from __future__ import annotations

import base64
import bisect
import hashlib
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

import jinja2
from jinja2.sandbox import ImmutableSandboxedEnvironment
from markupsafe import Markup

from ragaliq.compare import ClaimChange, EvaluatorStatus, GateDecision, RegressedCase
from ragaliq.errors import TemplateError
from ragaliq.models import CaseResult, ClaimVerdict, RunReport, TestCase, Verdict
from ragaliq.report.console import format_usage

__all__ = ["HTML_TEMPLATE", "locate_claims", "render_html_report"]

HTML_TEMPLATE = "report.html.j2"

Span = tuple[int, int]

VERDICT_ORDER: tuple[Verdict, ...] = (
    Verdict.CONTRADICTED,
    Verdict.NOT_ENOUGH_INFO,
    Verdict.PARTIALLY_SUPPORTED,
    Verdict.SUPPORTED,
)
_VERDICT_LABELS = {
    Verdict.SUPPORTED: "Supported",
    Verdict.PARTIALLY_SUPPORTED: "Partially supported",
    Verdict.NOT_ENOUGH_INFO: "Not enough info",
    Verdict.CONTRADICTED: "Contradicted",
}
_VERDICT_HINTS = {
    Verdict.SUPPORTED: "the context backs the claim",
    Verdict.PARTIALLY_SUPPORTED: "the context backs part of the claim",
    Verdict.NOT_ENOUGH_INFO: "the context says nothing either way",
    Verdict.CONTRADICTED: "the context says otherwise",
}
_FLAG_LABELS = {
    "unverified_evidence": "evidence not found in the context",
    "empty_context": "no context was retrieved",
}
_STATUS_LABELS: dict[EvaluatorStatus, str] = {
    "pass": "pass",
    "below_threshold": "below threshold",
    "regressed": "dropped from the baseline",
    "no_score": "no score",
}

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


# --- locating claims in a response ----------------------------------------------------------


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
    """Where ``needle`` occurs, from ``start`` on and then from the beginning."""
    for begin, end in ((start, len(haystack)), (0, start + len(needle) - 1)):
        at = haystack.find(needle, begin, min(end, len(haystack)) if begin == 0 else end)
        while at != -1:
            yield at
            at = haystack.find(needle, at + 1)
            if begin == 0 and at >= start:
                break


def _find(
    response: str, claim: str, folded: str, origin: list[int], taken: Sequence[Span], cursor: int
) -> Span | None:
    needle = claim.strip()
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


# --- the view the template renders ------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class _VerdictView:
    value: str
    label: str
    css: str
    hint: str
    count: int


@dataclass(frozen=True, kw_only=True)
class _ClaimView:
    number: int
    anchor: str
    claim: ClaimVerdict
    verdict: _VerdictView
    located: bool
    new: bool
    flags: tuple[str, ...]


@dataclass(frozen=True, kw_only=True)
class _Segment:
    text: str
    claim: _ClaimView | None = None


@dataclass(frozen=True, kw_only=True)
class _ScoreView:
    evaluator: str
    score: float | None
    passed: bool | None
    status: str
    reasoning: str
    threshold: float | None
    regressed_from: float | None = None


@dataclass(frozen=True, kw_only=True)
class _CaseView:
    anchor: str
    case: CaseResult
    dataset_case: TestCase | None
    response_note: str | None
    segments: tuple[_Segment, ...]
    claims: tuple[_ClaimView, ...]
    unlocated: tuple[_ClaimView, ...]
    scores: tuple[_ScoreView, ...]
    verdicts: tuple[str, ...]
    failing: tuple[str, ...]
    errored: tuple[str, ...]
    new_count: int
    regressed: tuple[RegressedCase, ...]
    problem: bool
    search: str


@dataclass(frozen=True, kw_only=True)
class _Bar:
    evaluator: str
    y: float
    label_y: float
    score: float | None
    width: float
    threshold: float
    threshold_x: float
    baseline: float | None
    baseline_x: float | None
    passed: bool
    status: str
    delta: float | None


@dataclass(frozen=True, kw_only=True)
class _Chart:
    width: int
    height: int
    plot_x: int
    plot_width: int
    bar_height: int
    top: int
    bottom: float
    ticks: tuple[tuple[float, float], ...]
    bars: tuple[_Bar, ...]
    has_baseline: bool
    value_x: int


@dataclass(frozen=True, kw_only=True)
class _NewGroup:
    anchor: str | None
    case_id: str
    query: str
    claims: tuple[ClaimChange, ...]


@dataclass(frozen=True, kw_only=True)
class _Page:
    title: str
    report: RunReport
    decision: GateDecision | None
    passed: bool
    failures: tuple[str, ...]
    usage_line: str
    chart: _Chart
    evaluators: tuple[_ScoreView, ...]
    summary_rows: tuple[dict[str, Any], ...]
    verdicts: tuple[_VerdictView, ...]
    total_claims: int
    cases: tuple[_CaseView, ...]
    new_groups: tuple[_NewGroup, ...]
    case_anchors: dict[str, str]
    notices: tuple[str, ...]
    has_dataset: bool
    missing_cases: int
    evaluator_names: tuple[str, ...] = field(default=())


def _verdict_view(verdict: Verdict, count: int = 0) -> _VerdictView:
    return _VerdictView(
        value=verdict.value,
        label=_VERDICT_LABELS[verdict],
        css="verdict-" + verdict.value.lower().replace("_", "-"),
        hint=_VERDICT_HINTS[verdict],
        count=count,
    )


def _slug(text: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return slug[:60].strip("-") or "case"


def _anchors(cases: Sequence[CaseResult]) -> dict[str, str]:
    seen: Counter[str] = Counter()
    anchors: dict[str, str] = {}
    for case in cases:
        if case.id in anchors:
            continue
        slug = "case-" + _slug(case.id)
        seen[slug] += 1
        anchors[case.id] = slug if seen[slug] == 1 else f"{slug}-{seen[slug]}"
    return anchors


def _segments(response: str, claims: Sequence[_ClaimView], spans: Sequence[Span | None]) -> list:  # type: ignore[type-arg]
    placed = sorted(
        ((span, claim) for span, claim in zip(spans, claims, strict=True) if span is not None),
        key=lambda item: item[0],
    )
    out: list[_Segment] = []
    at = 0
    for (start, end), claim in placed:
        if start > at:
            out.append(_Segment(text=response[at:start]))
        out.append(_Segment(text=response[start:end], claim=claim))
        at = end
    if at < len(response):
        out.append(_Segment(text=response[at:]))
    return out

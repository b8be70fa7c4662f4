"""The HTML report's frame: what the page shows that does not depend on the cases.

The header, the gate's story (the newly hallucinated claims, at most :data:`STORY_LIMIT` of each
list), the scores and their chart, the notices, and the labels the script reads
(``rq-config``), gathered into one :class:`Page` that ``report.html.j2`` renders.
"""

from __future__ import annotations

import functools
import re
import secrets
from collections.abc import Sequence
from dataclasses import dataclass

from markupsafe import Markup

from ragaliq.errors import TemplateError
from ragaliq.gate import ClaimChange, EvaluatorStatus, GateDecision
from ragaliq.models import ReportHead, Verdict
from ragaliq.report._html_data import NOT_VERIFIABLE_OFFLINE, VERDICT_CODES, script_json
from ragaliq.report._templates import templates_root
from ragaliq.report.console import format_usage
from ragaliq.report.filters import coverage, verdict_label

__all__ = ["STORY_LIMIT", "VERDICT_ORDER", "Page", "build_page"]

STYLE_ASSET = "report.css"
SCRIPT_ASSET = "report.js"
STORY_LIMIT = 50
"""At most this many items of each list in the gate's story; the filters show the rest."""

VERDICT_ORDER: tuple[str, ...] = (
    Verdict.CONTRADICTED.value,
    Verdict.NOT_ENOUGH_INFO.value,
    NOT_VERIFIABLE_OFFLINE,
    Verdict.PARTIALLY_SUPPORTED.value,
    Verdict.SUPPORTED.value,
)
"""The order of the legend and the filters: the worst first; a claim the offline judge could not
verify apart from one a judge found nothing for."""
_VERDICT_HINTS = {
    Verdict.SUPPORTED.value: "the context backs the claim",
    Verdict.PARTIALLY_SUPPORTED.value: "the context backs part of the claim",
    Verdict.NOT_ENOUGH_INFO.value: "the judge found nothing in the context for it",
    Verdict.CONTRADICTED.value: "the context says otherwise",
    NOT_VERIFIABLE_OFFLINE: (
        "the offline judge could neither ground nor fault it; not counted as hallucinated"
    ),
}
_FLAG_LABELS = {
    "unverified_evidence": "evidence not found in the context",
    "empty_context": "no context was retrieved",
    "unstable": "unstable: the judge's verdicts disagreed when asked again",
    "offline_confident": "the offline judge is confident",
    "not_verifiable_offline": (
        "not verifiable offline: the offline judge could neither ground nor fault it; not "
        "counted as hallucinated"
    ),
}
_STATUS_LABELS: dict[EvaluatorStatus, str] = {
    "pass": "pass",
    "below_threshold": "below threshold",
    "regressed": "dropped from the baseline",
    "inconclusive": "inconclusive: within noise",
    "no_score": "no score",
}
_RETRIEVAL = ("context_recall", "context_precision")


@dataclass(frozen=True, kw_only=True)
class _VerdictView:
    value: str
    label: str
    css: str
    hint: str


@dataclass(frozen=True, kw_only=True)
class _EvaluatorRow:
    name: str
    head: float | None
    baseline: float | None
    delta: float | None
    threshold: float
    max_drop: float | None
    pass_rate: float | None
    judged: int
    errors: int
    passed: bool
    status: str
    coverage: str = ""
    """Beside a score over claims: ``12 of 40 claims checked``."""


@dataclass(frozen=True, kw_only=True)
class _Bar:
    row: _EvaluatorRow
    y: float
    text_y: float
    name_y: float
    width: float
    threshold_x: float
    baseline_x: float | None


@dataclass(frozen=True, kw_only=True)
class _Chart:
    width: int
    height: int
    plot_x: int
    plot_width: int
    bar_height: int
    value_x: int
    name_x: int
    name_anchor: str
    top: int
    axis_y: int
    ticks: tuple[tuple[str, float], ...]
    bars: tuple[_Bar, ...]
    has_baseline: bool


@dataclass(frozen=True, kw_only=True)
class _NewGroup:
    case_id: str
    query: str
    claims: tuple[tuple[ClaimChange, _VerdictView], ...]


@dataclass(frozen=True, kw_only=True)
class Page:
    """What ``report.html.j2`` renders (as ``page``)."""

    title: str
    head: ReportHead
    decision: GateDecision | None
    passed: bool
    failures: tuple[str, ...]
    usage_line: str
    chart: _Chart
    chart_narrow: _Chart
    """The same chart drawn for a phone's width."""
    evaluators: tuple[_EvaluatorRow, ...]
    verdicts: tuple[_VerdictView, ...]
    """In :data:`VERDICT_ORDER`."""
    new_groups: tuple[_NewGroup, ...]
    new_more: int
    """Newly hallucinated claims past :data:`STORY_LIMIT`, not listed in the story."""
    limit: int
    notices: tuple[str, ...]
    notes: tuple[str, ...]
    """What the page itself wants to say, e.g. that the responses are not shown."""
    has_dataset: bool
    has_retrieval: bool
    config: Markup
    """The JSON the script reads first (labels, evaluators), escaped for a script element."""
    style: Markup
    script: Markup
    data: str
    """Where the cases go: an unguessable marker the writer splits the page at."""


def _verdict_view(kind: str) -> _VerdictView:
    """A claim's kind (a verdict, or not verifiable offline) as the page shows it."""
    return _VerdictView(
        value=kind,
        label="not verifiable offline" if kind == NOT_VERIFIABLE_OFFLINE else verdict_label(kind),
        css="verdict-" + kind.lower().replace("_", "-"),
        hint=_VERDICT_HINTS[kind],
    )


def _evaluator_rows(head: ReportHead, decision: GateDecision | None) -> tuple[_EvaluatorRow, ...]:
    rows = []
    for name, summary in head.summary.evaluators.items():
        gate = decision.evaluators.get(name) if decision is not None else None
        if gate is not None:
            rows.append(
                _EvaluatorRow(
                    name=name,
                    head=gate.head,
                    baseline=gate.baseline,
                    delta=gate.delta,
                    threshold=gate.threshold,
                    max_drop=gate.max_drop,
                    pass_rate=summary.pass_rate,
                    judged=summary.judged,
                    errors=gate.errors,
                    passed=gate.passed,
                    status=_STATUS_LABELS.get(gate.status, gate.status),
                    coverage=coverage(gate),
                )
            )
            continue
        passed = summary.score is not None and summary.passed
        rows.append(
            _EvaluatorRow(
                name=name,
                head=summary.score,
                baseline=None,
                delta=None,
                threshold=summary.threshold,
                max_drop=None,
                pass_rate=summary.pass_rate,
                judged=summary.judged,
                errors=summary.errors,
                passed=passed,
                status="no score"
                if summary.score is None
                else "pass"
                if passed
                else "below threshold",
                coverage=coverage(summary),
            )
        )
    return tuple(rows)


@dataclass(frozen=True, kw_only=True)
class _ChartLayout:
    """Where a chart's parts go, in its own units: the wide one beside the table, or a phone's."""

    width: int
    plot_x: int
    """Where the bars start; the names end left of it (wide) or stand above the bars (narrow)."""
    plot_width: int
    row: int
    bar: int
    top: int
    names_above: bool


_WIDE = _ChartLayout(
    width=664, plot_x=160, plot_width=390, row=44, bar=18, top=12, names_above=False
)
_NARROW = _ChartLayout(
    width=340, plot_x=4, plot_width=230, row=52, bar=16, top=26, names_above=True
)
"""On a phone the chart shrinks to the screen: drawn narrower, with each name above its bar,
its labels keep a readable size (at 400 px, 11 px or more where the wide one's would be 5)."""


def _chart(rows: Sequence[_EvaluatorRow], layout: _ChartLayout = _WIDE) -> _Chart:
    def x(value: float) -> float:
        return round(layout.plot_x + max(0.0, min(1.0, value)) * layout.plot_width, 2)

    bars = []
    for i, row in enumerate(rows):
        y = layout.top + i * layout.row + (layout.row - layout.bar) / 2
        bars.append(
            _Bar(
                row=row,
                y=y,
                text_y=y + layout.bar / 2 + 5,
                name_y=y - 9 if layout.names_above else y + layout.bar / 2 + 5,
                width=x(row.head) - layout.plot_x if row.head is not None else 0.0,
                threshold_x=x(row.threshold),
                baseline_x=x(row.baseline) if row.baseline is not None else None,
            )
        )
    axis_y = layout.top + len(rows) * layout.row
    return _Chart(
        width=layout.width,
        height=axis_y + 24,
        plot_x=layout.plot_x,
        plot_width=layout.plot_width,
        bar_height=layout.bar,
        value_x=layout.plot_x + layout.plot_width + 10,
        name_x=layout.plot_x if layout.names_above else layout.plot_x - 12,
        name_anchor="start" if layout.names_above else "end",
        top=layout.top,
        axis_y=axis_y,
        ticks=tuple((f"{t:g}", x(t)) for t in (0.0, 0.25, 0.5, 0.75, 1.0)),
        bars=tuple(bars),
        has_baseline=any(bar.baseline_x is not None for bar in bars),
    )


def _new_groups(changes: Sequence[ClaimChange]) -> tuple[_NewGroup, ...]:
    grouped: dict[str, list[ClaimChange]] = {}
    for change in changes[:STORY_LIMIT]:
        grouped.setdefault(change.case_id, []).append(change)
    groups = []
    for case_id, items in grouped.items():
        claims = []
        for change in items:
            try:
                verdict = _verdict_view(Verdict(change.verdict).value)
            except ValueError:
                verdict = _VerdictView(value=change.verdict, label=change.verdict, css="", hint="")
            claims.append((change, verdict))
        groups.append(_NewGroup(case_id=case_id, query=items[0].query, claims=tuple(claims)))
    return tuple(groups)


def _failures(
    head: ReportHead, decision: GateDecision | None, rows: Sequence[_EvaluatorRow]
) -> tuple[bool, tuple[str, ...], tuple[str, ...]]:
    """Whether the page says passed, why not, and the notices."""
    if decision is not None:
        return decision.passed, decision.failures, decision.notices
    failures = head.summary.shortfalls
    if head.stopped_early:
        failures += (f"the run stopped early: {head.stopped_early}",)
    return not failures, failures, head.notices


def build_page(
    head: ReportHead, decision: GateDecision | None, *, has_dataset: bool, title: str
) -> Page:
    """The page's frame for the run ``head``, with the gate's ``decision`` when there is one."""
    rows = _evaluator_rows(head, decision)
    passed, failures, notices = _failures(head, decision, rows)
    notes: tuple[str, ...] = ()
    if not has_dataset:
        notes = (
            "Responses are not shown: the run report keeps only each case's query and claims. "
            "Render the report with the dataset to see every response with its claims "
            "highlighted.",
        )
    verdicts = tuple(_verdict_view(v) for v in VERDICT_CODES)
    config = {
        "verdicts": [
            {"value": v.value, "label": v.label, "css": v.css, "hint": v.hint} for v in verdicts
        ],
        "order": [VERDICT_CODES.index(v) for v in VERDICT_ORDER],
        "evaluators": [{"name": row.name, "threshold": row.threshold} for row in rows],
        "flags": _FLAG_LABELS,
        "decision": decision is not None,
        "dataset": has_dataset,
    }
    new = decision.new_hallucinations if decision is not None else ()
    return Page(
        title=title,
        head=head,
        decision=decision,
        passed=passed,
        failures=tuple(failures),
        usage_line=format_usage(head.usage),
        chart=_chart(rows),
        chart_narrow=_chart(rows, _NARROW),
        evaluators=rows,
        verdicts=tuple(verdicts[VERDICT_CODES.index(v)] for v in VERDICT_ORDER),
        new_groups=_new_groups(new),
        new_more=max(0, len(new) - STORY_LIMIT),
        limit=STORY_LIMIT,
        notices=tuple(notices),
        notes=notes,
        has_dataset=has_dataset,
        has_retrieval=any(name in head.evaluators for name in _RETRIEVAL),
        config=Markup(script_json(config)),
        style=_asset(STYLE_ASSET),
        script=_asset(SCRIPT_ASSET),
        data="ragaliq-data-" + secrets.token_hex(16),
    )


@functools.cache
def _asset(name: str) -> Markup:
    """Our own CSS or script, inlined as is (it is ours, not data: it is not escaped)."""
    node = templates_root() / name
    try:
        text = node.read_text(encoding="utf-8")
    except OSError as exc:
        raise TemplateError(f"built-in asset {name!r} not found under {templates_root()}") from exc
    if re.search(r"</(script|style)", text, re.IGNORECASE):
        raise TemplateError(f"built-in asset {name!r} would end its own element")
    return Markup(text.strip("\n") + "\n")

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
import functools
import hashlib
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import jinja2
from jinja2.sandbox import ImmutableSandboxedEnvironment

from ragaliq.errors import TemplateError
from ragaliq.gate import ClaimChange, EvaluatorStatus, GateDecision, RegressedCase
from ragaliq.models import CaseResult, ClaimVerdict, RunReport, TestCase, Verdict
from ragaliq.report._format import delta, pct, plural, score
from ragaliq.report._locate import Span, locate_claims
from ragaliq.report._templates import TemplateLoader, templates_root
from ragaliq.report.console import format_usage

__all__ = ["HTML_TEMPLATE", "locate_claims", "render_html_report"]

HTML_TEMPLATE = "report.html.j2"

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
    "unstable": "unstable: the judge's repeated verdicts disagreed",
}
_STATUS_LABELS: dict[EvaluatorStatus, str] = {
    "pass": "pass",
    "below_threshold": "below threshold",
    "regressed": "dropped from the baseline",
    "no_score": "no score",
}

# --- the view the template renders ------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class _VerdictView:
    value: str
    label: str
    css: str
    hint: str
    count: int = 0


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
class _CaseScore:
    evaluator: str
    score: float | None
    passed: bool | None
    status: str
    reasoning: str
    threshold: float | None
    baseline: float | None
    """The baseline's score for this case, when it regressed."""


@dataclass(frozen=True, kw_only=True)
class _CaseView:
    anchor: str
    case: CaseResult
    dataset_case: TestCase | None
    response_note: str | None
    segments: tuple[_Segment, ...]
    claims: tuple[_ClaimView, ...]
    unlocated: tuple[_ClaimView, ...]
    scores: tuple[_CaseScore, ...]
    mix: tuple[_VerdictView, ...]
    """Claim count per verdict, for the case's verdict strip; only verdicts present."""
    verdicts: str
    failing: str
    errored: str
    new_count: int
    problem: bool
    rank: int


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


@dataclass(frozen=True, kw_only=True)
class _Bar:
    row: _EvaluatorRow
    y: float
    text_y: float
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
    top: int
    axis_y: int
    ticks: tuple[tuple[str, float], ...]
    bars: tuple[_Bar, ...]
    has_baseline: bool


@dataclass(frozen=True, kw_only=True)
class _NewGroup:
    anchor: str | None
    case_id: str
    query: str
    claims: tuple[tuple[ClaimChange, _VerdictView], ...]


@dataclass(frozen=True, kw_only=True)
class _Page:
    title: str
    report: RunReport
    decision: GateDecision | None
    passed: bool
    failures: tuple[str, ...]
    usage_line: str
    chart: _Chart
    evaluators: tuple[_EvaluatorRow, ...]
    verdicts: tuple[_VerdictView, ...]
    claim_count: int
    cases: tuple[_CaseView, ...]
    new_groups: tuple[_NewGroup, ...]
    anchors: Mapping[str, str]
    notices: tuple[str, ...]
    notes: tuple[str, ...]
    """What the page itself wants to say, e.g. that the responses are not shown."""
    has_dataset: bool


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
    used: set[str] = set()
    anchors: dict[str, str] = {}
    for case in cases:
        if case.id in anchors:
            continue
        base = "case-" + _slug(case.id)
        anchor, n = base, 1
        while anchor in used:
            n += 1
            anchor = f"{base}-{n}"
        used.add(anchor)
        anchors[case.id] = anchor
    return anchors


def _segments(
    response: str, claims: Sequence[_ClaimView], spans: Sequence[Span | None]
) -> tuple[_Segment, ...]:
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
    return tuple(out)


@dataclass(frozen=True, kw_only=True)
class _Context:
    """What every case view is built against."""

    report: RunReport
    dataset: Mapping[str, TestCase] | None
    new: Mapping[str, set[str]]
    regressed: Mapping[tuple[str, str], RegressedCase]
    thresholds: Mapping[str, float]


def _response_note(case: CaseResult, dataset_case: TestCase | None, has_dataset: bool) -> str:
    if not has_dataset:
        return ""
    if dataset_case is None:
        return "This case is not in the dataset given, so its response is not shown."
    if dataset_case.input_hash != case.input_hash:
        return (
            "The dataset's version of this case differs from the one judged (its query, context "
            "or response changed), so its response is not shown."
        )
    return ""


def _case_view(case: CaseResult, anchor: str, ctx: _Context) -> _CaseView:
    dataset_case = ctx.dataset.get(case.id) if ctx.dataset is not None else None
    note = _response_note(case, dataset_case, ctx.dataset is not None)
    response = dataset_case.response if dataset_case is not None and not note else None
    texts = [claim.text for claim in case.claims]
    spans = locate_claims(response, texts) if response is not None else [None] * len(texts)
    new_texts = ctx.new.get(case.id, set())
    views = tuple(
        _ClaimView(
            number=i + 1,
            anchor=f"{anchor}-claim-{i + 1}",
            claim=claim,
            verdict=_verdict_view(claim.verdict),
            located=span is not None,
            new=claim.text in new_texts,
            flags=tuple(_FLAG_LABELS.get(flag, flag.replace("_", " ")) for flag in claim.flags),
        )
        for i, (claim, span) in enumerate(zip(case.claims, spans, strict=True))
    )
    scores = []
    for name in ctx.report.summary.evaluators:
        result = case.results.get(name)
        if result is None:
            continue
        regressed = ctx.regressed.get((case.id, name))
        scores.append(
            _CaseScore(
                evaluator=name,
                score=result.score,
                passed=result.passed,
                status=result.status,
                reasoning=result.reasoning,
                threshold=ctx.thresholds.get(name),
                baseline=regressed.baseline if regressed is not None else None,
            )
        )
    counts = Counter(claim.verdict for claim in case.claims)
    failing = [s.evaluator for s in scores if s.passed is False]
    errored = [s.evaluator for s in scores if s.status == "error"]
    new_count = sum(view.new for view in views)
    unsupported = any(claim.verdict != Verdict.SUPPORTED for claim in case.claims)
    if case.status == "error" or errored:
        rank = 0
    elif new_count:
        rank = 1
    elif failing or any(s.baseline is not None for s in scores):
        rank = 2
    elif unsupported:
        rank = 3
    else:
        rank = 5 if case.status == "skipped" else 4
    return _CaseView(
        anchor=anchor,
        case=case,
        dataset_case=dataset_case if not note else None,
        response_note=note or None,
        segments=_segments(response, views, spans) if response is not None else (),
        claims=views,
        unlocated=tuple(view for view in views if not view.located),
        scores=tuple(scores),
        mix=tuple(_verdict_view(v, counts[v]) for v in VERDICT_ORDER if counts[v]),
        verdicts=" ".join(v.value for v in VERDICT_ORDER if counts[v]),
        failing=" ".join(failing),
        errored=" ".join(errored),
        new_count=new_count,
        problem=rank < 4,
        rank=rank,
    )


def _evaluator_rows(report: RunReport, decision: GateDecision | None) -> tuple[_EvaluatorRow, ...]:
    rows = []
    for name, summary in report.summary.evaluators.items():
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
            )
        )
    return tuple(rows)


_CHART_WIDTH = 640
_CHART_PLOT_X = 132
_CHART_PLOT_WIDTH = 400
_CHART_ROW = 44
_CHART_BAR = 18
_CHART_TOP = 12


def _x(value: float) -> float:
    return round(_CHART_PLOT_X + max(0.0, min(1.0, value)) * _CHART_PLOT_WIDTH, 2)


def _chart(rows: Sequence[_EvaluatorRow]) -> _Chart:
    bars = []
    for i, row in enumerate(rows):
        y = _CHART_TOP + i * _CHART_ROW + (_CHART_ROW - _CHART_BAR) / 2
        bars.append(
            _Bar(
                row=row,
                y=y,
                text_y=y + _CHART_BAR / 2 + 5,
                width=_x(row.head) - _CHART_PLOT_X if row.head is not None else 0.0,
                threshold_x=_x(row.threshold),
                baseline_x=_x(row.baseline) if row.baseline is not None else None,
            )
        )
    axis_y = _CHART_TOP + len(rows) * _CHART_ROW
    return _Chart(
        width=_CHART_WIDTH,
        height=axis_y + 24,
        plot_x=_CHART_PLOT_X,
        plot_width=_CHART_PLOT_WIDTH,
        bar_height=_CHART_BAR,
        value_x=_CHART_PLOT_X + _CHART_PLOT_WIDTH + 12,
        top=_CHART_TOP,
        axis_y=axis_y,
        ticks=tuple((f"{t:g}", _x(t)) for t in (0.0, 0.25, 0.5, 0.75, 1.0)),
        bars=tuple(bars),
        has_baseline=any(bar.baseline_x is not None for bar in bars),
    )


def _new_groups(
    changes: Sequence[ClaimChange], anchors: Mapping[str, str]
) -> tuple[_NewGroup, ...]:
    grouped: dict[str, list[ClaimChange]] = {}
    for change in changes:
        grouped.setdefault(change.case_id, []).append(change)
    groups = []
    for case_id, items in grouped.items():
        claims = []
        for change in items:
            try:
                verdict = _verdict_view(Verdict(change.verdict))
            except ValueError:
                verdict = _VerdictView(value=change.verdict, label=change.verdict, css="", hint="")
            claims.append((change, verdict))
        groups.append(
            _NewGroup(
                anchor=anchors.get(case_id),
                case_id=case_id,
                query=items[0].query,
                claims=tuple(claims),
            )
        )
    return tuple(groups)


def _page(
    report: RunReport,
    decision: GateDecision | None,
    cases: Sequence[TestCase] | None,
    title: str,
) -> _Page:
    anchors = _anchors(report.cases)
    dataset = None if cases is None else {case.id: case for case in cases}
    rows = _evaluator_rows(report, decision)
    new: dict[str, set[str]] = {}
    regressed: dict[tuple[str, str], RegressedCase] = {}
    if decision is not None:
        for change in decision.new_hallucinations:
            new.setdefault(change.case_id, set()).add(change.claim)
        regressed = {(r.case_id, r.evaluator): r for r in decision.regressed_cases}
    ctx = _Context(
        report=report,
        dataset=dataset,
        new=new,
        regressed=regressed,
        thresholds={row.name: row.threshold for row in rows},
    )
    views = [_case_view(case, anchors.get(case.id, "case"), ctx) for case in report.cases]
    views.sort(key=lambda view: view.rank)
    counts = Counter(claim.verdict for case in report.cases for claim in case.claims)
    if decision is not None:
        passed, failures = decision.passed, decision.failures
        notices = decision.notices
    else:
        failures = tuple(
            f"{row.name}: no case could be scored"
            if row.head is None
            else f"{row.name}: {row.head:.3f} is below the threshold {row.threshold:.2f}"
            for row in rows
            if not row.passed
        )
        if report.stopped_early:
            failures += (f"the run stopped early: {report.stopped_early}",)
        passed, notices = not failures, report.notices
    notes = []
    if dataset is None:
        notes.append(
            "Responses are not shown: the run report keeps only each case's query and claims. "
            "Render the report with the dataset to see every response with its claims "
            "highlighted."
        )
    else:
        missing = sum(1 for view in views if view.response_note)
        if missing:
            notes.append(
                f"{missing} of {len(views)} cases are missing from the dataset given or differ "
                "from the judged version, so their responses are not shown."
            )
    return _Page(
        title=title,
        report=report,
        decision=decision,
        passed=passed,
        failures=tuple(failures),
        usage_line=format_usage(report.usage),
        chart=_chart(rows),
        evaluators=rows,
        verdicts=tuple(_verdict_view(v, counts[v]) for v in VERDICT_ORDER),
        claim_count=sum(counts.values()),
        cases=tuple(views),
        new_groups=_new_groups(decision.new_hallucinations, anchors) if decision else (),
        anchors=anchors,
        notices=tuple(notices),
        notes=tuple(notes),
        has_dataset=dataset is not None,
    )


# --- rendering ---------------------------------------------------------------------------------


def _csp_hash(text: str) -> str:
    digest = hashlib.sha256(str(text).encode("utf-8")).digest()
    return "'sha256-" + base64.b64encode(digest).decode("ascii") + "'"


def _options(options: Mapping[str, Any]) -> str:
    def show(value: Any) -> str:
        if isinstance(value, Mapping):
            return "{" + ", ".join(f"{k}: {show(v)}" for k, v in value.items()) + "}"
        return "none" if value is None else str(value)

    return ", ".join(f"{key}: {show(value)}" for key, value in options.items())


_FILTERS: dict[str, Callable[..., str]] = {
    "score": score,
    "delta": delta,
    "pct": functools.partial(pct, digits=0),
    "plural": plural,
    "csp_hash": _csp_hash,
    "options": _options,
}


def _environment() -> ImmutableSandboxedEnvironment:
    env = ImmutableSandboxedEnvironment(
        loader=TemplateLoader(),
        undefined=jinja2.StrictUndefined,
        autoescape=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(_FILTERS)
    return env


def render_html_report(
    report: RunReport,
    *,
    decision: GateDecision | None = None,
    cases: Sequence[TestCase] | None = None,
    title: str = "RagaliQ Gate report",
) -> str:
    """The run as one self-contained HTML page: scores, the gate, and every case claim by claim.

    Args:
        report: The (head) run to show.
        decision: The gate decision for ``report``, to show the gate status, the baseline in the
            chart and the newly hallucinated claims (flagged in the cases too).
        cases: The dataset the run judged, to show each response with its claims highlighted;
            matched to the report's cases by id, and used only where the input hash is unchanged.
        title: The page title and heading.

    Returns:
        The HTML document, ending with a newline.

    Raises:
        TemplateError: The built-in template is missing or failed to render.
    """
    page = _page(report, decision, cases, title)
    try:
        template = _environment().get_template(HTML_TEMPLATE)
        html = template.render(page=page)
    except jinja2.TemplateNotFound as exc:
        raise TemplateError(
            f"built-in template {HTML_TEMPLATE!r} not found under {templates_root()}"
        ) from exc
    except jinja2.TemplateError as exc:
        raise TemplateError(f"{HTML_TEMPLATE}: {exc}") from exc
    return html if html.endswith("\n") else html + "\n"

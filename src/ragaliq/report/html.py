r"""The HTML report: one self-contained page to review a run claim by claim, at any size.

The page is written as it goes (:func:`write_html_report`): first the parts that do not depend on
the cases (the header, the gate's story, the scores and their chart, the notices), rendered from
``report.html.j2`` in a sandboxed Jinja environment with autoescaping and ``StrictUndefined``; then
every case, one compact JSON record at a time, inside ``<script type="application/json">``; then
the totals gathered on the way; and last a small inline script (``report.js``) that renders what
is on screen: the cases ordered problems first, a page at a time, with search and filters that
run over the data rather than over DOM nodes. Ten thousand cases of six claims make about 13 MB
that Chromium opens in under half a second (``benchmarks/html_report.py``). Writing keeps one
case at a time, plus a bounded table of repeated strings.

Nothing a dataset or a judge supplies can become markup: in the HTML parts Jinja escapes it; in
the JSON ``<``, ``>``, ``&``, U+2028 and U+2029 are written as ``\uXXXX`` escapes, so no text can
end the script element; and the script inserts every string with ``textContent``. The page needs
nothing but itself: its CSS and script are inline, the chart is inline SVG, and a
Content-Security-Policy ``<meta>`` forbids every fetch and allows only that one script and that
one style, by their hashes.

The run report keeps each case's query and claims but not its response. Given the dataset's cases,
the page shows each response with its claims highlighted in place: :func:`locate_claims` finds
each claim verbatim (the offline judge's claims are the response's sentences) or with case, spacing
and quote style folded; a claim it cannot find (a model judge's claims are rewrites) is marked
"not in text" instead.

The case records (``rq-cases``, a JSON array, one record a line) hold, by key: ``i`` the id,
``q`` the query, ``s`` the status when not ``ok``, ``x`` the error, ``r`` the rank (0 first:
errors, new hallucinations, failing scores, unsupported claims, the rest, skipped cases), ``c``
the claims, ``f`` the needed facts, ``k`` the chunk ratings ``[relevant, reason, heuristic]``,
``e`` the evaluators' results in the order of ``rq-config``'s ``evaluators``
(``[score, passed, status, reasoning, baseline]``, ``null`` when absent), and with the dataset
``p`` the response, ``t`` the context, ``a`` the expected answer, or ``n`` why the response is not
shown. A claim or fact is ``[text, verdict, confidence, evidence, reason, span, flags, agreement,
new]``, trailing defaults left out; ``verdict`` indexes ``rq-config``'s ``verdicts``; ``text`` is
``null`` when it is the response's text at ``span``. A string that recurs may be written as an
integer: its index in ``rq-totals``' ``strings``.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import io
import json
import re
import secrets
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol
from urllib.parse import quote

import jinja2
from jinja2.sandbox import ImmutableSandboxedEnvironment
from markupsafe import Markup

from ragaliq.errors import TemplateError
from ragaliq.gate import ClaimChange, EvaluatorStatus, GateDecision
from ragaliq.models import (
    CaseResult,
    ClaimVerdict,
    ReportHead,
    RunReport,
    Status,
    TestCase,
    Verdict,
)
from ragaliq.report._format import delta, pct, plural, score, verdict_label
from ragaliq.report._locate import Span, locate_claims
from ragaliq.report._templates import TemplateLoader, templates_root
from ragaliq.report.console import format_usage

__all__ = ["HTML_TEMPLATE", "TextSink", "locate_claims", "render_html_report", "write_html_report"]

HTML_TEMPLATE = "report.html.j2"
STYLE_ASSET = "report.css"
SCRIPT_ASSET = "report.js"
STORY_LIMIT = 50
"""At most this many items of each list in the gate's story; the filters show the rest."""

VERDICT_CODES: tuple[Verdict, ...] = tuple(Verdict)
"""A claim's verdict in the data is its index here."""
VERDICT_ORDER: tuple[Verdict, ...] = (
    Verdict.CONTRADICTED,
    Verdict.NOT_ENOUGH_INFO,
    Verdict.PARTIALLY_SUPPORTED,
    Verdict.SUPPORTED,
)
"""The order of the legend and the filters: the worst first."""
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
_RESULT_STATUS: dict[Status, int] = {"ok": 0, "error": 1, "skipped": 2}
_RETRIEVAL = ("context_recall", "context_precision")


class TextSink(Protocol):
    """Where a page is written: a text file, ``io.StringIO``, an atomic writer."""

    def write(self, text: str, /) -> object:
        """Write ``text``."""


# --- what the template renders: the parts that do not depend on the cases ----------------------


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
    case_id: str
    query: str
    claims: tuple[tuple[ClaimChange, _VerdictView], ...]


@dataclass(frozen=True, kw_only=True)
class _Page:
    title: str
    head: ReportHead
    decision: GateDecision | None
    passed: bool
    failures: tuple[str, ...]
    usage_line: str
    chart: _Chart
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


def _verdict_view(verdict: Verdict) -> _VerdictView:
    return _VerdictView(
        value=verdict.value,
        label=verdict_label(verdict),
        css="verdict-" + verdict.value.lower().replace("_", "-"),
        hint=_VERDICT_HINTS[verdict],
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


_CHART_WIDTH = 664
_CHART_PLOT_X = 160
_CHART_PLOT_WIDTH = 390
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


def _new_groups(changes: Sequence[ClaimChange]) -> tuple[_NewGroup, ...]:
    grouped: dict[str, list[ClaimChange]] = {}
    for change in changes[:STORY_LIMIT]:
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
        groups.append(_NewGroup(case_id=case_id, query=items[0].query, claims=tuple(claims)))
    return tuple(groups)


def _failures(
    head: ReportHead, decision: GateDecision | None, rows: Sequence[_EvaluatorRow]
) -> tuple[bool, tuple[str, ...], tuple[str, ...]]:
    """Whether the page says passed, why not, and the notices."""
    if decision is not None:
        return decision.passed, decision.failures, decision.notices
    failures = tuple(
        f"{row.name}: no case could be scored"
        if row.head is None
        else f"{row.name}: {row.head:.3f} is below the threshold {row.threshold:.2f}"
        for row in rows
        if not row.passed
    )
    if head.stopped_early:
        failures += (f"the run stopped early: {head.stopped_early}",)
    return not failures, failures, head.notices


def _page(head: ReportHead, decision: GateDecision | None, has_dataset: bool, title: str) -> _Page:
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
    return _Page(
        title=title,
        head=head,
        decision=decision,
        passed=passed,
        failures=tuple(failures),
        usage_line=format_usage(head.usage),
        chart=_chart(rows),
        evaluators=rows,
        verdicts=tuple(verdicts[VERDICT_CODES.index(v)] for v in VERDICT_ORDER),
        new_groups=_new_groups(new),
        new_more=max(0, len(new) - STORY_LIMIT),
        limit=STORY_LIMIT,
        notices=tuple(notices),
        notes=notes,
        has_dataset=has_dataset,
        has_retrieval=any(name in head.evaluators for name in _RETRIEVAL),
        config=Markup(_script_json(config)),
        style=_asset(STYLE_ASSET),
        script=_asset(SCRIPT_ASSET),
        data="ragaliq-data-" + secrets.token_hex(16),
    )


# --- the case records --------------------------------------------------------------------------

_SCRIPT_ESCAPES = {
    ord("<"): "\\u003c",
    ord(">"): "\\u003e",
    ord("&"): "\\u0026",
    0x2028: "\\u2028",
    0x2029: "\\u2029",
}


def _script_json(value: Any) -> str:
    """Compact JSON that is safe inside a ``<script>`` element: no text in it can end it."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return text.translate(_SCRIPT_ESCAPES)


class _Strings:
    """Strings that recur (reasons, reasonings, evidence), written whole twice, then by index.

    A string is written whole the first time; when it comes again it joins the table (written
    after the cases) and is written as its index from then on. Bounded: what it remembers of
    strings seen once is a set of hashes (a collision only interns a string early), and both
    have a cap.
    """

    def __init__(self, *, size: int = 50_000, seen: int = 200_000, longest: int = 240) -> None:
        self.table: dict[str, int] = {}
        self._seen: set[int] = set()
        self._size, self._seen_size, self._longest = size, seen, longest

    def ref(self, text: str) -> str | int:
        index = self.table.get(text)
        if index is not None:
            return index
        if len(text) < 12 or len(text) > self._longest or len(self.table) >= self._size:
            return text
        key = hash(text)
        if key in self._seen:
            index = self.table[text] = len(self.table)
            return index
        if len(self._seen) < self._seen_size:
            self._seen.add(key)
        return text


@dataclass(kw_only=True)
class _Totals:
    """What the page counts while the cases stream past."""

    cases: int = 0
    claims: int = 0
    facts: int = 0
    chunks: int = 0
    missing: int = 0
    """Cases whose response is not shown: not in the dataset, or changed since they were judged."""
    verdicts: Counter[Verdict] = field(default_factory=Counter)
    unverifiable: int = 0
    """Claims the offline judge could neither ground nor fault."""


def _trim(record: list[Any]) -> list[Any]:
    """A positional record without its trailing absences (None, empty lists and strings)."""
    while record and record[-1] in (None, [], ""):
        record.pop()
    return record


def _verdict_record(
    claim: ClaimVerdict,
    strings: _Strings,
    *,
    response: str | None = None,
    span: Span | None = None,
    new: bool = False,
) -> list[Any]:
    text: str | None = claim.text
    if span is not None and response is not None and response[span[0] : span[1]] == claim.text:
        text = None  # the response holds it: written once
    return _trim(
        [
            text,
            VERDICT_CODES.index(claim.verdict),
            claim.confidence,
            strings.ref(claim.evidence) if claim.evidence else None,
            strings.ref(claim.reason) if claim.reason else None,
            list(span) if span is not None else None,
            [strings.ref(flag) for flag in claim.flags],
            claim.agreement,
            1 if new else None,
        ]
    )


@dataclass(frozen=True, kw_only=True)
class _Judged:
    """The gate decision, looked up case by case."""

    evaluators: tuple[str, ...]
    new: Mapping[str, frozenset[str]]
    regressed: Mapping[tuple[str, str], float]

    @classmethod
    def of(cls, head: ReportHead, decision: GateDecision | None) -> _Judged:
        new: dict[str, set[str]] = {}
        regressed: dict[tuple[str, str], float] = {}
        if decision is not None:
            for change in decision.new_hallucinations:
                new.setdefault(change.case_id, set()).add(change.claim)
            regressed = {(r.case_id, r.evaluator): r.baseline for r in decision.regressed_cases}
        return cls(
            evaluators=tuple(head.summary.evaluators),
            new={case_id: frozenset(texts) for case_id, texts in new.items()},
            regressed=regressed,
        )


def _rank(case: CaseResult, results: Sequence[list[Any] | None], new_count: int) -> int:
    """Where the case comes in the list, problems first.

    0 errors, 1 new hallucinations, 2 failing or dropped scores, 3 unsupported claims, 4 the
    rest, 5 skipped cases.
    """
    present = [r for r in results if r is not None]
    if case.status == "error" or any(r[2] == _RESULT_STATUS["error"] for r in present):
        return 0
    if new_count:
        return 1
    if any(r[1] == 0 or r[4] is not None for r in present):
        return 2
    if any(claim.verdict != Verdict.SUPPORTED for claim in case.claims):
        return 3
    return 5 if case.status == "skipped" else 4


def _dataset_part(
    case: CaseResult, dataset: Callable[[str], TestCase | None], record: dict[str, Any]
) -> str | None:
    """Add what the dataset shows of the case to its record; its response, if it is shown."""
    found = dataset(case.id)
    if found is None:
        record["n"] = 1
        return None
    if found.input_hash != case.input_hash:
        record["n"] = 2
        return None
    record["p"] = found.response
    if found.context:
        record["t"] = list(found.context)
    if found.expected_answer:
        record["a"] = found.expected_answer
    return found.response


def _results(case: CaseResult, judged: _Judged, strings: _Strings) -> list[list[Any] | None]:
    """The case's result per evaluator, in the page's order, with the baseline it dropped from."""
    results: list[list[Any] | None] = []
    for name in judged.evaluators:
        result = case.results.get(name)
        if result is None:
            results.append(None)
            continue
        results.append(
            [
                result.score,
                None if result.passed is None else int(result.passed),
                _RESULT_STATUS.get(result.status, 0),
                strings.ref(result.reasoning),
                judged.regressed.get((case.id, name)),
            ]
        )
    return results


def _case_record(
    case: CaseResult,
    *,
    judged: _Judged,
    dataset: Callable[[str], TestCase | None] | None,
    strings: _Strings,
    totals: _Totals,
) -> dict[str, Any]:
    record: dict[str, Any] = {"i": case.id, "q": case.query}
    if case.status != "ok":
        record["s"] = case.status
    if case.error:
        record["x"] = strings.ref(case.error)
    response = _dataset_part(case, dataset, record) if dataset is not None else None
    if dataset is not None and response is None:
        totals.missing += 1
    spans: Sequence[Span | None] = (
        locate_claims(response, [c.text for c in case.claims])
        if response is not None
        else [None] * len(case.claims)
    )
    new_texts = judged.new.get(case.id, frozenset())
    new_count = 0
    claims = []
    for claim, span in zip(case.claims, spans, strict=True):
        new = claim.text in new_texts
        new_count += new
        claims.append(_verdict_record(claim, strings, response=response, span=span, new=new))
        totals.verdicts[claim.verdict] += 1
        totals.unverifiable += not claim.verifiable
    if claims:
        record["c"] = claims
    if case.facts:
        record["f"] = [_verdict_record(fact, strings) for fact in case.facts]
    if case.chunks:
        record["k"] = [
            _trim([1 if c.relevant else 0, strings.ref(c.reason), 1 if c.heuristic else None])
            for c in case.chunks
        ]
    results = _results(case, judged, strings)
    record["r"] = _rank(case, results, new_count)
    if any(r is not None for r in results):
        record["e"] = [None if r is None else _trim(r) for r in results]
    totals.cases += 1
    totals.claims += len(case.claims)
    totals.facts += len(case.facts)
    totals.chunks += len(case.chunks)
    return record


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


def _case_href(case_id: str) -> str:
    """The link to a case in the list: the script finds it in the data, whatever page it is on."""
    return "#case=" + quote(case_id, safe="")


_FILTERS: dict[str, Callable[..., str]] = {
    "score": score,
    "delta": delta,
    "pct": functools.partial(pct, digits=0),
    "plural": plural,
    "csp_hash": _csp_hash,
    "options": _options,
    "case_href": _case_href,
    "verdict_label": verdict_label,
}


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


def _frame(page: _Page) -> tuple[str, str]:
    """The page before the cases' data and after it."""
    try:
        template = _environment().get_template(HTML_TEMPLATE)
        html = template.render(page=page)
    except jinja2.TemplateNotFound as exc:
        raise TemplateError(
            f"built-in template {HTML_TEMPLATE!r} not found under {templates_root()}"
        ) from exc
    except jinja2.TemplateError as exc:
        raise TemplateError(f"{HTML_TEMPLATE}: {exc}") from exc
    before, marker, after = html.partition(page.data)
    if not marker:
        raise TemplateError(f"{HTML_TEMPLATE} has no place for the cases' data")
    return before, after if after.endswith("\n") else after + "\n"


def write_html_report(
    out: TextSink,
    *,
    head: ReportHead,
    cases: Iterable[CaseResult],
    decision: GateDecision | None = None,
    dataset: Callable[[str], TestCase | None] | None = None,
    title: str = "RagaliQ Gate report",
) -> None:
    """Write the run as one self-contained HTML page, case by case, as the cases come.

    The page holds one compact JSON record per case and renders the cases on screen with a small
    inline script; memory does not grow with the number of cases (one case at a time, and a
    bounded table of repeated strings).

    Args:
        out: Where the page goes: anything with ``write(str)``, e.g. a text file (UTF-8).
        head: The run without its cases (:attr:`RunReport.head`).
        cases: The run's cases, in any order (the page puts problems first); read once.
        decision: The gate decision for this run, to show the gate status, the baseline in the
            chart, the newly hallucinated claims (flagged in the cases too) and the regressions.
        dataset: The dataset's case for a case id, or None when it has none, to show each
            response with its claims highlighted; used only where the input hash is unchanged.
        title: The page title and heading.

    Raises:
        TemplateError: The built-in template or its assets are missing or failed to render.
    """
    page = _page(head, decision, dataset is not None, title)
    before, after = _frame(page)
    judged = _Judged.of(head, decision)
    strings = _Strings()
    totals = _Totals()
    out.write(before)
    out.write('<script type="application/json" id="rq-cases">[')
    for case in cases:
        record = _case_record(case, judged=judged, dataset=dataset, strings=strings, totals=totals)
        out.write(("\n" if totals.cases == 1 else ",\n") + _script_json(record))
    out.write("\n]</script>\n")
    summary = {
        "cases": totals.cases,
        "claims": totals.claims,
        "facts": totals.facts,
        "chunks": totals.chunks,
        "missing": totals.missing,
        "verdicts": [totals.verdicts[v] for v in VERDICT_CODES],
        "unverifiable": totals.unverifiable,
        "strings": list(strings.table),
    }
    out.write('<script type="application/json" id="rq-totals">')
    out.write(_script_json(summary))
    out.write("</script>\n")
    out.write(after)


def render_html_report(
    report: RunReport,
    *,
    decision: GateDecision | None = None,
    cases: Sequence[TestCase] | None = None,
    title: str = "RagaliQ Gate report",
) -> str:
    """The run as one self-contained HTML page: scores, the gate, and every case claim by claim.

    A wrapper of :func:`write_html_report` for a report held whole.

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
    by_id = None if cases is None else {case.id: case for case in cases}
    out = io.StringIO()
    write_html_report(
        out,
        head=report.head,
        cases=report.cases,
        decision=decision,
        dataset=None if by_id is None else by_id.get,
        title=title,
    )
    return out.getvalue()

r"""The HTML report: one self-contained page to review a run claim by claim, at any size.

The page is written as it goes (:func:`write_html_report`): first the parts that do not depend on
the cases (the header, the gate's story, the scores and their chart, the notices:
:mod:`ragaliq.report._html_page`), rendered from ``report.html.j2`` in a sandboxed Jinja
environment with autoescaping and ``StrictUndefined``; then every case, one compact JSON record at
a time, deflated into base64 inside a ``<script>`` data block; then the totals gathered on the way
(:mod:`ragaliq.report._html_data`, which describes the records); and last a small inline script
(``report.js``) that unpacks the records and renders what is on screen: the cases ordered
problems first, a page at a time, with search and filters that run over the data rather than
over DOM nodes. Ten thousand cases with all five evaluators make about 6 MB that Chromium opens
in under half a second (``benchmarks/html_report.py``). Writing keeps one case at a time, plus a
bounded table of repeated strings and the compressor's window.

Nothing a dataset or a judge supplies can become markup: in the HTML parts Jinja escapes it; the
records are base64, and in the JSON ``<``, ``>``, ``&``, U+2028 and U+2029 are written as
``\uXXXX`` escapes, so no text can end the script element; and the script inserts every string
with ``textContent``. The page needs nothing but itself: its CSS and script are inline, the chart
is inline SVG, the browser unpacks the records (``DecompressionStream``), and a
Content-Security-Policy ``<meta>`` forbids every fetch and allows only that one script and that
one style, by their hashes.

The run report keeps each case's query and claims but not its response. Given the dataset's cases,
the page shows each response with its claims highlighted in place
(:func:`~ragaliq.report._locate.locate_claims` finds each claim verbatim, as the offline judge's
claims are the response's sentences, or with case, spacing and quote style folded); a claim it
cannot find (a model judge's claims are rewrites) is marked "not in text" instead.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

import jinja2
from jinja2.sandbox import ImmutableSandboxedEnvironment

from ragaliq._files import open_atomic
from ragaliq.dataset import DatasetCases
from ragaliq.errors import TemplateError
from ragaliq.gate import GateDecision
from ragaliq.models import CaseResult, ReportHead, TestCase
from ragaliq.report._html_data import write_cases
from ragaliq.report._html_page import Page, build_page
from ragaliq.report._templates import TemplateLoader, templates_root
from ragaliq.report.filters import HTML_FILTERS
from ragaliq.run_report import TextSink

__all__ = ["HTML_TEMPLATE", "write_html", "write_html_report"]

HTML_TEMPLATE = "report.html.j2"


def _environment() -> ImmutableSandboxedEnvironment:
    env = ImmutableSandboxedEnvironment(
        loader=TemplateLoader(),
        undefined=jinja2.StrictUndefined,
        autoescape=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(HTML_FILTERS)
    return env


def _frame(page: Page) -> tuple[str, str]:
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

    The page holds one compact JSON record per case, deflated, and renders the cases on screen
    with a small inline script; memory does not grow with the number of cases (one case at a
    time, a bounded table of repeated strings, and the compressor's window).

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
    page = build_page(head, decision, has_dataset=dataset is not None, title=title)
    before, after = _frame(page)
    out.write(before)
    write_cases(out, head=head, cases=cases, decision=decision, dataset=dataset)
    out.write(after)


def write_html(
    path: Path,
    *,
    head: ReportHead,
    cases: Iterable[CaseResult],
    decision: GateDecision | None = None,
    dataset: Iterable[TestCase] | None = None,
    title: str = "RagaliQ Gate report",
) -> None:
    """Write the HTML report to ``path`` atomically, case by case; ``dataset`` shows the responses.

    Raises:
        OutputError: the file cannot be written.
        TemplateError: the built-in template failed to render.
    """
    lookup = None
    if isinstance(dataset, DatasetCases):
        lookup = dataset.by_id()
    elif dataset is not None:
        lookup = {case.id: case for case in dataset}.get
    with open_atomic(path) as out:
        write_html_report(
            out, head=head, cases=cases, decision=decision, dataset=lookup, title=title
        )

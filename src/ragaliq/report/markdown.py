"""The PR comment and the job summary, rendered from Jinja templates into GitHub Markdown.

Both are rendered in a sandboxed Jinja environment (:mod:`ragaliq.report._sandbox`). The
built-in templates, ``comment.md.j2`` and ``summary.md.j2``, ship in the wheel under
``ragaliq/templates``. A user template is rendered in the same environment; it can
``{% extends "comment.md.j2" %}`` and override any of its blocks but the gate's own
(:mod:`ragaliq.report._rendering`).

Everything a dataset, a judge or a run supplies (queries, claims, evidence, reasons, errors, case
ids, notices) is untrusted and goes through one filter, ``md`` (:func:`escape_markdown`); the
filters are listed in :mod:`ragaliq.report.filters`.

GitHub caps a comment at 65,536 characters and a job summary at 1 MiB; a rendering too long is
rendered again with less detail, never cut (:mod:`ragaliq.report._fitting`).
"""

from __future__ import annotations

import re
from typing import Any

from ragaliq.gate import GateDecision
from ragaliq.models import ReportHead, RunReport
from ragaliq.report._digest import SUMMARY_CASES, CaseDigest
from ragaliq.report._escape import escape_markdown, md, shorten_redacted
from ragaliq.report._fitting import COMMENT_STEPS, SUMMARY_STEPS, Limits, fit, full_limits
from ragaliq.report._rendering import (
    COMMENT_TEMPLATE,
    PROTECTED_BLOCKS,
    SUMMARY_TEMPLATE,
    check_template,
    load,
    render,
)
from ragaliq.report._sandbox import MAX_VALUE_CHARS
from ragaliq.report._user_template import UserTemplate
from ragaliq.report.console import format_usage
from ragaliq.report.marker import comment_marker

__all__ = [
    "ACCEPT_HINT",
    "BASELINE_ADVICE",
    "COMMENT_LIMIT",
    "COMMENT_TEMPLATE",
    "MAX_VALUE_CHARS",
    "PROTECTED_BLOCKS",
    "SUMMARY_CASES",
    "SUMMARY_LIMIT",
    "SUMMARY_TEMPLATE",
    "CaseDigest",
    "UserTemplate",
    "check_template",
    "escape_markdown",
    "render_comment",
    "render_status",
    "render_summary",
]

COMMENT_LIMIT = 65_536
"""GitHub's limit for an issue comment body, in characters."""
SUMMARY_LIMIT = 1_048_576
"""GitHub's limit for a job summary, in UTF-8 bytes."""
_URL = re.compile(r"^https?://[^\s<>()\[\]\"'`]+$")


ACCEPT_HINT = (
    "A reviewer with write access accepts a claim the gate got wrong with a review of this "
    "commit that says <code>/ragaliq accept &lt;id&gt;</code> (or <code>/ragaliq accept "
    "all</code> for every claim listed here); an accepted claim counts as supported, and a new "
    "push needs a new review."
)
"""How a reviewer accepts a claim on GitHub (HTML inside the comment's ``<sub>``; trusted)."""
BASELINE_ADVICE = (
    "Merge this change, and the baseline of the base branch is recorded again as your set-up "
    "records it; later changes are compared with it."
)
"""How to update the baseline when the store in use does not say (a decision rendered alone)."""


def _context(
    decision: GateDecision, *, where: str, clip: int, baseline_advice: str
) -> dict[str, Any]:
    return {
        "decision": decision,
        "usage_line": format_usage(decision.usage),
        "where": where,
        "clip": clip,
        "baseline_advice": baseline_advice,
    }


def render_comment(
    decision: GateDecision,
    *,
    comment_id: str = "default",
    template: UserTemplate | None = None,
    details_url: str | None = None,
    report_artifact: bool = False,
    limit: int = COMMENT_LIMIT,
    baseline_advice: str = BASELINE_ADVICE,
    accept_hint: str = ACCEPT_HINT,
    summary_name: str = "the job summary",
) -> str:
    """The PR comment: its first line is the hidden marker, its length at most ``limit``.

    Args:
        decision: The gate decision to show.
        comment_id: Tells this gate's comment apart from others on the same PR.
        template: A user template to render instead of ``comment.md.j2``; it may extend it.
        details_url: Where the full results are (the job summary); linked from the comment.
        report_artifact: The run at ``details_url`` keeps the HTML report as an artifact, and
            the comment says so.
        limit: The most characters the comment may have.
        baseline_advice: How to update the baseline with the store in use (Markdown, trusted).
        accept_hint: How a reviewer accepts a claim on the host (trusted).
        summary_name: How the host names where the full results are.

    Returns:
        The comment body, ending with a newline.

    Raises:
        TemplateError: The template failed to load or render, or even its shortest rendering
            is longer than ``limit``.
        ValueError: ``comment_id`` or ``details_url`` is malformed.
    """
    marker = comment_marker(comment_id)
    if details_url is not None and not _URL.match(details_url):
        raise ValueError(f"details_url {details_url!r} must be an http(s) URL without spaces")
    loaded = load(template, COMMENT_TEMPLATE)
    where = f"[{summary_name}]({details_url})" if details_url else summary_name
    context = _context(decision, where=where, clip=300, baseline_advice=baseline_advice)
    context["accept_hint"] = accept_hint
    context.update(
        marker=marker,
        details_url=details_url,
        report_artifact=report_artifact and details_url is not None,
    )

    def attempt(limits: Limits) -> str:
        text = render(loaded, {**context, "limits": limits}, cap=4 * limit)
        if text.split("\n", 1)[0] != marker:
            text = f"{marker}\n{text}"
        return text if text.endswith("\n") else text + "\n"

    return fit(
        attempt,
        limits=full_limits(decision),
        steps=COMMENT_STEPS,
        size=len,
        limit=limit,
        what="comment",
    )


def render_status(*, title: str, reason: str, comment_id: str = "default") -> str:
    """The comment of a run that reached no decision: skipped, or could not judge.

    It replaces whatever the comment said before, so that a verdict from an earlier push never
    stands over a run that did not decide. ``reason`` is untrusted (it may quote an API).
    """
    return (
        f"{comment_marker(comment_id)}\n### ⚠️ {escape_markdown(title)}\n\n"
        f"{md(shorten_redacted(reason, 2000))}\n\n<sub>RagaliQ Gate</sub>\n"
    )


def render_summary(
    decision: GateDecision,
    *,
    report: RunReport | ReportHead,
    cases: CaseDigest | None = None,
    template: UserTemplate | None = None,
    limit: int = SUMMARY_LIMIT,
    baseline_advice: str = BASELINE_ADVICE,
) -> str:
    """The job summary: the comment's headline and tables, every list in full, and every case.

    Args:
        decision: The gate decision to show.
        report: The head run.
        cases: The cases for the per-case table, kept as the run went; taken from ``report``
            when it holds its cases.
        template: A user template to render instead of ``summary.md.j2``; it may extend it.
        limit: The most UTF-8 bytes the summary may take.
        baseline_advice: How to update the baseline with the store in use (Markdown, trusted).

    Returns:
        The summary Markdown, ending with a newline.

    Raises:
        TemplateError: The template failed to load or render, or even its shortest rendering
            is larger than ``limit``.
    """
    loaded = load(template, SUMMARY_TEMPLATE)
    context = _context(
        decision,
        where="the JSON report (`ragaliq run -o report.json`)",
        clip=2000,
        baseline_advice=baseline_advice,
    )
    if cases is None:
        cases = CaseDigest()
        for case in report.cases if isinstance(report, RunReport) else ():
            cases.add(case)
    context.update(
        accept_hint=ACCEPT_HINT,
        marker="",
        details_url=None,
        report_artifact=False,
        report=report.head if isinstance(report, RunReport) else report,
        cases=cases.cases,
        case_total=cases.total,
        evaluator_names=list(report.summary.evaluators),
    )

    def attempt(limits: Limits) -> str:
        text = render(loaded, {**context, "limits": limits}, cap=4 * limit)
        return text if text.endswith("\n") else text + "\n"

    return fit(
        attempt,
        limits=full_limits(decision, len(cases.cases)),
        steps=SUMMARY_STEPS,
        size=lambda text: len(text.encode("utf-8")),
        limit=limit,
        what="job summary",
    )

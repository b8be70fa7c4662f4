"""The PR comment and the job summary, rendered from Jinja templates into GitHub Markdown.

Both are rendered in a sandboxed Jinja environment. The built-in templates, ``comment.md.j2`` and
``summary.md.j2``, ship in the wheel under ``ragaliq/templates``. A user template is rendered in the
same environment; it can ``{% extends "comment.md.j2" %}`` and override any of its blocks.

Everything a dataset, a judge or a run supplies (queries, claims, evidence, reasons, errors, case
ids, notices) is untrusted and goes through one filter, ``md`` (:func:`escape_markdown`).

GitHub caps a comment at 65,536 characters and a job summary at 1 MiB. A rendering that is too long
is rendered again with less detail: the template receives ``limits`` (how many entries of each list
to show, and whether to show the evidence and reasons of claims) and writes a "… and N more" line
for what it leaves out. The rendered text is never cut, so no table or ``<details>`` block is left
half open.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

import jinja2
from jinja2.sandbox import ImmutableSandboxedEnvironment

from ragaliq.compare import ClaimChange, GateDecision
from ragaliq.errors import TemplateError
from ragaliq.models import CaseResult, RunReport
from ragaliq.report._format import delta, pct, plural, score, usd
from ragaliq.report._templates import TemplateLoader, templates_root
from ragaliq.report.console import format_usage
from ragaliq.report.marker import comment_marker

__all__ = [
    "COMMENT_LIMIT",
    "COMMENT_TEMPLATE",
    "SUMMARY_LIMIT",
    "SUMMARY_TEMPLATE",
    "CaseGroup",
    "check_templates",
    "escape_markdown",
    "render_comment",
    "render_summary",
]

COMMENT_LIMIT = 65_536
"""GitHub's limit for an issue comment body, in characters."""
SUMMARY_LIMIT = 1_048_576
"""GitHub's limit for a job summary, in UTF-8 bytes."""
COMMENT_TEMPLATE = "comment.md.j2"
SUMMARY_TEMPLATE = "summary.md.j2"

_ENTITIES = {
    "&": "&amp;",
    "<": "&lt;",
    ">": "&gt;",
    "\\": "&#92;",
    "`": "&#96;",
    "*": "&#42;",
    "_": "&#95;",
    "[": "&#91;",
    "]": "&#93;",
    "|": "&#124;",
    "~": "&#126;",
    "$": "&#36;",
}
_SPECIAL = re.compile("[" + re.escape("".join(_ENTITIES)) + "]")
_BIDI_CONTROLS = re.compile("[\u202a-\u202e\u2066-\u2069]")
_LINE_BREAKS = re.compile("[\x00-\x1f\x7f\x85\u2028\u2029]+")
_AUTOLINKS = re.compile(
    r"@(?=\w)|#(?=\d)|(?i:\b(?:https?|ftp|mailto|xmpp)(?=:)|\bwww(?=\.)|\bgh-(?=\d))"
)
_ZERO_WIDTH_SPACE = "\u200b"
_BLOCK_MARKER = re.compile(r"^(?:[#+-]|\d{1,9}[.)](?=\s|$))")
_URL = re.compile(r"^https?://[^\s<>()\[\]\"'`]+$")

_USER_PREFIX = "user-template:"


def escape_markdown(text: object) -> str:
    r"""Make untrusted text safe to show anywhere in the comment, as a single line.

    Escapes use HTML character references, not backslashes, because GitHub decodes them both in
    Markdown (table cells, list items) and in raw HTML (``<summary>``), while a backslash escape
    would show up literally inside ``<summary>``.

    - line breaks and other control characters become spaces, and bidi overrides are dropped;
    - ``&``, ``<`` and ``>`` become entities, so no HTML, comment or ``</details>`` survives;
    - ``\ ` * _ [ ] | ~ $`` become entities, so no emphasis, code, link, table cell, strikethrough
      or math starts; ``# + -`` and ``1.`` / ``1)`` are escaped at the start, where they would
      begin a heading or a list;
    - a zero-width space follows ``@`` before a word character, ``#`` before a digit, a URL
      scheme and ``www.``, so GitHub pings no one, links no issue and makes no untrusted link.

    Args:
        text: Anything; ``None`` is the empty string, everything else goes through ``str``.

    Returns:
        The escaped text, on one line, without leading or trailing spaces.
    """
    if text is None:
        return ""
    value = _BIDI_CONTROLS.sub("", str(text))
    value = _LINE_BREAKS.sub(" ", value).strip()
    value = _AUTOLINKS.sub(lambda m: m.group(0) + _ZERO_WIDTH_SPACE, value)
    value = _SPECIAL.sub(lambda m: _ENTITIES[m.group(0)], value)
    start = _BLOCK_MARKER.match(value)
    if start is None:
        return value
    marker = start.group(0)
    return marker[:-1] + f"&#{ord(marker[-1])};" + value[len(marker) :]


def _shorten(text: object, n: int = 80) -> str:
    value = " ".join(str(text).split())
    if len(value) <= n:
        return value
    return value[: max(n - 1, 0)].rstrip() + "…"


_VERDICTS = {
    "SUPPORTED": "supported",
    "PARTIALLY_SUPPORTED": "partly supported",
    "NOT_ENOUGH_INFO": "not in the context",
    "CONTRADICTED": "contradicted",
}


def _verdict(value: str) -> str:
    return _VERDICTS.get(value, value)


@dataclass(frozen=True, kw_only=True)
class CaseGroup:
    """Claims of one case, for templates: ``{% for group in claims | by_case %}``."""

    case_id: str
    query: str
    claims: tuple[ClaimChange, ...]


def _by_case(changes: Iterable[ClaimChange]) -> list[CaseGroup]:
    grouped: dict[str, list[ClaimChange]] = {}
    for change in changes:
        grouped.setdefault(change.case_id, []).append(change)
    return [
        CaseGroup(case_id=case_id, query=claims[0].query, claims=tuple(claims))
        for case_id, claims in grouped.items()
    ]


FILTERS: dict[str, Callable[..., str | list[CaseGroup]]] = {
    "md": escape_markdown,
    "score": score,
    "pct": pct,
    "delta": delta,
    "shorten": _shorten,
    "usd": usd,
    "plural": plural,
    "verdict": _verdict,
    "by_case": _by_case,
}


def _environment(template: Path | None) -> tuple[ImmutableSandboxedEnvironment, str | None]:
    loaders: list[jinja2.BaseLoader] = []
    user_name = None
    if template is not None:
        try:
            source = template.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise TemplateError(f"{template}: cannot read the template ({exc})") from exc
        user_name = _USER_PREFIX + str(template)
        found = (source, str(template), lambda: True)
        loaders.append(jinja2.FunctionLoader(lambda name: found if name == user_name else None))
    loaders.append(TemplateLoader())
    if template is not None:
        loaders.append(jinja2.FileSystemLoader(template.parent))
    env = ImmutableSandboxedEnvironment(
        loader=jinja2.ChoiceLoader(loaders),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(FILTERS)
    return env, user_name


def _location(tb: TracebackType | None) -> tuple[str, int] | None:
    found = None
    while tb is not None:
        if "__jinja_exception__" in tb.tb_frame.f_globals:
            found = (tb.tb_frame.f_code.co_filename, tb.tb_lineno)
        tb = tb.tb_next
    return found


def _template_error(exc: Exception, fallback: str) -> TemplateError | None:
    if isinstance(exc, jinja2.TemplateSyntaxError):
        where: tuple[str, int] | None = (exc.filename or exc.name or fallback, exc.lineno)
        message = exc.message or str(exc)
    else:
        where = _location(exc.__traceback__)
        if where is None and not isinstance(exc, jinja2.TemplateError):
            return None
        message = str(exc) if isinstance(exc, jinja2.TemplateError) else repr(exc)
    if isinstance(exc, jinja2.TemplateNotFound):
        message = f"template {exc.name!r} not found"
    place = f"{where[0]}:{where[1]}" if where else fallback
    return TemplateError(f"{place}: {message}")


def _load(template: Path | None, default: str) -> jinja2.Template:
    env, user_name = _environment(template)
    name = user_name or default
    try:
        return env.get_template(name)
    except jinja2.TemplateNotFound as exc:
        if exc.name == default:
            raise TemplateError(
                f"built-in template {default!r} not found under {templates_root()}"
            ) from exc
        raise _template_error(exc, str(template)) or exc from exc
    except jinja2.TemplateError as exc:
        raise _template_error(exc, str(template or default)) or exc from exc


def check_templates(*, comment: Path | None = None, summary: Path | None = None) -> None:
    """Read and compile your templates now, before any judging rather than after it.

    Raises:
        TemplateError: naming the file (and line) and the problem.
    """
    if comment is not None:
        _load(comment, COMMENT_TEMPLATE)
    if summary is not None:
        _load(summary, SUMMARY_TEMPLATE)


def _render(template: jinja2.Template, context: Mapping[str, Any]) -> str:
    try:
        return template.render(context)
    except Exception as exc:
        error = _template_error(exc, template.filename or template.name or "template")
        if error is None:
            raise
        raise error from exc


_Limits = dict[str, int | bool]
_Step = tuple[str, int | bool]


def _fit(
    render: Callable[[_Limits], str],
    *,
    limits: _Limits,
    steps: Sequence[_Step],
    size: Callable[[str], int],
    limit: int,
    what: str,
) -> str:
    """The fullest rendering within ``limit``, cutting the lists in ``steps`` order."""
    text = render(limits)
    if size(text) <= limit:
        return text
    for key, target in steps:
        current = limits[key]
        if isinstance(target, bool):
            if current == target:
                continue
            limits[key] = target
            text = render(limits)
            if size(text) <= limit:
                return text
            continue
        if current <= target:
            continue
        low, high, best = target, int(current) - 1, None
        while low <= high:
            middle = (low + high) // 2
            candidate = render({**limits, key: middle})
            if size(candidate) <= limit:
                best, low = candidate, middle + 1
            else:
                high = middle - 1
        if best is not None:
            return best
        limits[key] = target
        text = render(limits)
    raise TemplateError(
        f"the {what} takes {size(text):,} of at most {limit:,} even with every list cut; "
        "shorten the notices or the template"
    )


def _limits(decision: GateDecision, report: RunReport | None = None) -> _Limits:
    return {
        "detail": True,
        "new": len(decision.hallucinations if decision.first_run else decision.new_hallucinations),
        "fixed": len(decision.fixed_hallucinations),
        "unstable": len(decision.unstable_claims),
        "regressed": len(decision.regressed_cases),
        "errors": len(decision.errors),
        "added": len(decision.added_cases),
        "removed": len(decision.removed_cases),
        "notices": len(decision.notices),
        "cases": len(report.cases) if report is not None else 0,
    }


_COMMENT_STEPS: tuple[_Step, ...] = (
    ("fixed", 5),
    ("unstable", 5),
    ("regressed", 5),
    ("errors", 5),
    ("detail", False),
    ("new", 10),
    ("fixed", 0),
    ("unstable", 0),
    ("regressed", 0),
    ("errors", 0),
    ("new", 0),
    ("notices", 0),
)
_SUMMARY_STEPS: tuple[_Step, ...] = (
    ("cases", 50),
    ("added", 20),
    ("removed", 20),
    ("fixed", 20),
    ("unstable", 20),
    ("regressed", 20),
    ("errors", 20),
    ("detail", False),
    ("new", 20),
    ("cases", 0),
    ("added", 0),
    ("removed", 0),
    ("fixed", 0),
    ("unstable", 0),
    ("regressed", 0),
    ("errors", 0),
    ("new", 0),
    ("notices", 0),
)


def _context(decision: GateDecision, *, where: str, clip: int) -> dict[str, Any]:
    return {
        "decision": decision,
        "usage_line": format_usage(decision.usage),
        "where": where,
        "clip": clip,
    }


def render_comment(
    decision: GateDecision,
    *,
    comment_id: str = "default",
    template: Path | None = None,
    details_url: str | None = None,
    limit: int = COMMENT_LIMIT,
) -> str:
    """The PR comment: its first line is the hidden marker, its length at most ``limit``.

    Args:
        decision: The gate decision to show.
        comment_id: Tells this gate's comment apart from others on the same PR.
        template: A user template to render instead of ``comment.md.j2``; it may extend it.
        details_url: Where the full results are (the job summary); linked from the comment.
        limit: The most characters the comment may have.

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
    loaded = _load(template, COMMENT_TEMPLATE)
    where = f"[the job summary]({details_url})" if details_url else "the job summary"
    context = _context(decision, where=where, clip=300)
    context.update(marker=marker, details_url=details_url)

    def render(limits: _Limits) -> str:
        text = _render(loaded, {**context, "limits": limits})
        if text.split("\n", 1)[0] != marker:
            text = f"{marker}\n{text}"
        return text if text.endswith("\n") else text + "\n"

    return _fit(
        render,
        limits=_limits(decision),
        steps=_COMMENT_STEPS,
        size=len,
        limit=limit,
        what="comment",
    )


def _case_rank(case: CaseResult) -> int:
    if case.status == "error":
        return 0
    if any(r.passed is False for r in case.results.values()):
        return 1
    return 2 if case.status == "ok" else 3


def render_summary(
    decision: GateDecision,
    *,
    report: RunReport,
    template: Path | None = None,
    limit: int = SUMMARY_LIMIT,
) -> str:
    """The job summary: the comment's headline and tables, every list in full, and every case.

    Args:
        decision: The gate decision to show.
        report: The head run, for the per-case table (errors and failing cases first).
        template: A user template to render instead of ``summary.md.j2``; it may extend it.
        limit: The most UTF-8 bytes the summary may take.

    Returns:
        The summary Markdown, ending with a newline.

    Raises:
        TemplateError: The template failed to load or render, or even its shortest rendering
            is larger than ``limit``.
    """
    loaded = _load(template, SUMMARY_TEMPLATE)
    context = _context(decision, where="the JSON report (`ragaliq run -o report.json`)", clip=2000)
    context.update(
        marker="",
        details_url=None,
        report=report,
        cases=sorted(report.cases, key=_case_rank),
        evaluator_names=list(report.summary.evaluators),
    )

    def render(limits: _Limits) -> str:
        text = _render(loaded, {**context, "limits": limits})
        return text if text.endswith("\n") else text + "\n"

    return _fit(
        render,
        limits=_limits(decision, report),
        steps=_SUMMARY_STEPS,
        size=lambda text: len(text.encode("utf-8")),
        limit=limit,
        what="job summary",
    )

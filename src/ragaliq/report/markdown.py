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

import functools
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from types import TracebackType
from typing import Any

import jinja2
from jinja2 import nodes
from jinja2.compiler import CodeGenerator, Frame
from jinja2.exceptions import SecurityError
from jinja2.sandbox import ImmutableSandboxedEnvironment

from ragaliq.errors import RagaliqError, TemplateError
from ragaliq.gate import ClaimChange, GateDecision
from ragaliq.models import CaseResult, ReportHead, RunReport
from ragaliq.redaction import redact
from ragaliq.report._format import delta, interval, pct, plural, score, usd, verdict_label
from ragaliq.report._templates import TemplateLoader, templates_root
from ragaliq.report.console import format_usage
from ragaliq.report.marker import comment_marker
from ragaliq.repository import MAX_TEXT_BYTES, FileSource, WorkTree, repo_path
from ragaliq.text.plain import BIDI_MARKS

__all__ = [
    "COMMENT_LIMIT",
    "COMMENT_TEMPLATE",
    "MAX_VALUE_CHARS",
    "PROTECTED_BLOCKS",
    "SUMMARY_CASES",
    "SUMMARY_LIMIT",
    "SUMMARY_TEMPLATE",
    "CaseDigest",
    "CaseGroup",
    "UserTemplate",
    "escape_markdown",
    "render_comment",
    "render_status",
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
_COMMIT_SHA = re.compile(r"(?<![0-9A-Fa-f])([0-9A-Fa-f]{7})(?=[0-9A-Fa-f]{33}(?![0-9A-Fa-f]))")
_LINE_BREAKS = re.compile("[\x00-\x1f\x7f\x85\u2028\u2029]+")
_AUTOLINKS = re.compile(
    r"@(?=\w)|#(?=\d)|(?i:\b(?:https?|ftp|mailto|xmpp)(?=:)|\bwww(?=\.)|\bgh-(?=\d))"
)
_ZERO_WIDTH_SPACE = "\u200b"
_BLOCK_MARKER = re.compile(r"^(?:[#+-]|\d{1,9}[.)](?=\s|$))")
_URL = re.compile(r"^https?://[^\s<>()\[\]\"'`]+$")

_USER_PREFIX = "user-template:"
MAX_VALUE_CHARS = 1_000_000
"""The longest string or list a template may build; a template past it is stopped."""
MAX_BUILT_CHARS = 50 * MAX_VALUE_CHARS
"""The most characters one rendering may build in all; a template past it is stopped."""
PROTECTED_BLOCKS = ("marker", "headline", "notices")
"""Blocks of the built-in comment that your template cannot override: the verdict is the gate's."""


def escape_markdown(text: object) -> str:
    r"""Make untrusted text safe to show anywhere in the comment, as a single line.

    Escapes use HTML character references, not backslashes, because GitHub decodes them both in
    Markdown (table cells, list items) and in raw HTML (``<summary>``), while a backslash escape
    would show up literally inside ``<summary>``.

    - line breaks and other control characters become spaces, and every bidi mark is dropped;
    - ``&``, ``<`` and ``>`` become entities, so no HTML, comment or ``</details>`` survives;
    - ``\ ` * _ [ ] | ~ $`` become entities, so no emphasis, code, link, table cell, strikethrough
      or math starts; ``# + -`` and ``1.`` / ``1)`` are escaped at the start, where they would
      begin a heading or a list;
    - a zero-width space follows ``@`` before a word character, ``#`` before a digit, a URL
      scheme, ``www.`` and the first seven digits of a 40-digit commit SHA, so GitHub pings no
      one, links no issue or commit and makes no untrusted link.

    Args:
        text: Anything; ``None`` is the empty string, everything else goes through ``str``.

    Returns:
        The escaped text, on one line, without leading or trailing spaces.
    """
    if text is None:
        return ""
    value = BIDI_MARKS.sub("", str(text))
    value = _LINE_BREAKS.sub(" ", value).strip()
    value = _AUTOLINKS.sub(lambda m: m.group(0) + _ZERO_WIDTH_SPACE, value)
    value = _COMMIT_SHA.sub(lambda m: m.group(1) + _ZERO_WIDTH_SPACE, value)
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


def _md(text: object) -> str:
    """:func:`escape_markdown` of the text with every secret taken out first.

    Escaping changes a secret's characters (``_`` becomes ``&#95;``), so redacting the rendered
    comment afterwards would no longer find it.
    """
    return escape_markdown(None if text is None else redact(str(text)))


def _shorten_redacted(text: object, n: int = 80) -> str:
    return _shorten(redact(str(text)), n)


FILTERS: dict[str, Callable[..., str | list[CaseGroup]]] = {
    "md": _md,
    "score": score,
    "pct": pct,
    "delta": delta,
    "interval": interval,
    "shorten": _shorten_redacted,
    "usd": usd,
    "plural": plural,
    "verdict": verdict_label,
    "by_case": _by_case,
}


@dataclass(frozen=True, kw_only=True)
class UserTemplate:
    """A template of yours, read from where the bar is read, with the files it includes.

    ``include`` reads a template that ``{% include %}``, ``{% import %}`` or ``{% extends %}``
    names, relative to this template's folder; the built-in templates (``comment.md.j2`` ...)
    are found by name first.
    """

    path: str
    """Where it was read from, for messages."""
    text: str
    include: Callable[[str], str | None]

    @classmethod
    def read(cls, source: FileSource, path: str, *, what: str) -> UserTemplate:
        """The template at repository path ``path`` of ``source``.

        Raises:
            TemplateError: it is absent, not UTF-8, or over the size limit; or, through
                ``include``, an included file is.
        """
        folder = str(PurePosixPath(path).parent)
        folder = "" if folder == "." else folder

        def load(name: str) -> str | None:
            included = repo_path(name, folder=folder, what=f"{what} (included from {path})")
            return _read_template(source, included, what=what)

        text = _read_template(source, path, what=what)
        if text is None:
            raise TemplateError(
                f"{what}: {path} not found in {source.description}; commit the template there "
                "or remove the setting"
            )
        return cls(path=path, text=text, include=load)

    @classmethod
    def from_file(cls, path: Path) -> UserTemplate:
        """A template file named on the command line (its includes beside it)."""
        folder = path.resolve().parent
        return cls.read(WorkTree(folder), path.name, what="--template")


def _read_template(source: FileSource, path: str, *, what: str) -> str | None:
    try:
        data = source.read(path, limit=MAX_TEXT_BYTES, what=what)
    except RagaliqError as exc:
        raise TemplateError(str(exc)) from exc
    if data is None:
        return None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise TemplateError(f"{what}: {path} is not UTF-8 text; re-save it as UTF-8") from exc


class _BoundedCodeGenerator(CodeGenerator):
    """Compiles ``a ~ b`` to a join the environment bounds, like its other operators."""

    def visit_Concat(self, node: nodes.Concat, frame: Frame) -> None:
        self.write("environment.bounded_join((")
        for arg in node.nodes:
            self.visit(arg, frame)
            self.write(", ")
        self.write("))")


class _BoundedEnvironment(ImmutableSandboxedEnvironment):
    """The sandbox, bounded in what a template may build.

    No value longer than ``MAX_VALUE_CHARS`` is built by an operator (``*``, ``+``, ``**``,
    ``~``), a call or a filter, and one rendering builds at most ``MAX_BUILT_CHARS`` in all, so a
    loop cannot pile up values either.
    """

    code_generator_class = _BoundedCodeGenerator
    intercepted_binops = frozenset({"*", "+", "**"})
    built = 0
    """Characters built by the current rendering so far (reset by :func:`_render`)."""

    def checked(self, value: Any) -> Any:
        """``value``, if it keeps the template within its bounds."""
        if isinstance(value, str | list | tuple):
            if len(value) > MAX_VALUE_CHARS:
                raise SecurityError(
                    f"the template builds a value over {MAX_VALUE_CHARS:,} characters"
                )
            self.built += len(value)
            if self.built > MAX_BUILT_CHARS:
                raise SecurityError(
                    f"the template builds over {MAX_BUILT_CHARS:,} characters in all"
                )
        return value

    def bounded_join(self, values: Sequence[Any]) -> str:
        """``a ~ b ~ ...``, refused before it is built when it would be too long."""
        parts = [str(value) for value in values]
        if sum(len(part) for part in parts) > MAX_VALUE_CHARS:
            raise SecurityError(f"the template builds a value over {MAX_VALUE_CHARS:,} characters")
        return str(self.checked("".join(parts)))

    def call_binop(
        self, context: jinja2.runtime.Context, operator: str, left: Any, right: Any
    ) -> Any:
        if operator == "**" and isinstance(right, int) and abs(right) > 64:
            raise SecurityError("the template raises a number to a power over 64")
        if operator == "*" and _too_long(left, right):
            raise SecurityError(f"the template builds a value over {MAX_VALUE_CHARS:,} characters")
        return self.checked(super().call_binop(context, operator, left, right))

    def call(
        __self,
        __context: jinja2.runtime.Context,
        __obj: Any,
        *args: Any,
        **kwargs: Any,
    ) -> Any:
        return __self.checked(super().call(__context, __obj, *args, **kwargs))

    def bounded_filter(self, function: Callable[..., Any]) -> Callable[..., Any]:
        """A filter that refuses a size argument or a result out of bounds."""

        @functools.wraps(function)
        def bounded(*args: Any, **kwargs: Any) -> Any:
            for value in (*args, *kwargs.values()):
                if (
                    isinstance(value, int)
                    and not isinstance(value, bool)
                    and value > MAX_VALUE_CHARS
                ):
                    raise SecurityError(
                        f"the template asks a filter for a size over {MAX_VALUE_CHARS:,} characters"
                    )
            return self.checked(function(*args, **kwargs))

        return bounded


def _too_long(left: Any, right: Any) -> bool:
    for seq, times in ((left, right), (right, left)):
        if isinstance(seq, str | list | tuple) and isinstance(times, int):
            return len(seq) * times > MAX_VALUE_CHARS
    return False


def _environment(template: UserTemplate | None) -> tuple[ImmutableSandboxedEnvironment, str | None]:
    loaders: list[jinja2.BaseLoader] = []
    user_name = None
    if template is not None:
        user_name = _USER_PREFIX + template.path
        found = (template.text, template.path, lambda: True)
        loaders.append(jinja2.FunctionLoader(lambda name: found if name == user_name else None))
    loaders.append(TemplateLoader())
    if template is not None:
        include = template.include

        def included(name: str) -> tuple[str, str, Callable[[], bool]] | None:
            text = include(name)
            return None if text is None else (text, name, lambda: True)

        loaders.append(jinja2.FunctionLoader(included))
    env = _BoundedEnvironment(
        loader=jinja2.ChoiceLoader(loaders),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(FILTERS)
    env.filters = {name: env.bounded_filter(f) for name, f in env.filters.items()}
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


@dataclass(frozen=True, kw_only=True)
class _Loaded:
    """A template ready to render, with the built-in blocks it must keep."""

    template: jinja2.Template
    user: UserTemplate | None
    protected: dict[str, Callable[[jinja2.runtime.Context], Iterator[str]]]


def _load(template: UserTemplate | None, default: str) -> _Loaded:
    env, user_name = _environment(template)
    try:
        builtin = env.get_template(COMMENT_TEMPLATE)
        env.get_template(default)
    except jinja2.TemplateNotFound as exc:
        raise TemplateError(
            f"built-in template {exc.name!r} not found under {templates_root()}"
        ) from exc
    if template is None or user_name is None:
        return _Loaded(template=env.get_template(default), user=None, protected={})
    try:
        loaded = env.get_template(user_name)
    except jinja2.TemplateError as exc:
        raise _template_error(exc, template.path) or exc from exc
    names = PROTECTED_BLOCKS if default == COMMENT_TEMPLATE else PROTECTED_BLOCKS[1:]
    overridden = sorted(set(loaded.blocks) & set(names))
    if overridden:
        raise TemplateError(
            f"{template.path}: overrides the block {', '.join(overridden)}, which the gate renders "
            "itself (the verdict, the notices and the marker are the gate's); remove it and "
            "restyle the other blocks"
        )
    return _Loaded(
        template=loaded,
        user=template,
        protected={name: builtin.blocks[name] for name in names},
    )


def check_template(template: UserTemplate | None, *, summary: bool = False) -> None:
    """Compile your template now, before any judging rather than after it.

    Raises:
        TemplateError: naming the file (and line) and the problem.
    """
    _load(template, SUMMARY_TEMPLATE if summary else COMMENT_TEMPLATE)


class _TooLong(Exception):
    """A rendering passed its cap; it counts as too long, without being finished."""


def _render(loaded: _Loaded, context: Mapping[str, Any], *, cap: int) -> str:
    """Render, with the protected blocks forced to the built-in ones; stop past ``cap`` chars."""
    template = loaded.template
    if isinstance(template.environment, _BoundedEnvironment):
        template.environment.built = 0
    chunks: list[str] = []
    size = 0
    try:
        ctx = template.new_context(dict(context))
        for name, block in loaded.protected.items():
            ctx.blocks[name] = [block]
        for chunk in template.root_render_func(ctx):
            size += len(chunk)
            if size > cap:
                raise _TooLong
            chunks.append(chunk)
    except _TooLong:
        raise
    except Exception:
        try:
            template.environment.handle_exception()  # re-raises with the template's lines
        except Exception as exc:
            error = _template_error(exc, template.filename or template.name or "template")
            if error is None:
                raise
            raise error from exc
    text = "".join(chunks)
    if loaded.user is not None:
        _check_verdict_kept(loaded, context, text)
    return text


def _check_verdict_kept(loaded: _Loaded, context: Mapping[str, Any], text: str) -> None:
    """A template of yours must show the gate's headline and notices, and hide nothing."""
    assert loaded.user is not None
    path = loaded.user.path
    marker = context.get("marker") or ""
    for name in ("headline", "notices"):
        block = loaded.protected[name]
        expected = "".join(block(loaded.template.new_context(dict(context)))).strip()
        if expected and expected not in text:
            raise TemplateError(
                f'{path}: must {{% extends "{COMMENT_TEMPLATE}" %}} (or the summary template) so '
                f"that the gate's {name} stays in the rendering"
            )
        if name == "headline" and text[: text.find(expected)].replace(marker, "", 1).strip():
            raise TemplateError(
                f"{path}: writes text before the gate's headline, which could contradict the "
                "verdict; put your text in a block after it"
            )
    if text.replace(marker, "", 1).count("<!--"):
        raise TemplateError(
            f"{path}: writes an HTML comment (<!--), which could hide the gate's verdict or "
            "notices; remove it"
        )


_Limits = dict[str, int | bool]
_OVER = "\x00over the cap\x00"
"""What a rendering stopped at its cap gives :func:`_fit` (compared by identity)."""
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
    """The fullest rendering within ``limit``, cutting the lists in ``steps`` order.

    A rendering that passes ``4 * limit`` characters is stopped there and counts as too long.
    """

    def attempt(limits: _Limits) -> str:
        try:
            return render(limits)
        except _TooLong:
            return _OVER

    text = attempt(limits)
    if text is not _OVER and size(text) <= limit:
        return text
    for key, target in steps:
        current = limits[key]
        if isinstance(target, bool):
            if current == target:
                continue
            limits[key] = target
            text = attempt(limits)
            if text is not _OVER and size(text) <= limit:
                return text
            continue
        if current <= target:
            continue
        low, high, best = target, int(current) - 1, None
        while low <= high:
            middle = (low + high) // 2
            candidate = attempt({**limits, key: middle})
            if candidate is not _OVER and size(candidate) <= limit:
                best, low = candidate, middle + 1
            else:
                high = middle - 1
        if best is not None:
            return best
        limits[key] = target
        text = attempt(limits)
    taken = "more than four times that" if text is _OVER else f"{size(text):,}"
    raise TemplateError(
        f"the {what} takes {taken} of at most {limit:,} even with every list cut; "
        "shorten the notices or the template"
    )


def _limits(decision: GateDecision, cases: int = 0) -> _Limits:
    return {
        "detail": True,
        "new": len(decision.hallucinations if decision.first_run else decision.new_hallucinations),
        "fixed": len(decision.fixed_hallucinations),
        "unstable": len(decision.unstable_claims),
        "unverifiable": len(decision.unverifiable_claims),
        "regressed": len(decision.regressed_cases),
        "lost_facts": len(decision.lost_facts),
        "chunks": len(decision.irrelevant_chunks),
        "errors": len(decision.errors),
        "added": len(decision.added_cases),
        "removed": len(decision.removed_cases),
        "notices": len(decision.notices),
        "cases": cases,
    }


_COMMENT_STEPS: tuple[_Step, ...] = (
    ("unverifiable", 5),
    ("chunks", 10),
    ("lost_facts", 10),
    ("fixed", 5),
    ("unstable", 5),
    ("regressed", 5),
    ("errors", 5),
    ("detail", False),
    ("new", 10),
    ("fixed", 0),
    ("unstable", 0),
    ("unverifiable", 0),
    ("regressed", 0),
    ("chunks", 0),
    ("lost_facts", 0),
    ("errors", 0),
    ("new", 0),
    ("notices", 0),
)
_SUMMARY_STEPS: tuple[_Step, ...] = (
    ("cases", 50),
    ("chunks", 50),
    ("lost_facts", 50),
    ("added", 20),
    ("removed", 20),
    ("fixed", 20),
    ("unstable", 20),
    ("unverifiable", 20),
    ("regressed", 20),
    ("errors", 20),
    ("detail", False),
    ("new", 20),
    ("cases", 0),
    ("added", 0),
    ("removed", 0),
    ("fixed", 0),
    ("unstable", 0),
    ("unverifiable", 0),
    ("regressed", 0),
    ("chunks", 0),
    ("lost_facts", 0),
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
    template: UserTemplate | None = None,
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
        text = _render(loaded, {**context, "limits": limits}, cap=4 * limit)
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


def render_status(*, title: str, reason: str, comment_id: str = "default") -> str:
    """The comment of a run that reached no decision: skipped, or could not judge.

    It replaces whatever the comment said before, so that a verdict from an earlier push never
    stands over a run that did not decide. ``reason`` is untrusted (it may quote an API).
    """
    return (
        f"{comment_marker(comment_id)}\n### ⚠️ {escape_markdown(title)}\n\n"
        f"{_md(_shorten_redacted(reason, 2000))}\n\n<sub>RagaliQ Gate</sub>\n"
    )


SUMMARY_CASES = 1000
"""Cases the job summary's per-case table can show, errors and failures first."""


def _case_rank(case: CaseResult) -> int:
    if case.status == "error":
        return 0
    if any(r.passed is False for r in case.results.values()):
        return 1
    return 2 if case.status == "ok" else 3


class CaseDigest:
    """The cases the job summary shows, kept as a run goes: errors and failures first.

    Holds at most :data:`SUMMARY_CASES` cases of each rank, however long the run.
    """

    def __init__(self, limit: int = SUMMARY_CASES) -> None:
        self.limit = limit
        self.total = 0
        self._ranked: tuple[list[CaseResult], ...] = ([], [], [], [])

    def add(self, case: CaseResult) -> None:
        """Count one case, keeping it if it is among the first of its rank."""
        self.total += 1
        kept = self._ranked[_case_rank(case)]
        if len(kept) < self.limit:
            kept.append(case)

    @property
    def cases(self) -> list[CaseResult]:
        """The cases kept, errors and failures first, at most ``limit`` in all."""
        return [case for kept in self._ranked for case in kept][: self.limit]


def render_summary(
    decision: GateDecision,
    *,
    report: RunReport | ReportHead,
    cases: CaseDigest | None = None,
    template: UserTemplate | None = None,
    limit: int = SUMMARY_LIMIT,
) -> str:
    """The job summary: the comment's headline and tables, every list in full, and every case.

    Args:
        decision: The gate decision to show.
        report: The head run.
        cases: The cases for the per-case table, kept as the run went; taken from ``report``
            when it holds its cases.
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
    if cases is None:
        cases = CaseDigest()
        for case in report.cases if isinstance(report, RunReport) else ():
            cases.add(case)
    context.update(
        marker="",
        details_url=None,
        report=report.head if isinstance(report, RunReport) else report,
        cases=cases.cases,
        case_total=cases.total,
        evaluator_names=list(report.summary.evaluators),
    )

    def render(limits: _Limits) -> str:
        text = _render(loaded, {**context, "limits": limits}, cap=4 * limit)
        return text if text.endswith("\n") else text + "\n"

    return _fit(
        render,
        limits=_limits(decision, len(cases.cases)),
        steps=_SUMMARY_STEPS,
        size=lambda text: len(text.encode("utf-8")),
        limit=limit,
        what="job summary",
    )

"""A Markdown template loaded, checked and rendered with the gate's own blocks kept.

A template of yours extends ours and may override any block but :data:`PROTECTED_BLOCKS`: the
marker, the headline and the notices are always the built-in ones, and a rendering that hides
or contradicts them is refused. A template that fails names its file and line.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from types import TracebackType
from typing import Any

import jinja2

from ragaliq.errors import TemplateError
from ragaliq.report._sandbox import BoundedEnvironment, markdown_environment
from ragaliq.report._templates import templates_root
from ragaliq.report._user_template import UserTemplate

__all__ = [
    "COMMENT_TEMPLATE",
    "PROTECTED_BLOCKS",
    "SUMMARY_TEMPLATE",
    "Loaded",
    "TooLong",
    "check_template",
    "load",
    "render",
]

COMMENT_TEMPLATE = "comment.md.j2"
SUMMARY_TEMPLATE = "summary.md.j2"
PROTECTED_BLOCKS = ("marker", "headline", "notices")
"""Blocks of the built-in comment that your template cannot override: the verdict is the gate's."""


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
class Loaded:
    """A template ready to render, with the built-in blocks it must keep."""

    template: jinja2.Template
    user: UserTemplate | None
    protected: dict[str, Callable[[jinja2.runtime.Context], Iterator[str]]]


def load(template: UserTemplate | None, default: str) -> Loaded:
    """Your template, compiled and checked, or our ``default`` when you have none.

    Raises:
        TemplateError: a template is missing or does not compile, or yours overrides a
            protected block.
    """
    env, user_name = markdown_environment(template)
    try:
        builtin = env.get_template(COMMENT_TEMPLATE)
        env.get_template(default)
    except jinja2.TemplateNotFound as exc:
        raise TemplateError(
            f"built-in template {exc.name!r} not found under {templates_root()}"
        ) from exc
    if template is None or user_name is None:
        return Loaded(template=env.get_template(default), user=None, protected={})
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
    return Loaded(
        template=loaded,
        user=template,
        protected={name: builtin.blocks[name] for name in names},
    )


def check_template(template: UserTemplate | None, *, summary: bool = False) -> None:
    """Compile your template now, before any judging rather than after it.

    Raises:
        TemplateError: naming the file (and line) and the problem.
    """
    load(template, SUMMARY_TEMPLATE if summary else COMMENT_TEMPLATE)


class TooLong(Exception):
    """A rendering passed its cap; it counts as too long, without being finished."""


def render(loaded: Loaded, context: Mapping[str, Any], *, cap: int) -> str:
    """Render, with the protected blocks forced to the built-in ones; stop past ``cap`` chars.

    Raises:
        TooLong: the rendering passed ``cap`` characters.
        TemplateError: the template failed, named with its file and line.
    """
    template = loaded.template
    if isinstance(template.environment, BoundedEnvironment):
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
                raise TooLong
            chunks.append(chunk)
    except TooLong:
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


def _check_verdict_kept(loaded: Loaded, context: Mapping[str, Any], text: str) -> None:
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

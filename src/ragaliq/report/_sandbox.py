"""The sandboxed Jinja environment of the comment and the summary, bounded in what it builds.

Our templates and yours render in the same :class:`BoundedEnvironment`: sandboxed (no attribute
or call reaches past the data), ``StrictUndefined``, and no value, nor one rendering in all,
larger than its bound, so a template cannot exhaust the runner's memory.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import jinja2
from jinja2 import nodes
from jinja2.compiler import CodeGenerator, Frame
from jinja2.exceptions import SecurityError
from jinja2.sandbox import ImmutableSandboxedEnvironment

from ragaliq.report._templates import TemplateLoader
from ragaliq.report._user_template import UserTemplate
from ragaliq.report.filters import MARKDOWN_FILTERS

__all__ = ["MAX_BUILT_CHARS", "MAX_VALUE_CHARS", "BoundedEnvironment", "markdown_environment"]

MAX_VALUE_CHARS = 1_000_000
"""The longest string or list a template may build; a template past it is stopped."""
MAX_BUILT_CHARS = 50 * MAX_VALUE_CHARS
"""The most characters one rendering may build in all; a template past it is stopped."""
_USER_PREFIX = "user-template:"


class _BoundedCodeGenerator(CodeGenerator):
    """Compiles ``a ~ b`` to a join the environment bounds, like its other operators."""

    def visit_Concat(self, node: nodes.Concat, frame: Frame) -> None:
        self.write("environment.bounded_join((")
        for arg in node.nodes:
            self.visit(arg, frame)
            self.write(", ")
        self.write("))")


class BoundedEnvironment(ImmutableSandboxedEnvironment):
    """The sandbox, bounded in what a template may build.

    No value longer than ``MAX_VALUE_CHARS`` is built by an operator (``*``, ``+``, ``**``,
    ``~``), a call or a filter, and one rendering builds at most ``MAX_BUILT_CHARS`` in all, so a
    loop cannot pile up values either.
    """

    code_generator_class = _BoundedCodeGenerator
    intercepted_binops = frozenset({"*", "+", "**"})
    built = 0
    """Characters built by the current rendering so far (reset before each rendering)."""

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


def markdown_environment(template: UserTemplate | None) -> tuple[BoundedEnvironment, str | None]:
    """The environment that renders ``template`` (or only ours), and the name it is found by.

    Names resolve to your template first, then to ours, then to the files your template
    includes; every filter of :data:`~ragaliq.report.filters.MARKDOWN_FILTERS` is bounded.
    """
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
    env = BoundedEnvironment(
        loader=jinja2.ChoiceLoader(loaders),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(MARKDOWN_FILTERS)
    env.filters = {name: env.bounded_filter(f) for name, f in env.filters.items()}
    return env, user_name

"""Turns pydantic validation errors into lines a person can act on.

Shared by the config and dataset loaders so that both say ``where: field: problem`` the same way,
suggest the nearest valid key for a typo, and show the offending value; and so that both say the
same about input a parser reads but the program cannot use (nesting too deep for the parser, an
integer too long to convert, a lone surrogate escape that is not text).
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterable, Iterator
from typing import Any, NamedTuple

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from ragaliq._ids import visible

__all__ = [
    "FieldProblem",
    "describe_value",
    "field_problems",
    "nearest",
    "unicode_problem",
    "unparsable",
]


class FieldProblem(NamedTuple):
    """One invalid field: its dotted location and what is wrong with it."""

    loc: tuple[str | int, ...]
    message: str

    @property
    def path(self) -> str:
        """The location as ``a.b[2].c``."""
        out = ""
        for part in self.loc:
            if isinstance(part, int):
                out += f"[{part}]"
            else:
                name = part if _PLAIN_KEY.fullmatch(part) else visible(part)
                out += f".{name}" if out else name
        return out or "(top level)"


_PLAIN_KEY = re.compile(r"[\w\-.$@]*", re.ASCII)
"""A key shown as it is in a location; any other is quoted with its odd characters escaped."""

_TYPE_NAMES = {
    bool: "boolean",
    int: "number",
    float: "number",
    str: "string",
    list: "list",
    tuple: "list",
    dict: "mapping",
    type(None): "null",
}


_SECRET_LOOKING = re.compile(
    r"sk-ant-|\bsk-[A-Za-z0-9]{16}|\bgh[opsur]_|github_pat_|\bxox[abprs]-|\bAKIA[0-9A-Z]{12}"
)
"""Prefixes of API keys and tokens (Anthropic, OpenAI, GitHub, Slack, AWS)."""
_SECRET_FIELD = re.compile(r"key|token|secret|password", re.IGNORECASE)


def describe_value(value: Any, *, limit: int = 40, secret: bool = False) -> str:
    """Name a value's type and show a short repr, e.g. ``number 3`` or ``string 'abc'``.

    The value itself is left out when ``secret`` is set (it sits where a key belongs) or when it
    looks like an API key or token: error messages end up in CI logs.
    """
    kind = _TYPE_NAMES.get(type(value), type(value).__name__)
    if isinstance(value, (dict, list, tuple)) or value is None:
        return kind
    if secret or (isinstance(value, str) and _SECRET_LOOKING.search(value)):
        return f"{kind} (not shown: it may be a secret)"
    shown = repr(value)
    if len(shown) > limit:
        shown = shown[: limit - 3] + "..."
    return f"{kind} {shown}"


def nearest(word: str, choices: Iterable[str]) -> str | None:
    """The closest valid name to a typo, or None when nothing is close."""
    matches = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return matches[0] if matches else None


def _model_at(model: type[BaseModel], loc: tuple[str | int, ...]) -> type[BaseModel] | None:
    """Follow a location through nested models to the model that owns its last part."""
    current: type[BaseModel] | None = model
    for part in loc[:-1]:
        if current is None:
            return None
        if isinstance(part, int):
            continue
        field = current.model_fields.get(part)
        if field is None:
            return None
        current = _first_model(field.annotation)
    return current


def _first_model(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()):
        found = _first_model(arg)
        if found is not None:
            return found
    return None


def _message(error: ErrorDetails, model: type[BaseModel], unknown_hint: str | None) -> str:
    kind = error["type"]
    value = error.get("input")
    loc = tuple(error["loc"])
    ctx = error.get("ctx") or {}
    secret = any(isinstance(part, str) and _SECRET_FIELD.search(part) for part in loc)

    def shown(value: Any) -> str:
        return describe_value(value, secret=secret)

    def bare(value: Any) -> str:
        return "a value not shown: it may be a secret" if secret else repr(value)

    if kind == "extra_forbidden":
        owner = _model_at(model, loc)
        name = str(loc[-1]) if loc else ""
        valid = sorted(owner.model_fields) if owner else []
        hint = nearest(name, valid)
        more = f"; {unknown_hint}" if unknown_hint and len(loc) == 1 else ""
        if hint:
            return f"unknown key {visible(name)}; did you mean '{hint}'?{more}"
        return f"unknown key {visible(name)}; valid keys are {', '.join(valid)}{more}"
    if kind == "missing":
        return "missing required field"
    if kind == "literal_error":
        return f"must be one of {ctx.get('expected', '')} (got {shown(value)})"
    if kind == "enum":
        return f"must be one of {ctx.get('expected', '')} (got {shown(value)})"
    if kind in {"greater_than_equal", "greater_than"}:
        op = ">=" if kind == "greater_than_equal" else ">"
        bound = ctx.get("ge", ctx.get("gt"))
        return f"must be {op} {bound} (got {bare(value)})"
    if kind in {"less_than_equal", "less_than"}:
        op = "<=" if kind == "less_than_equal" else "<"
        bound = ctx.get("le", ctx.get("lt"))
        return f"must be {op} {bound} (got {bare(value)})"
    if kind == "value_error":
        return str(ctx.get("error", error["msg"]))
    expected = {
        "string_type": "a string",
        "int_type": "a whole number",
        "int_parsing": "a whole number",
        "int_from_float": "a whole number",
        "float_type": "a number",
        "float_parsing": "a number",
        "finite_number": "a finite number",
        "bool_type": "true or false",
        "bool_parsing": "true or false",
        "list_type": "a list",
        "tuple_type": "a list",
        "dict_type": "a mapping",
        "model_type": "a mapping",
        "model_attributes_type": "a mapping",
    }.get(kind)
    if expected:
        return f"must be {expected} (got {shown(value)})"
    return f"{error['msg']} (got {shown(value)})"


def field_problems(
    exc: ValidationError, model: type[BaseModel], *, unknown_hint: str | None = None
) -> Iterator[FieldProblem]:
    """Readable problems for each error in ``exc``, which came from validating ``model``.

    ``unknown_hint`` is added to the message about an unknown top-level key (for a dataset: where
    to keep data of its own).
    """
    seen: set[tuple[tuple[str | int, ...], str]] = set()
    for error in exc.errors(include_url=False):
        loc = tuple(part for part in error["loc"] if not _is_union_tag(part))
        problem = FieldProblem(loc, _message(error, model, unknown_hint))
        key = (problem.loc, problem.message)
        if key not in seen:
            seen.add(key)
            yield problem


def _is_union_tag(part: str | int) -> bool:
    # pydantic adds the union member's name to the location of errors inside a union
    return isinstance(part, str) and (
        part.startswith(("function-", "list[", "tuple["))
        or part
        in {
            "str",
            "int",
            "float",
        }
    )


def unparsable(exc: RecursionError | ValueError) -> str:
    """What a parser's failure other than a syntax error means, for a message."""
    if isinstance(exc, RecursionError):
        return "nested too deeply to read"
    return str(exc).split(";")[0]


def unicode_problem(value: Any) -> str | None:
    """Why a parsed value is not text, if it is not (JSON lets a surrogate escape stand alone)."""
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return (
            "has an unpaired surrogate escape (such as \\ud800), which is not valid Unicode "
            "text; fix the text that produced it"
        )
    except (RecursionError, ValueError) as exc:
        return unparsable(exc)
    except TypeError:
        return "holds a value that is not text, a number, a list or a mapping"
    return None

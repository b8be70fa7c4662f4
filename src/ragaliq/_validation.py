"""Turns pydantic validation errors into lines a person can act on.

Shared by the config and dataset loaders so that both say ``where: field: problem`` the same way,
suggest the nearest valid key for a typo, and show the offending value; and so that both say the
same about input a parser reads but the program cannot use (nesting too deep for the parser, an
integer too long to convert, a lone surrogate escape that is not text).
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterable, Iterator
from typing import Any, NamedTuple

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

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
                out += f".{part}" if out else str(part)
        return out or "(top level)"


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


def describe_value(value: Any, *, limit: int = 40) -> str:
    """Name a value's type and show a short repr, e.g. ``number 3`` or ``string 'abc'``."""
    kind = _TYPE_NAMES.get(type(value), type(value).__name__)
    if isinstance(value, (dict, list, tuple)) or value is None:
        return kind
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


def _message(error: ErrorDetails, model: type[BaseModel]) -> str:
    kind = error["type"]
    value = error.get("input")
    loc = tuple(error["loc"])
    ctx = error.get("ctx") or {}
    if kind == "extra_forbidden":
        owner = _model_at(model, loc)
        name = str(loc[-1]) if loc else ""
        valid = sorted(owner.model_fields) if owner else []
        hint = nearest(name, valid)
        if hint:
            return f"unknown key '{name}'; did you mean '{hint}'?"
        return f"unknown key '{name}'; valid keys are {', '.join(valid)}"
    if kind == "missing":
        return "missing required field"
    if kind == "literal_error":
        return f"must be one of {ctx.get('expected', '')} (got {describe_value(value)})"
    if kind == "enum":
        return f"must be one of {ctx.get('expected', '')} (got {describe_value(value)})"
    if kind in {"greater_than_equal", "greater_than"}:
        op = ">=" if kind == "greater_than_equal" else ">"
        bound = ctx.get("ge", ctx.get("gt"))
        return f"must be {op} {bound} (got {value!r})"
    if kind in {"less_than_equal", "less_than"}:
        op = "<=" if kind == "less_than_equal" else "<"
        bound = ctx.get("le", ctx.get("lt"))
        return f"must be {op} {bound} (got {value!r})"
    if kind == "value_error":
        return str(ctx.get("error", error["msg"]))
    expected = {
        "string_type": "a string",
        "int_type": "a whole number",
        "int_parsing": "a whole number",
        "int_from_float": "a whole number",
        "float_type": "a number",
        "float_parsing": "a number",
        "bool_type": "true or false",
        "bool_parsing": "true or false",
        "list_type": "a list",
        "tuple_type": "a list",
        "dict_type": "a mapping",
        "model_type": "a mapping",
        "model_attributes_type": "a mapping",
    }.get(kind)
    if expected:
        return f"must be {expected} (got {describe_value(value)})"
    return f"{error['msg']} (got {describe_value(value)})"


def field_problems(exc: ValidationError, model: type[BaseModel]) -> Iterator[FieldProblem]:
    """Readable problems for each error in ``exc``, which came from validating ``model``."""
    seen: set[tuple[tuple[str | int, ...], str]] = set()
    for error in exc.errors(include_url=False):
        loc = tuple(part for part in error["loc"] if not _is_union_tag(part))
        problem = FieldProblem(loc, _message(error, model))
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
    return None

"""A case's fields: their types, their size limits, and the record every shape turns into.

The types refuse what a file may hold but a case may not, with a message that names the problem
(``must be a string (got number 3)``, ``must not be blank``); :mod:`ragaliq.dataset.shapes`
builds each shape's model from them, and every model turns a valid record into
:class:`CaseFields`.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import AfterValidator, BeforeValidator

from ragaliq._validation import describe_value
from ragaliq.text.plain import is_blank

__all__ = [
    "MAX_FIELD_CHARS",
    "CaseFields",
    "CaseId",
    "Chunks",
    "Facts",
    "Metadata",
    "OptionalCaseId",
    "OptionalText",
    "Query",
    "Tags",
    "Text",
    "Unquoted",
    "as_chunks",
    "context_chars",
]

MAX_FIELD_CHARS = {
    "id": 200,
    "query": 20_000,
    "response": 100_000,
    "context": 500_000,
    "expected_answer": 100_000,
    "expected_facts": 100_000,
}
"""Size limits per field, in characters; ``context`` and ``expected_facts`` count all items."""


@dataclass(frozen=True)
class Unquoted:
    """A YAML id written without quotes that YAML read as something else than text."""

    text: str
    """The id as written, such as ``010``."""
    value: Any
    """What YAML made of it, such as ``8``."""


def _strict_text(value: Any) -> Any:
    if value is not None and not isinstance(value, str):
        raise ValueError(f"must be a string (got {describe_value(value)})")
    return value


def _strict_id(value: Any) -> Any:
    if isinstance(value, Unquoted):
        raise ValueError(
            f"must be a string, but YAML reads {value.text} as {describe_value(value.value)}; "
            f'quote it to keep it as written: id: "{value.text}"'
        )
    if value is not None and not isinstance(value, str):
        raise ValueError(
            f"must be a string (got {describe_value(value)}); put the id in quotes so that it "
            "is read as written"
        )
    return value


def _string_list(noun: str) -> Any:
    def check(value: Any) -> Any:
        if isinstance(value, str):
            return value
        if not isinstance(value, list):
            raise ValueError(f"must be a string or a list of strings (got {describe_value(value)})")
        for i, item in enumerate(value):
            if not isinstance(item, str):
                raise ValueError(f"{noun} {i} must be a string (got {describe_value(item)})")
        return value

    return check


def _case_id(value: str | None) -> str | None:
    if value is None:
        return None
    if is_blank(value):
        raise ValueError("must not be blank; give every case a short, stable name")
    if any(_is_line_break_or_control(ch) for ch in value):
        raise ValueError("must be one line without control characters such as tabs or newlines")
    return value


def _is_line_break_or_control(ch: str) -> bool:
    return unicodedata.category(ch) in {"Cc", "Zl", "Zp"}


def _query(value: str) -> str:
    if is_blank(value):
        raise ValueError("is blank; give the question the RAG system was asked")
    return value


def _none_as(empty: Any) -> Any:
    """A null where a tool writes null for "none" (DeepEval's ``tags``, ``metadata``)."""

    def check(value: Any) -> Any:
        return empty() if value is None else value

    return check


def _facts(value: list[str] | str | None) -> list[str] | str | None:
    for i, fact in enumerate(as_chunks(value) if value is not None else ()):
        if is_blank(fact):
            raise ValueError(f"fact {i} is blank; remove it or write the statement")
    return value


Text = Annotated[str, BeforeValidator(_strict_text)]
"""A string field that refuses numbers and other types with a readable message."""
Chunks = Annotated[list[str] | str, BeforeValidator(_string_list("chunk"))]
"""A context: a list of strings, or one string for a single chunk."""
Facts = Annotated[
    list[str] | str | None, BeforeValidator(_string_list("fact")), AfterValidator(_facts)
]
"""Expected facts: a list of statements, or one string for a single statement."""
CaseId = Annotated[str, BeforeValidator(_strict_id), AfterValidator(_case_id)]
"""A case id: a string as written (never a number YAML or JSON made of it), on one line."""
OptionalCaseId = Annotated[str | None, BeforeValidator(_strict_id), AfterValidator(_case_id)]
"""A case id where the shape lets it be left out (it is then derived from the query)."""
OptionalText = Annotated[str | None, BeforeValidator(_strict_text)]
"""A string field that may be left out or null."""
Query = Annotated[str, BeforeValidator(_strict_text), AfterValidator(_query)]
"""The question: a string that is not blank."""
Tags = Annotated[list[str], BeforeValidator(_none_as(list))]
"""Labels; null is none."""
Metadata = Annotated[dict[str, Any], BeforeValidator(_none_as(dict))]
"""Data of the team's own; null is none."""


def as_chunks(context: Sequence[str] | str) -> tuple[str, ...]:
    """A context as a tuple of chunks (a single string is one chunk)."""
    return (context,) if isinstance(context, str) else tuple(context)


def context_chars(context: Sequence[str] | str) -> int:
    """The size of a context in characters, all chunks together."""
    return sum(len(chunk) for chunk in as_chunks(context))


@dataclass(frozen=True, kw_only=True)
class CaseFields:
    """A valid record in RagaliQ's terms; ``id`` is None when the file gave none."""

    id: str | None
    query: str
    context: tuple[str, ...]
    response: str
    expected_answer: str | None
    expected_facts: tuple[str, ...]
    tags: tuple[str, ...]
    metadata: dict[str, Any]

    @property
    def names_facts(self) -> bool:
        """Whether the case names what retrieval had to bring (its needed facts)."""
        return bool(self.expected_facts) or not is_blank(self.expected_answer or "")

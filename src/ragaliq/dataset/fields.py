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

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, ValidationError

from ragaliq._ids import visible
from ragaliq._validation import describe_value, field_problems
from ragaliq.models import MAX_GRADE, ChunkRef, Labels
from ragaliq.text.plain import is_blank

__all__ = [
    "LABEL_FIELDS",
    "MAX_FIELD_CHARS",
    "CaseFields",
    "CaseId",
    "ChunkObject",
    "Chunks",
    "Facts",
    "ItemId",
    "KeyedTwice",
    "LabelMap",
    "Metadata",
    "OptionalCaseId",
    "OptionalText",
    "Query",
    "RetrievedChunks",
    "Tags",
    "Text",
    "Unquoted",
    "as_chunks",
    "context_chars",
    "json_object",
    "labels_of",
    "split_chunks",
]

MAX_FIELD_CHARS = {
    "id": 200,
    "chunk_id": 200,
    "query": 20_000,
    "response": 100_000,
    "context": 500_000,
    "expected_answer": 100_000,
    "expected_facts": 100_000,
}
"""Size limits per field, in characters; ``context`` and ``expected_facts`` count all items,
``chunk_id`` is each id of a chunk, a source or a label."""


LABEL_FIELDS = frozenset({"relevant_chunks", "relevant_sources", "reference_context_ids"})
"""The fields that name what a case's retrieval should find, in every shape (RAGAS's
``reference_context_ids`` is ``relevant_chunks``)."""


@dataclass(frozen=True)
class Unquoted:
    """A YAML id written without quotes that YAML read as something else than text."""

    text: str
    """The id as written, such as ``010``."""
    value: Any
    """What YAML made of it, such as ``8``."""


class KeyedTwice(dict[str, Any]):
    """A JSON object that gives a key more than once, as JSON reads it (the last value kept).

    YAML refuses such a mapping as it reads it (:mod:`ragaliq._yaml`); JSON has no such rule, so
    the object is kept, and refused where it is validated, with its field.
    """

    repeated: tuple[str, ...] = ()
    """The keys given more than once, in the order they come."""

    def problem(self, noun: str = "key") -> str:
        """``the key 'a' is given twice; keep one``."""
        shown = ", ".join(visible(key) for key in self.repeated)
        return f"the {noun} {shown} is given twice; keep one"


def json_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object as ``json.loads(..., object_pairs_hook=json_object)`` reads it.

    A plain dict; a :class:`KeyedTwice` when a key comes more than once.
    """
    value = dict(pairs)
    if len(value) == len(pairs):
        return value
    twice = KeyedTwice(value)
    seen: set[str] = set()
    repeated: dict[str, None] = {}
    for key, _ in pairs:
        if key in seen:
            repeated[key] = None
        seen.add(key)
    twice.repeated = tuple(repeated)
    return twice


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


def _item_id(value: Any) -> Any:
    """A chunk's or a document's id: text on one line, not blank, of a bounded length."""
    if isinstance(value, Unquoted):
        raise ValueError(
            f"must be a string, but YAML reads {value.text} as {describe_value(value.value)}; "
            f'quote it to keep it as written: "{value.text}"'
        )
    if not isinstance(value, str):
        raise ValueError(
            f"must be a string (got {describe_value(value)}); put the id in quotes so that it "
            "is read as written"
        )
    problem = _id_problem(value)
    if problem is not None:
        raise ValueError(problem)
    return value


def _id_problem(value: str) -> str | None:
    if is_blank(value):
        return "must not be blank"
    if any(_is_line_break_or_control(ch) for ch in value):
        return "must be one line without control characters such as tabs or newlines"
    if len(value) > MAX_FIELD_CHARS["chunk_id"]:
        return f"is over {MAX_FIELD_CHARS['chunk_id']} characters; use a shorter id"
    return None


def _chunk_list(value: Any) -> Any:
    if isinstance(value, str):
        return value
    if not isinstance(value, list):
        raise ValueError(f"must be a string or a list of chunks (got {describe_value(value)})")
    chunks: list[Any] = []
    for i, item in enumerate(value):
        if isinstance(item, dict):
            try:
                item = ChunkObject.model_validate(item)
            except ValidationError as exc:
                first = next(field_problems(exc, ChunkObject))
                raise ValueError(f"chunk {i}: {first.path}: {first.message}") from None
        elif not isinstance(item, str):
            raise ValueError(
                f"chunk {i} must be a string, or an object with text (and an id or a source) "
                f"(got {describe_value(item)})"
            )
        chunks.append(item)
    return chunks


def _labels(value: Any) -> Any:
    """Labels as a list of ids (each relevant, grade 1) or a map from id to grade, as a map."""
    if value is None:
        return None
    if isinstance(value, str):
        value = [value]
    if isinstance(value, list):
        grades: dict[str, int] = {}
        for i, item in enumerate(value):
            try:
                _item_id(item)
            except ValueError as exc:
                raise ValueError(f"id {i} {exc}") from None
            if item in grades:
                raise ValueError(f"id {i} {item!r} comes twice; list each id once")
            grades[item] = 1
        return grades
    if not isinstance(value, dict):
        raise ValueError(
            "must be a list of ids, or a mapping from id to its relevance 0 to "
            f"{MAX_GRADE} (got {describe_value(value)})"
        )
    if isinstance(value, KeyedTwice):
        raise ValueError(value.problem("id") + ", with the relevance it has")
    for item, grade in value.items():
        try:
            _item_id(item)
        except ValueError as exc:
            raise ValueError(f"id {item!r} {exc}") from None
        if isinstance(grade, bool) or not isinstance(grade, int) or not 0 <= grade <= MAX_GRADE:
            raise ValueError(
                f"{item!r}: the relevance must be a whole number from 0 (not relevant) to "
                f"{MAX_GRADE} (got {describe_value(grade)})"
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
ItemId = Annotated[str, BeforeValidator(_item_id)]
"""A chunk's or a document's id, as a dataset names it."""


class ChunkObject(BaseModel):
    """A retrieved chunk written as an object: its text, with its id and its document's id."""

    model_config = ConfigDict(extra="forbid")

    text: Annotated[str, BeforeValidator(_strict_text)]
    id: ItemId | None = None
    """The chunk's id, which ``relevant_chunks`` names."""
    source: ItemId | None = None
    """The id of the document it was cut from, which ``relevant_sources`` names."""


Chunks = Annotated[list[str] | str, BeforeValidator(_string_list("chunk"))]
"""A context of text alone: a list of strings, or one string for a single chunk."""
RetrievedChunks = Annotated[list[str | ChunkObject] | str, BeforeValidator(_chunk_list)]
"""What retrieval found: a list of chunks (strings, or objects with text, id and source), or
one string for a single chunk."""
LabelMap = Annotated[dict[str, int] | None, BeforeValidator(_labels)]
"""Relevance labels: a list of ids (each relevant), or a map from id to a grade 0 to 3."""
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


def split_chunks(
    context: Sequence[str | ChunkObject] | Sequence[str] | str,
) -> tuple[tuple[str, ...], tuple[ChunkRef, ...]]:
    """A context's texts, and its chunks' ids and sources (none when no chunk names any)."""
    chunks = (context,) if isinstance(context, str) else tuple(context)
    texts = tuple(c if isinstance(c, str) else c.text for c in chunks)
    refs = tuple(
        ChunkRef() if isinstance(c, str) else ChunkRef(id=c.id, source=c.source) for c in chunks
    )
    return texts, refs if any(r.id is not None or r.source is not None for r in refs) else ()


def labels_of(chunks: dict[str, int] | None, sources: dict[str, int] | None) -> Labels | None:
    """The labels a record names (at most one of the two fields; the checker refuses both)."""
    if chunks is not None:
        return Labels(level="chunk", grades=chunks)
    if sources is not None:
        return Labels(level="source", grades=sources)
    return None


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
    chunk_refs: tuple[ChunkRef, ...] = ()
    labels: Labels | None = None

    @property
    def names_facts(self) -> bool:
        """Whether the case names what retrieval had to bring (its needed facts)."""
        return bool(self.expected_facts) or not is_blank(self.expected_answer or "")

"""JSON documents whose ``cases`` list holds one item per line, so that they stream both ways.

A run report or a baseline of a hundred thousand cases is one JSON document (any JSON tool reads
it), laid out so that it can be written case by case and read case by case::

    {"schema_version":1,"judge":{...},"evaluators":{...},"cases":[
    {"id":"a",...}
    ,{"id":"b",...}
    ],"summary":{...},"usage":{...}}

The first line holds the fields known before the cases, each case is a line of its own, and the
last line holds the fields known only after them. A document in another layout (an older report
written with indentation, a file a person re-formatted) is still read, whole, within a smaller
size limit.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from ragaliq._reading import TooLong
from ragaliq.errors import RagaliqError

__all__ = [
    "Document",
    "is_streamed_opening",
    "one_line",
    "read_streamed",
    "streamed_closing",
    "streamed_item",
    "streamed_opening",
]

_CASES_OPEN = '"cases":['


_LINE_SEPARATORS = str.maketrans({"\u2028": "\\u2028", "\u2029": "\\u2029"})


def one_line(json_text: str) -> str:
    """JSON text with U+2028 and U+2029 escaped, so that no line reader splits it.

    JSON allows both raw inside strings, and they can only occur there, so the escape keeps the
    value; tools that split lines the way Python's ``str.splitlines`` does would break them.
    """
    if "\u2028" in json_text or "\u2029" in json_text:  # rare: a scan is far cheaper than a map
        return json_text.translate(_LINE_SEPARATORS)
    return json_text


def _dumps(value: Any) -> str:
    return one_line(json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False))


def streamed_opening(fields: Mapping[str, Any]) -> str:
    """The first line: ``fields`` (plain JSON values), then the opening of the cases list."""
    if "cases" in fields:
        raise ValueError("'cases' is the streamed list; name the field otherwise")
    inner = _dumps(dict(fields))[1:-1]
    return "{" + (inner + "," if inner else "") + _CASES_OPEN + "\n"


def streamed_item(text: str, *, first: bool) -> str:
    """One case's line: its JSON, after a comma unless it is the first."""
    return ("" if first else ",") + one_line(text) + "\n"


def streamed_closing(fields: Mapping[str, Any]) -> str:
    """The last line: the end of the cases list, then ``fields``, then the end of the document."""
    inner = _dumps(dict(fields))[1:-1]
    return "]" + ("," + inner if inner else "") + "}\n"


def is_streamed_opening(line: str) -> bool:
    """Whether a first line opens a streamed document."""
    return line.startswith("{") and line.rstrip().endswith(_CASES_OPEN)


@dataclass(kw_only=True)
class Document:
    """A streamed document being read: its opening fields, then its cases, then its closing."""

    name: str
    opening: dict[str, Any]
    closing: dict[str, Any] | None = None
    """The fields after the cases; None until the cases have been read to the end."""


def read_streamed(
    lines: Iterator[tuple[int, str | TooLong]],
    *,
    name: str,
    error: type[RagaliqError],
    max_line: str,
) -> tuple[Document, Iterator[tuple[int, str]]] | None:
    """Start reading a streamed document from its numbered lines.

    Returns None when the first line does not open a streamed document (the caller reads it
    whole instead). Otherwise returns the document and an iterator of its cases' JSON texts with
    their line numbers; the document's ``closing`` is set once that iterator is exhausted.

    Args:
        lines: The file's lines, numbered from 1.
        name: The file, for messages.
        error: The exception to raise on a malformed document.
        max_line: How to describe the line length limit, for the message on a longer line.

    Raises:
        RagaliqError: of type ``error``, naming the file and line, when the layout is broken.
    """
    first = next(lines, None)
    if first is None or isinstance(first[1], TooLong) or not is_streamed_opening(first[1]):
        return None
    text = first[1].rstrip()
    try:
        opening = json.loads(text + "]}")
    except json.JSONDecodeError as exc:
        raise error(f"{name}:1: the opening line is not valid JSON ({exc.msg})") from exc
    if not isinstance(opening, dict):
        raise error(f"{name}:1: not a JSON object")
    opening.pop("cases", None)
    document = Document(name=name, opening=opening)
    return document, _items(lines, document, error=error, max_line=max_line)


def _items(
    lines: Iterator[tuple[int, str | TooLong]],
    document: Document,
    *,
    error: type[RagaliqError],
    max_line: str,
) -> Iterator[tuple[int, str]]:
    name = document.name
    expect_first = True
    for number, line in lines:
        if isinstance(line, TooLong):
            raise error(f"{name}:{number}: the line is longer than {max_line}")
        if line.startswith("]"):
            document.closing = _closing(line, number=number, name=name, error=error)
            for extra, rest in lines:
                if isinstance(rest, TooLong) or rest.strip():
                    raise error(f"{name}:{extra}: text after the end of the document")
            return
        if expect_first:
            item = line
        elif line.startswith(","):
            item = line[1:]
        else:
            raise error(f"{name}:{number}: expected ',' before the next case")
        expect_first = False
        yield number, item
    raise error(f"{name}: the document ends before its cases are closed (a cut-off file?)")


def _closing(line: str, *, number: int, name: str, error: type[RagaliqError]) -> dict[str, Any]:
    try:
        closing = json.loads('{"cases":[' + line.rstrip())
    except json.JSONDecodeError as exc:
        raise error(f"{name}:{number}: the closing line is not valid JSON ({exc.msg})") from exc
    if not isinstance(closing, dict):
        raise error(f"{name}:{number}: the closing line is not part of a JSON object")
    closing.pop("cases", None)
    return closing

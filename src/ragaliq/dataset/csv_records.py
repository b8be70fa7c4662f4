"""Cases in a CSV file: a header row naming the fields, then one case per row.

Columns are named like the fields of a shape (RagaliQ's ``query``, ``context``, ``response`` ...,
or RAGAS's or DeepEval's; see :mod:`ragaliq.dataset.shapes`). A cell is text, except:

- a **list** field (``context``, ``tags``, ``expected_facts``, ``retrieved_contexts`` ...) holds a
  JSON list (``["chunk 1", "chunk 2"]``; the Python form pandas writes, ``['chunk 1', ...]``, is
  read too) or, when it does not start with ``[``, one item. DeepEval's ``retrieval_context`` and
  ``context`` are split at ``|``, the separator DeepEval writes. RagaliQ's context may also be
  spread over numbered columns ``context_1``, ``context_2`` ..., one chunk each;
- a **mapping** field (``metadata``, DeepEval's ``additional_metadata``) holds a JSON object, and a
  column ``metadata.<key>`` puts its text in ``metadata`` under ``<key>``;
- a **label** field (``relevant_chunks``, ``relevant_sources``, RAGAS's ``reference_context_ids``)
  holds a JSON list of ids, a JSON object from id to relevance (``{"doc-1": 3}``), or one id;
  a context's chunks may be JSON objects with their ``id`` and ``source``
  (``[{"id": "a#1", "text": "..."}]``);
- an empty cell is an empty context, an empty answer, or (for an optional field) no value.

The delimiter is a comma, a tab or a semicolon, whichever splits the header into field names.
"""

from __future__ import annotations

import ast
import csv
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from ragaliq._reading import TooLong
from ragaliq.dataset.fields import LABEL_FIELDS, json_object
from ragaliq.dataset.shapes import (
    NATIVE,
    NATIVE_ID_OPTIONAL,
    SHAPES,
    Shape,
    ShapeRecord,
    detect_shape,
)
from ragaliq.errors import DatasetError
from ragaliq.text.plain import is_blank

__all__ = ["KNOWN_COLUMNS", "CsvTable", "Unreadable", "sniff_header"]

MAX_CELL_CHARS = 8 * 1024 * 1024
"""The longest cell read; a case's own fields have tighter limits."""
_MAX_LITERAL_CHARS = 1024 * 1024
"""The longest cell read as a Python list (``['a', 'b']``), whose parser costs more memory."""

_LIST_FIELDS = frozenset(
    {
        "context",
        "tags",
        "expected_facts",
        "retrieved_contexts",
        "reference_contexts",
        "retrieved_context_ids",
        "multi_responses",
        "contexts",
        "ground_truths",
        "retrieval_context",
    }
)
_MAPPING_FIELDS = frozenset({"metadata", "additional_metadata", "custom_column_key_values"})
_CHUNK_FIELDS = frozenset({"context", "retrieved_contexts", "contexts", "retrieval_context"})
"""Fields whose items may be chunk objects (with an id and a source) as well as text."""
_REQUIRED = {"query", "context", "response"}
_NUMBERED_CONTEXT = re.compile(r"context_(\d+)")
_METADATA_COLUMN = "metadata."

KNOWN_COLUMNS = frozenset(
    name for shape in SHAPES for name in shape.model.model_fields
) | frozenset({"context_1"})
"""Every field name of every shape: how a header line is recognised."""


@dataclass(frozen=True)
class Unreadable:
    """A row that could not be turned into a record; ``message`` follows ``file:line:``."""

    message: str


def sniff_header(line: str) -> tuple[str, list[str]] | None:
    """The delimiter and the field names, if ``line`` is a CSV header of dataset fields."""
    best: tuple[str, list[str]] | None = None
    best_known = 1
    for delimiter in (",", "\t", ";"):
        try:
            cells = next(csv.reader([line], delimiter=delimiter))
        except (csv.Error, StopIteration):
            continue
        names = [cell.strip() for cell in cells]
        known = sum(_base_column(name) in KNOWN_COLUMNS for name in names)
        if len(names) >= 2 and known > best_known:
            best, best_known = (delimiter, names), known
    return best


def _base_column(name: str) -> str:
    if _NUMBERED_CONTEXT.fullmatch(name):
        return "context_1"
    if name.startswith(_METADATA_COLUMN):
        return "metadata"
    return name


class CsvTable:
    """Reads the rows of a CSV dataset as records of one shape, with their line numbers."""

    def __init__(
        self,
        lines: Iterable[tuple[int, str | TooLong]],
        *,
        name: str,
        shapes: tuple[Shape, ...],
    ) -> None:
        self._lines = iter(lines)
        self._name = name
        self._shapes = shapes
        self._line = 0
        self.shape: Shape | None = None
        """The shape of the columns, known once the header is read."""
        self.model: type[ShapeRecord] = NATIVE_ID_OPTIONAL.model
        """The model each row is validated with (RagaliQ's lets a CSV leave the id out)."""
        self._model_fields: set[str] = set()
        self._numbered = False
        self.header_line = 0
        self.header_problems: list[str] = []
        """Problems with the header (unknown columns), each reported once."""

    def _feed(self) -> Iterator[str]:
        for number, line in self._lines:
            self._line = number
            if isinstance(line, TooLong):
                raise DatasetError(
                    f"{self._name}:{number}: the line is too long to read; shorten the cells "
                    "on it (docs/datasets.md lists the limits per field)"
                )
            yield line + "\n"

    def rows(self) -> Iterator[tuple[int, dict[str, Any] | Unreadable]]:
        """Each data row as a record of the shape (or why it is unreadable), with its line."""
        first = self._header_line()
        if first is None:
            return
        sniffed = sniff_header(first)
        delimiter, columns = sniffed or (",", [c.strip() for c in next(csv.reader([first]))])
        self._check_header(columns)
        if csv.field_size_limit() < MAX_CELL_CHARS:
            csv.field_size_limit(MAX_CELL_CHARS)  # the default, 131,072, is below a context's
        reader = csv.reader(self._feed(), delimiter=delimiter)
        while True:
            start = self._line + 1
            try:
                cells = next(reader)
            except StopIteration:
                return
            except csv.Error as exc:
                raise DatasetError(
                    f"{self._name}:{start}: not valid CSV ({exc}); check the quotes on this row"
                ) from exc
            if not cells or (len(cells) == 1 and not cells[0].strip()):
                continue
            if len(cells) != len(columns):
                yield (
                    start,
                    Unreadable(
                        f"the row has {len(cells)} cells and the header {len(columns)}; quote "
                        'cells that hold the delimiter, as in "a, b"'
                    ),
                )
                continue
            yield start, self._record(columns, cells)

    def _header_line(self) -> str | None:
        for number, line in self._lines:
            self._line = number
            if isinstance(line, TooLong):
                raise DatasetError(f"{self._name}:{number}: the header line is too long to read")
            if line.strip():
                self.header_line = number
                return line
        return None

    def _check_header(self, columns: list[str]) -> None:
        where = f"{self._name}:{self.header_line}"
        seen: set[str] = set()
        for column in columns:
            if not column:
                raise DatasetError(f"{where}: a column has no name; name every column")
            if column in seen:
                raise DatasetError(f"{where}: the column '{column}' is given twice; keep one")
            seen.add(column)
        plain = [c for c in columns if not c.startswith(_METADATA_COLUMN)]
        keys = {"context" if _NUMBERED_CONTEXT.fullmatch(c) else c for c in plain}
        shape = detect_shape(keys, among=self._shapes)
        self.shape = shape
        if "context" in plain and any(_NUMBERED_CONTEXT.fullmatch(c) for c in plain):
            raise DatasetError(
                f"{where}: give the context either in one 'context' column or in numbered "
                "columns context_1, context_2 ..., not both"
            )
        self.model = NATIVE_ID_OPTIONAL.model if shape is NATIVE else shape.model
        self._model_fields = set(self.model.model_fields)
        self._numbered = any(_NUMBERED_CONTEXT.fullmatch(c) for c in plain)
        for column in plain:
            key = "context" if _NUMBERED_CONTEXT.fullmatch(column) else column
            if key not in self._model_fields:
                self.header_problems.append(
                    f"{where}: {column}: unknown column for {shape.label} fields; rename it "
                    f"metadata.{column} to keep it in the case's metadata"
                )

    def _record(self, columns: list[str], cells: list[str]) -> dict[str, Any] | Unreadable:
        shape = self.shape
        assert shape is not None
        record: dict[str, Any] = {}
        metadata: dict[str, Any] = {}
        numbered: list[tuple[int, str]] = []
        for column, cell in zip(columns, cells, strict=True):
            if column.startswith(_METADATA_COLUMN):
                if cell:
                    metadata[column.removeprefix(_METADATA_COLUMN)] = cell
                continue
            found = _NUMBERED_CONTEXT.fullmatch(column)
            if found:
                if cell:
                    numbered.append((int(found.group(1)), cell))
                continue
            if column not in self._model_fields:
                continue  # reported once, with the header
            value = _cell(column, cell, shape=shape)
            if isinstance(value, Unreadable):
                return value
            if value is not None:
                record[column] = value
        if self._numbered:
            record["context"] = [chunk for _, chunk in sorted(numbered)]
        if metadata:
            existing = record.get("metadata")
            record["metadata"] = (
                {**existing, **metadata} if isinstance(existing, dict) else metadata
            )
        return record


def _cell(column: str, cell: str, *, shape: Shape) -> Any:
    """A cell's value for ``column``: text, a list, a mapping, or None for an empty cell."""
    required = {shape.field_name(name) for name in _REQUIRED}
    if column in LABEL_FIELDS:
        if is_blank(cell):
            return None
        text = cell.strip()
        value = _structured(text) if text[0] in "[{" else text
        if value is None:
            return Unreadable(
                f"{column}: starts with {text[0]!r} but is not valid JSON; write a JSON list of "
                'ids such as ["doc-1", "doc-2"], an object such as {"doc-1": 3}, or one id'
            )
        return value
    if column in _LIST_FIELDS or (column == "context" and shape.name == "deepeval"):
        if is_blank(cell):
            return [] if column in required else None
        return _list_cell(
            column, cell, split_bar=shape.name == "deepeval", objects=column in _CHUNK_FIELDS
        )
    if column in _MAPPING_FIELDS:
        if is_blank(cell):
            return None
        value = _structured(cell)
        if not isinstance(value, dict):
            return Unreadable(
                f'{column}: must be a JSON object such as {{"source": "faq"}} (got {cell[:40]!r})'
            )
        return value
    if not cell and column not in required:
        return None
    return cell


def _list_cell(
    column: str, cell: str, *, split_bar: bool, objects: bool = False
) -> list[Any] | Unreadable:
    text = cell.strip()
    if text.startswith("["):
        value = _structured(text)
        allowed = (str, dict) if objects else str
        if isinstance(value, list) and all(isinstance(item, allowed) for item in value):
            return value
        return Unreadable(
            f"{column}: starts with '[' but is not a JSON list of strings such as "
            '["first", "second"]'
            + (' (or of chunk objects such as {"id": "a#1", "text": "..."})' if objects else "")
            + "; write it as one, or as a single item that does not start with '['"
        )
    if split_bar:
        return cell.split("|")
    return [cell]


def _structured(text: str) -> Any:
    """JSON, else a Python literal (pandas writes lists and dicts that way); None if neither."""
    try:
        return json.loads(text, object_pairs_hook=json_object)
    except ValueError:
        pass
    except RecursionError:
        return None
    if len(text) > _MAX_LITERAL_CHARS:
        return None
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None

"""A dataset file's records with their line numbers, from JSON Lines, JSON and YAML.

JSON Lines is read line by line; a JSON or YAML document is parsed whole. A record is whatever
the file holds where a case should be (a mapping, unless the file is wrong), and
:mod:`ragaliq.dataset.checker` checks it. A JSON Lines line that does not parse is a record too
(:class:`InvalidJson`), reported in its place among the other problems. CSV rows are read by
:mod:`ragaliq.dataset.csv_records`.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import yaml

from ragaliq._reading import TooLong, decode_utf8, describe_size, numbered_lines
from ragaliq._validation import describe_value, unicode_problem, unparsable
from ragaliq._yaml import load_yaml_node
from ragaliq.dataset.csv_records import Unreadable, sniff_header
from ragaliq.dataset.fields import Unquoted, json_object
from ragaliq.dataset.formats import MAX_LINE_BYTES, Container
from ragaliq.errors import DatasetError

__all__ = ["InvalidJson", "document_records", "jsonl_records", "jsonl_text_records"]


@dataclass(frozen=True)
class InvalidJson:
    """A JSONL line that did not parse; reported in its place among the other problems."""

    problem: str


# --- JSON Lines ---------------------------------------------------------------------------------


def _json_line(line: str) -> Any:
    try:
        value = json.loads(line, object_pairs_hook=json_object)
    except json.JSONDecodeError as exc:
        return InvalidJson(f"{exc.msg} (column {exc.colno})")
    except (RecursionError, ValueError) as exc:
        return InvalidJson(unparsable(exc))
    problem = unicode_problem(value)
    return value if problem is None else InvalidJson(problem)


def jsonl_records(
    lines: Iterator[tuple[int, str | TooLong]], name: str
) -> Iterator[tuple[int, Any]]:
    """Each non-blank line's JSON value (or why it is unreadable) with its number.

    Raises:
        DatasetError: the first line shows the file is not JSON Lines (a JSON or YAML
            document, a CSV file), saying how to name it.
    """
    first = True
    for number, line in lines:
        if isinstance(line, TooLong):
            first = False
            yield (
                number,
                Unreadable(
                    f"the line is over {describe_size(MAX_LINE_BYTES)}; each field of a case has a "
                    "size limit (see docs/datasets.md), so shorten it or split the case"
                ),
            )
            continue
        if not line.strip():
            continue
        value = _json_line(line)
        if first and isinstance(value, InvalidJson):
            misnamed = _misnamed(line)
            if misnamed is not None:
                raise DatasetError(f"{name}:{number}: {misnamed}")
        first = False
        yield number, value


_YAML_START = re.compile(r"(---|cases\s*:|-\s+[\w\"']+\s*:|[\w\"']+\s*:(\s|$))")


def _misnamed(line: str) -> str | None:
    """What a file read as JSON Lines looks like instead, judged by its first line."""
    text = line.strip()
    if text in {"[", "{"}:
        return (
            "this looks like one JSON document over several lines, not JSON Lines (one case "
            "per line); name the file .json, or write one case per line"
        )
    header = sniff_header(text)
    if header is not None:
        columns = ", ".join(header[1][:6]) + (", ..." if len(header[1]) > 6 else "")
        return (
            f"this looks like CSV (a header row: {columns}), not JSON Lines; name the file "
            ".csv, or set dataset_format: csv in the config"
        )
    if _YAML_START.match(text):
        return "this looks like YAML, not JSON Lines; name the file .yaml"
    return None


def jsonl_text_records(text: str) -> list[tuple[int, Any]]:
    """Each non-blank line's JSON value (or :class:`InvalidJson`) with its line number.

    Lines end at a line feed, a carriage return or both; not at U+2028 and its kin, which are
    valid inside JSON strings (where a raw line feed or carriage return is not).
    """
    records: list[tuple[int, Any]] = []
    for number, line in _text_lines(text):
        if isinstance(line, str) and line.strip():
            records.append((number, _json_line(line)))
    return records


def _text_lines(text: str) -> Iterator[tuple[int, str | TooLong]]:
    return numbered_lines(
        io.BytesIO(text.encode("utf-8", "surrogatepass")),
        name="",
        max_line_bytes=len(text) * 4 + 1,
        error=DatasetError,
    )


# --- JSON and YAML documents --------------------------------------------------------------------


def document_records(raw: bytes, name: str, container: Container) -> Iterator[tuple[int, Any]]:
    """The cases of a JSON or YAML document, each with the line it starts on.

    Raises:
        DatasetError: the document is not UTF-8, does not parse, or holds no list of cases.
    """
    text = decode_utf8(raw, name=name, error=DatasetError)
    records = _yaml_records(text, name) if container == "yaml" else _json_records(text, name)
    return iter(records)


def _json_records(text: str, name: str) -> list[tuple[int, Any]]:
    try:
        data = json.loads(text, object_pairs_hook=json_object)
    except json.JSONDecodeError as exc:
        raise DatasetError(f"{name}:{exc.lineno}: invalid JSON: {exc.msg}") from exc
    except (RecursionError, ValueError) as exc:
        raise DatasetError(f"{name}: invalid JSON: {unparsable(exc)}") from exc
    _check_unicode(data, name)
    items = _cases_of(data, name)
    lines = _json_item_lines(text)
    if len(lines) != len(items):
        lines = [1] * len(items)
    return list(zip(lines, items, strict=True))


def _yaml_records(text: str, name: str) -> list[tuple[int, Any]]:
    try:
        document = load_yaml_node(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{name}:{mark.line + 1}" if mark is not None else name
        raise DatasetError(f"{where}: invalid YAML: {getattr(exc, 'problem', exc)}") from exc
    except (RecursionError, ValueError) as exc:
        raise DatasetError(f"{name}: invalid YAML: {unparsable(exc)}") from exc
    _check_unicode(document.data, name)
    items = _cases_of(document.data, name)
    node, seq = document.node, document.node
    if isinstance(node, yaml.MappingNode):
        seq = next((v for k, v in node.value if k.value == "cases"), None)
    if not (isinstance(seq, yaml.SequenceNode) and len(seq.value) == len(items)):
        return [(1, item) for item in items]
    return [
        (line, _mark_unquoted_id(item, child))
        for line, item, child in zip(document.lines_of(seq), items, seq.value, strict=True)
    ]


def _mark_unquoted_id(item: Any, node: yaml.Node) -> Any:
    """The case, with an id YAML read as a number, a boolean or null marked as written."""
    if not (isinstance(item, dict) and isinstance(node, yaml.MappingNode)):
        return item
    value = item.get("id")
    if isinstance(value, str) or "id" not in item:
        return item
    for key, child in node.value:
        plain = isinstance(child, yaml.ScalarNode) and child.style is None
        if isinstance(key, yaml.ScalarNode) and key.value == "id" and plain:
            return {**item, "id": Unquoted(child.value, value)}
    return item


def _check_unicode(data: Any, name: str) -> None:
    problem = unicode_problem(data)
    if problem is not None:
        raise DatasetError(f"{name}: {problem}")


def _cases_of(data: Any, name: str) -> list[Any]:
    if data is None:
        return []
    if isinstance(data, dict):
        if "cases" not in data:
            raise DatasetError(f"{name}: expected a top-level 'cases' list (or a list of cases)")
        data = data["cases"]
    if not isinstance(data, list):
        raise DatasetError(f"{name}: cases: must be a list (got {describe_value(data)})")
    return data


def _json_item_lines(text: str) -> list[int]:
    """Line numbers of the cases in a JSON document, found by walking its top level."""
    decoder = json.JSONDecoder()
    pos = _skip_ws(text, 0)

    def walk_array(start: int) -> list[int]:
        lines: list[int] = []
        line, counted = 1, 0
        i = _skip_ws(text, start + 1)
        while i < len(text) and text[i] != "]":
            line += text.count("\n", counted, i)
            counted = i
            lines.append(line)
            _, i = decoder.raw_decode(text, i)
            i = _skip_ws(text, i)
            if i < len(text) and text[i] == ",":
                i = _skip_ws(text, i + 1)
        return lines

    if pos < len(text) and text[pos] == "[":
        return walk_array(pos)
    if pos < len(text) and text[pos] == "{":
        i = _skip_ws(text, pos + 1)
        while i < len(text) and text[i] != "}":
            key, i = decoder.raw_decode(text, i)
            i = _skip_ws(text, _skip_ws(text, i) + 1)  # past the colon
            if key == "cases" and text[i] == "[":
                return walk_array(i)
            _, i = decoder.raw_decode(text, i)
            i = _skip_ws(text, i)
            if i < len(text) and text[i] == ",":
                i = _skip_ws(text, i + 1)
    return []


def _skip_ws(text: str, i: int) -> int:
    while i < len(text) and text[i] in " \t\r\n":
        i += 1
    return i

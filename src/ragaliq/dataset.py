"""Loading the RAG outputs to judge, with every problem reported as ``file:line: field: problem``.

A dataset is JSONL (one case per line), or JSON or YAML holding a list of cases or a mapping with
a ``cases`` list. The whole file is checked before anything is judged.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, TypeVar

import yaml
from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, ValidationError

from ragaliq._validation import describe_value, field_problems, unicode_problem, unparsable
from ragaliq._yaml import load_yaml
from ragaliq.errors import DatasetError
from ragaliq.models import TestCase

__all__ = [
    "MAX_FIELD_CHARS",
    "MAX_PROBLEMS",
    "Chunks",
    "InvalidJson",
    "Text",
    "as_chunks",
    "context_chars",
    "jsonl_records",
    "load_dataset",
    "parse_dataset",
    "raise_problems",
    "read_utf8",
    "validate_records",
]

R = TypeVar("R", bound=BaseModel)

MAX_FIELD_CHARS = {"id": 200, "query": 20_000, "response": 100_000, "context": 500_000}
"""Size limits per field, in characters; ``context`` counts all chunks together."""
MAX_PROBLEMS = 20
"""Problems listed before the rest are summarised as a count."""


def _strict_text(value: Any) -> Any:
    if value is not None and not isinstance(value, str):
        raise ValueError(f"must be a string (got {describe_value(value)})")
    return value


def _chunks(value: Any) -> Any:
    if isinstance(value, str):
        return value
    if not isinstance(value, list):
        raise ValueError(f"must be a string or a list of strings (got {describe_value(value)})")
    for i, chunk in enumerate(value):
        if not isinstance(chunk, str):
            raise ValueError(f"chunk {i} must be a string (got {describe_value(chunk)})")
    return value


_LINE_END = re.compile(r"\r\n|\r|\n")


def _case_id(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be blank; give every case a short, stable name")
    if any(unicodedata.category(ch) in {"Cc", "Zl", "Zp"} for ch in value):
        raise ValueError("must be one line without control characters such as tabs or newlines")
    return value


Text = Annotated[str, BeforeValidator(_strict_text)]
"""A string field that refuses numbers and other types with a readable message."""
Chunks = Annotated[list[str] | str, BeforeValidator(_chunks)]
"""A context: a list of strings, or one string for a single chunk."""


def as_chunks(context: list[str] | str) -> tuple[str, ...]:
    """A context as a tuple of chunks (a single string is one chunk)."""
    return (context,) if isinstance(context, str) else tuple(context)


def context_chars(context: list[str] | str) -> int:
    """The size of a context in characters, all chunks together."""
    return sum(len(chunk) for chunk in as_chunks(context))


class _CaseRecord(BaseModel):
    """The on-disk shape of a case, stricter about types than the in-memory model."""

    model_config = ConfigDict(extra="forbid", coerce_numbers_to_str=True)

    id: Annotated[str, AfterValidator(_case_id)] = Field(min_length=1)
    query: Text
    context: Chunks
    response: Text
    expected_answer: Text | None = None
    tags: list[str] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)

    def to_case(self) -> TestCase:
        return TestCase(
            id=self.id,
            query=self.query,
            context=as_chunks(self.context),
            response=self.response,
            expected_answer=self.expected_answer,
            tags=tuple(self.tags),
            metadata=self.metadata,
        )


def load_dataset(path: Path) -> list[TestCase]:
    """Read and validate a dataset file.

    Raises:
        DatasetError: the file is missing, is not UTF-8, cannot be parsed, is empty, or has
            invalid cases; the message lists every problem found, one per line.
    """
    text = read_utf8(path, missing="pass --dataset or set 'dataset' in the config")
    return parse_dataset(text, name=str(path), suffix=path.suffix.lower())


def read_utf8(path: Path, *, missing: str) -> str:
    """A file's text, with a clear error when it is missing, unreadable or not UTF-8.

    Raises:
        DatasetError: naming the file (and the line of a bad byte); ``missing`` says how to fix
            a missing file.
    """
    name = str(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError as exc:
        raise DatasetError(f"{name}: not found; {missing}") from exc
    except OSError as exc:
        raise DatasetError(f"{name}: cannot be read ({exc.strerror})") from exc
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise DatasetError(
            f"{name}:{line}: not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset {exc.start}); "
            "re-save the file as UTF-8"
        ) from exc


def parse_dataset(text: str, *, name: str, suffix: str = ".jsonl") -> list[TestCase]:
    """Validate dataset text; ``suffix`` picks the format and ``name`` is used in messages."""
    if suffix in {".yaml", ".yml"}:
        records = _yaml_records(text, name)
    elif suffix == ".json":
        records = _json_records(text, name)
    else:
        records = jsonl_records(text)
    if not records:
        raise DatasetError(
            f"{name}: the dataset has no cases; add one case per line as "
            '{"id": ..., "query": ..., "context": [...], "response": ...}'
        )
    return _validate(records, name)


@dataclass(frozen=True)
class InvalidJson:
    """A JSONL line that did not parse; reported in its place among the other problems."""

    problem: str


def jsonl_records(text: str) -> list[tuple[int, Any]]:
    """Each non-blank line's JSON value (or :class:`InvalidJson`) with its line number.

    Lines end at a line feed, a carriage return or both; not at U+2028 and its kin, which are
    valid inside JSON strings (where a raw line feed or carriage return is not).
    """
    records: list[tuple[int, Any]] = []
    for number, line in enumerate(_LINE_END.split(text), start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as exc:
            records.append((number, InvalidJson(f"{exc.msg} (column {exc.colno})")))
            continue
        except (RecursionError, ValueError) as exc:
            records.append((number, InvalidJson(unparsable(exc))))
            continue
        problem = unicode_problem(value)
        records.append((number, value if problem is None else InvalidJson(problem)))
    return records


def _json_records(text: str, name: str) -> list[tuple[int, Any]]:
    try:
        data = json.loads(text)
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
        data = load_yaml(text)
        node = yaml.compose(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{name}:{mark.line + 1}" if mark is not None else name
        raise DatasetError(f"{where}: invalid YAML: {getattr(exc, 'problem', exc)}") from exc
    except (RecursionError, ValueError) as exc:
        raise DatasetError(f"{name}: invalid YAML: {unparsable(exc)}") from exc
    _check_unicode(data, name)
    items = _cases_of(data, name)
    seq = node
    if isinstance(node, yaml.MappingNode):
        seq = next((v for k, v in node.value if k.value == "cases"), None)
    if isinstance(seq, yaml.SequenceNode) and len(seq.value) == len(items):
        lines = [child.start_mark.line + 1 for child in seq.value]
    else:
        lines = [1] * len(items)
    return list(zip(lines, items, strict=True))


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
        i = _skip_ws(text, start + 1)
        while i < len(text) and text[i] != "]":
            lines.append(text.count("\n", 0, i) + 1)
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


def _validate(records: list[tuple[int, Any]], name: str) -> list[TestCase]:
    valid = validate_records(
        records, name=name, model=_CaseRecord, noun="a case", size_problems=_size_problems
    )
    return [record.to_case() for _, record in valid]


def validate_records(
    records: Sequence[tuple[int, Any]],
    *,
    name: str,
    model: type[R],
    noun: str,
    size_problems: Callable[[R], list[str]],
) -> list[tuple[int, R]]:
    """Validate numbered records against ``model``, which has a unique ``id`` field.

    Raises:
        DatasetError: every problem found, as ``file:line: field: problem``.
    """
    valid: list[tuple[int, R]] = []
    problems: list[str] = []
    first_seen: dict[str, int] = {}
    for line, item in records:
        where = f"{name}:{line}"
        if isinstance(item, InvalidJson):
            problems.append(f"{where}: invalid JSON: {item.problem}")
            continue
        if not isinstance(item, dict):
            problems.append(f"{where}: {noun} must be an object (got {describe_value(item)})")
            continue
        try:
            record = model.model_validate(item)
        except ValidationError as exc:
            problems.extend(f"{where}: {p.path}: {p.message}" for p in field_problems(exc, model))
            continue
        problems.extend(f"{where}: {msg}" for msg in size_problems(record))
        record_id = str(getattr(record, "id"))  # noqa: B009 - every record model has an id
        if record_id in first_seen:
            problems.append(
                f"{where}: id: duplicate id '{record_id}' "
                f"(first used on line {first_seen[record_id]}); ids must be unique and stable"
            )
            continue
        first_seen[record_id] = line
        valid.append((line, record))
    raise_problems(problems)
    return valid


def _size_problems(record: _CaseRecord) -> list[str]:
    sizes = {
        "id": len(record.id),
        "query": len(record.query),
        "response": len(record.response),
        "context": context_chars(record.context),
    }
    return [
        f"{field}: {size:,} characters is over the limit of {MAX_FIELD_CHARS[field]:,}; "
        "shorten it or split the case"
        for field, size in sizes.items()
        if size > MAX_FIELD_CHARS[field]
    ]


def raise_problems(problems: list[str]) -> None:
    """Raise one DatasetError listing the problems (the first ``MAX_PROBLEMS`` of them)."""
    if not problems:
        return
    shown = problems[:MAX_PROBLEMS]
    if len(problems) > MAX_PROBLEMS:
        shown.append(f"... and {len(problems) - MAX_PROBLEMS} more problems")
    raise DatasetError("\n".join(shown))

"""Reading the RAG outputs to judge, with every problem reported as ``file:line: field: problem``.

A dataset is JSON Lines (one case per line), a JSON or YAML document holding a list of cases (or a
mapping with a ``cases`` list), or CSV (a header row, then one case per row). Its cases may use
RagaliQ's field names or those of RAGAS or DeepEval (:mod:`ragaliq._shapes`); the shape is
detected from the field names, or set with ``dataset_format`` in the config, and
:class:`DatasetInfo` says which was used. A shape without ids gets ids derived from the query.

The whole file is checked before anything is judged. Memory stays bounded: JSON Lines and CSV
are read as a stream (:class:`DatasetReader` yields the cases one by one and keeps only what
finding duplicate ids needs), JSON and YAML documents are parsed whole under a tighter size
limit, and special files (``/dev/zero``, a FIFO, a folder) are refused before a byte is read.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeVar

import yaml
from pydantic import AliasChoices, BaseModel, ValidationError

from ragaliq._csv_cases import CsvTable, Unreadable, sniff_header
from ragaliq._ids import IdRegistry, derive_id, visible
from ragaliq._reading import (
    TooLong,
    decode_utf8,
    describe_size,
    numbered_lines,
    open_regular,
    read_regular,
)
from ragaliq._shapes import (
    MAX_FIELD_CHARS,
    NATIVE,
    SHAPES,
    CaseFields,
    Chunks,
    Shape,
    ShapeRecord,
    Text,
    Unquoted,
    as_chunks,
    context_chars,
    detect_shape,
    shape_named,
)
from ragaliq._validation import describe_value, field_problems, unicode_problem, unparsable
from ragaliq._yaml import load_yaml_node
from ragaliq.errors import DatasetError
from ragaliq.models import TestCase

__all__ = [
    "MAX_DOCUMENT_BYTES",
    "MAX_FIELD_CHARS",
    "MAX_LINE_BYTES",
    "MAX_PROBLEMS",
    "MAX_STREAM_BYTES",
    "MAX_YAML_BYTES",
    "CaseChecker",
    "Chunks",
    "Container",
    "Dataset",
    "DatasetCases",
    "DatasetFormat",
    "DatasetInfo",
    "DatasetReader",
    "InvalidJson",
    "NumberedCase",
    "Text",
    "as_chunks",
    "context_chars",
    "iter_cases",
    "jsonl_records",
    "load_dataset",
    "parse_dataset",
    "raise_problems",
    "read_dataset",
    "read_utf8",
    "validate_records",
]

R = TypeVar("R", bound=BaseModel)

DatasetFormat = Literal["auto", "ragaliq", "ragas", "deepeval", "csv"]
"""``dataset_format`` in the config: detect, force a shape of fields, or force CSV."""
Container = Literal["jsonl", "json", "yaml", "csv"]

MAX_STREAM_BYTES = 2 * 1024**3
"""The size limit of a JSON Lines or CSV dataset, which is read as a stream."""
MAX_DOCUMENT_BYTES = 64 * 1024**2
"""The size limit of a JSON dataset, which is parsed whole."""
MAX_YAML_BYTES = 8 * 1024**2
"""The size limit of a YAML dataset: parsed whole, by a parser that needs ~60 bytes per byte."""
MAX_LINE_BYTES = 8 * 1024**2
"""The longest line of a JSON Lines or CSV dataset."""
MAX_PROBLEMS = 20
"""Problems listed before the rest are summarised as a count."""

_CONTAINER_LABELS = {"jsonl": "JSON Lines", "json": "JSON", "yaml": "YAML", "csv": "CSV"}
_LIMITS: dict[Container, int] = {
    "jsonl": MAX_STREAM_BYTES,
    "csv": MAX_STREAM_BYTES,
    "json": MAX_DOCUMENT_BYTES,
    "yaml": MAX_YAML_BYTES,
}
_MISSING = "pass --dataset or set 'dataset' in the config"
RESPONSE_JUDGED_BY = "faithfulness, hallucination and relevance"
"""Who judges a case's response by default (the evaluators on unless the config says otherwise),
for the message that refuses a case without one."""
_ONE_CASE = '{"id": ..., "query": ..., "context": [...], "response": ...}'


@dataclass(frozen=True)
class InvalidJson:
    """A JSONL line that did not parse; reported in its place among the other problems."""

    problem: str


@dataclass(frozen=True, kw_only=True)
class DatasetInfo:
    """How a dataset was read: its format, its shape of fields, its cases and derived ids."""

    path: str
    container: Container
    shape: str
    """The shape's label: ``RagaliQ``, ``RAGAS``, ``RAGAS (names before 0.2)``, ``DeepEval``."""
    mapping: str = ""
    """How the shape's fields map to RagaliQ's, when they differ."""
    forced: bool = False
    """Whether ``dataset_format`` chose the format (else it was detected)."""
    cases: int = 0
    derived_ids: int = 0
    """Cases given an id derived from their query, having none."""
    derived_example: str | None = None
    no_response: int = 0
    """Cases without a response, read because no evaluator of the run judges one."""
    no_response_line: int = 0
    """The line of the first of them."""

    @property
    def description(self) -> str:
        """``JSON Lines`` or ``CSV, RAGAS fields``."""
        label = _CONTAINER_LABELS[self.container]
        return label if self.shape == NATIVE.label else f"{label}, {self.shape} fields"

    @property
    def notices(self) -> tuple[str, ...]:
        """What a run should say about how the dataset was read (nothing for RagaliQ's JSON)."""
        out = []
        if self.shape != NATIVE.label or self.container == "csv":
            how = (
                "as dataset_format in the config says"
                if self.forced
                else "detected from its name and fields"
            )
            mapping = f" ({self.mapping})" if self.mapping else ""
            out.append(
                f"The dataset {self.path} was read as {_CONTAINER_LABELS[self.container]} with "
                f"{self.shape} fields{mapping}, {how}."
            )
        if self.derived_ids:
            out.append(
                f"{self._some_cases_have(self.derived_ids)} no id, so each got one derived from "
                f"its query (such as {visible(self.derived_example or '')}); the baseline "
                "matches cases by id, so a case whose query changes counts as a new case. Give "
                "each case an id to keep it matched."
            )
        if self.no_response:
            out.append(
                f"{self._some_cases_have(self.no_response)} no response (the first on line "
                f"{self.no_response_line}): an empty answer is never scored, so only what "
                "retrieval brought is judged (context precision and recall)."
            )
        return tuple(out)

    def _some_cases_have(self, count: int) -> str:
        """``Its cases have``, ``1 of its cases has`` or ``3 of its cases have``."""
        if count == self.cases:
            return "Its cases have" if count > 1 else "Its case has"
        return f"{count:,} of its cases {'has' if count == 1 else 'have'}"


@dataclass(frozen=True)
class Dataset:
    """A dataset read whole: its cases, and how it was read."""

    cases: list[TestCase]
    info: DatasetInfo


NumberedCase = tuple[int, TestCase]
"""A case and the line it starts on."""


class _Problems:
    """The problems found, keeping the first :data:`MAX_PROBLEMS` and counting the rest."""

    def __init__(self) -> None:
        self.shown: list[str] = []
        self.count = 0

    def add(self, problem: str) -> None:
        self.count += 1
        if len(self.shown) < MAX_PROBLEMS:
            self.shown.append(problem)

    def raise_if_any(self) -> None:
        if self.count > len(self.shown):
            raise DatasetError(
                "\n".join([*self.shown, f"... and {self.count - len(self.shown)} more problems"])
            )
        if self.shown:
            raise DatasetError("\n".join(self.shown))


def _container(path: Path, dataset_format: DatasetFormat) -> Container:
    suffix = path.suffix.lower()
    if dataset_format == "csv" or suffix == ".csv":
        return "csv"
    if suffix == ".json":
        return "json"
    if suffix in {".yaml", ".yml"}:
        return "yaml"
    return "jsonl"


def _too_big(container: Container) -> str:
    if container in {"json", "yaml"}:
        return (
            f"a {_CONTAINER_LABELS[container]} dataset is parsed whole, so write JSON Lines "
            f"instead (.jsonl, one case per line), which is read as a stream up to "
            f"{describe_size(MAX_STREAM_BYTES)}"
        )
    return "judge a smaller suite, or split it into several datasets, one per gate"


class DatasetReader:
    """Reads and validates a dataset, yielding its cases one at a time.

    Nothing may be judged until the whole file is valid, so iteration stops yielding at the first
    problem, goes on to find the others, and raises them all at the end. A caller that must not
    act on any case of an invalid file reads it twice: :meth:`check` first (memory bounded by the
    ids), then the cases::

        reader = DatasetReader(path)
        reader.check()           # raises DatasetError listing every problem
        for line, case in reader:
            ...

    A case is refused when it has neither a response nor a retrieved chunk (nothing the RAG
    system produced: a DeepEval golden, a RAGAS sample before the system answered it), and when
    it has no response while ``response_judged_by`` names evaluators that judge one; without
    them (retrieval data) it is read, counted in :attr:`DatasetInfo.no_response`.
    """

    def __init__(
        self,
        path: Path,
        *,
        dataset_format: DatasetFormat = "auto",
        missing: str = _MISSING,
        response_judged_by: str | None = RESPONSE_JUDGED_BY,
    ) -> None:
        self.path = path
        self.dataset_format = dataset_format
        self.missing = missing
        """How to fix a missing file, in the words of the caller (a command line option ...)."""
        self.response_judged_by = response_judged_by
        """The evaluators that judge a case's response, for which a case without one is refused;
        None when none of the run does (retrieval data: a case without a response is read)."""
        self.container: Container = _container(path, dataset_format)
        self._info: DatasetInfo | None = None

    @property
    def info(self) -> DatasetInfo:
        """How the dataset was read; complete once it has been read to the end."""
        if self._info is None:
            raise RuntimeError("the dataset has not been read yet")
        return self._info

    def __iter__(self) -> Iterator[NumberedCase]:
        for line, case in self._read(keep=True):
            assert case is not None
            yield line, case

    def check(self) -> DatasetInfo:
        """Validate the whole dataset, keeping no case; return how it was read.

        Raises:
            DatasetError: every problem found, as ``file:line: field: problem``.
        """
        for _ in self._read(keep=False):
            pass
        return self.info

    # --- reading ------------------------------------------------------------------------------

    def _read(self, *, keep: bool) -> Iterator[tuple[int, TestCase | None]]:
        name = str(self.path)
        limit = _LIMITS[self.container]
        with open_regular(
            self.path,
            limit=limit,
            error=DatasetError,
            missing=self.missing,
            too_big=_too_big(self.container),
        ) as handle:
            if self.container in {"jsonl", "csv"}:
                lines = numbered_lines(
                    handle, name=name, max_line_bytes=MAX_LINE_BYTES, error=DatasetError
                )
                yield from self.validated(lines, keep=keep)
                return
            raw = handle.read()
        items = _document_items(raw, name, self.container)
        del raw  # the parsed document is all that is needed now
        yield from self.validated(items, keep=keep)

    def _shapes(self) -> tuple[Shape, ...]:
        if self.dataset_format in {"ragaliq", "ragas", "deepeval"}:
            return shape_named(self.dataset_format)
        return SHAPES

    def validated(
        self, source: Iterator[tuple[int, Any]], *, keep: bool = True
    ) -> Iterator[tuple[int, TestCase | None]]:
        """Validate numbered lines (JSON Lines, CSV) or numbered records (JSON, YAML)."""
        name = str(self.path)
        state = CaseChecker(name, self._shapes(), response_judged_by=self.response_judged_by)
        table: CsvTable | None = None
        items: Iterator[tuple[int, Any]]
        if self.container == "csv":
            table = CsvTable(source, name=name, shapes=state.shapes)
            items = iter(table.rows())
        elif self.container == "jsonl":
            items = _jsonl_items(source, name)
        else:
            items = source
        for line, item in items:
            if table is not None and state.shape is None:
                state.use_table(table)
            valid = state.check(line, item)
            if valid is not None and state.problems.count == 0:
                yield line, _to_case(*valid) if keep else None
        if table is not None and state.shape is None:
            state.use_table(table)
        if state.cases == 0 and state.problems.count == 0:
            raise DatasetError(f"{name}: the dataset has no cases; {self._how_to_add()}")
        state.problems.raise_if_any()
        shape = state.shape or NATIVE
        self._info = DatasetInfo(
            path=name,
            container=self.container,
            shape=shape.label,
            mapping=shape.mapping,
            forced=self.dataset_format != "auto",
            cases=state.cases,
            derived_ids=state.derived,
            derived_example=state.example,
            no_response=state.no_response,
            no_response_line=state.no_response_line,
        )

    def _how_to_add(self) -> str:
        if self.container == "csv":
            return "add a header row (id,query,context,response) and one case per row"
        if self.container == "jsonl":
            return f"add one case per line as {_ONE_CASE}"
        return f"add a list of cases, each as {_ONE_CASE}"


class CaseChecker:
    """One pass over a dataset's records: the shape, the ids seen, the problems, the counts."""

    def __init__(
        self,
        name: str,
        shapes: tuple[Shape, ...],
        *,
        response_judged_by: str | None = RESPONSE_JUDGED_BY,
    ) -> None:
        self.name = name
        self.shapes = shapes
        self.response_judged_by = response_judged_by
        self.problems = _Problems()
        self.registry = IdRegistry()
        self.shape: Shape | None = None
        self.model: type[ShapeRecord] | None = None
        self.cases = 0
        self.derived = 0
        self.example: str | None = None
        self.no_response = 0
        self.no_response_line = 0

    def use_table(self, table: CsvTable) -> None:
        """Take the shape from a CSV header, and report the header's problems."""
        self.shape, self.model = table.shape, table.model
        for problem in table.header_problems:
            self.problems.add(problem)

    def check(self, line: int, item: Any) -> tuple[CaseFields, str] | None:
        """A valid record's fields and id; None (and the problems recorded) for an invalid one."""
        where = f"{self.name}:{line}"
        if isinstance(item, InvalidJson):
            self.problems.add(f"{where}: invalid JSON: {item.problem}")
            return None
        if isinstance(item, Unreadable):
            self.problems.add(f"{where}: {item.message}")
            return None
        if not isinstance(item, dict):
            self.problems.add(f"{where}: a case must be an object (got {describe_value(item)})")
            return None
        if self.shape is None or self.model is None:
            self.shape = detect_shape(item, among=self.shapes)
            self.model = self.shape.model
        fields = _validate_case(item, self.model, self.shape, where, self.problems)
        if fields is None or not self._answered(fields, where, line):
            return None
        case_id = fields.id
        if case_id is None:
            case_id = _derived_id(fields.query, self.registry)
            self.derived += 1
            self.example = self.example or case_id
        clash = self.registry.add(case_id, line)
        if clash is not None:
            self.problems.add(f"{where}: id: {clash}")
            return None
        self.cases += 1
        return fields, case_id

    def _answered(self, fields: CaseFields, where: str, line: int) -> bool:
        """Whether a case without a response may be read: only when no evaluator judges one.

        An empty answer is never judged (it would have no claims, and score as perfect).
        """
        if fields.response.strip():
            return True
        assert self.shape is not None
        if self.response_judged_by is not None:
            self.problems.add(
                f"{where}: {self.shape.field_name('response')}: missing or empty; "
                f"{self.response_judged_by} judge the RAG system's answer, so write it here (for "
                "retrieval data without answers, turn them off with enabled: false and judge "
                "context_precision or context_recall)"
            )
            return False
        self.no_response += 1
        self.no_response_line = self.no_response_line or line
        return True

    def check_one(self, line: int, item: Any) -> tuple[CaseFields, str]:
        """A valid record's fields and id, or a DatasetError with its problems.

        Raises:
            DatasetError: the record's problems, as ``file:line: field: problem``.
        """
        valid = self.check(line, item)
        if valid is None:
            shown = self.problems.shown
            self.problems = _Problems()
            raise DatasetError("\n".join(shown))
        return valid


def _validate_case(
    item: dict[str, Any],
    model: type[ShapeRecord],
    shape: Shape,
    where: str,
    problems: _Problems,
) -> CaseFields | None:
    context = _names_of(shape, shape.field_name("context"))
    try:
        record = model.model_validate(item)
    except ValidationError as exc:
        found = list(
            field_problems(exc, model, unknown_hint="keep data of your own under 'metadata'")
        )
        if all(p.loc and p.loc[0] in context for p in found) and _unanswered(item, shape):
            problems.add(f"{where}: {_unanswered(item, shape)}")
            return None
        for p in found:
            field = str(p.loc[0]) if p.loc else ""
            more = model.explain(field, item)
            if field in context and item.get(field, ...) is None:
                more = more or "; give the chunks your retrieval returned ([] when it found none)"
            problems.add(f"{where}: {p.path}: {p.message}{more}")
        return None
    if _unanswered(item, shape):
        problems.add(f"{where}: {_unanswered(item, shape)}")
        return None
    fields = record.fields()
    oversized = _size_problems(fields, shape)
    for problem in oversized:
        problems.add(f"{where}: {problem}")
    return None if oversized else fields


def _unanswered(item: dict[str, Any], shape: Shape) -> str | None:
    """Why a record holds nothing the RAG system produced, if it has no answer and no chunk.

    A DeepEval golden or a RAGAS sample before the system ran on it: never judged as a case.
    """
    names = [shape.field_name("response"), shape.field_name("context")]
    if any(_written(_as_written(item, shape, name)) for name in names):
        return None
    return (
        f"{', '.join(names)}: both missing or empty, so the case holds nothing your RAG system "
        "produced (a DeepEval golden or a RAGAS sample before the system answered it); run the "
        f"system on it and write its answer as {names[0]} and the chunks it retrieved as "
        f"{names[1]}"
    )


def _as_written(item: dict[str, Any], shape: Shape, name: str) -> Any:
    """A field's value in a raw record, under any name the shape accepts for it (camelCase)."""
    return next((item[n] for n in _names_of(shape, name) if n in item), None)


def _names_of(shape: Shape, name: str) -> tuple[str, ...]:
    """Every name the shape accepts for one of its fields: its own, and any alias."""
    info = shape.model.model_fields.get(name)
    alias = info.validation_alias if info is not None else None
    if isinstance(alias, AliasChoices):
        return tuple(choice for choice in alias.choices if isinstance(choice, str))
    return (name,)


def _written(value: Any) -> bool:
    if isinstance(value, str):
        return bool(value.strip())
    if isinstance(value, list):
        return any(not isinstance(v, str) or v.strip() for v in value)
    return value is not None


def _derived_id(query: str, registry: IdRegistry) -> str:
    """An id from the query; the second case with the same query gets ``-2``, and so on."""
    base = derive_id(query)
    candidate, n = base, 1
    while registry.has(candidate):
        n += 1
        candidate = f"{base}-{n}"
    return candidate


def _to_case(fields: CaseFields, case_id: str) -> TestCase:
    return TestCase(
        id=case_id,
        query=fields.query,
        context=fields.context,
        response=fields.response,
        expected_answer=fields.expected_answer,
        expected_facts=fields.expected_facts,
        tags=fields.tags,
        metadata=fields.metadata,
    )


def _size_problems(fields: CaseFields, shape: Shape) -> list[str]:
    sizes = {
        "id": len(fields.id or ""),
        "query": len(fields.query),
        "response": len(fields.response),
        "context": context_chars(fields.context),
        "expected_answer": len(fields.expected_answer or ""),
        "expected_facts": context_chars(fields.expected_facts),
    }
    return [
        f"{shape.field_name(name)}: {size:,} characters is over the limit of "
        f"{MAX_FIELD_CHARS[name]:,}; shorten it or split the case"
        for name, size in sizes.items()
        if size > MAX_FIELD_CHARS[name]
    ]


# --- JSON Lines ---------------------------------------------------------------------------------


def _json_line(line: str) -> Any:
    try:
        value = json.loads(line)
    except json.JSONDecodeError as exc:
        return InvalidJson(f"{exc.msg} (column {exc.colno})")
    except (RecursionError, ValueError) as exc:
        return InvalidJson(unparsable(exc))
    problem = unicode_problem(value)
    return value if problem is None else InvalidJson(problem)


def _jsonl_items(
    lines: Iterator[tuple[int, str | TooLong]], name: str
) -> Iterator[tuple[int, Any]]:
    first = True
    for number, line in lines:
        if isinstance(line, TooLong):
            first = False
            yield (
                number,
                Unreadable(
                    f"the line is over {describe_size(MAX_LINE_BYTES)}; each field of a case has a "
                    "size limit (see the README), so shorten it or split the case"
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


def jsonl_records(text: str) -> list[tuple[int, Any]]:
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


def _document_items(raw: bytes, name: str, container: Container) -> Iterator[tuple[int, Any]]:
    text = decode_utf8(raw, name=name, error=DatasetError)
    records = _yaml_records(text, name) if container == "yaml" else _json_records(text, name)
    return iter(records)


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


class DatasetCases:
    """A validated dataset's cases, read from its file again each time they are iterated.

    :meth:`read` validates the whole file first (memory bounded by the ids), so that nothing is
    judged from an invalid file; iterating then holds one case at a time, which lets a suite of
    any size be judged as it is read.
    """

    def __init__(
        self,
        path: Path,
        *,
        dataset_format: DatasetFormat,
        info: DatasetInfo,
        keep: Callable[[TestCase], bool] | None = None,
        judged_by: str | None = RESPONSE_JUDGED_BY,
    ) -> None:
        self.path = path
        self.dataset_format = dataset_format
        self.info = info
        self._keep = keep
        self._judged_by = judged_by
        self._count: int | None = None if keep is not None else info.cases

    @classmethod
    def read(
        cls,
        path: Path,
        *,
        dataset_format: DatasetFormat = "auto",
        response_judged_by: str | None = RESPONSE_JUDGED_BY,
    ) -> DatasetCases:
        """Validate the dataset at ``path`` and return its cases, to be read when iterated.

        ``response_judged_by`` names the evaluators that judge a response (a case without one
        is refused for them), or is None when none does (see :class:`DatasetReader`).

        Raises:
            DatasetError: every problem of the file (see :class:`DatasetReader`).
        """
        reader = DatasetReader(
            path, dataset_format=dataset_format, response_judged_by=response_judged_by
        )
        return cls(
            path, dataset_format=dataset_format, info=reader.check(), judged_by=response_judged_by
        )

    def where(self, keep: Callable[[TestCase], bool]) -> DatasetCases:
        """The cases ``keep`` accepts (a shard's), in the dataset's order."""
        return DatasetCases(
            self.path,
            dataset_format=self.dataset_format,
            info=self.info,
            keep=keep,
            judged_by=self._judged_by,
        )

    def __iter__(self) -> Iterator[TestCase]:
        reader = DatasetReader(
            self.path, dataset_format=self.dataset_format, response_judged_by=self._judged_by
        )
        for _, case in reader:
            if self._keep is None or self._keep(case):
                yield case

    def __len__(self) -> int:
        if self._count is None:
            self._count = sum(1 for _ in self)
        return self._count

    def by_id(self) -> Callable[[str], TestCase | None]:
        """A lookup of cases by id, for a reader that asks in (roughly) the dataset's order.

        Cases asked for in order are found by reading on, holding a bounded window of the cases
        passed over; a case asked for further back is found by reading from the start again, so
        a reader in the dataset's order (or a few shards' orders one after another) reads the
        file a few times at most and holds a few thousand cases at most.
        """
        stream = iter(self)
        passed: dict[str, TestCase] = {}
        known: set[str] | None = None

        def find(case_id: str) -> TestCase | None:
            nonlocal stream, known
            if case_id in passed:
                return passed.pop(case_id)
            if known is not None and case_id not in known:
                return None
            for case in stream:
                if case.id == case_id:
                    return case
                passed[case.id] = case
                if len(passed) > _WINDOW:
                    del passed[next(iter(passed))]
            stream, seen = iter(self), set()
            for case in stream:
                seen.add(case.id)
                if case.id == case_id:
                    return case
            known = seen
            return None

        return find


_WINDOW = 2000
"""Cases :meth:`DatasetCases.by_id` keeps of those it read past."""


# --- the public ways in -------------------------------------------------------------------------


def iter_cases(path: Path, *, dataset_format: DatasetFormat = "auto") -> Iterator[NumberedCase]:
    """The cases of a dataset with their line numbers, read as a stream (see DatasetReader).

    Raises:
        DatasetError: after the last valid case, listing every problem of the file.
    """
    return iter(DatasetReader(path, dataset_format=dataset_format))


def read_dataset(
    path: Path,
    *,
    dataset_format: DatasetFormat = "auto",
    missing: str | None = None,
    response_judged_by: str | None = RESPONSE_JUDGED_BY,
) -> Dataset:
    """Read and validate a whole dataset; return its cases and how it was read.

    ``missing`` says how to fix a missing file; by default, where a relative path was looked for.
    ``response_judged_by`` names the evaluators a case's response is read for; None reads cases
    without a response too (retrieval data; see :class:`DatasetReader`).

    Raises:
        DatasetError: the file is missing, not a regular file, too large, not UTF-8, cannot be
            parsed, is empty, or has invalid cases; the message lists every problem found.
    """
    if missing is None:
        missing = f"check the path (a relative path is read from the current folder, {Path.cwd()})"
    reader = DatasetReader(
        path, dataset_format=dataset_format, missing=missing, response_judged_by=response_judged_by
    )
    cases = [case for _, case in reader]
    return Dataset(cases=cases, info=reader.info)


def load_dataset(
    path: Path,
    *,
    dataset_format: DatasetFormat = "auto",
    missing: str | None = None,
    response_judged_by: str | None = RESPONSE_JUDGED_BY,
) -> list[TestCase]:
    """Read and validate a dataset file (see :func:`read_dataset`).

    Raises:
        DatasetError: the file is missing, is not UTF-8, cannot be parsed, is empty, or has
            invalid cases; the message lists every problem found, one per line.
    """
    return read_dataset(
        path, dataset_format=dataset_format, missing=missing, response_judged_by=response_judged_by
    ).cases


def parse_dataset(text: str, *, name: str, suffix: str = ".jsonl") -> list[TestCase]:
    """Validate dataset text; ``suffix`` picks the format and ``name`` is used in messages."""
    reader = DatasetReader(Path(name), dataset_format="auto")
    container = reader.container = _container(Path(f"dataset{suffix}"), "auto")
    items: Iterator[tuple[int, Any]]
    if container in {"jsonl", "csv"}:
        items = _text_lines(text)
    else:
        items = iter(
            _yaml_records(text, name) if container == "yaml" else _json_records(text, name)
        )
    return [case for _, case in reader.validated(items) if case is not None]


def read_utf8(path: Path, *, missing: str, limit: int = MAX_DOCUMENT_BYTES) -> str:
    """A regular file's text, with a clear error when it is missing, unreadable or not UTF-8.

    Raises:
        DatasetError: naming the file (and the line of a bad byte); ``missing`` says how to fix
            a missing file.
    """
    raw = read_regular(
        path,
        limit=limit,
        error=DatasetError,
        missing=missing,
        too_big="split it into smaller files",
    )
    return decode_utf8(raw, name=str(path), error=DatasetError)


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
    problems = _Problems()
    registry = IdRegistry()
    for line, item in records:
        where = f"{name}:{line}"
        if isinstance(item, InvalidJson):
            problems.add(f"{where}: invalid JSON: {item.problem}")
            continue
        if not isinstance(item, dict):
            problems.add(f"{where}: {noun} must be an object (got {describe_value(item)})")
            continue
        try:
            record = model.model_validate(item)
        except ValidationError as exc:
            for p in field_problems(exc, model):
                problems.add(f"{where}: {p.path}: {p.message}")
            continue
        for msg in size_problems(record):
            problems.add(f"{where}: {msg}")
        clash = registry.add(str(getattr(record, "id")), line)  # noqa: B009 - every model has one
        if clash is not None:
            problems.add(f"{where}: id: {clash}")
            continue
        valid.append((line, record))
    problems.raise_if_any()
    return valid


def raise_problems(problems: list[str]) -> None:
    """Raise one DatasetError listing the problems (the first ``MAX_PROBLEMS`` of them)."""
    collected = _Problems()
    for problem in problems:
        collected.add(problem)
    collected.raise_if_any()

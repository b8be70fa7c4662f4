"""Checking a dataset's records one by one, and turning each valid one into a case.

:class:`CaseChecker` makes one pass over a file's records in any shape: it detects the shape from
the first record (or takes it from a CSV header), validates each record, refuses a case that
holds nothing the RAG system produced or lacks a response some evaluator judges, derives the ids
a shape leaves out, finds duplicate ids, and collects the problems, each as
``file:line: field: problem``.
"""

from __future__ import annotations

from typing import Any

from pydantic import AliasChoices, ValidationError

from ragaliq._ids import IdRegistry, derive_id, fold_id, lookalike
from ragaliq._validation import describe_value, field_problems
from ragaliq.dataset.csv_records import CsvTable, Unreadable
from ragaliq.dataset.fields import (
    LABEL_FIELDS,
    MAX_FIELD_CHARS,
    CaseFields,
    KeyedTwice,
    context_chars,
)
from ragaliq.dataset.records import InvalidJson
from ragaliq.dataset.shapes import Shape, ShapeRecord, detect_shape
from ragaliq.errors import DatasetError
from ragaliq.models import TestCase
from ragaliq.text.plain import is_blank

__all__ = ["MAX_PROBLEMS", "RESPONSE_JUDGED_BY", "CaseChecker", "LabelFit", "Problems", "to_case"]

MAX_PROBLEMS = 20
"""Problems listed before the rest are summarised as a count."""
RESPONSE_JUDGED_BY = "faithfulness, hallucination and relevance"
"""Who judges a case's response by default (the evaluators on unless the config says otherwise),
for the message that refuses a case without one."""


class Problems:
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


class CaseChecker:
    """One pass over a dataset's records: the shape, the ids seen, the problems, the counts.

    ``response_judged_by`` names the evaluators that read a case's response (None reads cases
    without one); ``response_fix`` is what a refused case without a response is told to do,
    by default to turn those evaluators off in the config.
    """

    def __init__(
        self,
        name: str,
        shapes: tuple[Shape, ...],
        *,
        response_judged_by: str | None = RESPONSE_JUDGED_BY,
        response_fix: str | None = None,
    ) -> None:
        self.name = name
        self.shapes = shapes
        self.response_judged_by = response_judged_by
        self.response_fix = response_fix
        self.problems = Problems()
        self.registry = IdRegistry()
        self.shape: Shape | None = None
        self.model: type[ShapeRecord] | None = None
        self.cases = 0
        self.derived = 0
        self.example: str | None = None
        self.no_response = 0
        self.no_response_line = 0
        self.with_facts = 0
        self.labels = LabelFit()

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
        if isinstance(item, KeyedTwice):
            self.problems.add(f"{where}: {item.repeated[0]}: {item.problem()}")
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
        self.with_facts += fields.names_facts
        self.labels.add(fields)
        return fields, case_id

    def _answered(self, fields: CaseFields, where: str, line: int) -> bool:
        """Whether a case without a response may be read: only when no evaluator judges one.

        An empty answer is never judged (it would have no claims, and score as perfect).
        """
        if not is_blank(fields.response):
            return True
        assert self.shape is not None
        if self.response_judged_by is not None:
            fix = self.response_fix or (
                f"{self.response_judged_by} judge the RAG system's answer, so write it here (for "
                "retrieval data without answers, turn them off with enabled: false and judge "
                "context_precision or context_recall)"
            )
            self.problems.add(
                f"{where}: {self.shape.field_name('response')}: missing or empty; {fix}"
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
            self.problems = Problems()
            raise DatasetError("\n".join(shown))
        return valid


class LabelFit:
    """Whether the labelled ids fit the retrieved ones: each should match one in some case.

    A relevant id that no case retrieved at all is most likely a label that no longer fits the
    chunking (the chunks were cut anew, and their ids changed). Memory: one number per distinct
    retrieved id, and the labelled ids.
    """

    def __init__(self) -> None:
        self.cases = 0
        """Cases with labels."""
        self._retrieved: set[int] = set()
        self._labelled: dict[int, str] = {}

    def add(self, fields: CaseFields) -> None:
        """Take one valid case's retrieved ids and labels."""
        for ref in fields.chunk_refs:
            for level, item in (("chunk", ref.id), ("source", ref.source)):
                if item is not None:
                    self._retrieved.add(hash((level, item)))
        if fields.labels is None:
            return
        self.cases += 1
        for item in fields.labels.relevant:
            self._labelled.setdefault(hash((fields.labels.level, item)), item)

    def unmatched(self) -> tuple[int, str | None]:
        """How many relevant labelled ids match no retrieved id of any case, and one of them."""
        missing = [item for key, item in self._labelled.items() if key not in self._retrieved]
        return len(missing), (missing[0] if missing else None)


def _validate_case(
    item: dict[str, Any],
    model: type[ShapeRecord],
    shape: Shape,
    where: str,
    problems: Problems,
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
    beyond = record.problems()
    for problem in beyond:
        problems.add(f"{where}: {problem}")
    if beyond:
        return None
    fields = record.fields()
    wrong = _size_problems(fields, shape) + _lookalike_ids(fields, item, shape)
    for problem in wrong:
        problems.add(f"{where}: {problem}")
    return None if wrong else fields


def _unanswered(item: dict[str, Any], shape: Shape) -> str | None:
    """Why a record holds nothing the RAG system produced, if it has no answer and no chunk.

    A DeepEval golden or a RAGAS sample before the system ran on it: never judged as a case.
    A record with relevance labels and its context written empty is a retrieval that found
    nothing: read, to score 0 against its labels.
    """
    names = [shape.field_name("response"), shape.field_name("context")]
    if any(_written(_as_written(item, shape, name)) for name in names):
        return None
    if _as_written(item, shape, names[1]) is not None and any(
        item.get(name) is not None for name in LABEL_FIELDS
    ):
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
        return not is_blank(value)
    if isinstance(value, list):
        return any(not isinstance(v, str) or not is_blank(v) for v in value)
    return value is not None


def _derived_id(query: str, registry: IdRegistry) -> str:
    """An id from the query; the second case with the same query gets ``-2``, and so on."""
    base = derive_id(query)
    candidate, n = base, 1
    while registry.has(candidate):
        n += 1
        candidate = f"{base}-{n}"
    return candidate


def to_case(fields: CaseFields, case_id: str) -> TestCase:
    """The case a valid record's fields and id make."""
    return TestCase(
        id=case_id,
        query=fields.query,
        context=fields.context,
        response=fields.response,
        expected_answer=fields.expected_answer,
        expected_facts=fields.expected_facts,
        tags=fields.tags,
        metadata=fields.metadata,
        chunk_refs=fields.chunk_refs,
        labels=fields.labels,
    )


_LOOKALIKE_FIX = (
    "write an id the same way wherever the case uses it, in its chunks and in its labels"
)


def _lookalike_ids(fields: CaseFields, item: dict[str, Any], shape: Shape) -> list[str]:
    """Chunk ids, sources and labels of one case that look alike but differ, as case ids would.

    A repeat of the same id is a chunk retrieved twice, or a label naming it; an id that differs
    from another only by invisible, compatibility or surrounding space characters would match
    nothing while it reads as a match.
    """
    seen: dict[tuple[str, str], tuple[str, str]] = {}  # (level, folded) -> (as written, where)
    problems: list[str] = []

    def check(level: str, value: str, field: str, place: str) -> None:
        key = (level, fold_id(value))
        earlier = seen.setdefault(key, (value, place))
        if earlier[0] != value:
            problems.append(
                f"{field}: {lookalike(value, earlier[0], earlier[1], fix=_LOOKALIKE_FIX)}"
            )

    context = shape.field_name("context")
    for n, ref in enumerate(fields.chunk_refs):
        if ref.id is not None:
            field = (
                f"retrieved_context_ids: id {n}"
                if item.get("retrieved_context_ids") is not None
                else f"{context}: chunk {n}: id"
            )
            check("chunk", ref.id, field, f"at chunk {n}")
        if ref.source is not None:
            check("source", ref.source, f"{context}: chunk {n}: source", f"at chunk {n}")
    labels = fields.labels
    if labels is not None:
        written = next((n for n in sorted(LABEL_FIELDS) if item.get(n) is not None), labels.field)
        for label in labels.grades:
            check(labels.level, label, written, f"in {written}")
    return problems


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

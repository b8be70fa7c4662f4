"""Labelled claims for calibrating a judge, read beside the dataset loader and with its rules.

A labels file is JSONL, one claim per line::

    {"id": "refund-1", "claim": "Refunds take 14 days.", "context": ["..."], "label": "SUPPORTED"}

``context`` is a list of chunks or one string; ``label`` is one of the four verdicts in any letter
case (or Axion's name for it, :data:`~ragaliq.models.VERDICT_SYNONYMS`), or WiCE's
``not_supported`` (read as NOT_ENOUGH_INFO); ``source`` is an optional note on where the claim
comes from.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ragaliq._ids import IdRegistry
from ragaliq._reading import decode_utf8, read_regular
from ragaliq._validation import describe_value, field_problems
from ragaliq.dataset.checker import Problems
from ragaliq.dataset.fields import MAX_FIELD_CHARS, Chunks, Text, as_chunks, context_chars
from ragaliq.dataset.formats import MAX_DOCUMENT_BYTES
from ragaliq.dataset.records import InvalidJson, jsonl_text_records
from ragaliq.errors import DatasetError
from ragaliq.models import TestCase, Verdict, read_verdict
from ragaliq.text.plain import is_blank

__all__ = ["LABEL_ALIASES", "VERDICT_LABELS", "LabelledClaim", "load_labels", "parse_labels"]

VERDICT_LABELS: tuple[str, ...] = tuple(v.value for v in Verdict)
"""The four verdicts, in the order of the calibration's confusion matrix."""
LABEL_ALIASES: Mapping[str, Verdict] = {
    "supported": Verdict.SUPPORTED,
    "partially_supported": Verdict.PARTIALLY_SUPPORTED,
    "not_supported": Verdict.NOT_ENOUGH_INFO,
}
"""WiCE's labels, accepted besides the verdicts in any letter case and Axion's names for them."""


@dataclass(frozen=True, kw_only=True)
class LabelledClaim:
    """One claim, the context to verify it against, and the verdict a person gave it."""

    id: str
    claim: str
    context: tuple[str, ...]
    label: Verdict
    source: str | None = None
    """Where the claim comes from, for attribution and for tracing a disagreement."""
    line: int = 0
    """The line of the labels file it was read from; 0 when it was not read from a file."""

    def to_case(self) -> TestCase:
        """The case a judge verifies: the claim as the whole response, with its context."""
        return TestCase(id=self.id, query="", context=self.context, response=self.claim)


def _label_choices() -> str:
    return f"{', '.join(VERDICT_LABELS)} (or {', '.join(list(LABEL_ALIASES)[:3])})"


class _LabelRecord(BaseModel):
    """The on-disk shape of a labelled claim."""

    model_config = ConfigDict(extra="forbid", coerce_numbers_to_str=True)

    id: str = Field(min_length=1)
    claim: Text
    context: Chunks
    label: Verdict
    source: Text | None = None

    @field_validator("claim")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if is_blank(value):
            raise ValueError("must not be empty")
        return value

    @field_validator("label", mode="before")
    @classmethod
    def _label(cls, value: Any) -> Verdict:
        verdict = read_verdict(value)
        if isinstance(verdict, Verdict):
            return verdict
        if isinstance(value, str) and value.strip().lower() in LABEL_ALIASES:
            return LABEL_ALIASES[value.strip().lower()]
        raise ValueError(f"must be one of {_label_choices()} (got {describe_value(value)})")

    def to_claim(self, line: int) -> LabelledClaim:
        return LabelledClaim(
            id=self.id,
            claim=self.claim.strip(),
            context=as_chunks(self.context),
            label=self.label,
            source=self.source,
            line=line,
        )


def load_labels(path: Path) -> list[LabelledClaim]:
    """Read and validate a labels file (JSONL).

    Raises:
        DatasetError: the file is missing, not UTF-8, empty, or has invalid lines; the message
            lists every problem as ``file:line: field: problem``.
    """
    raw = read_regular(
        path,
        limit=MAX_DOCUMENT_BYTES,
        error=DatasetError,
        missing="pass the labelled claims with --labels",
        too_big="split it into smaller files",
    )
    return parse_labels(decode_utf8(raw, name=str(path), error=DatasetError), name=str(path))


def parse_labels(text: str, *, name: str) -> list[LabelledClaim]:
    """Validate labels text (JSONL); ``name`` is used in messages."""
    records = jsonl_text_records(text)
    if not records:
        raise DatasetError(
            f"{name}: no labelled claims; add one per line as "
            '{"id": ..., "claim": ..., "context": [...], "label": "SUPPORTED"}'
        )
    return [record.to_claim(line) for line, record in _validated(records, name=name)]


def _validated(records: list[tuple[int, Any]], *, name: str) -> list[tuple[int, _LabelRecord]]:
    """The valid records, each with its line; ids must be unique.

    Raises:
        DatasetError: every problem found, as ``file:line: field: problem``.
    """
    valid: list[tuple[int, _LabelRecord]] = []
    problems = Problems()
    registry = IdRegistry()
    for line, item in records:
        where = f"{name}:{line}"
        if isinstance(item, InvalidJson):
            problems.add(f"{where}: invalid JSON: {item.problem}")
            continue
        if not isinstance(item, dict):
            problems.add(
                f"{where}: a labelled claim must be an object (got {describe_value(item)})"
            )
            continue
        try:
            record = _LabelRecord.model_validate(item)
        except ValidationError as exc:
            for p in field_problems(exc, _LabelRecord):
                problems.add(f"{where}: {p.path}: {p.message}")
            continue
        for msg in _size_problems(record):
            problems.add(f"{where}: {msg}")
        clash = registry.add(record.id, line)
        if clash is not None:
            problems.add(f"{where}: id: {clash}")
            continue
        valid.append((line, record))
    problems.raise_if_any()
    return valid


def _size_problems(record: _LabelRecord) -> list[str]:
    context = context_chars(record.context)
    sizes = {"claim": (len(record.claim), "response"), "context": (context, "context")}
    return [
        f"{field_name}: {size:,} characters is over the limit of {MAX_FIELD_CHARS[limit]:,}"
        for field_name, (size, limit) in sizes.items()
        if size > MAX_FIELD_CHARS[limit]
    ]

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

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ragaliq._validation import describe_value
from ragaliq.dataset import (
    MAX_FIELD_CHARS,
    Chunks,
    Text,
    as_chunks,
    context_chars,
    jsonl_records,
    raise_problems,
    read_utf8,
    validate_records,
)
from ragaliq.models import TestCase, Verdict, read_verdict

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
        if not value.strip():
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
    text = read_utf8(path, missing="pass the labelled claims with --labels")
    return parse_labels(text, name=str(path))


def parse_labels(text: str, *, name: str) -> list[LabelledClaim]:
    """Validate labels text (JSONL); ``name`` is used in messages."""
    records = jsonl_records(text)
    if not records:
        raise_problems(
            [
                f"{name}: no labelled claims; add one per line as "
                '{"id": ..., "claim": ..., "context": [...], "label": "SUPPORTED"}'
            ]
        )
    valid = validate_records(
        records,
        name=name,
        model=_LabelRecord,
        noun="a labelled claim",
        size_problems=_size_problems,
    )
    return [record.to_claim(line) for line, record in valid]


def _size_problems(record: _LabelRecord) -> list[str]:
    context = context_chars(record.context)
    sizes = {"claim": (len(record.claim), "response"), "context": (context, "context")}
    return [
        f"{field_name}: {size:,} characters is over the limit of {MAX_FIELD_CHARS[limit]:,}"
        for field_name, (size, limit) in sizes.items()
        if size > MAX_FIELD_CHARS[limit]
    ]

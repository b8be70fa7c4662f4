"""Calibrating a judge: how often its verdicts agree with claims a person has labelled.

``ragaliq calibrate --labels golden.jsonl`` verifies each labelled claim against its context with
the configured judge, one request per claim, and compares the verdicts with the labels. It reports
accuracy, balanced accuracy and Cohen's kappa twice: over the four verdicts, and over the
supported-versus-hallucinated view the gate acts on (a claim is hallucinated unless SUPPORTED, as in
the hallucination evaluator). A claim the judge could not verify is counted as an error and left
out of the numbers; it is never turned into a verdict.

A labels file is JSONL, one claim per line::

    {"id": "refund-1", "claim": "Refunds take 14 days.", "context": ["..."], "label": "SUPPORTED"}

``context`` is a list of chunks or one string; ``label`` is one of the four verdicts, or
``supported``, ``partially_supported`` or ``not_supported`` (read as NOT_ENOUGH_INFO) as in WiCE;
``source`` is an optional note on where the claim comes from.
"""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
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
from ragaliq.errors import JudgeError, JudgeUnavailableError
from ragaliq.judges.base import Judge
from ragaliq.metrics import (
    Confusion,
    accuracy,
    balanced_accuracy,
    cohen_kappa,
    confusion_matrix,
    kappa_strength,
    ratio,
)
from ragaliq.models import ClaimVerdict, JudgeInfo, TestCase, Usage, Verdict
from ragaliq.runner import first_leaf

__all__ = [
    "BINARY_LABELS",
    "LABEL_ALIASES",
    "VERDICT_LABELS",
    "BinaryCalibration",
    "Calibration",
    "ClaimPrediction",
    "Confusion",
    "JudgeFailure",
    "LabelledClaim",
    "accuracy",
    "balanced_accuracy",
    "calibrate",
    "cohen_kappa",
    "confusion_matrix",
    "format_calibration",
    "kappa_strength",
    "load_labels",
    "parse_labels",
    "summarise",
]

VERDICT_LABELS: tuple[str, ...] = tuple(v.value for v in Verdict)
"""The rows and columns of the four-verdict confusion matrix, in this order."""
SUPPORTED_LABEL = "supported"
HALLUCINATED_LABEL = "hallucinated"
BINARY_LABELS: tuple[str, ...] = (SUPPORTED_LABEL, HALLUCINATED_LABEL)
"""The rows and columns of the supported-versus-hallucinated confusion matrix."""
LABEL_ALIASES: Mapping[str, Verdict] = {
    "supported": Verdict.SUPPORTED,
    "partially_supported": Verdict.PARTIALLY_SUPPORTED,
    "not_supported": Verdict.NOT_ENOUGH_INFO,
    "not_enough_info": Verdict.NOT_ENOUGH_INFO,
    "contradicted": Verdict.CONTRADICTED,
}
"""Lower-case spellings accepted besides the verdicts themselves; WiCE uses the first three."""
MAX_ERRORS_SHOWN = 10
"""Judge errors listed by :func:`format_calibration` before the rest are counted."""

"""A confusion matrix: gold label -> predicted label -> count, every label in both."""


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


@dataclass(frozen=True, kw_only=True)
class ClaimPrediction:
    """The judge's verdict on one labelled claim, beside the label."""

    id: str
    gold: Verdict
    predicted: Verdict
    confidence: float
    reason: str = ""

    @property
    def correct(self) -> bool:
        """Whether the verdict equals the label."""
        return self.gold is self.predicted


@dataclass(frozen=True, kw_only=True)
class JudgeFailure:
    """A labelled claim the judge could not verify."""

    id: str
    message: str


@dataclass(frozen=True, kw_only=True)
class BinaryCalibration:
    """Agreement on supported versus hallucinated (anything but SUPPORTED), as the gate counts it.

    ``precision`` and ``recall`` are about the hallucinated class: the share of the claims the judge
    flags that are really not supported, and the share of the unsupported claims it flags.
    """

    accuracy: float
    balanced_accuracy: float
    kappa: float
    precision: float
    recall: float
    labels: tuple[str, ...] = BINARY_LABELS
    confusion: Confusion = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class Calibration:
    """How far a judge agrees with labelled claims.

    Every metric is NaN when it is undefined: no claim was judged, or (for kappa) gold labels and
    verdicts all fall in one class. Kappa runs from -1 to 1; the others from 0 to 1.
    """

    n: int
    """Claims the judge gave a verdict for; claims it failed on are in ``errors`` instead."""
    accuracy: float
    balanced_accuracy: float
    """The mean of the per-label recalls, over the labels that occur among the gold labels."""
    kappa: float
    """Cohen's kappa: agreement corrected for the agreement expected by chance."""
    labels: tuple[str, ...]
    confusion: Confusion
    binary: BinaryCalibration
    errors: tuple[JudgeFailure, ...] = ()
    predictions: tuple[ClaimPrediction, ...] = ()
    judge: JudgeInfo | None = None
    usage: Usage = field(default_factory=Usage)
    min_confidence: float | None = None
    """A SUPPORTED verdict below this confidence counted as hallucinated in ``binary``."""
    stopped_early: str | None = None
    """Why some claims were not sent to the judge (the budget); None when all were."""

    @property
    def total(self) -> int:
        """Claims judged plus claims the judge failed on."""
        return self.n + len(self.errors)

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready view: every metric, both matrices, the errors and each prediction."""

        def num(value: float) -> float | None:
            return None if math.isnan(value) else round(value, 6)

        return {
            "judge": self.judge.model_dump(mode="json") if self.judge else None,
            "n": self.n,
            "errors": [{"id": e.id, "message": e.message} for e in self.errors],
            "stopped_early": self.stopped_early,
            "accuracy": num(self.accuracy),
            "balanced_accuracy": num(self.balanced_accuracy),
            "kappa": num(self.kappa),
            "labels": list(self.labels),
            "confusion": self.confusion,
            "binary": {
                "accuracy": num(self.binary.accuracy),
                "balanced_accuracy": num(self.binary.balanced_accuracy),
                "kappa": num(self.binary.kappa),
                "precision": num(self.binary.precision),
                "recall": num(self.binary.recall),
                "min_confidence": self.min_confidence,
                "labels": list(self.binary.labels),
                "confusion": self.binary.confusion,
            },
            "usage": self.usage.model_dump(mode="json"),
            "predictions": [
                {
                    "id": p.id,
                    "gold": p.gold.value,
                    "predicted": p.predicted.value,
                    "confidence": p.confidence,
                    "reason": p.reason,
                }
                for p in self.predictions
            ],
        }

    def to_json(self) -> str:
        """:meth:`as_dict` as indented JSON."""
        return json.dumps(self.as_dict(), indent=2, ensure_ascii=False)


# --- the labels file -------------------------------------------------------------------------


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
        if isinstance(value, str):
            text = value.strip()
            if text in VERDICT_LABELS:
                return Verdict(text)
            if text.lower() in LABEL_ALIASES:
                return LABEL_ALIASES[text.lower()]
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


# --- the two views ---------------------------------------------------------------------------


def _binary(gold: Verdict) -> str:
    return SUPPORTED_LABEL if gold is Verdict.SUPPORTED else HALLUCINATED_LABEL


def _binary_prediction(prediction: ClaimPrediction, min_confidence: float | None) -> str:
    supported = prediction.predicted is Verdict.SUPPORTED and (
        min_confidence is None or prediction.confidence >= min_confidence
    )
    return SUPPORTED_LABEL if supported else HALLUCINATED_LABEL


def summarise(
    predictions: Sequence[ClaimPrediction],
    *,
    errors: Sequence[JudgeFailure] = (),
    judge: JudgeInfo | None = None,
    usage: Usage | None = None,
    min_confidence: float | None = None,
    stopped_early: str | None = None,
) -> Calibration:
    """The calibration of a judge from its predictions on labelled claims."""
    four = confusion_matrix(
        ((p.gold.value, p.predicted.value) for p in predictions), VERDICT_LABELS
    )
    two = confusion_matrix(
        ((_binary(p.gold), _binary_prediction(p, min_confidence)) for p in predictions),
        BINARY_LABELS,
    )
    flagged = two[HALLUCINATED_LABEL][HALLUCINATED_LABEL]
    binary = BinaryCalibration(
        accuracy=accuracy(two),
        balanced_accuracy=balanced_accuracy(two),
        kappa=cohen_kappa(two),
        precision=ratio(flagged, flagged + two[SUPPORTED_LABEL][HALLUCINATED_LABEL]),
        recall=ratio(flagged, sum(two[HALLUCINATED_LABEL].values())),
        confusion=two,
    )
    return Calibration(
        n=len(predictions),
        accuracy=accuracy(four),
        balanced_accuracy=balanced_accuracy(four),
        kappa=cohen_kappa(four),
        labels=VERDICT_LABELS,
        confusion=four,
        binary=binary,
        errors=tuple(errors),
        predictions=tuple(predictions),
        judge=judge,
        usage=usage or Usage(),
        min_confidence=min_confidence,
        stopped_early=stopped_early,
    )


# --- running the judge -----------------------------------------------------------------------


async def calibrate(
    labels: Sequence[LabelledClaim],
    *,
    judge: Judge,
    concurrency: int = 8,
    min_confidence: float | None = None,
    budget_usd: float | None = None,
    on_progress: Callable[[int, int], None] | None = None,
) -> Calibration:
    """Verify every labelled claim with ``judge`` and measure the agreement with the labels.

    Each claim is one ``verify_claims`` call with the claim as the only claim and its context as
    the case's context; at most ``concurrency`` calls are in flight. A claim whose call raises
    :class:`~ragaliq.errors.JudgeError` (or anything unexpected) is recorded in ``errors`` and
    left out of the metrics.

    Args:
        labels: The labelled claims.
        judge: The judge to calibrate.
        concurrency: Calls in flight at once.
        min_confidence: As ``evaluators.hallucination.min_confidence``: a SUPPORTED verdict below
            it counts as hallucinated in the binary view.
        budget_usd: Start no new call once the judge has spent this much (calls in flight still
            finish, so the spend can pass it by up to ``concurrency`` calls); the claims left are
            neither predictions nor errors, and ``stopped_early`` says so.
        on_progress: Called with (claims done, claims in all) after each claim, judged or not.

    Raises:
        JudgeUnavailableError: the judge cannot be used at all (a bad key, the API down).
        ValueError: ``concurrency`` is below 1.
    """
    if concurrency < 1:
        raise ValueError(f"concurrency must be at least 1 (got {concurrency})")
    slots = asyncio.Semaphore(concurrency)
    verdicts: list[ClaimVerdict | JudgeFailure | None] = [None] * len(labels)
    spent = Usage()
    finished = 0
    skipped = 0

    async def one(index: int, item: LabelledClaim) -> None:
        nonlocal spent, finished, skipped
        async with slots:
            if budget_usd is not None and spent.cost_usd >= budget_usd:
                skipped += 1
            else:
                verdicts[index], usage = await _verify_one(judge, item)
                spent += usage
        finished += 1
        if on_progress is not None:
            on_progress(finished, len(labels))

    try:
        async with asyncio.TaskGroup() as group:
            for index, item in enumerate(labels):
                group.create_task(one(index, item))
    except* JudgeUnavailableError as failure:
        raise first_leaf(failure) from None

    predictions: list[ClaimPrediction] = []
    errors: list[JudgeFailure] = []
    for item, outcome in zip(labels, verdicts, strict=True):
        if isinstance(outcome, JudgeFailure):
            errors.append(outcome)
        elif outcome is not None:
            predictions.append(
                ClaimPrediction(
                    id=item.id,
                    gold=item.label,
                    predicted=outcome.verdict,
                    confidence=outcome.confidence,
                    reason=outcome.reason,
                )
            )
    stopped = None
    if skipped:
        stopped = (
            f"budget_usd {budget_usd:g} reached: spent ${spent.cost_usd:.4f}; "
            f"{skipped} of {len(labels)} claims were not judged"
        )
    return summarise(
        predictions,
        errors=errors,
        judge=judge.info,
        usage=spent,
        min_confidence=min_confidence,
        stopped_early=stopped,
    )


async def _verify_one(
    judge: Judge, item: LabelledClaim
) -> tuple[ClaimVerdict | JudgeFailure, Usage]:
    """The judge's verdict on one labelled claim, or why there is none, and what it cost."""
    try:
        result = await judge.verify_claims(item.to_case(), [item.claim])
    except JudgeUnavailableError:
        raise
    except JudgeError as exc:
        return JudgeFailure(
            id=item.id, message=str(exc) or type(exc).__name__
        ), exc.usage or Usage()
    except Exception as exc:  # a bug on one claim must not lose the others
        return JudgeFailure(id=item.id, message=f"unexpected {type(exc).__name__}: {exc}"), Usage()
    if len(result.verdicts) != 1:
        message = f"the judge returned {len(result.verdicts)} verdicts for 1 claim"
        return JudgeFailure(id=item.id, message=message), result.usage
    return result.verdicts[0], result.usage


# --- the report ------------------------------------------------------------------------------


def _fmt(value: float) -> str:
    return "n/a" if math.isnan(value) else f"{value:.3f}"


def _pct(value: float) -> str:
    return "n/a" if math.isnan(value) else f"{value:.0%}"


def _table(confusion: Confusion, labels: Sequence[str], corner: str) -> list[str]:
    rows = [[corner, *labels, "total"]]
    for gold in labels:
        counts = [confusion[gold][predicted] for predicted in labels]
        rows.append([gold, *map(str, counts), str(sum(counts))])
    column_totals = [sum(confusion[gold][predicted] for gold in labels) for predicted in labels]
    rows.append(["total", *map(str, column_totals), str(sum(column_totals))])
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = []
    for row in rows:
        cells = [row[0].ljust(widths[0])]
        cells += [cell.rjust(width) for cell, width in zip(row[1:], widths[1:], strict=True)]
        lines.append("  ".join(cells).rstrip())
    return lines


def format_calibration(c: Calibration) -> str:
    """The calibration as plain text: the metrics, both confusion matrices and the errors."""
    judge = f"{c.judge.provider}/{c.judge.model}" if c.judge else "the judge"
    lines = [
        f"Calibration of {judge} on {c.total} labelled claims: "
        f"{c.n} judged, {len(c.errors)} errors",
    ]
    if c.judge is not None and c.judge.heuristic:
        lines.append("(a heuristic judge, not a language model)")
    if c.stopped_early:
        lines.append(f"stopped early: {c.stopped_early}")
    b = c.binary
    threshold = (
        f", SUPPORTED below confidence {c.min_confidence:g} counts as hallucinated"
        if (c.min_confidence is not None)
        else ""
    )
    lines += [
        "",
        "                        accuracy  balanced accuracy  Cohen's kappa",
        f"four verdicts           {_fmt(c.accuracy):>8}  {_fmt(c.balanced_accuracy):>17}  "
        f"{_fmt(c.kappa):>13}  ({kappa_strength(c.kappa)})",
        f"hallucinated or not     {_fmt(b.accuracy):>8}  {_fmt(b.balanced_accuracy):>17}  "
        f"{_fmt(b.kappa):>13}  ({kappa_strength(b.kappa)})",
        "",
        f"Hallucinated means anything but SUPPORTED, as the gate counts it{threshold}.",
        f"Of the claims labelled hallucinated, the judge flags {_pct(b.recall)} (recall);",
        f"of the claims it flags, {_pct(b.precision)} are labelled hallucinated (precision).",
        "",
        "Four verdicts (rows: label, columns: judge)",
        *_table(c.confusion, c.labels, "label \\ judge"),
        "",
        "Hallucinated or not (rows: label, columns: judge)",
        *_table(b.confusion, b.labels, "label \\ judge"),
    ]
    if c.errors:
        lines += ["", f"Judge errors ({len(c.errors)}), left out of the numbers above:"]
        lines += [f"  {e.id}: {e.message}" for e in c.errors[:MAX_ERRORS_SHOWN]]
        if len(c.errors) > MAX_ERRORS_SHOWN:
            lines.append(f"  ... and {len(c.errors) - MAX_ERRORS_SHOWN} more")
    if c.usage.calls or c.usage.cost_usd:
        lines += [
            "",
            f"Judge usage: {c.usage.calls} calls, {c.usage.input_tokens:,} input and "
            f"{c.usage.output_tokens:,} output tokens, ${c.usage.cost_usd:.4f}",
        ]
    return "\n".join(lines)

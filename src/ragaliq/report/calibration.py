"""The calibration of a judge, as text for a terminal."""

from __future__ import annotations

import math
from collections.abc import Sequence

from ragaliq.metrics import Calibration, Confusion, kappa_strength
from ragaliq.text.counts import plural

__all__ = ["MAX_ERRORS_SHOWN", "format_calibration"]

MAX_ERRORS_SHOWN = 10
"""Judge errors listed before the rest are counted."""


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
        f"Calibration of {judge} on {plural(c.total, 'labelled claim')}: "
        f"{c.n} judged, {plural(len(c.errors), 'error')}",
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
            f"Judge usage: {plural(c.usage.calls, 'call')}, {c.usage.input_tokens:,} input and "
            f"{c.usage.output_tokens:,} output tokens, ${c.usage.cost_usd:.4f}",
        ]
    return "\n".join(lines)

"""The HTML report of a run, written from its report and the dataset that shows the responses."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from ragaliq._files import open_atomic
from ragaliq.dataset import DatasetCases
from ragaliq.gate import GateDecision
from ragaliq.inputs import Cases
from ragaliq.models import CaseResult, ReportHead
from ragaliq.report.html import write_html_report

__all__ = ["write_html"]


def write_html(
    path: Path,
    *,
    head: ReportHead,
    cases: Iterable[CaseResult],
    decision: GateDecision | None = None,
    dataset: Cases | None = None,
    title: str = "RagaliQ Gate report",
) -> None:
    """Write the HTML report atomically, case by case; ``dataset`` shows the responses.

    Raises:
        OutputError: the file cannot be written.
        TemplateError: the built-in template failed to render.
    """
    lookup = None
    if isinstance(dataset, DatasetCases):
        lookup = dataset.by_id()
    elif dataset is not None:
        lookup = {case.id: case for case in dataset}.get
    with open_atomic(path) as out:
        write_html_report(
            out, head=head, cases=cases, decision=decision, dataset=lookup, title=title
        )

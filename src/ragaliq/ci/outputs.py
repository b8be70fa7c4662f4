"""The files a run of the action leaves in the workspace for later steps of the job.

Every one is written at a path inside the workspace that passes through no symbolic link, and
named to later steps relative to the workspace (a Docker action sees it at its own mount point).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ragaliq._files import write_atomic
from ragaliq.forge import JobSettings
from ragaliq.gate import GateDecision
from ragaliq.inputs import Inputs
from ragaliq.models import ReportHead
from ragaliq.report.html import write_html
from ragaliq.report.junit import write_junit
from ragaliq.report.openmetrics import write_metrics
from ragaliq.repository import WorkTree, repo_path
from ragaliq.run_report import ReportFile

__all__ = [
    "ANSWERS_PATH",
    "DECISION_PATH",
    "REPORT_PATH",
    "ResultFiles",
    "in_workspace",
    "workspace_file",
]

REPORT_PATH = ".ragaliq/report.json"
"""Where the run report is written, relative to the workspace, for later steps to upload."""
DECISION_PATH = ".ragaliq/decision.json"
"""Where the gate decision is written, e.g. for `ragaliq render` in a separate workflow."""
ANSWERS_PATH = ".ragaliq/answers.jsonl"
"""Where the judge answers a run used are written as signed rows, for the workflow to upload
(the artifact ``ragaliq-answers``, or the baseline store with the baseline)."""


@dataclass(frozen=True, kw_only=True)
class ResultFiles:
    """The files a gate writes in the workspace, none of them through a symbolic link."""

    workspace: Path
    report: Path
    decision: Path
    html: Path | None
    answers: Path
    """The signed judge answers the run used (written only when there are any)."""
    junit: Path | None = None
    metrics: Path | None = None
    markdown: Path | None = None
    """The comment's Markdown."""

    @classmethod
    def of(cls, settings: JobSettings) -> ResultFiles:
        def asked(raw: str, what: str) -> Path | None:
            return workspace_file(settings, raw, what) if raw else None

        return cls(
            workspace=settings.workspace,
            report=workspace_file(settings, REPORT_PATH, "the report"),
            decision=workspace_file(settings, DECISION_PATH, "the decision"),
            answers=workspace_file(settings, ANSWERS_PATH, "the judge answers"),
            html=asked(settings.html_report, "input html-report"),
            junit=asked(settings.junit_report, "input junit-report"),
            metrics=asked(settings.metrics_report, "input metrics-report"),
            markdown=asked(settings.markdown_report, "input markdown-report"),
        )

    @property
    def paths(self) -> tuple[Path | None, ...]:
        return (
            self.report,
            self.decision,
            self.html,
            self.answers,
            self.junit,
            self.metrics,
            self.markdown,
        )

    def shown(self, path: Path) -> str:
        return in_workspace(path, self.workspace)

    def write(
        self, inputs: Inputs, head: ReportHead, decision: GateDecision, comment: str = ""
    ) -> str:
        """Write the decision beside the run's report, and each report asked for.

        The reports: the JUnit XML, the OpenMetrics text, the comment's Markdown, the HTML report.

        Returned: the HTML report's path relative to the workspace, empty when none.
        """
        write_atomic(self.decision, decision.model_dump_json(indent=2) + "\n")
        if self.junit is not None:
            write_junit(self.junit, decision, ReportFile(self.report).iter_cases())
        if self.metrics is not None:
            write_metrics(self.metrics, decision)
        if self.markdown is not None and comment:
            write_atomic(self.markdown, comment if comment.endswith("\n") else comment + "\n")
        if self.html is None:
            return ""
        write_html(
            self.html,
            head=head,
            cases=ReportFile(self.report).iter_cases(),
            decision=decision,
            dataset=inputs.cases,
        )
        return self.shown(self.html)


def workspace_file(settings: JobSettings, raw: str, what: str) -> Path:
    """A result file: a path inside the workspace that passes through no symbolic link."""
    path = repo_path(raw, what=what)
    WorkTree(settings.workspace).check(path, what=what)
    return settings.workspace / path


def in_workspace(path: Path, workspace: Path) -> str:
    """``path`` relative to the workspace, as later steps of the job see it.

    A Docker action sees the workspace at its own mount point (``/github/workspace``), which is
    not where the runner keeps it; a relative path means the same file in every step.
    """
    try:
        return path.resolve().relative_to(workspace.resolve()).as_posix()
    except ValueError:
        return str(path)

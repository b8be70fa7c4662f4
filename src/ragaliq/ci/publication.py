"""Where a gate's result goes: the step's outputs, the summary, the comment, the commit status.

Once the change is known, every way a run can end says something there; a run that did not
decide never leaves an earlier "passed" standing, and a change nobody judged never gets a green
status. Written against the port: the host's status and comment, the job's log.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass

from ragaliq.errors import CommentForbiddenError, ConfigError, PublishError, RagaliqError
from ragaliq.exits import ExitCode
from ragaliq.forge import (
    WAITING,
    Change,
    Host,
    JobLog,
    JobSettings,
    StatusBoard,
    StatusState,
    retired_context,
    status_context,
)
from ragaliq.gate import GateDecision
from ragaliq.redaction import redact
from ragaliq.report.markdown import render_status
from ragaliq.report.marker import comment_marker
from ragaliq.text.counts import plural

__all__ = [
    "MAX_ANNOTATIONS",
    "Publication",
    "annotate",
    "checked_comment_id",
    "set_outputs",
    "status_for",
]

MAX_ANNOTATIONS = 10


@dataclass(kw_only=True)
class Publication:
    """Where the gate's result goes: the outputs, the summary, the PR comment, the commit status.

    Once the pull request is known, every way the run can end says something there; a run that
    did not decide never leaves an earlier "passed" standing.
    """

    settings: JobSettings | None
    workflow: JobLog
    """The job's log, outputs and summary."""
    host: Host | None
    pull_request: Change | None = None
    """The change the result goes to, once known."""
    status: StatusBoard | None = None
    retired: StatusBoard | None = None
    """The context of earlier versions, set to ``error`` once with the first status."""

    def for_another(self, change: Change) -> Publication:
        """The same job's result, aimed at another change (a job that gates several)."""
        other = dataclasses.replace(self, status=None, retired=None)
        other.aim(change)
        return other

    def aim(self, pull_request: Change) -> None:
        """The change is known: the comment and the status go to it from now on.

        The status's context names the change's base branch (``RagaliQ Gate (main)``).
        """
        self.pull_request = pull_request
        settings, host = self.settings, self.host
        if settings is None or host is None or not settings.commit_status:
            return
        context = status_context(settings.comment_id, pull_request.base_ref)
        self.status = host.status(pull_request.head_sha, context)
        retired = retired_context(settings.comment_id)
        if retired is not None:
            self.retired = host.status(pull_request.head_sha, retired)

    def set_status(self, state: StatusState, description: str) -> None:
        """Set the commit status, when there is one to set, naming the base commit judged."""
        if self.status is None or self.pull_request is None:
            return
        self.status.set(state, redact(f"{self.pull_request.base}: {description}"))
        if self.retired is not None:
            self.retired.set(
                "error",
                f"replaced by the context {self.status.context!r}: require that one in branch "
                "protection",
            )
            self.retired = None

    def comment(self, body: str) -> str:
        """Create or update the change's comment; its URL, or "" when none was posted."""
        settings, pr = self.settings, self.pull_request
        if settings is None or self.host is None or settings.comment == "off":
            return ""
        if pr is None:
            self.workflow.log("not a pull request: no comment to post")
            return ""
        try:
            result = self.host.comment(pr).upsert(
                body=redact(body), marker=comment_marker(settings.comment_id)
            )
        except CommentForbiddenError as exc:
            self.workflow.notice(
                f"{exc} The job summary has the full result.", title="No PR comment"
            )
            return ""
        except PublishError as exc:
            self.workflow.warning(
                f"The PR comment could not be posted: {exc}", title="No PR comment"
            )
            return ""
        self.workflow.log(f"PR comment {result.action}: {result.url}")
        return result.url

    def wait_for_baseline(self, reason: str) -> None:
        """The base's baseline is being recorded: ``pending``, and the comment says so.

        ``passed`` is false; the change is gated again when the baseline lands. Failures while
        saying so are logged, not raised.
        """
        try:
            self.workflow.set_output("passed", "false")
            self.workflow.notice(reason, title="RagaliQ Gate is waiting")
            self.workflow.write_summary(f"## RagaliQ Gate: waiting for the baseline\n\n{reason}\n")
            self.set_status("pending", f"{WAITING}: {reason}")
            if self.settings is not None:
                self.comment(
                    render_status(
                        title="RagaliQ Gate is waiting for the base's baseline",
                        reason=reason,
                        comment_id=checked_comment_id(self.settings.comment_id),
                    )
                )
        except (RagaliqError, OSError) as exc:
            self.workflow.log(f"the wait could not be reported everywhere: {exc}")

    def could_not_judge(self, reason: str) -> None:
        """After a failure: ``passed`` is false, and the comment and status say why.

        Failures while saying so are logged, not raised.
        """
        try:
            self.workflow.set_output("passed", "false")
            settings = self.settings
            if settings is None:
                return
            if settings.mode in ("update-baseline", "store-baseline"):
                self.workflow.write_summary(
                    f"## RagaliQ Gate: the baseline was not recorded\n\n{reason}\n"
                )
                return
            self.workflow.write_summary(f"## RagaliQ Gate: could not judge\n\n{reason}\n")
            self.set_status("error", f"not judged: {reason}")
            try:
                comment_id = checked_comment_id(settings.comment_id)
            except ConfigError:
                return  # without a valid id, our comment cannot be told from others
            self.comment(
                render_status(
                    title="RagaliQ Gate could not judge this change",
                    reason=reason,
                    comment_id=comment_id,
                )
            )
        except (RagaliqError, OSError) as exc:
            self.workflow.log(f"the failure could not be reported everywhere: {exc}")


def status_for(code: ExitCode, decision: GateDecision) -> tuple[StatusState, str]:
    """The commit status a finished gate sets: never success for what was not judged."""
    if code is ExitCode.PASSED and decision.first_run:
        return "success", (
            f"first run, on the built-in defaults ({plural(decision.cases, 'case')} judged): no "
            "bar protects this base yet"
        )
    if code is ExitCode.PASSED:
        return "success", f"passed ({plural(decision.cases, 'case')} judged)"
    if code is ExitCode.FAILED:
        return "failure", decision.failures[0] if decision.failures else "failed"
    return "error", "not judged: no case could be judged"


def set_outputs(
    workflow: JobLog,
    *,
    passed: bool,
    report_path: str,
    comment_url: str,
    decision: GateDecision | None,
    html_report_path: str = "",
) -> None:
    workflow.set_output("passed", "true" if passed else "false")
    workflow.set_output("html-report-path", html_report_path)
    workflow.set_output("report-path", report_path)
    workflow.set_output("comment-url", comment_url)
    scores = decision.scores if decision is not None else {}
    workflow.set_output("scores", json.dumps(scores, sort_keys=True))
    count = decision.count_new() if decision is not None else 0
    workflow.set_output("new-hallucinations", str(count))


def annotate(workflow: JobLog, decision: GateDecision) -> None:
    """At most ten annotations: why the gate failed, then new hallucinations, then drops.

    A failed gate gets ``::error`` lines; a passing gate only warns about new hallucinations.
    A claim a reviewer accepted is never an error or a warning: it is a ``::notice`` naming who
    accepted it, after the others.
    """
    new = [
        (f"New hallucination in {c.case_id}", f"{c.claim} ({c.verdict}: {c.reason})")
        for c in decision.new_hallucinations
        if not c.accepted_by
    ]
    accepted = [
        (
            f"Accepted claim in {c.case_id}",
            f"{c.claim} ({c.verdict}, accepted by {c.accepted_by}; not counted against the gate)",
        )
        for c in decision.new_hallucinations
        if c.accepted_by
    ]
    if decision.passed:
        for title, message in new[:MAX_ANNOTATIONS]:
            workflow.warning(message, title=title)
        left = max(MAX_ANNOTATIONS - len(new), 0)
    else:
        lines = [("RagaliQ Gate failed", failure) for failure in decision.failures] + new
        lines += [
            (
                f"Regressed case {r.case_id}",
                f"{r.evaluator} {r.baseline:.3f} → "
                + ("error" if r.head is None else f"{r.head:.3f}"),
            )
            for r in decision.regressed_cases
        ]
        for title, message in lines[:MAX_ANNOTATIONS]:
            workflow.error(message, title=title)
        left = max(MAX_ANNOTATIONS - len(lines), 0)
    for title, message in accepted[:left]:
        workflow.notice(message, title=title)


def checked_comment_id(value: str) -> str:
    """The ``comment-id`` input, once it is known to make a valid marker."""
    try:
        comment_marker(value)
    except ValueError as exc:
        raise ConfigError(f"input {exc}") from exc
    return value

"""The GitHub Action: the gate on a pull request, or recording the baseline on main.

``main()`` builds the real collaborators from the environment a Docker action gets and turns every
error into an ``::error::`` line and an exit code; :func:`action` holds the logic and takes its
collaborators as parameters, so that it can be driven in tests.
"""

from __future__ import annotations

import json
import os
import subprocess
import traceback
from collections.abc import Callable, Mapping
from pathlib import Path

from ragaliq._files import check_writable, write_atomic
from ragaliq.baseline import Baseline, parse_baseline, record_baseline, save_baseline
from ragaliq.compare import GateDecision, GateRules, compare
from ragaliq.config import JudgeConfig
from ragaliq.errors import ConfigError, PublishError, RagaliqError
from ragaliq.github.commands import Workflow
from ragaliq.github.publisher import CommentForbiddenError, GitHubPublisher, read_file_at
from ragaliq.github.settings import ActionSettings
from ragaliq.judges.factory import API_KEY_ENV, api_key_from
from ragaliq.models import RunReport
from ragaliq.outcome import ExitCode
from ragaliq.pipeline import (
    Inputs,
    judge_inputs,
    keep_baseline_evaluators,
    load_inputs,
    run_gate,
)
from ragaliq.report.html import render_html_report
from ragaliq.report.markdown import render_summary
from ragaliq.report.marker import comment_marker
from ragaliq.report.progress import ProgressPrinter

__all__ = ["DECISION_PATH", "MAX_ANNOTATIONS", "REPORT_PATH", "action", "main"]

MAX_ANNOTATIONS = 10
REPORT_PATH = ".ragaliq/report.json"
"""Where the run report is written, relative to the workspace, for later steps to upload."""
DECISION_PATH = ".ragaliq/decision.json"
"""Where the gate decision is written, e.g. for `ragaliq render` in a separate workflow."""
ISSUES_URL = "https://github.com/ragaliq/ragaliq-gate/issues"

BaseFileReader = Callable[[str, str], "str | None"]
"""Reads a repository file at a commit: (path, sha) -> text, or None when it does not exist."""
PublisherFactory = Callable[[int], GitHubPublisher]


def main() -> int:
    """Run the action from ``os.environ``; never raises."""
    env = dict(os.environ)
    workflow = Workflow(output_file=None, summary_file=None)
    try:
        settings = ActionSettings.from_env(env)
        workflow = Workflow(output_file=settings.output_file, summary_file=settings.summary_file)
        return action(
            settings=settings,
            env=env,
            workflow=workflow,
            read_base_file=_base_file_reader(settings),
            open_publisher=lambda number: GitHubPublisher(
                token=settings.github_token,
                repository=settings.repository,
                pr_number=number,
                api_url=settings.api_url,
            ),
        )
    except RagaliqError as exc:
        workflow.error(str(exc), title="RagaliQ Gate")
        return ExitCode.UNJUDGED
    except Exception as exc:  # the edge: report anything unexpected as one clear error
        workflow.log(traceback.format_exc())
        workflow.error(
            f"unexpected {type(exc).__name__}: {exc}. This is a bug in RagaliQ Gate; please "
            f"report it with this log at {ISSUES_URL}",
            title="RagaliQ Gate",
        )
        return ExitCode.UNJUDGED


def action(
    *,
    settings: ActionSettings,
    env: Mapping[str, str],
    workflow: Workflow,
    read_base_file: BaseFileReader,
    open_publisher: PublisherFactory,
) -> ExitCode:
    """Run the gate (or record the baseline) and return the exit code."""
    for secret in (settings.anthropic_api_key, settings.github_token):
        if secret:
            workflow.mask(secret)
    judge_env = dict(env)
    if settings.anthropic_api_key:
        judge_env[API_KEY_ENV] = settings.anthropic_api_key
    inputs = load_inputs(
        settings.workspace / settings.config,
        settings.workspace / settings.dataset if settings.dataset else None,
    )
    baseline_path = (
        settings.workspace / settings.baseline if settings.baseline else inputs.baseline_path
    )
    comment_id = _checked_comment_id(settings.comment_id)
    html_file = settings.workspace / settings.html_report if settings.html_report else None
    results = (settings.workspace / REPORT_PATH, settings.workspace / DECISION_PATH, html_file)
    if settings.mode == "update-baseline":
        check_writable(*results, baseline_path, reads=inputs.files)
        return _update_baseline(settings, inputs, judge_env, workflow, baseline_path)

    judge_config, skip_reason = _judge_for_key(inputs, judge_env)
    if skip_reason is not None:
        workflow.notice(skip_reason, title="RagaliQ Gate skipped")
        workflow.write_summary(f"## RagaliQ Gate: skipped\n\n{skip_reason}\n")
        _set_outputs(workflow, passed=True, report_path="", comment_url="", decision=None)
        return ExitCode.PASSED

    check_writable(*results, reads=(*inputs.files, baseline_path))
    recorded, notices = _read_baseline(settings, baseline_path, read_base_file, workflow)
    inputs, kept = keep_baseline_evaluators(inputs, recorded)
    notices += kept
    report = judge_inputs(
        inputs,
        env=judge_env,
        judge_config=judge_config,
        on_progress=ProgressPrinter(workflow.stream, live=False),
    )
    outcome = run_gate(
        inputs,
        report=report,
        baseline=recorded,
        comment_id=comment_id,
        details_url=settings.run_url,
        extra_notices=notices,
    )
    report_path, html_path = _write_results(settings, inputs, report, outcome.decision)
    workflow.write_summary(outcome.summary)
    comment_url = _publish(settings, workflow, outcome.comment, open_publisher)
    _set_outputs(
        workflow,
        passed=outcome.exit_code is ExitCode.PASSED,
        report_path=report_path,
        comment_url=comment_url,
        decision=outcome.decision,
        html_report_path=html_path,
    )
    _annotate(workflow, outcome.decision)
    for notice in outcome.decision.notices:
        workflow.notice(notice, title="RagaliQ Gate")
    workflow.log("")
    workflow.log("gate: PASSED" if outcome.decision.passed else "gate: FAILED")
    for failure in outcome.decision.failures:
        workflow.log(f"  {failure}")
    return outcome.exit_code


def _judge_for_key(inputs: Inputs, env: Mapping[str, str]) -> tuple[JudgeConfig | None, str | None]:
    """The judge to use when a key may be missing, or a reason to skip the gate."""
    judge = inputs.config.judge
    if judge.provider == "offline" or api_key_from(judge, env) is not None:
        return None, None
    policy = inputs.config.gate.on_missing_key
    missing = (
        "No Anthropic API key is available to this run (pull requests from forks get no secrets)"
    )
    if policy == "skip":
        return None, f"{missing}, so the gate is skipped (gate.on_missing_key: skip)."
    if policy == "offline":
        return judge.model_copy(update={"provider": "offline"}), None
    raise ConfigError(
        f"{missing}; set the anthropic-api-key input, or gate.on_missing_key to skip or offline"
    )


def _read_baseline(
    settings: ActionSettings,
    path: Path,
    read_base_file: BaseFileReader,
    workflow: Workflow,
) -> tuple[Baseline | None, tuple[str, ...]]:
    """The baseline as of the PR's base commit, not as the PR's checkout has it."""
    local = path.read_text(encoding="utf-8") if path.is_file() else None
    pr = settings.pull_request
    if pr is None:
        text, source = local, str(path)
    else:
        relative = _repo_relative(path, settings.workspace)
        text = read_base_file(relative, pr.base_sha)
        source = f"{relative} at the base commit {pr.base_sha[:12]}"
    notices: list[str] = []
    if pr is not None and local is not None and local != text:
        notices.append(
            f"This PR edits {path.name}; the gate compares with the version on the base "
            "branch, and the edit takes effect once merged."
        )
    if text is None:
        workflow.log(f"no baseline found ({source})")
        return None, tuple(notices)
    return parse_baseline(text, source=source), tuple(notices)


def _repo_relative(path: Path, workspace: Path) -> str:
    relative = _relative_to(path, workspace)
    if relative is None:
        raise ConfigError(
            f"the baseline {path} is outside the repository {workspace}; use a path inside it"
        )
    return relative


def _relative_to(path: Path, workspace: Path) -> str | None:
    try:
        return path.resolve().relative_to(workspace.resolve()).as_posix()
    except ValueError:
        return None


def _base_file_reader(settings: ActionSettings) -> BaseFileReader:
    """Read from git in the workspace; fall back to the Contents API when git lacks the commit."""

    def read(path: str, sha: str) -> str | None:
        git = subprocess.run(
            ["git", "-C", str(settings.workspace), "show", f"{sha}:{path}"],
            capture_output=True,
            check=False,
        )
        if git.returncode == 0:
            return git.stdout.decode("utf-8")
        stderr = git.stderr.decode("utf-8", "replace")
        if "does not exist in" in stderr or "exists on disk, but not in" in stderr:
            return None
        return read_file_at(
            token=settings.github_token,
            repository=settings.repository,
            path=path,
            ref=sha,
            api_url=settings.api_url,
        )

    return read


def _update_baseline(
    settings: ActionSettings,
    inputs: Inputs,
    env: Mapping[str, str],
    workflow: Workflow,
    baseline_path: Path,
) -> ExitCode:
    judge = inputs.config.judge
    if judge.provider != "offline" and api_key_from(judge, env) is None:
        raise ConfigError(
            "mode update-baseline needs the judge the gate uses: set the anthropic-api-key "
            "input (or judge.provider: offline in the config)"
        )
    report = judge_inputs(inputs, env=env, on_progress=ProgressPrinter(workflow.stream, live=False))
    rules = GateRules.from_config(inputs.config)
    recorded = record_baseline(
        report, commit=settings.sha or None, policy=rules.recorded(report.evaluators)
    )
    save_baseline(recorded, baseline_path)
    decision = compare(report, None, rules=rules)
    report_path, html_path = _write_results(settings, inputs, report, decision)
    workflow.write_summary(render_summary(decision, report=report))
    shown = _in_workspace(baseline_path, settings.workspace)
    workflow.set_output("baseline-path", shown)
    _set_outputs(
        workflow,
        passed=decision.passed,
        report_path=report_path,
        comment_url="",
        decision=decision,
        html_report_path=html_path,
    )
    workflow.notice(f"Baseline recorded in {shown} ({report.summary.cases} cases).")
    return ExitCode.PASSED


def _write_results(
    settings: ActionSettings, inputs: Inputs, report: RunReport, decision: GateDecision
) -> tuple[str, str]:
    """Write the report, the decision and the HTML report (when asked for) in the workspace.

    Returned: the report's path and the HTML report's (empty when none), relative to the
    workspace, as the outputs give them.
    """
    report_file = settings.workspace / REPORT_PATH
    write_atomic(report_file, report.model_dump_json(indent=2) + "\n")
    write_atomic(settings.workspace / DECISION_PATH, decision.model_dump_json(indent=2) + "\n")
    if not settings.html_report:
        return _in_workspace(report_file, settings.workspace), ""
    html_file = settings.workspace / settings.html_report
    write_atomic(html_file, render_html_report(report, decision=decision, cases=inputs.cases))
    return (
        _in_workspace(report_file, settings.workspace),
        _in_workspace(html_file, settings.workspace),
    )


def _in_workspace(path: Path, workspace: Path) -> str:
    """``path`` relative to the workspace, as later steps of the job see it.

    A Docker action sees the workspace at its own mount point (``/github/workspace``), which is
    not where the runner keeps it; a relative path means the same file in every step.
    """
    relative = _relative_to(path, workspace)
    return str(path) if relative is None else relative


def _publish(
    settings: ActionSettings,
    workflow: Workflow,
    body: str,
    open_publisher: PublisherFactory,
) -> str:
    pr = settings.pull_request
    if settings.comment == "off":
        return ""
    if pr is None:
        workflow.log("not a pull_request event: no comment to post")
        return ""
    if not settings.github_token:
        workflow.notice("No github-token: the comment is skipped; the job summary has it all.")
        return ""
    try:
        with open_publisher(pr.number) as publisher:
            result = publisher.upsert(body=body, marker=comment_marker(settings.comment_id))
    except CommentForbiddenError as exc:
        workflow.notice(f"{exc} The job summary has the full result.", title="No PR comment")
        return ""
    except PublishError as exc:
        workflow.warning(f"The PR comment could not be posted: {exc}", title="No PR comment")
        return ""
    workflow.log(f"PR comment {result.action}: {result.url}")
    return result.url


def _set_outputs(
    workflow: Workflow,
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
    count = len(decision.new_hallucinations) if decision is not None else 0
    workflow.set_output("new-hallucinations", str(count))


def _annotate(workflow: Workflow, decision: GateDecision) -> None:
    """At most ten annotations: why the gate failed, then new hallucinations, then drops.

    A failed gate gets ``::error`` lines; a passing gate only warns about new hallucinations.
    """
    new = [
        (f"New hallucination in {c.case_id}", f"{c.claim} ({c.verdict}: {c.reason})")
        for c in decision.new_hallucinations
    ]
    if decision.passed:
        for title, message in new[:MAX_ANNOTATIONS]:
            workflow.warning(message, title=title)
        return
    lines = [("RagaliQ Gate failed", failure) for failure in decision.failures] + new
    lines += [
        (
            f"Regressed case {r.case_id}",
            f"{r.evaluator} {r.baseline:.3f} → " + ("error" if r.head is None else f"{r.head:.3f}"),
        )
        for r in decision.regressed_cases
    ]
    for title, message in lines[:MAX_ANNOTATIONS]:
        workflow.error(message, title=title)


def _checked_comment_id(value: str) -> str:
    try:
        comment_marker(value)
    except ValueError as exc:
        raise ConfigError(f"input {exc}") from exc
    return value

"""The GitHub Action: the gate on a pull request, or recording the baseline on main.

``main()`` builds the real collaborators from the environment a Docker action gets and turns every
error into an ``::error::`` line and an exit code; :func:`action` holds the logic and takes its
collaborators as parameters, so that it can be driven in tests.
"""

from __future__ import annotations

import asyncio
import json
import os
import traceback
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from ragaliq._files import check_writable, own_files_like, write_atomic
from ragaliq.baseline import write_baseline
from ragaliq.config import GatePolicy, JudgeConfig
from ragaliq.errors import CommentForbiddenError, ConfigError, PublishError, RagaliqError
from ragaliq.exits import ExitCode
from ragaliq.gate import GateDecision, GateRules
from ragaliq.github.commands import Workflow
from ragaliq.github.comment import GitHubPublisher
from ragaliq.github.contents import ContentsAtCommit
from ragaliq.github.settings import ActionSettings
from ragaliq.judges.factory import (
    API_KEY_ENV,
    JudgeOpener,
    has_credentials,
    open_judge,
    trusted_endpoint_env,
)
from ragaliq.models import ReportHead
from ragaliq.pipeline import (
    CaseSink,
    GateWatch,
    Inputs,
    JudgedRun,
    baseline_judge,
    judge_inputs,
    keep_baseline_evaluators,
    load_gate_inputs,
    run_gate,
    write_html,
)
from ragaliq.redaction import redact, register_env_secrets, register_secret
from ragaliq.report.markdown import render_status, render_summary
from ragaliq.report.marker import comment_marker
from ragaliq.report.progress import ProgressPrinter
from ragaliq.report_file import ReportFile
from ragaliq.repository import FallbackSource, FileSource, GitCommit, WorkTree, repo_path
from ragaliq.text.plain import plural
from ragaliq.trust import read_bar

__all__ = ["DECISION_PATH", "MAX_ANNOTATIONS", "REPORT_PATH", "action", "main"]

MAX_ANNOTATIONS = 10
REPORT_PATH = ".ragaliq/report.json"
"""Where the run report is written, relative to the workspace, for later steps to upload."""
DECISION_PATH = ".ragaliq/decision.json"
"""Where the gate decision is written, e.g. for `ragaliq render` in a separate workflow."""
ISSUES_URL = "https://github.com/ragaliq/ragaliq-gate/issues"

BaseSourceFactory = Callable[[str], FileSource]
"""The repository's files at a commit: sha -> a source (git, else the GitHub API)."""
PublisherFactory = Callable[[int], GitHubPublisher]


def main() -> int:
    """Run the action from ``os.environ``; never raises."""
    env = dict(os.environ)
    register_env_secrets(env, names=("INPUT_ANTHROPIC-API-KEY", "INPUT_GITHUB-TOKEN"))
    workflow = Workflow(output_file=None, summary_file=None)
    settings: ActionSettings | None = None
    publishers: PublisherFactory | None = None
    try:
        settings = ActionSettings.from_env(env)
        own_files_like(settings.workspace)  # root in the container writes the runner's files
        workflow = Workflow(output_file=settings.output_file, summary_file=settings.summary_file)
        publishers = _publisher_factory(settings)
        return asyncio.run(
            action(
                settings=settings,
                env=env,
                workflow=workflow,
                open_base_source=_base_source_factory(settings, workflow),
                open_publisher=publishers,
                open_judge=open_judge,
            )
        )
    except RagaliqError as exc:
        workflow.error(str(exc), title="RagaliQ Gate")
        _could_not_judge(settings, workflow, publishers, str(exc))
        return ExitCode.UNJUDGED
    except KeyboardInterrupt:
        workflow.error("interrupted: nothing more was written", title="RagaliQ Gate")
        _could_not_judge(settings, workflow, publishers, "the run was interrupted")
        return ExitCode.INTERRUPTED
    except Exception as exc:  # the edge: report anything unexpected as one clear error
        workflow.log(traceback.format_exc())
        workflow.error(
            f"unexpected {type(exc).__name__}: {exc}. This is a bug in RagaliQ Gate; please "
            f"report it with this log at {ISSUES_URL}",
            title="RagaliQ Gate",
        )
        _could_not_judge(settings, workflow, publishers, f"unexpected {type(exc).__name__}")
        return ExitCode.UNJUDGED


def _publisher_factory(settings: ActionSettings) -> PublisherFactory:
    return lambda number: GitHubPublisher(
        token=settings.github_token,
        repository=settings.repository,
        pr_number=number,
        api_url=settings.api_url,
    )


def _base_source_factory(settings: ActionSettings, workflow: Workflow) -> BaseSourceFactory:
    """Git in the workspace, else the Contents API when the checkout lacks the commit."""

    def source(sha: str) -> FileSource:
        label = f"the base commit {sha[:12]}"
        return FallbackSource(
            (
                GitCommit(settings.workspace, sha, label=label),
                ContentsAtCommit(
                    token=settings.github_token,
                    repository=settings.repository,
                    sha=sha,
                    api_url=settings.api_url,
                ),
            ),
            on_fallback=workflow.log,
        )

    return source


async def action(
    *,
    settings: ActionSettings,
    env: Mapping[str, str],
    workflow: Workflow,
    open_base_source: BaseSourceFactory,
    open_publisher: PublisherFactory,
    open_judge: JudgeOpener,
) -> ExitCode:
    """Run the gate (or record the baseline) and return the exit code.

    On a pull request the bar (config, baseline, templates, judge, cache settings) is read from
    the base commit and only the dataset from the pull request's checkout (see
    :mod:`ragaliq.trust`).
    """
    for secret in (settings.anthropic_api_key, settings.github_token):
        if secret:
            register_secret(secret)
            workflow.mask(secret)
    judge_env = dict(env)
    if settings.anthropic_api_key:
        judge_env[API_KEY_ENV] = settings.anthropic_api_key
    judge_env, endpoint_notices = trusted_endpoint_env(
        judge_env, base_url=settings.anthropic_base_url, gate=settings.mode == "gate"
    )
    comment_id = _checked_comment_id(settings.comment_id)
    work = WorkTree(settings.workspace)
    config_file = repo_path(settings.config, what="input config")
    pr = settings.pull_request
    trusted: FileSource = work if pr is None else open_base_source(pr.base_sha)
    explicit_baseline = (
        repo_path(settings.baseline, what="input baseline") if settings.baseline else None
    )
    bar = read_bar(
        trusted=trusted,
        work=work,
        config_file=config_file,
        baseline_file=explicit_baseline,
        with_baseline=settings.mode == "gate",
    )
    inputs = load_gate_inputs(
        bar, work=work, config_path=settings.workspace / config_file, dataset=settings.dataset
    )
    if inputs.config.judge.api_key is not None:
        register_secret(inputs.config.judge.api_key.get_secret_value())
    html_file = _workspace_file(settings, settings.html_report, "input html-report")
    results = (settings.workspace / REPORT_PATH, settings.workspace / DECISION_PATH, html_file)
    if settings.mode == "update-baseline":
        baseline_path = settings.workspace / (explicit_baseline or bar.baseline_file)
        work.check(explicit_baseline or bar.baseline_file, what="baseline")
        check_writable(*results, baseline_path, reads=inputs.files)
        return await _update_baseline(
            settings, inputs, judge_env, workflow, baseline_path, open_judge
        )

    judge_config, chosen = baseline_judge(inputs, bar.baseline)
    judge_config, skip_reason = _judge_for_key(judge_config, inputs.config.gate, judge_env)
    if skip_reason is not None:
        workflow.notice(skip_reason, title="RagaliQ Gate skipped")
        workflow.write_summary(f"## RagaliQ Gate: skipped\n\n{skip_reason}\n")
        _set_outputs(workflow, passed=True, report_path="", comment_url="", decision=None)
        _publish(
            settings,
            workflow,
            render_status(title="RagaliQ Gate skipped", reason=skip_reason, comment_id=comment_id),
            open_publisher,
        )
        return ExitCode.PASSED

    check_writable(*results, reads=inputs.files)
    inputs, kept = keep_baseline_evaluators(inputs, bar.baseline)
    watch = GateWatch.of(inputs, bar.baseline)
    run = await _judge(
        inputs, judge_config, judge_env, workflow, open_judge, settings=settings, sinks=watch.sinks
    )
    gate_run = run_gate(
        inputs,
        head=run.head,
        watch=watch,
        comment_id=comment_id,
        details_url=settings.run_url,
        extra_notices=(*chosen, *kept, *endpoint_notices),
    )
    report_path, html_path = _write_results(settings, inputs, run.head, gate_run.decision)
    workflow.write_summary(gate_run.summary)
    comment_url = _publish(settings, workflow, gate_run.comment, open_publisher)
    _set_outputs(
        workflow,
        passed=gate_run.exit_code is ExitCode.PASSED,
        report_path=report_path,
        comment_url=comment_url,
        decision=gate_run.decision,
        html_report_path=html_path,
    )
    _annotate(workflow, gate_run.decision)
    for notice in gate_run.decision.notices:
        workflow.notice(notice, title="RagaliQ Gate")
    workflow.log("")
    workflow.log("gate: PASSED" if gate_run.decision.passed else "gate: FAILED")
    for failure in gate_run.decision.failures:
        workflow.log(f"  {failure}")
    return gate_run.exit_code


def _workspace_file(settings: ActionSettings, raw: str, what: str) -> Path | None:
    """A result file named by an input: a path inside the workspace, never through a link."""
    if not raw:
        return None
    path = repo_path(raw, what=what)
    WorkTree(settings.workspace).check(path, what=what)
    return settings.workspace / path


def _could_not_judge(
    settings: ActionSettings | None,
    workflow: Workflow,
    open_publisher: PublisherFactory | None,
    reason: str,
) -> None:
    """After a failure: the outputs say not passed, and the comment says what went wrong.

    A comment from an earlier push must never keep saying "passed" over a run that could not
    judge. Failures while saying so are logged, not raised.
    """
    try:
        workflow.set_output("passed", "false")
        if settings is None or settings.mode != "gate" or open_publisher is None:
            return
        workflow.write_summary(f"## RagaliQ Gate: could not judge\n\n{reason}\n")
        try:
            comment_id = _checked_comment_id(settings.comment_id)
        except ConfigError:
            return  # without a valid id, our comment cannot be told from others
        body = render_status(
            title="RagaliQ Gate could not judge this change", reason=reason, comment_id=comment_id
        )
        _publish(settings, workflow, body, open_publisher)
    except (RagaliqError, OSError) as exc:
        workflow.log(f"the failure could not be reported everywhere: {exc}")


def _judge_for_key(
    judge: JudgeConfig, policy: GatePolicy, env: Mapping[str, str]
) -> tuple[JudgeConfig, str | None]:
    """The judge to use when a key may be missing, or a reason to skip the gate."""
    if has_credentials(judge, env):
        return judge, None
    missing = (
        "No Anthropic API key is available to this run (pull requests from forks get no secrets)"
    )
    if policy.on_missing_key == "skip":
        return judge, f"{missing}, so the gate is skipped (gate.on_missing_key: skip)."
    if policy.on_missing_key == "offline":
        return judge.model_copy(update={"provider": "offline"}), None
    raise ConfigError(
        f"{missing}; set the anthropic-api-key input, or gate.on_missing_key to skip or offline"
    )


async def _judge(
    inputs: Inputs,
    judge_config: JudgeConfig,
    env: Mapping[str, str],
    workflow: Workflow,
    open_judge: JudgeOpener,
    *,
    settings: ActionSettings,
    sinks: Sequence[CaseSink] = (),
) -> JudgedRun:
    """Open the judge, judge the inputs into the workspace's report, close the judge.

    Progress goes to the log as plain lines.
    """
    async with open_judge(judge_config, env=env, cache_path=inputs.cache_path) as choice:
        return await judge_inputs(
            inputs,
            choice=choice,
            judge_config=judge_config,
            report_path=settings.workspace / REPORT_PATH,
            sinks=sinks,
            on_progress=ProgressPrinter(workflow.stream, live=False),
        )


async def _update_baseline(
    settings: ActionSettings,
    inputs: Inputs,
    env: Mapping[str, str],
    workflow: Workflow,
    baseline_path: Path,
    open_judge: JudgeOpener,
) -> ExitCode:
    judge = inputs.config.judge
    if not has_credentials(judge, env):
        raise ConfigError(
            "mode update-baseline needs the judge the gate uses: set the anthropic-api-key "
            "input (or judge.provider: offline in the config)"
        )
    watch = GateWatch.of(inputs, None)
    run = await _judge(
        inputs, judge, env, workflow, open_judge, settings=settings, sinks=watch.sinks
    )
    rules = GateRules.from_config(inputs.config)
    write_baseline(
        baseline_path,
        head=run.head,
        cases=ReportFile(settings.workspace / REPORT_PATH).iter_cases(),
        commit=settings.sha or None,
        policy=rules.recorded(run.head.evaluators),
    )
    decision = watch.comparison.decide(run.head)
    report_path, html_path = _write_results(settings, inputs, run.head, decision)
    workflow.write_summary(render_summary(decision, report=run.head, cases=watch.digest))
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
    workflow.notice(f"Baseline recorded in {shown} ({plural(run.head.summary.cases, 'case')}).")
    return ExitCode.PASSED


def _write_results(
    settings: ActionSettings, inputs: Inputs, head: ReportHead, decision: GateDecision
) -> tuple[str, str]:
    """Write the decision and the HTML report (when asked for) beside the run's report.

    Returned: the report's path and the HTML report's (empty when none), relative to the
    workspace, as the outputs give them.
    """
    report_file = settings.workspace / REPORT_PATH
    write_atomic(settings.workspace / DECISION_PATH, decision.model_dump_json(indent=2) + "\n")
    html_file = _workspace_file(settings, settings.html_report, "input html-report")
    if html_file is None:
        return _in_workspace(report_file, settings.workspace), ""
    write_html(
        html_file,
        head=head,
        cases=ReportFile(report_file).iter_cases(),
        decision=decision,
        dataset=inputs.cases,
    )
    return (
        _in_workspace(report_file, settings.workspace),
        _in_workspace(html_file, settings.workspace),
    )


def _in_workspace(path: Path, workspace: Path) -> str:
    """``path`` relative to the workspace, as later steps of the job see it.

    A Docker action sees the workspace at its own mount point (``/github/workspace``), which is
    not where the runner keeps it; a relative path means the same file in every step.
    """
    try:
        return path.resolve().relative_to(workspace.resolve()).as_posix()
    except ValueError:
        return str(path)


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
            result = publisher.upsert(body=redact(body), marker=comment_marker(settings.comment_id))
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

"""The GitHub Action: the gate on a pull request, or recording the baseline on main.

``main()`` builds the real collaborators from the environment a Docker action gets and turns every
error into an ``::error::`` line and an exit code; :func:`action` holds the logic and takes its
collaborators as parameters, so that it can be driven in tests.

On a pull request the gate runs in the **trusted zone**: a job on a fresh runner that never ran
the pull request's code, with the base commit (or nothing) checked out and the dataset handed over
as an artifact. The action refuses to judge anywhere else (:mod:`ragaliq.checkout`) unless the
workflow says ``trust-pr-code: true``, and never reports a pull request nobody judged as passed.
"""

from __future__ import annotations

import asyncio
import json
import os
import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from ragaliq._files import check_writable, own_files_like, write_atomic
from ragaliq.baseline import write_baseline
from ragaliq.checkout import unsafe_checkout
from ragaliq.config import GatePolicy
from ragaliq.environment import Hardening, harden_action_environment
from ragaliq.errors import (
    CommentForbiddenError,
    ConfigError,
    PublishError,
    RagaliqError,
    UnsafeSetupError,
)
from ragaliq.exits import ExitCode
from ragaliq.gate import GateDecision
from ragaliq.gate.acceptance import Acceptance
from ragaliq.gating import GatePlan, GateSetup, GateWatch, plan_gate, run_gate
from ragaliq.github.artifacts import ArtifactDataset, artifact_exists, download_dataset
from ragaliq.github.commands import Workflow
from ragaliq.github.comment import GitHubPublisher
from ragaliq.github.contents import ContentsAtCommit
from ragaliq.github.pulls import find_pull_request
from ragaliq.github.reviews import read_acceptances_from_reviews
from ragaliq.github.settings import ActionSettings, PullRequest, WorkflowRun
from ragaliq.github.status import CommitStatus, StatusState, status_context
from ragaliq.judges.factory import (
    API_KEY_ENV,
    BASE_URL_ENV,
    JudgeOpener,
    has_credentials,
    open_judge,
)
from ragaliq.models import ReportHead
from ragaliq.pipeline import Inputs, judge_with, load_inputs_from, write_html
from ragaliq.redaction import redact, register_env_secrets, register_secret
from ragaliq.report.markdown import render_status, render_summary
from ragaliq.report.marker import comment_marker
from ragaliq.report.progress import ProgressPrinter
from ragaliq.repository import FallbackSource, FileSource, GitCommit, WorkTree, repo_path
from ragaliq.run_report import ReportFile
from ragaliq.text.plain import plural

__all__ = ["DECISION_PATH", "MAX_ANNOTATIONS", "REPORT_PATH", "Remote", "action", "main"]

MAX_ANNOTATIONS = 10
REPORT_PATH = ".ragaliq/report.json"
"""Where the run report is written, relative to the workspace, for later steps to upload."""
DECISION_PATH = ".ragaliq/decision.json"
"""Where the gate decision is written, e.g. for `ragaliq render` in a separate workflow."""
ISSUES_URL = "https://github.com/ragaliq/ragaliq-gate/issues"
TWO_ZONES = (
    "run the pull request's pipeline in one job and the gate in another, on a fresh runner that "
    "checks out the base commit (examples/workflows/ragaliq.yml; for forks, "
    "ragaliq-forks.yml), or set the action's input trust-pr-code: true if every contributor "
    "holds write access"
)
PULL_REQUEST_EVENTS = ("pull_request", "pull_request_review")
"""The events of a pull request's own run that a ``workflow_run`` gate judges."""
TRUSTED_CODE_NOTICE = (
    "trust-pr-code: true: this gate ran in the job that ran the pull request's code, so the bar "
    "is not protected from that code (its config, baseline and secrets could be reached)."
)


@dataclass(frozen=True, kw_only=True)
class Remote:
    """What the action asks of GitHub; :func:`main` builds it from the settings."""

    files_at: Callable[[str, str], FileSource]
    """``(sha, label)``: the repository's files at a commit: git in the workspace, else the
    Contents API; ``label`` names the commit in messages."""
    publisher: Callable[[int], GitHubPublisher]
    """The comment of pull request N."""
    pull_request_of: Callable[[WorkflowRun], PullRequest | None]
    """The open pull request a ``workflow_run`` event is about."""
    dataset_from: Callable[[int, str, str, str | None], ArtifactDataset]
    """``(run_id, artifact, file_name, head_sha)``: the dataset unpacked from an artifact."""
    has_artifact: Callable[[int, str], bool]
    """Whether run N uploaded an artifact of that name."""
    status_of: Callable[[str], CommitStatus]
    """The gate's commit status on a commit."""
    acceptances_of: Callable[
        [PullRequest, GatePolicy], tuple[tuple[Acceptance, ...], tuple[str, ...]]
    ]
    """Reviewers' acceptances at the pull request's head under the trusted policy, and notes on
    the reviews that do not count."""


def main(hardening: Hardening | None = None) -> int:
    """Run the action from ``os.environ``; never raises.

    ``hardening`` is what ``python -m ragaliq action`` already did to the environment before
    anything else was imported; without it the environment is made safe here.
    """
    if hardening is None:
        hardening = harden_action_environment(os.environ)
    env = dict(os.environ)
    register_env_secrets(
        env, names=("INPUT_ANTHROPIC-API-KEY", "INPUT_GITHUB-TOKEN", "INPUT_CACHE-SECRET")
    )
    workflow = Workflow(output_file=None, summary_file=None)
    result = Publication(settings=None, workflow=workflow, remote=None)
    try:
        settings = ActionSettings.from_env(env)
        own_files_like(settings.workspace)  # root in the container writes the runner's files
        workflow = Workflow(output_file=settings.output_file, summary_file=settings.summary_file)
        remote = _remote(settings, workflow)
        result = Publication(settings=settings, workflow=workflow, remote=remote)
        return asyncio.run(
            action(
                settings=settings,
                env=env,
                result=result,
                remote=remote,
                open_judge=open_judge,
                hardening=hardening,
            )
        )
    except RagaliqError as exc:
        workflow.error(str(exc), title="RagaliQ Gate")
        result.could_not_judge(str(exc))
        return ExitCode.UNJUDGED
    except KeyboardInterrupt:
        workflow.error("interrupted: nothing more was written", title="RagaliQ Gate")
        result.could_not_judge("the run was interrupted")
        return ExitCode.INTERRUPTED
    except Exception as exc:  # the edge: report anything unexpected as one clear error
        workflow.log(traceback.format_exc())
        workflow.error(
            f"unexpected {type(exc).__name__}: {exc}. This is a bug in RagaliQ Gate; please "
            f"report it with this log at {ISSUES_URL}",
            title="RagaliQ Gate",
        )
        result.could_not_judge(f"unexpected {type(exc).__name__}")
        return ExitCode.UNJUDGED


def _remote(settings: ActionSettings, workflow: Workflow) -> Remote:
    def files_at(sha: str, label: str) -> FileSource:
        api = ContentsAtCommit(
            token=settings.github_token,
            repository=settings.repository,
            sha=sha,
            api_url=settings.api_url,
            label=label,
        )
        return FallbackSource(
            (GitCommit(settings.workspace, sha, label=label), api), on_fallback=workflow.log
        )

    def dataset_from(run_id: int, artifact: str, name: str, head: str | None) -> ArtifactDataset:
        return download_dataset(
            token=settings.github_token,
            repository=settings.repository,
            api_url=settings.api_url,
            run_id=run_id,
            artifact=artifact,
            file_name=name,
            head_sha=head,
        )

    return Remote(
        files_at=files_at,
        publisher=lambda number: GitHubPublisher(
            token=settings.github_token,
            repository=settings.repository,
            pr_number=number,
            api_url=settings.api_url,
        ),
        pull_request_of=lambda run: find_pull_request(
            run,
            token=settings.github_token,
            repository=settings.repository,
            api_url=settings.api_url,
        ),
        dataset_from=dataset_from,
        has_artifact=lambda run_id, name: artifact_exists(
            token=settings.github_token,
            repository=settings.repository,
            api_url=settings.api_url,
            run_id=run_id,
            artifact=name,
        ),
        status_of=lambda sha: CommitStatus(
            token=settings.github_token,
            repository=settings.repository,
            sha=sha,
            api_url=settings.api_url,
            context=status_context(settings.comment_id),
            target_url=settings.run_url,
            on_failure=lambda message: workflow.notice(message, title="No commit status"),
        ),
        acceptances_of=lambda pr, policy: read_acceptances_from_reviews(
            token=settings.github_token,
            repository=settings.repository,
            api_url=settings.api_url,
            number=pr.number,
            head_sha=pr.head_sha,
            author=pr.author,
            policy=policy,
        ),
    )


@dataclass(kw_only=True)
class Publication:
    """Where the gate's result goes: the outputs, the summary, the PR comment, the commit status.

    Once the pull request is known, every way the run can end says something there; a run that
    did not decide never leaves an earlier "passed" standing.
    """

    settings: ActionSettings | None
    workflow: Workflow
    remote: Remote | None
    pull_request: PullRequest | None = None
    status: CommitStatus | None = None

    def aim(self, head_sha: str, pull_request: PullRequest | None) -> None:
        """The change is known: the comment and the status go to it from now on."""
        self.pull_request = pull_request
        if self.settings is not None and self.remote is not None and self.settings.commit_status:
            self.status = self.remote.status_of(head_sha)

    def set_status(self, state: StatusState, description: str) -> None:
        """Set the commit status, when there is one to set."""
        if self.status is not None:
            self.status.set(state, redact(description))

    def comment(self, body: str) -> str:
        """Create or update the PR comment; its URL, or "" when none was posted."""
        settings, pr = self.settings, self.pull_request
        if settings is None or self.remote is None or settings.comment == "off":
            return ""
        if pr is None:
            self.workflow.log("not a pull request: no comment to post")
            return ""
        if not settings.github_token:
            self.workflow.notice("No github-token: no comment; the job summary has it all.")
            return ""
        try:
            with self.remote.publisher(pr.number) as publisher:
                result = publisher.upsert(
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

    def could_not_judge(self, reason: str) -> None:
        """After a failure: ``passed`` is false, and the comment and status say why.

        Failures while saying so are logged, not raised.
        """
        try:
            self.workflow.set_output("passed", "false")
            settings = self.settings
            if settings is None or settings.mode != "gate":
                return
            self.workflow.write_summary(f"## RagaliQ Gate: could not judge\n\n{reason}\n")
            self.set_status("error", f"not judged: {reason}")
            try:
                comment_id = _checked_comment_id(settings.comment_id)
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


async def action(
    *,
    settings: ActionSettings,
    env: Mapping[str, str],
    result: Publication,
    remote: Remote,
    open_judge: JudgeOpener,
    hardening: Hardening,
) -> ExitCode:
    """Run the gate (or record the baseline) and return the exit code."""
    workflow = result.workflow
    for secret in (settings.anthropic_api_key, settings.github_token):
        if secret:
            register_secret(secret)
            workflow.mask(secret)
    if hardening.problem:
        raise ConfigError(hardening.problem)
    judge_env = dict(env)
    if settings.anthropic_api_key:
        judge_env[API_KEY_ENV] = settings.anthropic_api_key
    if settings.anthropic_base_url:
        judge_env[BASE_URL_ENV] = settings.anthropic_base_url
    comment_id = _checked_comment_id(settings.comment_id)
    if settings.mode == "update-baseline":
        return await _update_baseline(settings, judge_env, workflow, open_judge)
    run = settings.workflow_run
    if run is not None and run.event not in PULL_REQUEST_EVENTS:
        workflow.notice(
            f"The run this gate follows was started by {run.event or 'an unknown event'}, not "
            "by a pull request: there is nothing to gate.",
            title="RagaliQ Gate",
        )
        return ExitCode.PASSED
    pr = settings.pull_request if run is None else remote.pull_request_of(run)
    if run is not None:
        result.aim(run.head_sha, pr)
    elif pr is not None:
        result.aim(pr.head_sha, pr)
    if _review_without_data(settings, remote):
        workflow.notice(
            "The review that started this run handed over no dataset (it accepts nothing): there "
            "is nothing to gate, and the pull request's status stays as it is.",
            title="RagaliQ Gate",
        )
        return ExitCode.PASSED
    zone_notice = _check_zone(settings, pr)
    work = WorkTree(settings.workspace)
    dataset, dataset_notice = _dataset(settings, remote, pr)
    result.set_status("pending", "judging the pull request's RAG outputs")
    plan = plan_gate(
        GateSetup(
            trusted=(
                work
                if pr is None
                else remote.files_at(pr.base_sha, f"the base commit {pr.base_sha[:12]}")
            ),
            proposal=_proposal(settings, remote, pr, work),
            work=work,
            config_file=repo_path(settings.config, what="input config"),
            config_path=settings.workspace / settings.config,
            baseline_file=(
                repo_path(settings.baseline, what="input baseline") if settings.baseline else None
            ),
            dataset=dataset,
        )
    )
    plan = _judge_for_key(plan, judge_env)
    acceptances, review_notes = (
        remote.acceptances_of(pr, plan.inputs.config.gate) if pr is not None else ((), ())
    )
    notices = [
        *zone_notice,
        *((dataset_notice.format(cases=_count(plan.inputs)),) if dataset_notice else ()),
        *hardening.notices,
        *review_notes,
    ]
    workflow.log(f"the bar: {plan.source}; the baseline: {plan.inputs.baseline_file}")
    outputs = _Outputs.of(settings)
    check_writable(*outputs.paths, reads=plan.inputs.files)
    gate_run = await run_gate(
        plan,
        open_judge=open_judge,
        env=judge_env,
        report_path=outputs.report,
        on_progress=ProgressPrinter(workflow.stream, live=False),
        comment_id=comment_id,
        details_url=settings.run_url,
        extra_notices=tuple(notices),
        acceptances=acceptances,
    )
    decision = gate_run.decision
    html_path = outputs.write(plan.inputs, gate_run.head, decision)
    workflow.write_summary(gate_run.summary)
    comment_url = result.comment(gate_run.comment)
    passed = gate_run.exit_code is ExitCode.PASSED
    result.set_status(*_status(gate_run.exit_code, decision))
    _set_outputs(
        workflow,
        passed=passed,
        report_path=outputs.shown(outputs.report),
        comment_url=comment_url,
        decision=decision,
        html_report_path=html_path,
    )
    _annotate(workflow, decision)
    for notice in decision.notices:
        workflow.notice(notice, title="RagaliQ Gate")
    workflow.log("")
    workflow.log("gate: PASSED" if decision.passed else "gate: FAILED")
    for failure in decision.failures:
        workflow.log(f"  {failure}")
    return gate_run.exit_code


def _review_without_data(settings: ActionSettings, remote: Remote) -> bool:
    """Whether a ``workflow_run`` gate follows a review's run that produced nothing.

    Reviews that accept nothing start no ``produce`` job, so their run hands over no artifact;
    that is no failure to report, and no reason to touch the status a real gate set.
    """
    run = settings.workflow_run
    if run is None or run.event != "pull_request_review" or not settings.artifact:
        return False
    if run.conclusion == "skipped":
        return True
    return not remote.has_artifact(run.id, settings.artifact)


def _check_zone(settings: ActionSettings, pr: PullRequest | None) -> tuple[str, ...]:
    """Refuse to judge where the pull request's code may have run, unless the workflow says so.

    Returned: the notice to show when the workflow trusts the pull request's code.

    Raises:
        UnsafeSetupError: the workspace is not the base commit's untouched checkout.
        ConfigError: the run this gate follows found no pull request, or did not succeed.
    """
    run = settings.workflow_run
    if run is not None and pr is None:
        raise ConfigError(
            f"no open pull request has commit {run.head_sha[:12]}, the head of the run this "
            "gate follows; it may have been closed, or pushed to since"
        )
    if run is not None and run.conclusion != "success":
        raise ConfigError(
            f"the pull request's workflow run {run.id} ended "
            f"'{run.conclusion or 'without a conclusion'}', so it handed over no dataset to "
            "judge; fix that run and re-run it"
        )
    if pr is None:
        return ()
    if settings.trust_pr_code:
        return (TRUSTED_CODE_NOTICE,)
    problem = unsafe_checkout(settings.workspace, pr.base_sha)
    if problem is not None:
        raise UnsafeSetupError(
            f"RagaliQ Gate refuses to judge here: {problem}, so the pull request's code may have "
            f"run in this job. To fix it, {TWO_ZONES}."
        )
    return ()


def _proposal(
    settings: ActionSettings, remote: Remote, pr: PullRequest | None, work: WorkTree
) -> FileSource | None:
    """Where the change's own config is read, for what it proposes."""
    if pr is None or settings.trust_pr_code:
        return work
    return remote.files_at(pr.head_sha, f"the pull request's head {pr.head_sha[:12]}")


def _dataset(
    settings: ActionSettings, remote: Remote, pr: PullRequest | None
) -> tuple[Path | str | None, str]:
    """The dataset to judge, and a notice (with ``{cases}`` to fill) saying where it came from.

    With the ``artifact`` input the dataset comes from the run that produced it: the
    ``workflow_run`` event's run, or this run for the jobs of one ``pull_request`` workflow.
    """
    if not settings.artifact:
        return settings.dataset or None, ""
    run = settings.workflow_run
    run_id = run.id if run is not None else int(settings.run_id or 0)
    if not run_id:
        raise ConfigError("input artifact: the run that uploaded it is unknown (no GITHUB_RUN_ID)")
    name = PurePosixPath(settings.dataset).name if settings.dataset else ""
    found = remote.dataset_from(
        run_id, settings.artifact, name, pr.head_sha if pr is not None else None
    )
    ignored = (
        f" It also held {', '.join(found.ignored[:3])}{' …' if len(found.ignored) > 3 else ''}, "
        "which the gate did not read."
        if found.ignored
        else ""
    )
    return found.path, f"Judged {{cases}} from the {found.description}.{ignored}"


def _count(inputs: Inputs) -> str:
    info = inputs.dataset_info
    return plural(info.cases if info is not None else len(inputs.cases), "case")


def _judge_for_key(plan: GatePlan, env: Mapping[str, str]) -> GatePlan:
    """The plan's judge when its key may be missing (a fork's run gets no secrets).

    ``gate.on_missing_key: offline`` judges with the offline judge instead; otherwise the pull
    request is reported not judged (exit 2, ``passed=false``, the status ``error``).

    Raises:
        ConfigError: no key, and the policy is not ``offline``.
    """
    if has_credentials(plan.judge, env):
        return plan
    policy: GatePolicy = plan.inputs.config.gate
    if policy.on_missing_key == "offline":
        return plan.with_judge(plan.judge.model_copy(update={"provider": "offline"}))
    raise ConfigError(
        "No Anthropic API key is available to this run, so the pull request was not judged "
        f"(gate.on_missing_key: {policy.on_missing_key}). Pass the anthropic-api-key input "
        "from a secret; pull requests from forks get secrets only in a workflow_run job "
        "(examples/workflows/ragaliq-forks.yml)"
    )


def _status(code: ExitCode, decision: GateDecision) -> tuple[StatusState, str]:
    if code is ExitCode.PASSED:
        return "success", f"passed ({plural(decision.cases, 'case')} judged)"
    if code is ExitCode.FAILED:
        return "failure", decision.failures[0] if decision.failures else "failed"
    return "error", "not judged: no case could be judged"


@dataclass(frozen=True, kw_only=True)
class _Outputs:
    """The files a gate writes in the workspace, none of them through a symbolic link."""

    workspace: Path
    report: Path
    decision: Path
    html: Path | None

    @classmethod
    def of(cls, settings: ActionSettings) -> _Outputs:
        return cls(
            workspace=settings.workspace,
            report=_workspace_file(settings, REPORT_PATH, "the report"),
            decision=_workspace_file(settings, DECISION_PATH, "the decision"),
            html=(
                _workspace_file(settings, settings.html_report, "input html-report")
                if settings.html_report
                else None
            ),
        )

    @property
    def paths(self) -> tuple[Path | None, ...]:
        return (self.report, self.decision, self.html)

    def shown(self, path: Path) -> str:
        return _in_workspace(path, self.workspace)

    def write(self, inputs: Inputs, head: ReportHead, decision: GateDecision) -> str:
        """Write the decision and the HTML report (when asked for) beside the run's report.

        Returned: the HTML report's path relative to the workspace, empty when none.
        """
        write_atomic(self.decision, decision.model_dump_json(indent=2) + "\n")
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


def _workspace_file(settings: ActionSettings, raw: str, what: str) -> Path:
    """A result file: a path inside the workspace that passes through no symbolic link."""
    path = repo_path(raw, what=what)
    WorkTree(settings.workspace).check(path, what=what)
    return settings.workspace / path


async def _update_baseline(
    settings: ActionSettings,
    env: Mapping[str, str],
    workflow: Workflow,
    open_judge: JudgeOpener,
) -> ExitCode:
    """Judge the workspace's dataset and write the baseline (a push to the default branch)."""
    work = WorkTree(settings.workspace)
    inputs = load_inputs_from(
        work,
        config_file=repo_path(settings.config, what="input config"),
        config_path=settings.workspace / settings.config,
        dataset=settings.dataset or None,
    )
    explicit = repo_path(settings.baseline, what="input baseline") if settings.baseline else None
    baseline_file = explicit or inputs.baseline_file
    work.check(baseline_file, what="baseline")
    baseline_path = settings.workspace / baseline_file
    outputs = _Outputs.of(settings)
    check_writable(*outputs.paths, baseline_path, reads=inputs.files)
    judge = inputs.config.judge
    if not has_credentials(judge, env):
        raise ConfigError(
            "mode update-baseline needs the judge the gate uses: set the anthropic-api-key "
            "input (or judge.provider: offline in the config)"
        )
    watch = GateWatch.of(inputs, None)
    run = await judge_with(
        inputs,
        judge,
        open_judge=open_judge,
        env=env,
        report_path=outputs.report,
        sinks=watch.sinks,
        on_progress=ProgressPrinter(workflow.stream, live=False),
    )
    rules = inputs.config.rules()
    write_baseline(
        baseline_path,
        head=run.head,
        cases=ReportFile(outputs.report).iter_cases(),
        commit=settings.sha or None,
        policy=rules.recorded(run.head.evaluators),
    )
    decision = watch.comparison.decide(run.head)
    html_path = outputs.write(inputs, run.head, decision)
    workflow.write_summary(render_summary(decision, report=run.head, cases=watch.digest))
    shown = outputs.shown(baseline_path)
    workflow.set_output("baseline-path", shown)
    _set_outputs(
        workflow,
        passed=decision.passed,
        report_path=outputs.shown(outputs.report),
        comment_url="",
        decision=decision,
        html_report_path=html_path,
    )
    workflow.notice(
        f"Baseline recorded in {shown} ({plural(run.head.summary.cases, 'case')}); commit it "
        "to the default branch for pull requests to be compared with it."
    )
    return ExitCode.PASSED


def _in_workspace(path: Path, workspace: Path) -> str:
    """``path`` relative to the workspace, as later steps of the job see it.

    A Docker action sees the workspace at its own mount point (``/github/workspace``), which is
    not where the runner keeps it; a relative path means the same file in every step.
    """
    try:
        return path.resolve().relative_to(workspace.resolve()).as_posix()
    except ValueError:
        return str(path)


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

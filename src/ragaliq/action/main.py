"""The GitHub Action: the gate on a pull request, or recording the baseline on main.

``main()`` builds the real collaborators from the environment a Docker action gets and turns every
error into an ``::error::`` line and an exit code; :func:`action` holds the logic and takes its
collaborators as parameters, so that it can be driven in tests.

On a pull request the gate runs in the **trusted zone**: a job on a fresh runner that never ran
the pull request's code, with the base commit (or nothing) checked out and the dataset handed over
as an artifact. The action refuses to judge anywhere else (:mod:`ragaliq.github.zones`) unless the
workflow says ``trust-pr-code: true``, and never reports a pull request nobody judged as passed
(:mod:`ragaliq.github.publication`).
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import traceback
from collections.abc import Mapping
from dataclasses import dataclass

from ragaliq._files import check_writable, own_files_like
from ragaliq.action.answers import BASELINE_ANSWERS, gather_answers, keep_answers
from ragaliq.action.outputs import ResultFiles
from ragaliq.action.recording import DATASET_INPUT, store_baseline, update_baseline
from ragaliq.environment import Hardening, harden_action_environment
from ragaliq.errors import ConfigError, RagaliqError
from ragaliq.evaluators.registry import judge_asked
from ragaliq.exits import ExitCode, stopped_exit
from ragaliq.gate.acceptance import Acceptance
from ragaliq.gate_sequence import GatePlan, GateRun, GateSetup, plan_gate, run_gate
from ragaliq.github.commands import Workflow
from ragaliq.github.publication import (
    Publication,
    annotate,
    checked_comment_id,
    set_outputs,
    status_for,
)
from ragaliq.github.remote import Remote, connect
from ragaliq.github.settings import ActionSettings, PullRequest
from ragaliq.github.zones import (
    PULL_REQUEST_EVENTS,
    bind_acceptances,
    check_zone,
    dataset_of,
    proposal_source,
    review_without_data,
)
from ragaliq.inputs import Inputs
from ragaliq.judges.answers import AnswerRows
from ragaliq.judges.factory import (
    API_KEY_ENV,
    BASE_URL_ENV,
    JudgeOpener,
    has_credentials,
    open_judge,
)
from ragaliq.redaction import register_env_secrets, register_secret
from ragaliq.report.progress import ProgressPrinter
from ragaliq.repository import WorkTree, repo_path
from ragaliq.text.counts import plural

__all__ = ["action", "main"]

ISSUES_URL = "https://github.com/ragaliq/ragaliq-gate/issues"


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
        remote = connect(settings, workflow)
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
    except KeyboardInterrupt as stop:  # Ctrl-C, or a cancelled job's SIGTERM
        code, said = stopped_exit(stop)
        workflow.error(said, title="RagaliQ Gate")
        result.could_not_judge(said.split(":", 1)[0])
        return code
    except Exception as exc:  # the edge: report anything unexpected as one clear error
        workflow.log(traceback.format_exc())
        workflow.error(
            f"unexpected {type(exc).__name__}: {exc}. This is a bug in RagaliQ Gate; please "
            f"report it with this log at {ISSUES_URL}",
            title="RagaliQ Gate",
        )
        result.could_not_judge(f"unexpected {type(exc).__name__}")
        return ExitCode.UNJUDGED


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
    checked_comment_id(settings.comment_id)
    if settings.mode == "update-baseline":
        return await update_baseline(settings, judge_env, workflow, open_judge, remote)
    if settings.mode == "store-baseline":
        return store_baseline(settings, workflow, remote)
    run = settings.workflow_run
    if run is not None and run.event not in PULL_REQUEST_EVENTS:
        workflow.notice(
            f"The run this gate follows was started by {run.event or 'an unknown event'}, not "
            "by a pull request: there is nothing to gate.",
            title="RagaliQ Gate",
        )
        return ExitCode.PASSED
    if review_without_data(settings):
        workflow.notice(
            "The review that started this run accepts nothing, so nothing ran: there is nothing "
            "to gate, and the pull request's status stays as it is.",
            title="RagaliQ Gate",
        )
        return ExitCode.PASSED
    job = _Job(
        settings=settings,
        env=judge_env,
        remote=remote,
        open_judge=open_judge,
        hardening=hardening,
        answers=AnswerRows(),
    )
    if settings.pull_request is None and run is None:  # a gate outside a pull request
        return _publish(settings, result, await _gate(job, result, None))
    targets = (settings.pull_request,) if run is None else remote.pull_requests_of(run)
    if not targets:
        assert run is not None
        raise ConfigError(
            f"no open pull request has commit {run.head_sha[:12]}, the head of the run this "
            "gate follows; it may have been closed, or pushed to since"
        )
    codes = []
    for i, target in enumerate(targets):
        assert target is not None
        publication = result if i == 0 else dataclasses.replace(result, status=None, retired=None)
        publication.aim(target)
        codes.append(await _gate_pull_request(job, publication, target))
    if len(codes) > 1:
        workflow.set_output("passed", "true" if set(codes) == {ExitCode.PASSED} else "false")
    return max(codes)


@dataclass(frozen=True, kw_only=True)
class _Job:
    """What every gate of one run shares: its settings, its collaborators, the judge answers."""

    settings: ActionSettings
    env: Mapping[str, str]
    """The environment the judge is built with (the inputs' key and endpoint in it)."""
    remote: Remote
    open_judge: JudgeOpener
    hardening: Hardening
    answers: AnswerRows
    """The signed answers every gate of the run reuses and adds to."""


async def _gate_pull_request(job: _Job, result: Publication, pr: PullRequest) -> ExitCode:
    """Gate one pull request against its own base; a failure is reported on it alone."""
    try:
        if job.settings.workflow_run is None:
            pr = job.remote.check_pull_request(pr)
            result.pull_request = pr
        gate = await _gate(job, result, pr)
    except RagaliqError as exc:
        said = str(exc) if f"#{pr.number}" in str(exc) else f"pull request #{pr.number}: {exc}"
        result.workflow.error(said, title="RagaliQ Gate")
        result.could_not_judge(str(exc))
        return ExitCode.UNJUDGED
    return _publish(job.settings, result, gate)


@dataclass(frozen=True, kw_only=True)
class _Gated:
    run: GateRun
    outputs: ResultFiles
    html_path: str


async def _gate(job: _Job, result: Publication, pr: PullRequest | None) -> _Gated:
    """The gate sequence on the pull request: where it may judge, what, and the decision."""
    settings, remote = job.settings, job.remote
    zone_notice = check_zone(settings, pr)
    work = WorkTree(settings.workspace)
    data = dataset_of(settings, remote, pr)
    result.set_status("pending", "judging the pull request's RAG outputs")
    finder = remote.baselines_of(pr.base_sha, pr.base_ref) if pr is not None else None
    plan = plan_gate(
        GateSetup(
            trusted=(
                work
                if pr is None
                else remote.files_at(pr.base_sha, f"the base commit {pr.base_sha[:12]}")
            ),
            proposal=proposal_source(settings, remote, pr, work),
            work=work,
            config_file=repo_path(settings.config, what="input config"),
            config_path=settings.workspace / settings.config,
            baseline_file=(
                repo_path(settings.baseline, what="input baseline") if settings.baseline else None
            ),
            dataset=data.path,
            dataset_option=DATASET_INPUT,
            base=pr.base if pr is not None else None,
            finder=finder,
        )
    )
    plan = _judge_for_key(plan, job.env)
    acceptances: tuple[Acceptance, ...] = ()
    review_notes: tuple[str, ...] = ()
    if pr is not None:
        acceptances, review_notes = remote.acceptances_of(pr, plan.inputs.config.gate)
        acceptances, bound = bind_acceptances(
            acceptances, settings=settings, remote=remote, pr=pr, data=data
        )
        review_notes += bound
    notices = [
        *zone_notice,
        *((data.notice.format(cases=_count(plan.inputs)),) if data.notice else ()),
        *job.hardening.notices,
        *review_notes,
    ]
    result.workflow.log(f"the bar: {plan.source}; the baseline: {plan.inputs.baseline_file}")
    outputs = ResultFiles.of(settings)
    check_writable(*outputs.paths, reads=plan.inputs.files)
    found = finder.found if finder is not None else None
    for note in gather_answers(job.answers, baseline=found, remote=remote):
        result.workflow.log(note)
    gate_run = await run_gate(
        plan,
        open_judge=job.open_judge,
        env=job.env,
        report_path=outputs.report,
        on_progress=ProgressPrinter(result.workflow.stream, live=False),
        comment_id=settings.comment_id,
        details_url=settings.run_url,
        report_artifact=outputs.html is not None,
        extra_notices=tuple(notices),
        acceptances=acceptances,
        answers=job.answers,
    )
    html_path = outputs.write(plan.inputs, gate_run.head, gate_run.decision)
    keep_answers(job.answers, outputs, skip=(BASELINE_ANSWERS,))
    return _Gated(run=gate_run, outputs=outputs, html_path=html_path)


def _publish(settings: ActionSettings, result: Publication, gate: _Gated) -> ExitCode:
    """Say what the gate decided everywhere it is read: summary, comment, status, outputs, log."""
    workflow, decision = result.workflow, gate.run.decision
    workflow.write_summary(gate.run.summary)
    comment_url = result.comment(gate.run.comment)
    result.set_status(*status_for(gate.run.exit_code, decision))
    set_outputs(
        workflow,
        passed=gate.run.exit_code is ExitCode.PASSED,
        report_path=gate.outputs.shown(gate.outputs.report),
        comment_url=comment_url,
        decision=decision,
        html_report_path=gate.html_path,
    )
    annotate(workflow, decision)
    for notice in decision.notices:
        workflow.notice(notice, title="RagaliQ Gate")
    workflow.log("")
    workflow.log("gate: PASSED" if decision.passed else "gate: FAILED")
    for failure in decision.failures:
        workflow.log(f"  {failure}")
    return gate.run.exit_code


def _count(inputs: Inputs) -> str:
    info = inputs.dataset_info
    return plural(info.cases if info is not None else len(inputs.cases), "case")


def _judge_for_key(plan: GatePlan, env: Mapping[str, str]) -> GatePlan:
    """The plan's judge when its key may be missing (a fork's run gets no secrets).

    ``gate.on_missing_key: offline`` judges with the offline judge instead; otherwise the pull
    request is reported not judged (exit 2, ``passed=false``, the status ``error``). A run whose
    evaluators ask the judge nothing (the retrieval metrics) needs no key: the offline judge
    stands in, never asked.

    Raises:
        ConfigError: no key, an evaluator asks the judge, and the policy is not ``offline``.
    """
    if has_credentials(plan.judge, env):
        return plan
    config = plan.inputs.config
    if config.gate.on_missing_key == "offline" or not judge_asked(config.evaluators):
        return plan.with_judge(plan.judge.model_copy(update={"provider": "offline"}))
    policy = config.gate
    raise ConfigError(
        "No Anthropic API key is available to this run, so the pull request was not judged "
        f"(gate.on_missing_key: {policy.on_missing_key}). Pass the anthropic-api-key input "
        "from a secret; pull requests from forks get secrets only in a workflow_run job "
        "(examples/workflows/ragaliq-forks.yml)"
    )

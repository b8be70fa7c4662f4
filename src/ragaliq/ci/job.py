"""The gate's job on a CI host, written once against the port: gate, record, keep, or follow.

:func:`run_job` is what a CI job of the gate does, whatever the host: with the job's settings
(:class:`~ragaliq.forge.JobSettings`, read by the adapter from the CI's environment), the host's
API (:class:`~ragaliq.forge.Host`) and the job's log, it gates the change the event names (or
every change a followed run's commit heads), records or keeps the base branch's baseline, or
gates again the changes that waited on a baseline that landed.

On a change the gate runs in the **trusted zone**: a job on a fresh runner that never ran the
change's code, with the base commit (or nothing) checked out and the dataset handed over as an
artifact. It refuses to judge anywhere else (:mod:`ragaliq.ci.zones`) unless the workflow says
``trust-pr-code: true``, and never reports a change nobody judged as passed
(:mod:`ragaliq.ci.publication`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime

from ragaliq._files import check_writable
from ragaliq.ci.acceptances import acceptances_of
from ragaliq.ci.answers import BASELINE_ANSWERS, answers_read, gather_answers, keep_answers
from ragaliq.ci.custody import RunRecordFinder
from ragaliq.ci.follow import (
    LEFT_WAITING,
    STALE,
    Landing,
    StatusSeen,
    plan_follow,
    stale_pending,
    unjudged,
    waiting,
)
from ragaliq.ci.outputs import ResultFiles
from ragaliq.ci.publication import (
    Publication,
    annotate,
    checked_comment_id,
    set_outputs,
    status_for,
)
from ragaliq.ci.recording import DATASET_INPUT, store_baseline, update_baseline
from ragaliq.ci.zones import CHANGE_RUNS, bind_acceptances, check_zone, dataset_of, proposal_source
from ragaliq.environment import Hardening
from ragaliq.errors import (
    BaselineMissingError,
    BaselinePendingError,
    ConfigError,
    DatasetMissingError,
    RagaliqError,
    UnsafeSetupError,
)
from ragaliq.exits import ExitCode
from ragaliq.forge import (
    NO_BASELINE,
    NO_DATASET,
    WAITING,
    Change,
    Host,
    JobSettings,
    answers_artifact,
    status_context,
)
from ragaliq.gate.acceptance import Acceptance
from ragaliq.gate_sequence import GateRun, GateSetup, HostWords, plan_gate, run_gate
from ragaliq.inputs import Inputs
from ragaliq.judges.answers import AnswerRows
from ragaliq.judges.factory import API_KEY_ENV, BASE_URL_ENV, JudgeOpener
from ragaliq.models import Usage
from ragaliq.redaction import register_secret
from ragaliq.report.markdown import ACCEPT_HINT
from ragaliq.report.progress import ProgressPrinter
from ragaliq.repository import WorkTree, repo_path
from ragaliq.store.kinds import open_store
from ragaliq.text.counts import plural

__all__ = ["EXPIRY_CHECKS", "run_job"]


EXPIRY_CHECKS = 20
"""Open changes into the base whose waiting status a gate checks, most recently updated first
(the follower checks every one it reads)."""


async def run_job(
    *,
    settings: JobSettings,
    env: Mapping[str, str],
    result: Publication,
    host: Host,
    open_judge: JudgeOpener,
    hardening: Hardening,
) -> ExitCode:
    """Run the gate (or record, keep or follow the baseline) and return the exit code.

    The host's own secrets (its token) are the adapter's to register and mask; the judge's key
    is registered and masked here.
    """
    workflow = result.workflow
    if settings.anthropic_api_key:
        register_secret(settings.anthropic_api_key)
        workflow.mask(settings.anthropic_api_key)
    if hardening.problem:
        raise ConfigError(hardening.problem)
    judge_env = dict(env)
    if settings.anthropic_api_key:
        judge_env[API_KEY_ENV] = settings.anthropic_api_key
    if settings.anthropic_base_url:
        judge_env[BASE_URL_ENV] = settings.anthropic_base_url
    checked_comment_id(settings.comment_id)
    if settings.mode == "update-baseline":
        return await update_baseline(settings, judge_env, workflow, open_judge, host)
    if settings.mode == "store-baseline":
        return store_baseline(settings, workflow, host)
    _refuse_foreign_inputs(settings, host)
    job = _job_of(settings, judge_env, host, open_judge, hardening)
    if settings.mode == "follow":
        return await _follow(job, result)
    if settings.mode == "sweep":
        return await _sweep(job, result)
    return await _gate_event(job, result)


def _refuse_foreign_inputs(settings: JobSettings, host: Host) -> None:
    """A job that judges with the key takes its inputs from its own definition only.

    Raises:
        UnsafeSetupError: whoever started the pipeline set variables of their own.
    """
    foreign = host.foreign_inputs() if settings.mode in ("gate", "follow", "sweep") else ()
    if foreign:
        raise UnsafeSetupError(
            f"this job got variables from whoever started its pipeline ({', '.join(foreign)}): "
            "the gate that holds the key takes its inputs from its own definition only. Run it "
            "from a schedule or a push that sets none, and let only maintainers set pipeline "
            "variables"
        )


async def _gate_event(job: _Job, result: Publication) -> ExitCode:
    """Gate the change the event names, or every open change the followed run's commit heads."""
    settings, host, workflow = job.settings, job.host, result.workflow
    run = settings.followed
    if run is not None and run.kind not in CHANGE_RUNS:
        workflow.notice(
            f"The run this gate follows was started by {run.kind or 'an unknown event'}, not "
            "by a pull request: there is nothing to gate.",
            title="RagaliQ Gate",
        )
        return ExitCode.PASSED
    if settings.review_without_data:
        workflow.notice(
            "The review that started this run accepts nothing, so nothing ran: there is nothing "
            "to gate, and the pull request's status stays as it is.",
            title="RagaliQ Gate",
        )
        return ExitCode.PASSED
    if settings.change is None and run is None:  # a gate outside a pull request
        return _publish(settings, result, await _gate(job, result, None))
    targets = (settings.change,) if run is None else host.changes_of_run(run)
    if not targets:
        assert run is not None
        raise ConfigError(
            f"no open pull request has commit {run.head_sha[:12]}, the head of the run this "
            "gate follows; it may have been closed, or pushed to since"
        )
    codes = []
    for i, target in enumerate(targets):
        assert target is not None
        publication = result if i == 0 else result.for_another(target)
        publication.aim(target)
        codes.append((await _gate_pull_request(job, publication, target)).code)
    if len(codes) > 1:
        workflow.set_output("passed", "true" if set(codes) == {ExitCode.PASSED} else "false")
    _expire_stale(job, result, targets[0].base_ref if targets[0] else "", skip=targets)
    return max(codes)


def _job_of(
    settings: JobSettings,
    env: Mapping[str, str],
    host: Host,
    open_judge: JudgeOpener,
    hardening: Hardening,
) -> _Job:
    return _Job(
        settings=settings,
        env=env,
        host=host,
        open_judge=open_judge,
        hardening=hardening,
        answers=AnswerRows(),
    )


async def _follow(job: _Job, result: Publication) -> ExitCode:
    """A baseline run of a branch ended: gate again the pull requests waiting on it.

    The follower's own job passes whatever the pull requests' gates decide (each has its own
    status); it fails only when it cannot do its work.
    """
    run = job.settings.followed
    if run is None or run.kind != "push" or not run.head_branch:
        raise ConfigError(
            "mode follow runs on the workflow_run event of the baseline workflow (a push run "
            "on the base branch); see ragaliq-follow.yml as `ragaliq init` writes it"
        )
    return await _gate_open_changes(job, result, run.head_branch, pick=waiting)


async def _sweep(job: _Job, result: Publication) -> ExitCode:
    """Gate every open change into the job's branch whose head has no verdict of the gate's yet.

    The trusted job of a host whose change pipelines run the change's own definition (GitLab):
    it finds the changes itself, through the API, on the protected default branch.
    """
    branch = job.settings.ref_name
    if not job.settings.event.trusted_branch or not branch:
        raise UnsafeSetupError(
            "mode sweep judges with the key, so it runs only in a pipeline of the protected "
            "default branch (a schedule, or a push), from that branch's own definition: run "
            "this job there, as `ragaliq init --ci gitlab` writes it"
        )
    return await _gate_open_changes(job, result, branch, pick=unjudged)


async def _gate_open_changes(
    job: _Job, result: Publication, branch: str, *, pick: Callable[[StatusSeen | None], bool]
) -> ExitCode:
    """Gate the open changes into ``branch`` that ``pick`` chooses by their status."""
    settings, host, workflow = job.settings, job.host, result.workflow
    context = status_context(settings.comment_id, branch)
    changes = []
    for pr in host.open_changes(branch):
        seen = host.latest_status(pr.head_sha, context)
        status = (
            StatusSeen(
                state=seen.state,
                description=seen.description,
                created_at=seen.created_at,
                reviewed_since=pick is unjudged and _reviewed_since(host, pr, seen.created_at),
            )
            if seen is not None
            else None
        )
        changes.append((pr, status))
    plan = plan_follow(changes, limit=settings.follow_limit, pick=pick)
    landing = Landing(branch=branch)
    for pr in plan.gate:
        gated = await _gate_pull_request(job, result.for_another(pr), pr)
        landing.add(f"#{pr.number}", gated.outcome, gated.usage)
    for pr in plan.left:
        result.for_another(pr).set_status("pending", f"{WAITING}: {LEFT_WAITING}")
        landing.left += 1
    _expire(result, plan.expired)
    landing.expired = len(plan.expired)
    workflow.write_summary(landing.summary())
    workflow.set_output("passed", "true")
    return ExitCode.PASSED


def _reviewed_since(host: Host, change: Change, since: datetime | None) -> bool:
    """Whether a reviewer's record with a command was written after ``since``."""
    if since is None:
        return False
    records, _ = host.reviews(change)
    return any(r.submitted_at is not None and r.submitted_at > since for r in records)


def _expire_stale(
    job: _Job, result: Publication, base_ref: str, *, skip: tuple[Change | None, ...]
) -> None:
    """After a gate: the other pull requests into its base whose ``pending`` waited too long.

    Reading them only saves a wait: a failure here is logged, never the gate's.
    """
    if not base_ref or not job.settings.commit_status:
        return
    context = status_context(job.settings.comment_id, base_ref)
    gated = {pr.number for pr in skip if pr is not None}
    try:
        expired = []
        for pr in job.host.open_changes(base_ref)[:EXPIRY_CHECKS]:
            if pr.number in gated:
                continue
            seen = job.host.latest_status(pr.head_sha, context)
            if seen is not None and stale_pending(
                StatusSeen(state=seen.state, description="", created_at=seen.created_at)
            ):
                expired.append(pr)
        _expire(result, tuple(expired))
    except RagaliqError as exc:
        result.workflow.log(f"waiting pull requests were not checked: {exc}")


def _expire(result: Publication, changes: tuple[Change, ...]) -> None:
    for pr in changes:
        result.for_another(pr).set_status("error", f"not judged: {STALE}")
        result.workflow.log(f"pull request #{pr.number}: {STALE}")


@dataclass(frozen=True, kw_only=True)
class _Job:
    """What every gate of one run shares: its settings, its collaborators, the judge answers."""

    settings: JobSettings
    env: Mapping[str, str]
    """The environment the judge is built with (the inputs' key and endpoint in it)."""
    host: Host
    open_judge: JudgeOpener
    hardening: Hardening
    answers: AnswerRows
    """The signed answers every gate of the run reuses and adds to."""


@dataclass(frozen=True, kw_only=True)
class _Outcome:
    """How one pull request's gate ended."""

    code: ExitCode
    outcome: str
    """In a few words, for the follower's summary."""
    usage: Usage | None = None
    passed: bool = False
    """Whether its status is ``success``: judged, and passed."""


async def _gate_pull_request(job: _Job, result: Publication, pr: Change) -> _Outcome:
    """Gate one pull request against its own base; a failure is reported on it alone.

    Where the host lets an approval stand for the gate, the gate approves a change that passed
    at its head, and takes its approval back from any other.
    """
    outcome = await _judge_change(job, result, pr)
    try:
        note = job.host.approve(pr, outcome.passed)
    except RagaliqError as exc:
        note = f"the gate's approval could not be set: {exc}"
    if note:
        result.workflow.log(note)
    return outcome


async def _judge_change(job: _Job, result: Publication, pr: Change) -> _Outcome:
    """Gate one change; how it ended."""
    try:
        if job.settings.followed is None:
            pr = job.host.check_change(pr)
            result.pull_request = pr
        gate = await _gate(job, result, pr)
    except BaselinePendingError as exc:
        result.wait_for_baseline(str(exc))
        # Nothing failed: the change is gated again when its baseline lands.
        return _Outcome(code=ExitCode.PASSED, outcome=f"still {WAITING}")
    except BaselineMissingError as exc:
        result.workflow.error(f"pull request #{pr.number}: {exc}", title="RagaliQ Gate")
        result.could_not_judge(f"{NO_BASELINE}: {exc}")
        return _Outcome(code=ExitCode.UNJUDGED, outcome=f"not judged: {NO_BASELINE}")
    except DatasetMissingError as exc:
        result.workflow.error(f"pull request #{pr.number}: {exc}", title="RagaliQ Gate")
        result.could_not_judge(f"{NO_DATASET}: {exc}")
        return _Outcome(code=ExitCode.UNJUDGED, outcome=f"not judged: {NO_DATASET}")
    except RagaliqError as exc:
        said = str(exc) if f"#{pr.number}" in str(exc) else f"pull request #{pr.number}: {exc}"
        result.workflow.error(said, title="RagaliQ Gate")
        result.could_not_judge(str(exc))
        return _Outcome(code=ExitCode.UNJUDGED, outcome="not judged")
    code = _publish(job.settings, result, gate)
    state, description = status_for(code, gate.run.decision)
    return _Outcome(
        code=code,
        outcome=f"{state}: {description}",
        usage=gate.run.head.usage,
        passed=state == "success",
    )


@dataclass(frozen=True, kw_only=True)
class _Gated:
    run: GateRun
    outputs: ResultFiles
    html_path: str


async def _gate(job: _Job, result: Publication, pr: Change | None) -> _Gated:
    """The gate sequence on the pull request: where it may judge, what, and the decision."""
    settings, host = job.settings, job.host
    zone_notice = check_zone(settings, pr)
    work = WorkTree(settings.workspace)
    data = dataset_of(settings, host, pr)
    trusted = (
        work if pr is None else host.files_at(pr.base_sha, f"the base commit {pr.base_sha[:12]}")
    )
    finder = (
        RunRecordFinder(
            records=lambda config: host.baseline_runs(pr.base_ref, config.workflow, trusted),
            store=lambda config: open_store(config, host.baseline_store),
            commit=pr.base_sha,
            branch=pr.base_ref,
            base=pr.base,
        )
        if pr is not None
        else None
    )
    plan = plan_gate(
        GateSetup(
            trusted=trusted,
            proposal=proposal_source(settings, host, pr, work),
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
            env=job.env,
        )
    )
    # Only once the bar is read: a change that waits for it says so in its first ``pending``
    # (a host such as GitLab keeps the first description of a pending status).
    result.set_status("pending", "judging the pull request's RAG outputs")
    acceptances: tuple[Acceptance, ...] = ()
    review_notes: tuple[str, ...] = ()
    if pr is not None:
        acceptances, review_notes = acceptances_of(host, pr, plan.inputs.config.gate)
        acceptances, bound = bind_acceptances(
            acceptances, settings=settings, host=host, pr=pr, data=data
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
    for note in gather_answers(job.answers, baseline=found, host=host, pr=pr):
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
        words=HostWords(
            comment_limit=host.profile.comment,
            summary_name=host.profile.summary_name,
            accept_hint=host.profile.accept_hint or ACCEPT_HINT,
        ),
        acceptances=acceptances,
        answers=job.answers,
    )
    for note in answers_read(job.answers):
        result.workflow.log(note)
    html_path = outputs.write(plan.inputs, gate_run.head, gate_run.decision, gate_run.comment)
    keep_answers(job.answers, outputs, skip=(BASELINE_ANSWERS,))
    if pr is not None:
        result.workflow.set_output("answers-artifact", answers_artifact(pr.number))
    return _Gated(run=gate_run, outputs=outputs, html_path=html_path)


def _publish(settings: JobSettings, result: Publication, gate: _Gated) -> ExitCode:
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

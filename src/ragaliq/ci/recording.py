"""Recording main's baseline in the action: judged in one step, kept in the store in another.

The baseline workflow runs on a push to the base branch, with that branch's own merged code:

1. ``mode: update-baseline`` judges the dataset and writes the baseline file, recording the
   commit and the run (:class:`~ragaliq.baseline.Origin`) in it, and gives its SHA-256 as the
   output ``baseline-digest``;
2. the workflow uploads the file as the artifact ``ragaliq-baseline-<digest>``: the proof, which
   only this run can give, that it recorded exactly this file;
3. ``mode: store-baseline`` checks that the artifact is there, then keeps the file (and the
   run's signed judge answers) on the data branch, never on the branch that triggered the run.

A gate trusts a stored baseline only after checking steps 1 and 2 through the API
(:mod:`ragaliq.github.provenance`), so someone who can push to the data branch cannot set the
bar.
"""

from __future__ import annotations

from collections.abc import Mapping

from ragaliq._files import check_writable
from ragaliq.baseline import MAX_BASELINE_BYTES, Origin, parse_baseline, write_baseline
from ragaliq.ci.answers import BASELINE_ANSWERS, keep_answers
from ragaliq.ci.outputs import ANSWERS_PATH, ResultFiles
from ragaliq.ci.publication import set_outputs
from ragaliq.config import BaselinesConfig
from ragaliq.errors import ConfigError, RagaliqError
from ragaliq.evaluators.registry import judge_asked
from ragaliq.exits import ExitCode
from ragaliq.forge import Host, JobLog, JobSettings, baseline_artifact
from ragaliq.gate_sequence import GateWatch
from ragaliq.inputs import load_inputs_from
from ragaliq.judges.answers import AnswerRows
from ragaliq.judges.factory import JudgeOpener, has_credentials
from ragaliq.judging import judge_with
from ragaliq.report.markdown import render_summary
from ragaliq.report.progress import ProgressPrinter
from ragaliq.repository import WorkTree, repo_path
from ragaliq.run_report import ReportFile
from ragaliq.store.kinds import kind_of, open_store
from ragaliq.store.layout import baseline_digest
from ragaliq.text.counts import plural
from ragaliq.trust import read_bar

__all__ = ["CONFIG_INPUT", "DATASET_INPUT", "store_baseline", "update_baseline"]

DATASET_INPUT = "the action's `dataset` input"
"""How messages name the dataset where the action runs."""
CONFIG_INPUT = "the action's `config` input"
"""How messages name the config where the action runs."""


async def update_baseline(
    settings: JobSettings,
    env: Mapping[str, str],
    workflow: JobLog,
    open_judge: JudgeOpener,
    host: Host,
) -> ExitCode:
    """Judge the workspace's dataset and write the baseline (a push to the base branch).

    Cases unchanged since the newest stored baseline cost nothing: its run's signed answers
    are read from the store, and this run's are written for the store-baseline step to keep.
    """
    work = WorkTree(settings.workspace)
    inputs = load_inputs_from(
        work,
        config_file=repo_path(settings.config, what="input config"),
        config_path=settings.workspace / settings.config,
        dataset=settings.dataset or None,
        dataset_option=DATASET_INPUT,
        config_option=CONFIG_INPUT,
    )
    explicit = repo_path(settings.baseline, what="input baseline") if settings.baseline else None
    baseline_file = explicit or inputs.baseline_file
    work.check(baseline_file, what="baseline")
    baseline_path = settings.workspace / baseline_file
    outputs = ResultFiles.of(settings)
    check_writable(*outputs.paths, baseline_path, reads=inputs.files)
    judge = inputs.config.judge
    if not has_credentials(judge, env) and not judge_asked(inputs.config.evaluators):
        judge = judge.model_copy(update={"provider": "offline"})  # asked nothing: no key needed
    if not has_credentials(judge, env):
        raise ConfigError(
            "mode update-baseline needs the judge the gate uses: set the anthropic-api-key "
            "input (or judge.provider: offline in the config)"
        )
    answers = AnswerRows()
    if kind_of(inputs.config.baselines).kept_apart:
        for note in _previous_answers(answers, host, inputs.config.baselines):
            workflow.log(note)
    watch = GateWatch.of(inputs, None)
    run = await judge_with(
        inputs,
        judge,
        open_judge=open_judge,
        env=env,
        report_path=outputs.report,
        sinks=watch.sinks,
        on_progress=ProgressPrinter(workflow.stream, live=False),
        answers=answers,
    )
    keep_answers(answers, outputs)
    rules = inputs.config.rules()
    origin = (
        Origin(repository=settings.repository, run_id=int(settings.run_id))
        if settings.repository and settings.run_id.isdigit()
        else None
    )
    write_baseline(
        baseline_path,
        head=run.head,
        cases=ReportFile(outputs.report).iter_cases(),
        commit=settings.sha or None,
        policy=rules.recorded(run.head.evaluators),
        origin=origin,
    )
    decision = watch.comparison.decide(run.head)
    html_path = outputs.write(inputs, run.head, decision)
    workflow.write_summary(render_summary(decision, report=run.head, cases=watch.digest))
    shown = outputs.shown(baseline_path)
    digest = baseline_digest(baseline_path.read_bytes())
    workflow.set_output("baseline-path", shown)
    workflow.set_output("baseline-digest", digest)
    set_outputs(
        workflow,
        passed=decision.passed,
        report_path=outputs.shown(outputs.report),
        comment_url="",
        decision=decision,
        html_report_path=html_path,
    )
    recorded = f"Baseline recorded in {shown} ({plural(run.head.summary.cases, 'case')})"
    hint = kind_of(inputs.config.baselines).record_hint.format(
        artifact=baseline_artifact(digest), branch=inputs.config.baselines.branch
    )
    workflow.notice(f"{recorded}; {hint}.")
    return ExitCode.PASSED


def _previous_answers(answers: AnswerRows, host: Host, store: BaselinesConfig) -> list[str]:
    """Load the answers kept with the newest stored baseline; what to log."""
    try:
        view = open_store(store, host.baseline_store).view()
        kept = view.answers() if view is not None else None
    except RagaliqError as exc:
        return [f"the stored baselines' judge answers were not read: {exc}"]
    if not kept:
        return []
    answers.load(kept, source=BASELINE_ANSWERS)
    return ["judge answers found in the baseline store, read once the judge's key checks them"]


def store_baseline(settings: JobSettings, workflow: JobLog, host: Host) -> ExitCode:
    """Keep the baseline this run recorded on the data branch the config names.

    Raises:
        ConfigError: the config keeps baselines in a file; the data branch is the branch this
            run is for; the file was not recorded by this run at this commit; this run uploaded
            no artifact named for its digest.
        BaselineError: the file is not a baseline.
        OutputError: the store refused it.
    """
    work = WorkTree(settings.workspace)
    config_file = repo_path(settings.config, what="input config")
    config = read_bar(
        trusted=work,
        proposal=work,
        config_file=config_file,
        with_baseline=False,
        config_option=CONFIG_INPUT,
    ).config
    store = config.baselines
    if not kind_of(store).kept_apart:
        raise ConfigError(
            f"mode store-baseline: {config_file} keeps baselines in a committed file "
            "(baselines.store: file); set baselines.store: branch to keep them on a data "
            "branch, or leave this step out"
        )
    if store.branch == settings.ref_name:
        raise ConfigError(
            f"{config_file}: baselines.branch is {store.branch}, the branch this run records "
            "the baseline of; baselines are kept on a branch of their own (ragaliq-baselines)"
        )
    path = (
        repo_path(settings.baseline, what="input baseline")
        if settings.baseline
        else repo_path(config.baseline, what="baseline")
    )
    data = work.read(path, limit=MAX_BASELINE_BYTES, what="baseline")
    if data is None:
        raise ConfigError(
            f"mode store-baseline: {path} is not in the workspace; run the action with mode: "
            "update-baseline first, in the same job"
        )
    baseline = parse_baseline(data, source=path)
    run_id = int(settings.run_id) if settings.run_id.isdigit() else 0
    if (
        baseline.commit != settings.sha
        or baseline.origin is None
        or (baseline.origin.run_id != run_id)
    ):
        raise ConfigError(
            f"mode store-baseline: {path} was not recorded by this run at {settings.sha[:12]}; "
            "keep only the baseline this job's update-baseline step wrote"
        )
    name = baseline_artifact(baseline_digest(data))
    if not host.uploaded(run_id, name):
        raise ConfigError(
            f"mode store-baseline: this run uploaded no artifact {name}, which shows gates that "
            "this run recorded the file; upload the baseline under that name before this step "
            "(see ragaliq-baseline.yml), with `permissions: actions: read` for the check"
        )
    answers = work.read(ANSWERS_PATH, limit=MAX_BASELINE_BYTES, what="judge answers")
    where = open_store(store, host.baseline_store).put(settings.sha, data, answers=answers)
    said = f"the baseline of {settings.ref_name}@{settings.sha[:7]} is kept on {where}"
    workflow.notice(f"Stored: {said}.", title="RagaliQ Gate")
    workflow.write_summary(f"## RagaliQ Gate: baseline stored\n\nStored: {said}.\n")
    return ExitCode.PASSED

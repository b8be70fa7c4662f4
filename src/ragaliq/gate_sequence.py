"""The gate as one sequence, the same for ``ragaliq gate``, the action and the trusted zone's job.

    bar ─► inputs ─► the baseline's judge and evaluators ─► judge ─► decide ─► comment, summary

The bar is read from the trusted source, the inputs take only the dataset from the change, and a
change can switch neither the judge nor an evaluator away from what the baseline measured.
:func:`plan_gate` does everything that can fail before a judge call (reading, validating,
choosing); :func:`run_gate` opens the judge, judges the inputs while the comparison watches each
case, closes the judge, and decides. The callers only say where things are (a
:class:`GateSetup`) and what to do with the result.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragaliq.baseline import Baseline
from ragaliq.config import GateConfig, JudgeConfig
from ragaliq.errors import ConfigError
from ragaliq.evaluators import build_evaluators
from ragaliq.evaluators.findings import Before
from ragaliq.evaluators.hallucination import HallucinatedClaims, newly_hallucinated
from ragaliq.evaluators.registry import judge_asked
from ragaliq.exits import ExitCode, gate_exit_code
from ragaliq.gate import Comparison, GateDecision
from ragaliq.gate.acceptance import Acceptance
from ragaliq.inputs import Inputs, load_gate_inputs
from ragaliq.judges.answers import AnswerRows
from ragaliq.judges.factory import JudgeOpener, has_credentials
from ragaliq.judging import CaseSink, JudgedRun, judge_inputs
from ragaliq.models import CaseResult, Progress, ReportHead
from ragaliq.policy import Budget
from ragaliq.report.markdown import CaseDigest, render_comment, render_summary
from ragaliq.repository import FileSource, WorkTree
from ragaliq.runner.confirm import ToConfirm, confirmable
from ragaliq.store.found import BaselineFinder
from ragaliq.store.kinds import kind_of
from ragaliq.trust import (
    Floor,
    MissingConfig,
    hold_to_baseline,
    judge_of_baseline,
    keep_baseline_evaluators,
    read_bar,
)

__all__ = [
    "FIRST_RUN_OFFLINE",
    "GatePlan",
    "GateRun",
    "GateSetup",
    "GateWatch",
    "HostWords",
    "choose_judge",
    "claims_to_confirm",
    "decide_gate",
    "plan_gate",
    "run_gate",
]


FIRST_RUN_OFFLINE = (
    "No API key reached this run, so the offline judge judged it (it needs none): it checks "
    "each claim's words, figures and names against the context, and lists what it cannot "
    "check. With a key (the repository secret ANTHROPIC_API_KEY, and judge.provider: claude in "
    "ragaliq.yaml), Claude judges every claim, relevance and the context's recall too."
)


@dataclass(frozen=True, kw_only=True)
class HostWords:
    """How the host's surfaces hold and name what the comment says."""

    comment_limit: int
    summary_name: str
    accept_hint: str

    def comment_options(self) -> dict[str, Any]:
        return {
            "limit": self.comment_limit,
            "summary_name": self.summary_name,
            "accept_hint": self.accept_hint,
        }


@dataclass(frozen=True, kw_only=True)
class GateSetup:
    """Where a gate reads each thing from."""

    trusted: FileSource
    """The bar's source: the base commit (git or the API), or the working tree without a base."""
    proposal: FileSource | None
    """The change's own files, read only for what they propose (tightening applies at once);
    None when they are not at hand."""
    work: WorkTree
    """The workspace: the judge cache lives here, and a dataset named by the config."""
    config_file: str
    """The config's repository path."""
    config_path: Path
    """The config on disk, for messages and so that no result overwrites it."""
    config_name: str | None = None
    """How to name the config in messages (the path the user gave)."""
    baseline_file: str | None = None
    """A baseline named explicitly (must exist), else the config's."""
    missing_config: MissingConfig = "as-read"
    """What a missing config means (:func:`~ragaliq.trust.read_bar`)."""
    dataset: str | Path | None = None
    """The dataset: a path on disk (an artifact's file, ``--dataset``), a repository path in the
    workspace, or None for the config's."""
    dataset_option: str = "--dataset"
    """How the user names the dataset where they run: ``--dataset``, or the action's input."""
    base: str | None = None
    """How messages name the base: ``main@1a2b3c4``."""
    finder: BaselineFinder | None = None
    """Reads the base's baseline from the data branch, when the trusted config keeps one there."""
    env: Mapping[str, str] | None = None
    """The environment the judge is built with, to tell whether its key is there; None: the
    judge's own rule for a missing key (``auto`` judges offline, saying so)."""


@dataclass(frozen=True, kw_only=True)
class GatePlan:
    """A gate ready to judge: the bar read, the inputs loaded, the judge chosen."""

    inputs: Inputs
    baseline: Baseline | None
    judge: JudgeConfig
    """The judge that keeps this run comparable with the baseline."""
    source: str
    """Where the bar was read: ``the base commit 1a2b3c4d5e6f``."""
    notices: tuple[str, ...] = ()
    """What choosing said: the baseline's judge, the evaluators a change may not turn off."""
    budget: Budget = dataclasses.field(default_factory=Budget)
    """What the run may spend: the config's, never more than the baseline recorded."""
    first_run: bool = False
    """The base has no config yet: the built-in defaults, and no bar protects the base."""


@dataclass(kw_only=True)
class GateWatch:
    """What the gate follows while a run goes: the comparison and the cases for the summary."""

    comparison: Comparison
    digest: CaseDigest

    @classmethod
    def of(
        cls, inputs: Inputs, baseline: Baseline | None, acceptances: tuple[Acceptance, ...] = ()
    ) -> GateWatch:
        """The comparison with ``baseline`` under the bar held to it, and reviewers' acceptances."""
        floor = floor_of(inputs.config, baseline)
        return cls(
            comparison=Comparison(
                baseline,
                rules=floor.rules,
                thresholds=floor.thresholds,
                notices=floor.notices,
                acceptances=acceptances,
                evaluators=build_evaluators(inputs.config.evaluators),
            ),
            digest=CaseDigest(),
        )

    @property
    def confirm(self) -> ToConfirm | None:
        """The claims to confirm before the gate decides, under the rules in force."""
        baseline = self.comparison.baseline
        if baseline is None or not self.comparison.rules.confirm_new_hallucinations:
            return None
        return claims_to_confirm(baseline)

    @property
    def sinks(self) -> tuple[CaseSink, ...]:
        """What the run hands each case to."""
        return (self.comparison, self.digest)


@dataclass(frozen=True, kw_only=True)
class GateRun:
    """A finished gate: the run, the decision, what to show and how to exit."""

    run: JudgedRun
    decision: GateDecision
    comment: str
    summary: str
    exit_code: ExitCode
    baseline_advice: str = ""
    """How to update the baseline with the store the bar names (Markdown)."""

    @property
    def head(self) -> ReportHead:
        """The run's report without its cases."""
        return self.run.head


def plan_gate(setup: GateSetup) -> GatePlan:
    """Read the bar and the inputs, and choose the judge; no judge is called.

    Raises:
        ConfigError, DatasetError, BaselineError, RepositoryError, TemplateError: as reading
            the bar and the inputs does.
    """
    bar = read_bar(
        trusted=setup.trusted,
        proposal=setup.proposal,
        config_file=setup.config_file,
        baseline_file=setup.baseline_file,
        config_name=setup.config_name,
        missing_config=setup.missing_config,
        base=setup.base,
        finder=setup.finder,
    )
    inputs = load_gate_inputs(  # registers the bar's own API key as a secret
        bar,
        work=setup.work,
        config_path=setup.config_path,
        dataset=setup.dataset,
        dataset_option=setup.dataset_option,
    )
    config, kept = keep_baseline_evaluators(inputs.config, bar.baseline)
    inputs = dataclasses.replace(inputs, config=config)
    judge, chosen = choose_judge(config, bar.baseline, env=setup.env, first_run=bar.first_run)
    return GatePlan(
        inputs=inputs,
        baseline=bar.baseline,
        judge=judge,
        source=bar.source.description,
        notices=(*chosen, *kept),
        budget=floor_of(config, bar.baseline).rules.budget,
        first_run=bar.first_run,
    )


def choose_judge(
    config: GateConfig,
    baseline: Baseline | None,
    *,
    env: Mapping[str, str] | None,
    first_run: bool,
) -> tuple[JudgeConfig, tuple[str, ...]]:
    """The judge of a gate, chosen once, and what choosing it says.

    The baseline's judge, so that the scores compare; asked interactively (a gate is waited on,
    even when runs batch). With ``env`` (a CI job), a judge whose key is missing: where the base
    has no config yet (the change that adds the gate), the offline judge, which needs none, with
    a notice of what a key would add; where it has one, ``gate.on_missing_key: offline`` (or
    evaluators that ask the judge nothing) takes the offline judge, and otherwise the change is
    not judged.

    Raises:
        ConfigError: no key, an evaluator asks the judge, and the policy is not ``offline``.
    """
    judge, recorded = judge_of_baseline(config.judge, baseline)
    notices = (recorded,) if recorded else ()
    if judge.batch:
        judge = judge.model_copy(update={"batch": False})
    if env is None or has_credentials(judge, env):
        return judge, notices
    offline = judge.model_copy(update={"provider": "offline"})
    if first_run:
        return offline, (*notices, FIRST_RUN_OFFLINE)
    if config.gate.on_missing_key == "offline" or not judge_asked(config.evaluators):
        return offline, notices
    raise ConfigError(
        "No Anthropic API key is available to this run, so the pull request was not judged "
        f"(gate.on_missing_key: {config.gate.on_missing_key}). Store the key as the repository "
        "secret ANTHROPIC_API_KEY, which the workflows `ragaliq init` wrote pass as the "
        "anthropic-api-key input (pull requests from forks get secrets only in "
        ".github/workflows/ragaliq-forks.yml's workflow_run job), or set gate.on_missing_key: "
        "offline in ragaliq.yaml to judge without one"
    )


async def run_gate(
    plan: GatePlan,
    *,
    open_judge: JudgeOpener,
    env: Mapping[str, str],
    report_path: Path | None,
    on_progress: Callable[[Progress], None] | None = None,
    comment_id: str = "default",
    details_url: str | None = None,
    report_artifact: bool = False,
    extra_notices: tuple[str, ...] = (),
    acceptances: tuple[Acceptance, ...] = (),
    words: HostWords | None = None,
    answers: AnswerRows | None = None,
) -> GateRun:
    """Judge the plan's inputs while the comparison watches, then decide and render.

    ``acceptances`` are reviewers' acceptances of findings at this commit, already checked for
    who gave them (:mod:`ragaliq.gate.acceptance`). ``answers`` is the store of signed judge
    answers to reuse and add to, in place of the config's cache file (the action's).
    ``report_artifact`` says that the run at ``details_url`` keeps the HTML report as an artifact.

    The gate's budget bounds the run (see :func:`~ragaliq.judging.judge_inputs`).

    Raises:
        BudgetError: the run, or one case, would pass the gate's budget; nothing was judged.
        JudgeUnavailableError: the judge cannot be used at all.
        OutputError: the report cannot be written.
        TemplateError: a template failed to render.
    """
    watch = GateWatch.of(plan.inputs, plan.baseline, acceptances)
    inputs = plan.inputs
    store = {"answers": answers} if answers is not None else {}
    async with open_judge(plan.judge, env=env, cache_path=inputs.cache_path, **store) as choice:
        run = await judge_inputs(
            inputs,
            choice=choice,
            judge_config=plan.judge,
            report_path=report_path,
            sinks=watch.sinks,
            on_progress=on_progress,
            budget=plan.budget,
            confirm=watch.confirm,
        )
    return decide_gate(
        plan.inputs,
        run=run,
        watch=watch,
        comment_id=comment_id,
        details_url=details_url,
        report_artifact=report_artifact,
        extra_notices=(*plan.notices, *extra_notices),
        words=words,
    )


def decide_gate(
    inputs: Inputs,
    *,
    run: JudgedRun,
    watch: GateWatch,
    comment_id: str = "default",
    details_url: str | None = None,
    report_artifact: bool = False,
    extra_notices: tuple[str, ...] = (),
    words: HostWords | None = None,
) -> GateRun:
    """Decide the gate for a finished run and render the comment and the summary.

    ``report_artifact``: the run at ``details_url`` keeps the HTML report as an artifact, and
    the comment says so.
    """
    decision = watch.comparison.decide(run.head)
    notices = (*inputs.notices, *extra_notices)
    if notices:
        decision = decision.model_copy(update={"notices": (*decision.notices, *notices)})
    advice = baseline_advice(inputs)
    comment = render_comment(
        decision,
        comment_id=comment_id,
        template=inputs.comment_template,
        details_url=details_url,
        report_artifact=report_artifact,
        baseline_advice=advice,
        **(words.comment_options() if words is not None else {}),
    )
    summary = render_summary(
        decision,
        report=run.head,
        cases=watch.digest,
        template=inputs.summary_template,
        baseline_advice=advice,
    )
    return GateRun(
        run=run,
        decision=decision,
        comment=comment,
        summary=summary,
        baseline_advice=advice,
        exit_code=gate_exit_code(run.head, decision),
    )


def baseline_advice(inputs: Inputs) -> str:
    """How a team updates the baseline with the store its config names."""
    settings = inputs.config.baselines
    return kind_of(settings).advice(settings, inputs.baseline_file)


def floor_of(config: GateConfig, baseline: Baseline | None) -> Floor:
    """The bar a run under ``config`` is held to against ``baseline``."""
    thresholds = {e.name: e.threshold for e in build_evaluators(config.evaluators)}
    return hold_to_baseline(thresholds, config.rules(), baseline)


def claims_to_confirm(baseline: Baseline) -> ToConfirm:
    """Which claims of a judged case would fail the gate against ``baseline``.

    The newly hallucinated ones a language model decided (:mod:`ragaliq.runner.confirm`).
    """
    index = baseline.by_id

    def to_confirm(case: CaseResult) -> tuple[int, ...]:
        recorded = index.get(case.id)
        before = (
            None
            if recorded is None
            else Before(
                input_hash=recorded.input_hash,
                status=recorded.status,
                kept=recorded.kept.get(HallucinatedClaims.name),
            )
        )
        new = {id(claim) for claim in newly_hallucinated(case, before) if confirmable(claim)}
        return tuple(i for i, claim in enumerate(case.claims) if id(claim) in new)

    return to_confirm

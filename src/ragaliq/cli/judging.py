"""The commands that judge: ``run``, ``validate`` and ``gate``."""

from __future__ import annotations

import asyncio
import dataclasses
import os
import sys
from pathlib import Path

import click

from ragaliq._files import check_writable
from ragaliq.action.hosts import gitlab_settings_check
from ragaliq.cli._common import (
    FilePath,
    collaborators,
    comment_id_option,
    config_option,
    dataset_option,
    echo,
    edge,
    explain_unjudged,
    missing_config,
    output_option,
    print_report,
    progress_printer,
    write_result,
)
from ragaliq.config import JudgeConfig
from ragaliq.errors import ConfigError
from ragaliq.evaluators import build_evaluators
from ragaliq.exits import ExitCode, run_exit_code, run_failures
from ragaliq.gate.acceptance import read_acceptances
from ragaliq.gate_sequence import GateSetup, plan_gate, run_gate
from ragaliq.inputs import Inputs, load_inputs
from ragaliq.judging import JudgedRun, empty_report, judge_with, kept_report
from ragaliq.models import Preflight
from ragaliq.policy import Budget
from ragaliq.preflight import preflight
from ragaliq.report import (
    format_decision,
    format_failing_cases,
    format_preflight,
    format_unchecked_claims,
)
from ragaliq.report.html import write_html
from ragaliq.report.junit import write_junit
from ragaliq.report.openmetrics import write_metrics
from ragaliq.repository import (
    ConfigLocation,
    GitCommit,
    WorkTree,
    git_toplevel,
    inside,
    repo_path,
)
from ragaliq.run_report import ReportFile, write_report
from ragaliq.scaffold import followed_workflows
from ragaliq.shards import Shard, parse_shard, shard_budget, shard_cases
from ragaliq.store.local import LOCAL_STORE, local_finder
from ragaliq.text.counts import plural
from ragaliq.text.plain import one_line
from ragaliq.trust import base_source

__all__ = ["DEFAULT_COMMENT_FILE", "gate", "judge", "run", "validate"]

DEFAULT_COMMENT_FILE = ".ragaliq/comment.md"
"""Where ``ragaliq gate`` writes the PR comment, relative to the config's folder."""


async def judge(
    inputs: Inputs,
    judge_config: JudgeConfig,
    *,
    report_path: Path | None,
    shard: str | None = None,
    budget: Budget | None = None,
) -> JudgedRun:
    """Open the judge, judge the inputs writing the report as it goes, close the judge."""
    world = collaborators()
    return await judge_with(
        inputs,
        judge_config,
        open_judge=world.open_judge,
        env=world.env,
        report_path=report_path,
        on_progress=progress_printer(),
        shard=shard,
        budget=budget,
    )


def _gate_budget(budget: Budget, shard: Shard | None) -> Budget:
    return budget if shard is None else shard_budget(budget, shard)


async def _plan(inputs: Inputs, config: JudgeConfig) -> Preflight:
    world = collaborators()
    async with world.open_judge(config, env=world.env, cache_path=inputs.cache_path) as choice:
        return preflight(
            inputs.cases,
            judge=choice.judge,
            evaluators=build_evaluators(inputs.config.evaluators),
            repeat=config.repeat,
            notices=choice.all_notices(),
        )


def _shard_option(_ctx: click.Context, _param: click.Parameter, value: str | None) -> Shard | None:
    if value is None:
        return None
    try:
        return parse_shard(value)
    except ConfigError as exc:
        raise click.BadParameter(str(exc).removeprefix("--shard: ")) from exc


@click.command()
@config_option
@dataset_option
@output_option
@click.option(
    "--shard",
    default=None,
    callback=_shard_option,
    help="Judge only shard K of N (e.g. 2/8), a stable partition by case id.",
)
@click.option(
    "--dry-run",
    is_flag=True,
    help="Print the cases, expected cache hits, judge calls, tokens and USD; call no judge.",
)
@click.option(
    "--batch",
    is_flag=True,
    help="Send the judge's requests as Message Batches (judge.batch): every token at half "
    "price, answers in minutes to hours; an interrupted run resumes without paying twice.",
)
@click.option(
    "--gate-budget",
    is_flag=True,
    help="Hold the run to the config's gate.budget, as a gate is: each case to its budget per "
    "case, the run (a shard: 1/N of it) to its budget per run. For the shards of a gate.",
)
@edge
def run(
    config_path: Path,
    dataset: Path | None,
    output: Path | None,
    shard: Shard | None,
    dry_run: bool,
    batch: bool,
    gate_budget: bool,
) -> None:
    """Judge a dataset, print a score table and write the report.

    Exit code 0 when every evaluator reaches its threshold, 1 when one does not (or cases
    failed to judge), 2 when nothing could be judged. A shard (--shard) exits 0 once judged:
    thresholds and case errors are for the merged report (ragaliq merge, then ragaliq compare).
    """
    inputs = load_inputs(config_path, dataset, missing_config=missing_config())
    judge_config = inputs.config.judge
    if batch:
        judge_config = judge_config.model_copy(update={"batch": True})
    for notice in inputs.notices:
        echo(f"notice: {notice}", err=True)
    if not dry_run:
        check_writable(output, reads=inputs.files)
    if shard is not None:
        inputs = dataclasses.replace(inputs, cases=shard_cases(inputs.cases, shard))
        if not len(inputs.cases):
            echo(f"shard {shard}: no cases fall in this shard; nothing to judge")
            report = empty_report(inputs, env=collaborators().env)
            if output is not None:
                write_report(output, report.model_copy(update={"shard": str(shard)}))
                echo(f"report written to {output}")
            sys.exit(ExitCode.PASSED)
    if dry_run:
        echo(format_preflight(asyncio.run(_plan(inputs, judge_config))))
        sys.exit(ExitCode.PASSED)
    run = asyncio.run(
        judge(
            inputs,
            judge_config,
            report_path=output,
            shard=str(shard) if shard is not None else None,
            budget=_gate_budget(inputs.config.gate.budget, shard) if gate_budget else None,
        )
    )
    print_report(run)
    passed = run_exit_code(run.head, inputs.config.gate) is ExitCode.PASSED
    failing = format_failing_cases(run.failing, total=run.failing_count, run_passed=passed)
    if failing:
        echo(f"\n{failing}")
    unchecked = format_unchecked_claims(run.unchecked, total=run.unchecked_count)
    if unchecked:
        echo(f"\n{unchecked}")
    if output is not None:
        echo(f"report written to {output}")
    code = run_exit_code(run.head, inputs.config.gate, shard=shard is not None)
    if shard is not None and run_exit_code(run.head, inputs.config.gate) is ExitCode.FAILED:
        echo(
            f"shard {shard}: thresholds and case errors are applied to the merged report "
            "(ragaliq merge, then ragaliq compare), so this shard exits 0"
        )
    explain_unjudged(run.head, code)
    if code is ExitCode.FAILED:
        for failure in run_failures(run.head, inputs.config.gate):
            echo(f"failed: {one_line(failure)}")
    sys.exit(code)


@click.command()
@config_option
@dataset_option
@click.option(
    "--gitlab-project",
    default=None,
    help="The GitLab project (id or group/name) whose settings are checked when the repository "
    "has a .gitlab-ci.yml [default: CI_PROJECT_ID, else CI_PROJECT_PATH].",
)
@edge
def validate(config_path: Path, dataset: Path | None, gitlab_project: str | None) -> None:
    """Check the config and the dataset without judging anything."""
    inputs = load_inputs(config_path, dataset, keep_cases=False, missing_config=missing_config())
    names = [e.name for e in build_evaluators(inputs.config.evaluators)]
    for notice in inputs.notices:
        echo(f"notice: {notice}", err=True)
    for warning in followed_workflows(inputs.root):
        echo(f"warning: {warning}", err=True)
    if (inputs.root / ".gitlab-ci.yml").is_file():
        said = gitlab_settings_check(os.environ, gitlab_project)
        if said:
            echo(said, err=True)
    info = inputs.dataset_info
    read = f"{plural(info.cases, 'case')}, {info.description}" if info else "no cases read"
    config = str(config_path) if config_path.exists() else "the built-in defaults"
    echo(
        f"{config}: ok ({', '.join(names) or 'no evaluators'}); {inputs.dataset_path}: ok ({read})"
    )


@click.command(short_help="Judge, compare with the baseline, write the comment.")
@config_option
@dataset_option
@click.option(
    "--base",
    "base_ref",
    default="auto",
    show_default=True,
    help="Where the bar (config, baseline, templates) is read from, as in the action: a git "
    "commit, branch or tag; 'auto' is the merge base with the default branch when git knows "
    "one, else the working tree; 'none' is the working tree.",
)
@click.option(
    "--baseline",
    "baseline_path",
    type=FilePath,
    default=None,
    help="The baseline, a file of the repository read at --base [default: the config's "
    "'baseline']. A baseline named here must exist.",
)
@output_option
@click.option("--decision-out", type=FilePath, default=None, help="Write the decision (JSON).")
@click.option(
    "--comment-out",
    "--markdown",
    type=FilePath,
    default=None,
    help=f"Write the PR comment (Markdown) [default: {DEFAULT_COMMENT_FILE} beside the config, "
    "where its .gitignore keeps it out of git].",
)
@click.option("--summary-out", type=FilePath, default=None, help="Write the job summary.")
@click.option("--html-out", type=FilePath, default=None, help="Write the HTML report.")
@click.option(
    "--junit",
    "junit_out",
    type=FilePath,
    default=None,
    help="Write JUnit XML: each case a test case, each evaluator and the gate one too "
    "(docs/any-ci.md).",
)
@click.option(
    "--metrics",
    "metrics_out",
    type=FilePath,
    default=None,
    help="Write OpenMetrics text: each evaluator's head, baseline and delta; the judge's "
    "calls, tokens and cost.",
)
@click.option(
    "--acceptances",
    "acceptances_path",
    type=FilePath,
    default=None,
    help="Reviewers' acceptances of findings, as the action reads them from reviews: a YAML "
    "file `acceptances: [{by: <login>, claims: [<claim id>, ...] | all}]`.",
)
@click.option(
    "--offline",
    is_flag=True,
    help="Judge with the offline judge, whatever the config names: no key needed, and its "
    "scores do not compare with a Claude baseline (a keyless preview).",
)
@comment_id_option
@edge
def gate(
    config_path: Path,
    dataset: Path | None,
    base_ref: str,
    baseline_path: Path | None,
    output: Path | None,
    decision_out: Path | None,
    comment_out: Path | None,
    summary_out: Path | None,
    html_out: Path | None,
    junit_out: Path | None,
    metrics_out: Path | None,
    acceptances_path: Path | None,
    offline: bool,
    comment_id: str,
) -> None:
    """Judge, compare with the baseline and render the comment: the gate, run locally.

    With --offline the offline judge judges, whatever the config names, and no key is read.

    As in the action, the bar (the config, the baseline and templates) is read at --base and
    only the dataset from the working tree; your uncommitted config changes are shown as
    proposals, and those that tighten the bar apply at once. Without a baseline only the
    thresholds apply, and the comment lists every hallucinated claim. Exit code 0 when the gate
    passes, 1 when it fails, 2 when nothing could be judged.
    """
    location = ConfigLocation.of(config_path)
    root = location.root
    if comment_out is None:
        comment_out = location.local(DEFAULT_COMMENT_FILE, what="--comment-out")
    _say_when_not_a_repository(root, base_ref)
    work = WorkTree(root)
    explicit = None
    if baseline_path is not None:
        explicit = repo_path(inside(root, baseline_path, what="--baseline"), what="--baseline")
    trusted = base_source(root, base_ref)
    finder = None
    if isinstance(trusted, GitCommit):
        finder = local_finder(
            root=root,
            folder=root / location.path(LOCAL_STORE, what="the local baseline store"),
            commit=trusted.sha,
            base=trusted.description,
        )
    plan = plan_gate(
        GateSetup(
            trusted=trusted,
            proposal=work,
            work=work,
            config_file=location.file,
            config_path=config_path,
            config_name=str(config_path),
            baseline_file=explicit,
            missing_config=missing_config(),
            dataset=dataset,
            finder=finder,
        )
    )
    if offline:
        plan = dataclasses.replace(
            plan,
            judge=plan.judge.model_copy(update={"provider": "offline"}),
            notices=(*plan.notices, OFFLINE_ON_REQUEST),
        )
    inputs = plan.inputs
    acceptances = read_acceptances(acceptances_path) if acceptances_path is not None else ()
    if finder is not None and finder.found is not None:
        echo(f"the bar: read at {plan.source}; {finder.found.description}")
    else:
        found = "found" if plan.baseline is not None else "not there, so only the thresholds apply"
        echo(f"the bar: read at {plan.source}; the baseline: {inputs.baseline_file} ({found})")
    check_writable(
        output,
        decision_out,
        comment_out,
        summary_out,
        html_out,
        junit_out,
        metrics_out,
        reads=inputs.files,
    )
    world = collaborators()
    needed = html_out is not None or junit_out is not None
    with kept_report(output, needed=needed) as report_path:
        gate_run = asyncio.run(
            run_gate(
                plan,
                open_judge=world.open_judge,
                env=world.env,
                report_path=report_path,
                on_progress=progress_printer(),
                comment_id=comment_id,
                acceptances=acceptances,
            )
        )
        print_report(gate_run.run)
        echo("")
        echo(format_decision(gate_run.decision, shown_notices=gate_run.head.notices))
        echo(f"to update the baseline: {gate_run.baseline_advice.replace('`', '')}")
        if output is not None:
            echo(f"report written to {output}")
        write_result(decision_out, gate_run.decision.model_dump_json(indent=2), "decision")
        write_result(comment_out, gate_run.comment, "comment")
        write_result(summary_out, gate_run.summary, "summary")
        if html_out is not None and report_path is not None:
            write_html(
                html_out,
                head=gate_run.head,
                cases=ReportFile(report_path).iter_cases(),
                decision=gate_run.decision,
                dataset=inputs.cases,
            )
            echo(f"HTML report written to {html_out}")
        if junit_out is not None and report_path is not None:
            write_junit(junit_out, gate_run.decision, ReportFile(report_path).iter_cases())
            echo(f"JUnit XML written to {junit_out}")
        if metrics_out is not None:
            write_metrics(metrics_out, gate_run.decision)
            echo(f"metrics written to {metrics_out}")
    explain_unjudged(gate_run.head, gate_run.exit_code)
    sys.exit(gate_run.exit_code)


OFFLINE_ON_REQUEST = (
    "Judged by the offline judge on request (--offline), whatever the config names: a keyless "
    "preview, whose scores do not compare with a baseline another judge recorded."
)
"""What a gate run with ``--offline`` says."""


def _say_when_not_a_repository(root: Path, base_ref: str) -> None:
    """Outside git there is no base commit: say so, rather than what follows from it.

    Raises:
        ConfigError: ``--base`` names a commit, which cannot be read outside a repository.
    """
    if git_toplevel(root) is not None:
        return
    if base_ref not in ("auto", "none"):
        raise ConfigError(
            f"--base {base_ref}: {root} is not in a git repository, so there is no commit to "
            "read the bar from; run the gate inside the repository, or pass --base none"
        )
    if base_ref == "auto":
        echo(
            f"notice: {root} is not in a git repository, so the bar (config, baseline, "
            "templates) is read from the working tree, as with --base none.",
            err=True,
        )

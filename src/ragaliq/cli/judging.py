"""The commands that judge: ``run``, ``validate`` and ``gate``."""

from __future__ import annotations

import asyncio
import dataclasses
import sys
from pathlib import Path

import click

from ragaliq._files import check_writable
from ragaliq.cli._common import (
    FilePath,
    collaborators,
    comment_id_option,
    config_option,
    dataset_option,
    echo,
    edge,
    explain_unjudged,
    output_option,
    print_report,
    progress_printer,
    write_result,
)
from ragaliq.config import JudgeConfig
from ragaliq.errors import ConfigError
from ragaliq.evaluators import build_evaluators
from ragaliq.exits import ExitCode, run_exit_code
from ragaliq.models import Preflight, RunReport
from ragaliq.pipeline import (
    Inputs,
    baseline_judge,
    empty_report,
    judge_inputs,
    keep_baseline_evaluators,
    load_gate_inputs,
    load_inputs,
    local_root,
    repo_relative,
    run_gate,
)
from ragaliq.preflight import preflight
from ragaliq.report import format_decision, format_preflight
from ragaliq.report._format import plural
from ragaliq.report.html import render_html_report
from ragaliq.repository import WorkTree, repo_path
from ragaliq.shards import Shard, parse_shard, shard_cases
from ragaliq.trust import base_source, read_bar

__all__ = ["gate", "judge", "run", "validate"]


async def judge(inputs: Inputs, judge_config: JudgeConfig) -> RunReport:
    """Open the judge, judge the inputs, close the judge."""
    world = collaborators()
    async with world.open_judge(
        judge_config, env=world.env, cache_path=inputs.cache_path
    ) as choice:
        return await judge_inputs(
            inputs, choice=choice, judge_config=judge_config, on_progress=progress_printer()
        )


async def _plan(inputs: Inputs) -> Preflight:
    world = collaborators()
    config = inputs.config.judge
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
@edge
def run(
    config_path: Path,
    dataset: Path | None,
    output: Path | None,
    shard: Shard | None,
    dry_run: bool,
) -> None:
    """Judge a dataset, print a score table and write the report.

    Exit code 0 when every evaluator reaches its threshold, 1 when one does not (or cases
    failed to judge), 2 when nothing could be judged. A shard (--shard) exits 0 once judged:
    thresholds and case errors are for the merged report (ragaliq merge, then ragaliq compare).
    """
    inputs = load_inputs(config_path, dataset)
    for notice in inputs.notices:
        echo(f"notice: {notice}", err=True)
    if not dry_run:
        check_writable(output, reads=inputs.files)
    if shard is not None:
        inputs = dataclasses.replace(inputs, cases=shard_cases(inputs.cases, shard))
        if not inputs.cases:
            echo(f"shard {shard}: no cases fall in this shard; nothing to judge")
            report = empty_report(inputs, env=collaborators().env)
            write_result(output, report.model_dump_json(indent=2), "report")
            sys.exit(ExitCode.PASSED)
    if dry_run:
        echo(format_preflight(asyncio.run(_plan(inputs))))
        sys.exit(ExitCode.PASSED)
    report = asyncio.run(judge(inputs, inputs.config.judge))
    if shard is not None:
        report = report.model_copy(update={"shard": str(shard)})
    print_report(report)
    write_result(output, report.model_dump_json(indent=2), "report")
    code = run_exit_code(report, inputs.config.gate, shard=shard is not None)
    if shard is not None and run_exit_code(report, inputs.config.gate) is ExitCode.FAILED:
        echo(
            f"shard {shard}: thresholds and case errors are applied to the merged report "
            "(ragaliq merge, then ragaliq compare), so this shard exits 0"
        )
    explain_unjudged(report, code)
    sys.exit(code)


@click.command()
@config_option
@dataset_option
@edge
def validate(config_path: Path, dataset: Path | None) -> None:
    """Check the config and the dataset without judging anything."""
    inputs = load_inputs(config_path, dataset, keep_cases=False)
    names = [e.name for e in build_evaluators(inputs.config.evaluators)]
    for notice in inputs.notices:
        echo(f"notice: {notice}", err=True)
    info = inputs.dataset_info
    read = f"{plural(info.cases, 'case')}, {info.description}" if info else "no cases read"
    echo(
        f"{config_path}: ok ({', '.join(names) or 'no evaluators'}); "
        f"{inputs.dataset_path}: ok ({read})"
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
    type=FilePath,
    default=Path(".ragaliq/comment.md"),
    show_default=True,
    help="Write the PR comment (Markdown).",
)
@click.option("--summary-out", type=FilePath, default=None, help="Write the job summary.")
@click.option("--html-out", type=FilePath, default=None, help="Write the HTML report.")
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
    comment_id: str,
) -> None:
    """Judge, compare with the baseline and render the comment: the gate, run locally.

    As in the action, the bar (the config, the baseline and templates) is read at --base and
    only the dataset from the working tree; your uncommitted config changes are shown as
    proposals, and those that tighten the bar apply at once. Without a baseline only the
    thresholds apply, and the comment lists every hallucinated claim. Exit code 0 when the gate
    passes, 1 when it fails, 2 when nothing could be judged.
    """
    root = local_root(config_path)
    work = WorkTree(root)
    explicit = None
    if baseline_path is not None:
        explicit = repo_path(
            repo_relative(root, baseline_path, what="--baseline"), what="--baseline"
        )
    bar = read_bar(
        trusted=base_source(root, base_ref),
        work=work,
        config_file=repo_relative(root, config_path, what="--config"),
        baseline_file=explicit,
        config_name=str(config_path),
    )
    inputs = load_gate_inputs(bar, work=work, config_path=config_path, dataset=dataset)
    check_writable(output, decision_out, comment_out, summary_out, html_out, reads=inputs.files)
    judge_config, chosen = baseline_judge(inputs, bar.baseline)
    inputs, kept = keep_baseline_evaluators(inputs, bar.baseline)
    report = asyncio.run(judge(inputs, judge_config))
    outcome = run_gate(
        inputs,
        report=report,
        baseline=bar.baseline,
        comment_id=comment_id,
        extra_notices=(*chosen, *kept),
    )
    print_report(report)
    echo("")
    echo(format_decision(outcome.decision, shown_notices=report.notices))
    write_result(output, report.model_dump_json(indent=2), "report")
    write_result(decision_out, outcome.decision.model_dump_json(indent=2), "decision")
    write_result(comment_out, outcome.comment, "comment")
    write_result(summary_out, outcome.summary, "summary")
    if html_out is not None:
        html = render_html_report(report, decision=outcome.decision, cases=inputs.cases)
        write_result(html_out, html, "HTML report")
    explain_unjudged(report, outcome.exit_code)
    sys.exit(outcome.exit_code)

"""Recording the baseline the gate compares pull requests with.

``baseline record`` judges the dataset and records the run; ``baseline update`` records a run
report already judged.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterator
from pathlib import Path

import click

from ragaliq._files import check_writable
from ragaliq.baseline import DEFAULT_BASELINE_PATH, write_baseline
from ragaliq.cli._common import (
    FilePath,
    config_option,
    config_or_default,
    dataset_option,
    echo,
    edge,
    explain_unjudged,
    missing_config,
    print_report,
)
from ragaliq.cli.judging import judge
from ragaliq.config import GateConfig
from ragaliq.exits import ExitCode, run_exit_code
from ragaliq.git import head_commit
from ragaliq.inputs import load_inputs
from ragaliq.judging import kept_report
from ragaliq.models import CaseResult, ReportHead
from ragaliq.repository import ConfigLocation
from ragaliq.run_report import ReportFile
from ragaliq.store.kinds import kind_of
from ragaliq.store.local import LOCAL_STORE, local_store
from ragaliq.text.counts import plural

__all__ = ["baseline"]


@click.group()
def baseline() -> None:
    """Record the baseline the gate compares pull requests with."""


@baseline.command("update")
@click.option("--report", "report_path", type=FilePath, required=True, help="A run report.")
@click.option(
    "-o",
    "--output",
    type=FilePath,
    default=None,
    help="Where to write the baseline [default: the config's 'baseline', else "
    f"{DEFAULT_BASELINE_PATH}].",
)
@config_option
@click.option("--allow-errors", is_flag=True, help="Record a run that has case errors.")
@click.option("--commit", default=None, help="The commit the report was produced on.")
@edge
def baseline_update(
    report_path: Path,
    output: Path | None,
    config_path: Path,
    allow_errors: bool,
    commit: str | None,
) -> None:
    """Record a run report as the baseline (written atomically), whatever its scores.

    To judge and record in one step, use `ragaliq baseline record`.
    """
    report = ReportFile(report_path)
    config = config_or_default(config_path)
    if output is None:
        output = ConfigLocation.of(config_path).local(config.baseline, what="baseline")
    check_writable(output, reads=(report_path, config_path))
    record(report.head, report.iter_cases(), output, config_path, config, allow_errors, commit)


def record(
    head: ReportHead,
    cases: Iterator[CaseResult],
    output: Path,
    config_path: Path,
    config: GateConfig,
    allow_errors: bool,
    commit: str | None,
) -> None:
    """Write the baseline of a run and say so."""
    if not config_path.exists():
        echo(
            f"note: no {config_path}, so no gate policy is recorded; pass --config to record "
            "the max_drop and failure rules a PR may not loosen",
            err=True,
        )
    policy = config.rules().recorded(head.evaluators) if config_path.exists() else None
    location = ConfigLocation.of(config_path)
    store = config.baselines
    kept_apart = kind_of(store).kept_apart
    head_sha = head_commit(location.root) if kept_apart else None
    write_baseline(
        output,
        head=head,
        cases=cases,
        allow_errors=allow_errors,
        commit=commit or head_sha,
        policy=policy,
    )
    said = (
        f"baseline written to {output} ({plural(head.summary.cases, 'case')}, judge "
        f"{head.judge.provider}/{head.judge.model})"
    )
    if not kept_apart:
        echo(
            f"{said}; commit it to the default branch: the gate reads the baseline at each pull "
            "request's base commit, not from the working tree"
        )
        return
    if head_sha is None or (commit and commit != head_sha):
        echo(
            f"{said}. It is not kept for `ragaliq gate`: the store keeps a baseline per commit, "
            "and this one is not of the checked-out commit"
        )
        return
    folder = location.root / location.path(LOCAL_STORE, what="the local baseline store")
    local_store(folder, store).put(head_sha, output.read_bytes())
    echo(
        f"{said}, and kept in {folder} as the baseline of {head_sha[:12]} for `ragaliq gate` on "
        f"this machine. Main's baselines come from its baseline workflow ({store.workflow}), "
        f"which keeps them on {store.branch}"
    )


@baseline.command("record")
@config_option
@dataset_option
@click.option(
    "-o",
    "--output",
    type=FilePath,
    default=None,
    help="Where to write the baseline [default: the config's 'baseline'].",
)
@click.option(
    "--report", "report_out", type=FilePath, default=None, help="Also keep the run report here."
)
@click.option("--allow-errors", is_flag=True, help="Record a run that has case errors.")
@click.option("--commit", default=None, help="The commit the dataset was produced on.")
@edge
def baseline_record(
    config_path: Path,
    dataset: Path | None,
    output: Path | None,
    report_out: Path | None,
    allow_errors: bool,
    commit: str | None,
) -> None:
    """Judge the dataset and record the run as the baseline, whatever its scores.

    The way to record a baseline on main by hand: unlike `ragaliq run`, a score below its
    threshold does not stop the recording (the gate's job is to compare later runs with it).
    Exit code 0 once recorded, 2 when the run could not be judged or had case errors.
    """
    inputs = load_inputs(config_path, dataset, missing_config=missing_config())
    for notice in inputs.notices:
        echo(f"notice: {notice}", err=True)
    config = inputs.config
    target = output or ConfigLocation.of(config_path).local(config.baseline, what="baseline")
    check_writable(target, report_out, reads=inputs.files)
    with kept_report(report_out, needed=True) as report_path:
        assert report_path is not None  # needed: a temporary file at least
        run = asyncio.run(judge(inputs, config.judge, report_path=report_path))
        print_report(run)
        if run_exit_code(run.head, config.gate) is ExitCode.UNJUDGED:
            explain_unjudged(run.head, ExitCode.UNJUDGED)
            sys.exit(ExitCode.UNJUDGED)
        record(
            run.head,
            ReportFile(report_path).iter_cases(),
            target,
            config_path,
            config,
            allow_errors,
            commit,
        )
    if report_out is not None:
        echo(f"report written to {report_out}")

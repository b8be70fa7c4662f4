"""The ``ragaliq`` command line: thin commands over the library's glue functions.

Errors of the :class:`~ragaliq.errors.RagaliqError` tree become one line on stderr and exit
code 2; ``--debug`` shows the traceback as well.
"""

from __future__ import annotations

import asyncio
import functools
import os
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

import click

from ragaliq import __version__
from ragaliq._files import write_atomic
from ragaliq.config import DEFAULT_CONFIG_FILE, GateConfig, config_json_schema, load_config
from ragaliq.dataset import load_dataset
from ragaliq.errors import ConfigError, RagaliqError
from ragaliq.evaluators import build_evaluators
from ragaliq.judges import build_judge
from ragaliq.models import RunReport, TestCase
from ragaliq.outcome import ExitCode, run_exit_code
from ragaliq.report import format_run_table
from ragaliq.runner import RunSettings, run_suite

__all__ = ["main"]

P = ParamSpec("P")
R = TypeVar("R")


@dataclass(frozen=True, kw_only=True)
class Inputs:
    """A validated config and dataset, ready to judge."""

    config: GateConfig
    config_dir: Path
    dataset_path: Path
    cases: list[TestCase]


def load_inputs(config_path: Path, dataset: Path | None) -> Inputs:
    """Load and validate the config and the dataset it names (or ``dataset``)."""
    config = load_config(config_path)
    config_dir = config_path.resolve().parent
    if dataset is None:
        if config.dataset is None:
            raise ConfigError(
                f"{config_path}: dataset: no dataset given; set 'dataset' in the config "
                "or pass --dataset"
            )
        dataset = config.resolve(config.dataset, base=config_dir)
    return Inputs(
        config=config, config_dir=config_dir, dataset_path=dataset, cases=load_dataset(dataset)
    )


def judge_inputs(inputs: Inputs, *, env: dict[str, str]) -> RunReport:
    """Judge the inputs' cases with the configured judge and evaluators."""
    choice = build_judge(inputs.config.judge, env=env, base_dir=inputs.config_dir)
    evaluators = build_evaluators(inputs.config.evaluators)
    settings = RunSettings(
        concurrency=inputs.config.judge.concurrency, budget_usd=inputs.config.judge.budget_usd
    )

    async def go() -> RunReport:
        try:
            report = await run_suite(
                inputs.cases,
                judge=choice.judge,
                evaluators=evaluators,
                settings=settings,
                notices=choice.notices,
            )
        finally:
            await choice.judge.aclose()
        return report.model_copy(
            update={"notices": (*report.notices, *choice.all_notices()[len(choice.notices) :])}
        )

    return asyncio.run(go())


def _edge(func: Callable[P, R]) -> Callable[P, R]:
    """Turn RagaliQ errors into one clear line and exit code 2 (a traceback with --debug)."""

    @functools.wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return func(*args, **kwargs)
        except RagaliqError as exc:
            ctx = click.get_current_context(silent=True)
            if ctx is not None and ctx.find_root().params.get("debug"):
                traceback.print_exc()
            click.echo(f"error: {exc}", err=True)
            sys.exit(ExitCode.UNJUDGED)

    return wrapper


config_option = click.option(
    "--config",
    "config_path",
    type=click.Path(path_type=Path, dir_okay=False),
    default=DEFAULT_CONFIG_FILE,
    show_default=True,
    help="The gate's config file.",
)
dataset_option = click.option(
    "--dataset",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="The RAG outputs to judge (JSONL, JSON or YAML); overrides 'dataset' in the config.",
)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="ragaliq")
@click.option("--debug", is_flag=True, help="Show tracebacks for errors.")
def cli(debug: bool) -> None:
    """RagaliQ Gate: judge RAG outputs and gate pull requests on their quality."""


@cli.command()
@config_option
@dataset_option
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="Write the run report (JSON) here.",
)
@_edge
def run(config_path: Path, dataset: Path | None, output: Path | None) -> None:
    """Judge a dataset, print a score table and write the report.

    Exit code 0 when every evaluator reaches its threshold, 1 when one does not (or cases
    failed to judge), 2 when nothing could be judged.
    """
    inputs = load_inputs(config_path, dataset)
    report = judge_inputs(inputs, env=dict(os.environ))
    for notice in report.notices:
        click.echo(f"notice: {notice}", err=True)
    click.echo(format_run_table(report))
    if output is not None:
        write_atomic(output, report.model_dump_json(indent=2) + "\n")
        click.echo(f"report written to {output}")
    code = run_exit_code(report, inputs.config.gate)
    if report.stopped_early:
        click.echo(f"error: the run stopped early: {report.stopped_early}", err=True)
    elif code is ExitCode.UNJUDGED:
        click.echo("error: no case could be judged; see the case errors above", err=True)
    sys.exit(code)


@cli.command()
@config_option
@dataset_option
@_edge
def validate(config_path: Path, dataset: Path | None) -> None:
    """Check the config and the dataset without judging anything."""
    inputs = load_inputs(config_path, dataset)
    names = [e.name for e in build_evaluators(inputs.config.evaluators)]
    click.echo(
        f"{config_path}: ok ({', '.join(names) or 'no evaluators'}); "
        f"{inputs.dataset_path}: ok ({len(inputs.cases)} cases)"
    )


@cli.command()
def schema() -> None:
    """Print the JSON Schema of ragaliq.yaml (for editor completion)."""
    click.echo(config_json_schema())


def main(argv: list[str] | None = None) -> Any:
    """Entry point of the ``ragaliq`` console script."""
    return cli.main(args=argv, prog_name="ragaliq", auto_envvar_prefix="RAGALIQ")

"""The ``ragaliq`` command line: thin commands over the glue in :mod:`ragaliq.pipeline`.

One module a group of commands: :mod:`~ragaliq.cli.judging` (run, validate, gate),
:mod:`~ragaliq.cli.steps` (baseline, compare, render, merge, publish, report) and
:mod:`~ragaliq.cli.setup` (init, schema, calibrate, action). Commands act through
:class:`~ragaliq.cli._common.Collaborators` (the environment, the judge), which tests replace
with fakes by passing ``obj=`` to the command line.
"""

from __future__ import annotations

from typing import Any

import click

from ragaliq._version import __version__
from ragaliq.cli._common import Collaborators, collaborators
from ragaliq.cli.judging import baseline_record, gate, run, validate
from ragaliq.cli.setup import action, calibrate_command, init, schema
from ragaliq.cli.steps import (
    baseline,
    compare_command,
    merge,
    publish,
    render,
    report_command,
)
from ragaliq.redaction import register_env_secrets

__all__ = ["Collaborators", "cli", "main"]


@click.group(
    context_settings={"help_option_names": ["-h", "--help"]},
    invoke_without_command=True,
    no_args_is_help=False,
)
@click.version_option(__version__, prog_name="ragaliq")
@click.option("-q", "--quiet", is_flag=True, help="Print only errors and the verdict line.")
@click.option(
    "-v", "--verbose", is_flag=True, help="Print progress after every case, from the first."
)
@click.option("--debug", is_flag=True, help="Show tracebacks for errors.")
@click.pass_context
def cli(ctx: click.Context, quiet: bool, verbose: bool, debug: bool) -> None:
    """RagaliQ Gate: judge RAG outputs and gate pull requests on their quality.

    Start with `ragaliq init`, then `ragaliq validate` and `ragaliq gate`. Shell completion:
    `eval "$(_RAGALIQ_COMPLETE=bash_source ragaliq)"` (zsh_source, fish_source for other shells).
    """
    if quiet and verbose:
        raise click.UsageError("-q/--quiet and -v/--verbose cannot be used together")
    if ctx.invoked_subcommand is None:
        click.echo(ctx.get_help())
        ctx.exit(0)
    register_env_secrets(collaborators().env)


for command in (
    run,
    validate,
    gate,
    baseline,
    compare_command,
    render,
    merge,
    publish,
    init,
    calibrate_command,
    report_command,
    schema,
    action,
):
    cli.add_command(command)
baseline.add_command(baseline_record)


def main(argv: list[str] | None = None, *, obj: Collaborators | None = None) -> Any:
    """Run the command line (the console script calls it with no arguments)."""
    return cli.main(args=argv, prog_name="ragaliq", auto_envvar_prefix="RAGALIQ", obj=obj)

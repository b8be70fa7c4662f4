"""The ``ragaliq`` command line: thin commands over :mod:`ragaliq.gate_sequence` and its steps.

One module a group of commands: :mod:`~ragaliq.cli.judging` (run, validate, gate),
:mod:`~ragaliq.cli.baseline` (baseline record and update),
:mod:`~ragaliq.cli.steps` (compare, render, merge, publish, report) and
:mod:`~ragaliq.cli.setup` (init, schema, calibrate, action). Commands act through
:class:`~ragaliq.cli._common.Collaborators` (the environment, the judge), which tests replace
with fakes by passing ``obj=`` to the command line.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from ragaliq._version import __version__
from ragaliq.cli._common import Collaborators, collaborators
from ragaliq.cli.baseline import baseline
from ragaliq.cli.judging import gate, run, validate
from ragaliq.cli.setup import action, calibrate_command, init, schema
from ragaliq.cli.steps import (
    compare_command,
    merge,
    publish,
    render,
    report_command,
)
from ragaliq.redaction import register_env_secrets

__all__ = ["Collaborators", "cli", "main"]


GLOBAL_OPTIONS: tuple[tuple[tuple[str, ...], str], ...] = (
    (("-q", "--quiet"), "Print only errors and the verdict line."),
    (("-v", "--verbose"), "Print progress after every case, from the first."),
    (("--debug",), "Show tracebacks for errors."),
)
"""The options every command takes, before or after its name (``ragaliq run -q``)."""


def _global_options(command: Callable[..., Any]) -> Callable[..., Any]:
    for flags, text in reversed(GLOBAL_OPTIONS):
        command = click.option(*flags, is_flag=True, help=text)(command)
    return command


def _after_the_command(ctx: click.Context, param: click.Parameter, value: bool) -> bool:
    """A global option given after a command's name: recorded where the group keeps its own."""
    if value and param.name is not None:
        root = ctx.find_root()
        root.params[param.name] = True
        _check_verbosity(root.params)
    return value


def _check_verbosity(params: dict[str, Any]) -> None:
    if params.get("quiet") and params.get("verbose"):
        raise click.UsageError("-q/--quiet and -v/--verbose cannot be used together")


def _accept_global_options(command: click.Command) -> None:
    """Let ``command`` (and a group's commands) take the global options after its name."""
    for flags, text in GLOBAL_OPTIONS:
        command.params.append(
            click.Option(
                flags,
                is_flag=True,
                expose_value=False,
                callback=_after_the_command,
                help=text,
                # From the environment only once, on the group (RAGALIQ_QUIET).
                allow_from_autoenv=False,
            )
        )
    if isinstance(command, click.Group):
        for sub in command.commands.values():
            _accept_global_options(sub)


@click.group(
    context_settings={"help_option_names": ["-h", "--help"]},
    invoke_without_command=True,
    no_args_is_help=False,
)
@click.version_option(__version__, prog_name="ragaliq")
@_global_options
@click.pass_context
def cli(ctx: click.Context, quiet: bool, verbose: bool, debug: bool) -> None:
    """RagaliQ Gate: judge RAG outputs and gate pull requests on their quality.

    Start with `ragaliq init`, then `ragaliq validate` and `ragaliq gate`. Shell completion:
    `eval "$(_RAGALIQ_COMPLETE=bash_source ragaliq)"` (zsh_source, fish_source for other shells).
    -q, -v and --debug may come before or after the command's name.
    """
    _check_verbosity(ctx.params)
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
for command in cli.commands.values():
    _accept_global_options(command)


def main(argv: list[str] | None = None, *, obj: Collaborators | None = None) -> Any:
    """Run the command line (the console script calls it with no arguments)."""
    return cli.main(args=argv, prog_name="ragaliq", auto_envvar_prefix="RAGALIQ", obj=obj)

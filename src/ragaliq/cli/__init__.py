"""The ``ragaliq`` command line: thin commands over :mod:`ragaliq.gate_sequence` and its steps.

One module a group of commands: :mod:`~ragaliq.cli.judging` (run, validate, gate),
:mod:`~ragaliq.cli.baseline` (baseline record and update),
:mod:`~ragaliq.cli.steps` (compare, render, merge, publish, report) and
:mod:`~ragaliq.cli.setup` (init, schema, calibrate, action). Commands act through
:class:`~ragaliq.cli._common.Collaborators` (the environment, the judge), which tests replace
with fakes by passing ``obj=`` to the command line.
"""

from __future__ import annotations

import importlib
import io
import re
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple, NoReturn

import click

from ragaliq import _lazy
from ragaliq._version import __version__

if TYPE_CHECKING:
    from ragaliq.cli._common import Collaborators

__all__ = ["COMMANDS", "Collaborators", "cli", "main"]


class CommandSpec(NamedTuple):
    """Where a command lives, and the line ``ragaliq --help`` shows for it without loading it."""

    module: str
    attribute: str
    short_help: str
    hidden: bool = False


COMMANDS: dict[str, CommandSpec] = {
    "run": CommandSpec(
        "ragaliq.cli.judging", "run", "Judge a dataset, print a score table and write the report."
    ),
    "validate": CommandSpec(
        "ragaliq.cli.judging",
        "validate",
        "Check the config and the dataset without judging anything.",
    ),
    "gate": CommandSpec(
        "ragaliq.cli.judging", "gate", "Judge, compare with the baseline, write the comment."
    ),
    "baseline": CommandSpec(
        "ragaliq.cli.baseline",
        "baseline",
        "Record the baseline the gate compares pull requests with.",
    ),
    "compare": CommandSpec(
        "ragaliq.cli.steps", "compare_command", "Decide the gate for a run report and a baseline."
    ),
    "render": CommandSpec(
        "ragaliq.cli.steps",
        "render",
        "Render the PR comment (or the job summary) from a decision.",
    ),
    "merge": CommandSpec("ragaliq.cli.steps", "merge", "Join shard reports into one report."),
    "publish": CommandSpec("ragaliq.cli.steps", "publish", "Create or update the PR comment."),
    "init": CommandSpec(
        "ragaliq.cli.setup",
        "init",
        "Write the config, a sample dataset, four workflows, a .gitignore.",
    ),
    "calibrate": CommandSpec(
        "ragaliq.cli.setup", "calibrate_command", "Measure the judge against labelled claims."
    ),
    "report": CommandSpec(
        "ragaliq.cli.steps", "report_command", "Write a self-contained HTML report."
    ),
    "schema": CommandSpec(
        "ragaliq.cli.setup",
        "schema",
        "Print the JSON Schema of ragaliq.yaml (for editor completion).",
    ),
    "action": CommandSpec("ragaliq.cli.setup", "action", "Run as the GitHub Action.", hidden=True),
}
"""Every command, loaded only when it runs (or its own help is asked for): ``ragaliq --help``
and ``--version`` import no judge, GitHub client or template engine. A test checks each line
against the command's own short help."""


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


def _stopped(stop: BaseException) -> NoReturn:
    """Exit as a command stopped by a signal does: one line, 130 for Ctrl-C (143, 129)."""
    from ragaliq.exits import stopped_exit

    code, line = stopped_exit(stop if isinstance(stop, KeyboardInterrupt) else KeyboardInterrupt())
    sys.stderr.write(f"\n{line}\n")
    sys.exit(code)


def _refused(problem: click.ClickException) -> NoReturn:
    """A usage error as every other error is said: ``error: ...``, after click's usage lines."""
    from ragaliq.redaction import redact

    shown = io.StringIO()
    problem.show(file=shown)
    text = re.sub(r"^Error: ", "error: ", shown.getvalue(), count=1, flags=re.MULTILINE)
    click.echo(redact(text), err=True, nl=False)
    sys.exit(problem.exit_code)


class _LazyGroup(click.Group):
    """A group whose commands are imported when one is used, not when the group is built.

    Ctrl-C while the command line parses its arguments or loads a command (before the command's
    own edge, :func:`ragaliq.cli._common.edge`, is reached) ends it as it would end the command:
    exit 130 and ``interrupted: nothing more was written``, never click's ``Aborted!`` and 1. A
    usage error click finds is said as ``error: ...``, the prefix of every other error.
    """

    def make_context(
        self,
        info_name: str | None,
        args: list[str],
        parent: click.Context | None = None,
        **extra: Any,
    ) -> click.Context:
        try:
            return super().make_context(info_name, args, parent, **extra)
        except (KeyboardInterrupt, click.Abort) as stop:
            _stopped(stop)
        except click.ClickException as problem:
            _refused(problem)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (KeyboardInterrupt, click.Abort) as stop:
            _stopped(stop)
        except click.ClickException as problem:
            _refused(problem)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        loaded = self.commands.get(cmd_name)
        if loaded is not None or cmd_name not in COMMANDS:
            return loaded
        spec = COMMANDS[cmd_name]
        command: click.Command = getattr(importlib.import_module(spec.module), spec.attribute)
        _accept_global_options(command)
        self.commands[cmd_name] = command
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [
            (name, spec.short_help) for name, spec in sorted(COMMANDS.items()) if not spec.hidden
        ]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(
    cls=_LazyGroup,
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
    from ragaliq.cli._common import collaborators
    from ragaliq.redaction import register_env_secrets

    register_env_secrets(collaborators().env)


def main(argv: list[str] | None = None, *, obj: Collaborators | None = None) -> Any:
    """Run the command line (the console script calls it with no arguments)."""
    return cli.main(args=argv, prog_name="ragaliq", auto_envvar_prefix="RAGALIQ", obj=obj)


__getattr__, __dir__ = _lazy.lazy_exports(
    __name__, {"Collaborators": "ragaliq.cli._common"}, globals()
)

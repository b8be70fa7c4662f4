"""What every command shares: the collaborators, the error edge, the options, and printing.

Errors of the :class:`~ragaliq.errors.RagaliqError` tree become one line on stderr and exit
code 2 (a traceback as well with ``--debug``); Ctrl-C exits 130, SIGTERM 143 and SIGHUP 129.
Everything printed goes through :func:`echo`, which redacts secrets, never prints a line a CI
runner would take for a command, and honours ``-q`` (errors and the verdict only) and ``-v``
(progress at every case).
"""

from __future__ import annotations

import functools
import os
import sys
import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, ParamSpec, TypeVar

import click
from click.core import ParameterSource
from pydantic import ValidationError

from ragaliq._files import write_atomic
from ragaliq._validation import field_problems
from ragaliq.config import DEFAULT_CONFIG_FILE, GateConfig, config_or_defaults
from ragaliq.errors import ConfigError, RagaliqError
from ragaliq.exits import ExitCode, stopped_exit
from ragaliq.judges.factory import JudgeOpener, open_judge
from ragaliq.judging import JudgedRun
from ragaliq.models import ReportHead
from ragaliq.redaction import redact
from ragaliq.report import format_run_table
from ragaliq.report.marker import comment_marker
from ragaliq.report.progress import ProgressPrinter, Verbosity
from ragaliq.text.plain import one_line, safe_lines
from ragaliq.trust import MissingConfig

__all__ = [
    "Collaborators",
    "FilePath",
    "collaborators",
    "comment_id_option",
    "config_named",
    "config_option",
    "config_or_default",
    "dataset_option",
    "echo",
    "edge",
    "explain_unjudged",
    "missing_config",
    "output_option",
    "print_report",
    "progress_printer",
    "read_model",
    "verbosity",
    "write_result",
]

P = ParamSpec("P")
R = TypeVar("R")
FilePath = click.Path(path_type=Path, dir_okay=False)
Level = Literal["error", "result", "info"]
"""What a message is: an error and a command's result (what it was asked to print, its verdict)
are always printed, information (the default: tables, notices, files written) not with ``-q``."""

VERDICTS: dict[str, dict[int, str]] = {
    "run": {ExitCode.PASSED: "PASSED", ExitCode.FAILED: "FAILED"},
    "gate": {ExitCode.PASSED: "PASSED", ExitCode.FAILED: "FAILED"},
    "compare": {ExitCode.PASSED: "PASSED", ExitCode.FAILED: "FAILED"},
    "calibrate": {ExitCode.PASSED: "PASSED", ExitCode.FAILED: "FAILED"},
    "validate": {ExitCode.PASSED: "ok"},
}
"""The one line ``-q`` leaves of the commands that decide something, by exit code; exit code 2
has its error line instead."""


@dataclass(frozen=True, kw_only=True)
class Collaborators:
    """What the commands act through: the environment and the judge. Tests pass fakes."""

    env: Mapping[str, str] = field(default_factory=lambda: os.environ)
    open_judge: JudgeOpener = open_judge


def collaborators() -> Collaborators:
    """The collaborators of the command being run (``obj`` of the click context)."""
    obj = click.get_current_context().find_root().obj
    return obj if isinstance(obj, Collaborators) else Collaborators()


def edge(func: Callable[P, R]) -> Callable[P, R]:
    """Turn RagaliQ errors into one clear line and exit code 2 (a traceback with --debug)."""

    @functools.wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            try:
                result = func(*args, **kwargs)
            except SystemExit as done:
                _say_verdict(done.code, shard=kwargs.get("shard") is not None)
                raise
            _say_verdict(ExitCode.PASSED, shard=False)
            return result
        except RagaliqError as exc:
            ctx = click.get_current_context(silent=True)
            if ctx is not None and ctx.find_root().params.get("debug"):
                click.echo(redact(traceback.format_exc()), err=True, nl=False)
            echo(f"error: {exc}", err=True, level="error")
            sys.exit(ExitCode.UNJUDGED)
        except KeyboardInterrupt as stop:  # Ctrl-C, or SIGTERM and SIGHUP (exits.Terminated)
            # Files are written atomically and only at the end, so none is left half-written.
            code, line = stopped_exit(stop)
            echo(f"\n{line}", err=True, level="error")
            sys.exit(code)

    return wrapper


def _say_verdict(code: object, *, shard: bool) -> None:
    """With ``-q``, the command's verdict as its one line (``gate: FAILED``)."""
    ctx = click.get_current_context(silent=True)
    if ctx is None or verbosity() != "quiet" or not isinstance(code, int | None):
        return
    verdict = VERDICTS.get(ctx.command.name or "", {}).get(code or 0)
    if verdict is not None:
        judged = " (this shard only; the merged report decides)" if shard else ""
        echo(f"{ctx.command.name}: {verdict}{judged}", level="result")


def verbosity() -> Verbosity:
    """``quiet`` with ``-q``, ``verbose`` with ``-v``, else ``normal`` (and outside a command)."""
    ctx = click.get_current_context(silent=True)
    params = ctx.find_root().params if ctx is not None else {}
    if params.get("quiet"):
        return "quiet"
    return "verbose" if params.get("verbose") else "normal"


def echo(
    message: str = "", *, err: bool = False, nl: bool = True, level: Level | None = None
) -> None:
    """Print with every registered secret redacted and no line a CI runner takes for a command.

    Args:
        message: What to print.
        err: Print on stderr.
        nl: End with a line break.
        level: What the message is (:data:`Level`); left out, a message on stderr that starts
            with ``error`` is an error and anything else information.
    """
    if level is None:
        level = "error" if err and message.lstrip().startswith("error") else "info"
    if level == "info" and verbosity() == "quiet":
        return
    click.echo(safe_lines(redact(message)), err=err, nl=nl)


def read_model(path: Path, kind: type[Any], what: str) -> Any:
    """A report, decision or baseline file of ``kind``, or one clear error about it."""
    try:
        return kind.model_validate_json(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise ConfigError(f"{path}: not found; pass the {what} written by ragaliq") from exc
    except ValidationError as exc:
        problems = list(field_problems(exc, kind))
        more = f" and {len(problems) - 1} more problems" if len(problems) > 1 else ""
        raise ConfigError(
            f"{path}: not a valid {what}: {problems[0].path}: {problems[0].message}{more}; "
            f"pass the {what} written by ragaliq"
        ) from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: not a valid {what} ({str(exc).splitlines()[0]})") from exc


def write_result(path: Path | None, text: str, label: str) -> None:
    """Write a result file (atomically), and say so."""
    if path is not None:
        write_atomic(path, text if text.endswith("\n") else text + "\n")
        echo(f"{label} written to {path}")


def config_named() -> bool:
    """Whether --config was given (on the command line or from the environment).

    The one rule every command follows: a config that is named must exist; when none is
    named and there is no ragaliq.yaml, the built-in defaults apply, with a notice.
    """
    source = click.get_current_context().get_parameter_source("config_path")
    return source is not ParameterSource.DEFAULT


def missing_config() -> MissingConfig:
    """What a missing config means for this command: an error when named, else the defaults."""
    return "error" if config_named() else "defaults"


def config_or_default(path: Path) -> GateConfig:
    """The config at ``path``; the defaults, with a notice, when none was named and it is absent."""
    config, notice = config_or_defaults(path, named=config_named())
    if notice is not None:
        echo(f"notice: {notice}", err=True)
    return config


def progress_printer() -> ProgressPrinter:
    """A live bar on a terminal, plain lines in CI logs; none with -q, every case with -v."""
    env = collaborators().env
    return ProgressPrinter(
        sys.stderr, live=sys.stderr.isatty() and not env.get("CI"), verbosity=verbosity()
    )


def print_report(run: JudgedRun) -> None:
    """The run's notices (on stderr) and its score table."""
    for notice in run.head.notices:
        echo(f"notice: {one_line(notice)}", err=True)
    echo(format_run_table(run.head, errored=run.errored))


def explain_unjudged(head: ReportHead, code: ExitCode) -> None:
    """One line on why a run exits 2."""
    if head.stopped_early:
        echo(f"error: the run stopped early: {head.stopped_early}", err=True)
    elif code is ExitCode.UNJUDGED:
        echo("error: no case could be judged; see the case errors above", err=True)


def _comment_id(_ctx: click.Context, _param: click.Parameter, value: str) -> str:
    try:
        comment_marker(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from exc
    return value


config_option = click.option(
    "--config",
    "config_path",
    type=FilePath,
    default=DEFAULT_CONFIG_FILE,
    show_default=True,
    help="The gate's config file.",
)
dataset_option = click.option(
    "--dataset",
    type=FilePath,
    default=None,
    help="The RAG outputs to judge (JSON Lines, JSON, YAML or CSV, with RagaliQ's, RAGAS's or "
    "DeepEval's fields); overrides 'dataset' in the config.",
)
output_option = click.option(
    "-o",
    "--output",
    type=FilePath,
    default=None,
    help="Write the run report (JSON) here; under .ragaliq/ (as .ragaliq/report.json) it stays "
    "out of git, by the .gitignore ragaliq init writes there.",
)
comment_id_option = click.option(
    "--comment-id",
    default="default",
    show_default=True,
    callback=_comment_id,
    help="Which gate's comment this is: keeps several gates' comments apart in one PR.",
)

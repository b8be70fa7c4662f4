"""The ``ragaliq`` command line: thin commands over the glue in :mod:`ragaliq.pipeline`.

Errors of the :class:`~ragaliq.errors.RagaliqError` tree become one line on stderr and exit
code 2; ``--debug`` shows the traceback as well.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import math
import os
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

import click
from click.core import ParameterSource
from pydantic import ValidationError

from ragaliq._files import check_writable, write_atomic
from ragaliq._validation import field_problems
from ragaliq._version import __version__
from ragaliq.baseline import (
    DEFAULT_BASELINE_PATH,
    load_baseline,
    record_baseline,
    save_baseline,
)
from ragaliq.calibrate import Calibration, calibrate
from ragaliq.config import DEFAULT_CONFIG_FILE, GateConfig, config_json_schema, load_config
from ragaliq.dataset import load_dataset
from ragaliq.errors import BaselineError, ConfigError, RagaliqError
from ragaliq.evaluators import HallucinationEvaluator, build_evaluators
from ragaliq.exits import ExitCode, gate_exit_code, run_exit_code
from ragaliq.gate import GateDecision, GateRules, compare
from ragaliq.judges import build_judge
from ragaliq.judges.factory import describe_judge
from ragaliq.labels import load_labels
from ragaliq.models import RunReport, RunSummary, Usage
from ragaliq.pipeline import (
    Inputs,
    baseline_judge,
    judge_inputs,
    keep_baseline_evaluators,
    load_gate_inputs,
    load_inputs,
    local_cache_path,
    local_root,
    run_gate,
)
from ragaliq.preflight import preflight
from ragaliq.redaction import redact, register_env_secrets
from ragaliq.report import format_decision, format_preflight, format_run_table
from ragaliq.report._format import plural
from ragaliq.report.calibration import format_calibration
from ragaliq.report.html import render_html_report
from ragaliq.report.markdown import UserTemplate, render_comment, render_summary
from ragaliq.report.marker import comment_marker
from ragaliq.report.progress import ProgressPrinter
from ragaliq.repository import WorkTree, repo_path
from ragaliq.scaffold import write_scaffold
from ragaliq.shards import Shard, merge_reports, parse_shard, shard_cases
from ragaliq.text.plain import one_line, safe_lines
from ragaliq.trust import base_source, read_bar

__all__ = ["cli", "main"]

P = ParamSpec("P")
R = TypeVar("R")


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
            echo(f"error: {exc}", err=True)
            sys.exit(ExitCode.UNJUDGED)
        except KeyboardInterrupt:
            # Files are written atomically and only at the end, so none is left half-written.
            echo("\ninterrupted: nothing more was written", err=True)
            sys.exit(ExitCode.INTERRUPTED)

    return wrapper


def echo(message: str = "", *, err: bool = False, nl: bool = True) -> None:
    """Print with every registered secret redacted and no line a CI runner takes for a command."""
    click.echo(safe_lines(redact(message)), err=err, nl=nl)


def _read_model(path: Path, kind: type[Any], what: str) -> Any:
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


def _write(path: Path | None, text: str, label: str) -> None:
    if path is not None:
        write_atomic(path, text if text.endswith("\n") else text + "\n")
        echo(f"{label} written to {path}")


def _config_or_default(path: Path) -> GateConfig:
    """The config at ``path``; the defaults when --config was left out and there is no file."""
    source = click.get_current_context().get_parameter_source("config_path")
    if source is ParameterSource.DEFAULT and not path.exists():
        return GateConfig()
    return load_config(path)


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
output_option = click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="Write the run report (JSON) here.",
)
FilePath = click.Path(path_type=Path, dir_okay=False)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="ragaliq")
@click.option("--debug", is_flag=True, help="Show tracebacks for errors.")
def cli(debug: bool) -> None:
    """RagaliQ Gate: judge RAG outputs and gate pull requests on their quality."""
    register_env_secrets(os.environ)


def _shard_option(_ctx: click.Context, _param: click.Parameter, value: str | None) -> Shard | None:
    if value is None:
        return None
    try:
        return parse_shard(value)
    except ConfigError as exc:
        raise click.BadParameter(str(exc).removeprefix("--shard: ")) from exc


@cli.command()
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
@_edge
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
            _write(output, _empty_report(inputs).model_dump_json(indent=2), "report")
            sys.exit(ExitCode.PASSED)
    if dry_run:
        plan = asyncio.run(
            preflight(
                inputs.cases,
                config=inputs.config.judge,
                env=os.environ,
                cache_path=inputs.cache_path,
                evaluators=build_evaluators(inputs.config.evaluators),
            )
        )
        echo(format_preflight(plan))
        sys.exit(ExitCode.PASSED)
    report = judge_inputs(inputs, env=os.environ, on_progress=_progress())
    if shard is not None:
        report = report.model_copy(update={"shard": str(shard)})
    _print_report(report)
    _write(output, report.model_dump_json(indent=2), "report")
    code = run_exit_code(report, inputs.config.gate, shard=shard is not None)
    if shard is not None and run_exit_code(report, inputs.config.gate) is ExitCode.FAILED:
        echo(
            f"shard {shard}: thresholds and case errors are applied to the merged report "
            "(ragaliq merge, then ragaliq compare), so this shard exits 0"
        )
    _explain_unjudged(report, code)
    sys.exit(code)


def _progress() -> ProgressPrinter:
    return ProgressPrinter(sys.stderr, live=sys.stderr.isatty() and not os.environ.get("CI"))


def _print_report(report: RunReport) -> None:
    for notice in report.notices:
        echo(f"notice: {one_line(notice)}", err=True)
    echo(format_run_table(report))


def _empty_report(inputs: Inputs) -> RunReport:
    infos = {e.name: e.info() for e in build_evaluators(inputs.config.evaluators)}
    return RunReport(
        judge=describe_judge(inputs.config.judge, env=os.environ),
        evaluators=infos,
        summary=RunSummary.of([], infos),
        usage=Usage(),
        cases=(),
    )


def _explain_unjudged(report: RunReport, code: ExitCode) -> None:
    if report.stopped_early:
        echo(f"error: the run stopped early: {report.stopped_early}", err=True)
    elif code is ExitCode.UNJUDGED:
        echo("error: no case could be judged; see the case errors above", err=True)


@cli.command()
@config_option
@dataset_option
@_edge
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


@cli.command()
def schema() -> None:
    """Print the JSON Schema of ragaliq.yaml (for editor completion)."""
    echo(config_json_schema())


@cli.group()
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
@_edge
def baseline_update(
    report_path: Path,
    output: Path | None,
    config_path: Path,
    allow_errors: bool,
    commit: str | None,
) -> None:
    """Record a run report as the baseline (written atomically)."""
    report: RunReport = _read_model(report_path, RunReport, "run report")
    config = _config_or_default(config_path)
    if output is None:
        output = config.resolve(config.baseline, base=config_path.resolve().parent)
    check_writable(output, reads=(report_path, config_path))
    policy = None
    if config_path.exists():
        policy = GateRules.from_config(config).recorded(report.evaluators)
    else:
        echo(
            f"note: no {config_path}, so no gate policy is recorded; pass --config to record "
            "the max_drop and failure rules a PR may not loosen",
            err=True,
        )
    recorded = record_baseline(report, allow_errors=allow_errors, commit=commit, policy=policy)
    save_baseline(recorded, output)
    echo(
        f"baseline written to {output} ({report.summary.cases} cases, judge "
        f"{report.judge.provider}/{report.judge.model})"
    )


@cli.command("compare", short_help="Decide the gate for a run report and a baseline.")
@click.option(
    "--baseline",
    "baseline_path",
    type=FilePath,
    default=None,
    help="The baseline (from ragaliq baseline update). Leave it out when there is none yet: "
    "then only the thresholds apply.",
)
@click.option(
    "--report", "report_path", type=FilePath, required=True, help="The run report to judge."
)
@click.option("-o", "--output", type=FilePath, default=None, help="Write the decision (JSON).")
@config_option
@_edge
def compare_command(
    baseline_path: Path | None, report_path: Path, output: Path | None, config_path: Path
) -> None:
    """Compare a run report with a baseline; exit 1 when the gate fails.

    The gate policy (fail_on_new_hallucinations, max_drop, ...) is read from --config; when that
    file does not exist the defaults apply.
    """
    check_writable(output, reads=(report_path, baseline_path, config_path))
    report: RunReport = _read_model(report_path, RunReport, "run report")
    recorded = None
    if baseline_path is not None:
        recorded = load_baseline(baseline_path)
        if recorded is None:
            raise BaselineError(
                f"{baseline_path}: not found; leave --baseline out to apply only the thresholds"
            )
    rules = GateRules.from_config(_config_or_default(config_path))
    decision = compare(report, recorded, rules=rules)
    echo(format_decision(decision))
    _write(output, decision.model_dump_json(indent=2), "decision")
    sys.exit(gate_exit_code(report, decision))


@cli.command()
@click.option(
    "--decision",
    "decision_path",
    type=FilePath,
    required=True,
    help="The gate decision (from ragaliq compare or gate --decision-out).",
)
@click.option("--report", "report_path", type=FilePath, default=None, help="Needed for --summary.")
@click.option("--summary", "as_summary", is_flag=True, help="Render the job summary instead.")
@click.option("--template", type=FilePath, default=None, help="Your own Jinja template.")
@click.option(
    "--comment-id",
    default="default",
    show_default=True,
    help="Which gate's comment this is: keeps several gates' comments apart in one PR.",
)
@click.option("-o", "--output", type=FilePath, default=None, help="Write here, not to stdout.")
@_edge
def render(
    decision_path: Path,
    report_path: Path | None,
    as_summary: bool,
    template: Path | None,
    comment_id: str,
    output: Path | None,
) -> None:
    """Render the PR comment (or the job summary) from a decision."""
    check_writable(output, reads=(decision_path, report_path, template))
    decision: GateDecision = _read_model(decision_path, GateDecision, "gate decision")
    user_template = UserTemplate.from_file(template) if template is not None else None
    if as_summary:
        if report_path is None:
            raise ConfigError("--summary needs --report")
        report: RunReport = _read_model(report_path, RunReport, "run report")
        text = render_summary(decision, report=report, template=user_template)
    else:
        text = render_comment(decision, comment_id=_comment_id(comment_id), template=user_template)
    if output is None:
        echo(text, nl=False)
    else:
        _write(output, text, "rendered Markdown")


def _comment_id(value: str) -> str:
    try:
        comment_marker(value)
    except ValueError as exc:
        raise ConfigError(str(exc)) from exc
    return value


@cli.command(short_help="Judge, compare with the baseline, write the comment.")
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
@click.option(
    "--comment-id",
    default="default",
    show_default=True,
    help="Which gate's comment this is: keeps several gates' comments apart in one PR.",
)
@_edge
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
    trusted = base_source(root, base_ref)
    explicit = None
    if baseline_path is not None:
        explicit = repo_path(_inside(root, baseline_path, "--baseline"), what="--baseline")
    bar = read_bar(
        trusted=trusted,
        work=work,
        config_file=_inside(root, config_path, "--config"),
        baseline_file=explicit,
        config_name=str(config_path),
    )
    inputs = load_gate_inputs(bar, work=work, config_path=config_path, dataset=dataset)
    check_writable(output, decision_out, comment_out, summary_out, html_out, reads=inputs.files)
    checked_id = _comment_id(comment_id)
    judge_config, chosen = baseline_judge(inputs, bar.baseline)
    inputs, kept = keep_baseline_evaluators(inputs, bar.baseline)
    report = judge_inputs(
        inputs, env=os.environ, judge_config=judge_config, on_progress=_progress()
    )
    outcome = run_gate(
        inputs,
        report=report,
        baseline=bar.baseline,
        comment_id=checked_id,
        extra_notices=(*chosen, *kept),
    )
    _print_report(report)
    echo("")
    echo(format_decision(outcome.decision, shown_notices=report.notices))
    _write(output, report.model_dump_json(indent=2), "report")
    _write(decision_out, outcome.decision.model_dump_json(indent=2), "decision")
    _write(comment_out, outcome.comment, "comment")
    _write(summary_out, outcome.summary, "summary")
    if html_out is not None:
        html = render_html_report(report, decision=outcome.decision, cases=inputs.cases)
        _write(html_out, html, "HTML report")
    _explain_unjudged(report, outcome.exit_code)
    sys.exit(outcome.exit_code)


def _inside(root: Path, path: Path, option: str) -> str:
    """``path`` (as given on the command line) as a path from the repository's root."""
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError as exc:
        raise ConfigError(
            f"{option} {path}: must be inside the repository {root}, where the gate reads it"
        ) from exc


@cli.command(short_help="Join shard reports into one report.")
@click.argument("reports", nargs=-1, required=True, type=click.Path(path_type=Path, dir_okay=False))
@click.option("-o", "--output", type=FilePath, required=True, help="Write the merged report.")
@_edge
def merge(reports: tuple[Path, ...], output: Path) -> None:
    """Join shard reports (from `ragaliq run --shard K/N`) into one report."""
    check_writable(output, reads=reports)
    loaded: list[RunReport] = [_read_model(p, RunReport, "run report") for p in reports]
    merged = merge_reports(loaded, names=[str(p) for p in reports])
    echo(format_run_table(merged))
    _write(output, merged.model_dump_json(indent=2), "merged report")


@cli.command(short_help="Create or update the PR comment.")
@click.option("--body", "body_path", type=FilePath, required=True, help="The rendered comment.")
@click.option("--pr", "pr_number", type=click.IntRange(min=1), required=True, help="The PR number.")
@click.option(
    "--repository",
    envvar="GITHUB_REPOSITORY",
    required=True,
    help="owner/name [$GITHUB_REPOSITORY].",
)
@click.option(
    "--comment-id",
    default="default",
    show_default=True,
    help="Which gate's comment this is: keeps several gates' comments apart in one PR.",
)
@click.option(
    "--api-url",
    envvar="GITHUB_API_URL",
    default="https://api.github.com",
    show_default=True,
    help="The GitHub API [$GITHUB_API_URL]; set for GitHub Enterprise Server.",
)
@_edge
def publish(
    body_path: Path, pr_number: int, repository: str, comment_id: str, api_url: str
) -> None:
    """Create or update the PR comment from a rendered body (token in $GITHUB_TOKEN).

    For the two-workflow pattern on fork PRs: a `workflow_run` job that never checks out PR code
    posts the comment the `pull_request` job rendered.
    """
    from ragaliq.github.comment import GitHubPublisher

    token = os.environ.get("GITHUB_TOKEN", "")
    if not token:
        raise ConfigError("publish: set GITHUB_TOKEN to a token that may write PR comments")
    try:
        body = body_path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = getattr(exc, "strerror", None) or type(exc).__name__
        raise ConfigError(
            f"{body_path}: cannot be read ({reason}); pass the Markdown ragaliq render wrote"
        ) from exc
    with GitHubPublisher(
        token=token, repository=repository, pr_number=pr_number, api_url=api_url
    ) as publisher:
        result = publisher.upsert(body=body, marker=comment_marker(_comment_id(comment_id)))
    echo(f"comment {result.action}: {result.url}")


@cli.command(short_help="Write a starter config, dataset, workflow and .gitignore.")
@click.option(
    "--dir",
    "root",
    type=click.Path(path_type=Path, file_okay=False),
    default=Path("."),
    show_default=True,
    help="The repository root to write the files in.",
)
@click.option("--force", is_flag=True, help="Overwrite files that already exist.")
@_edge
def init(root: Path, force: bool) -> None:
    """Write a starter ragaliq.yaml, an example rag_outputs.jsonl and the PR workflow."""
    for path in write_scaffold(root, force=force):
        echo(f"wrote {path}")
    echo(
        "next: check them with `ragaliq validate` and try `ragaliq gate`; in both workflows, "
        "make the first step run your pipeline and pin the action's commit SHA; then push to "
        "main, where ragaliq-baseline.yml records the baseline pull requests are compared with"
    )


@cli.command("calibrate", short_help="Measure the judge against labelled claims.")
@click.option("--labels", "labels_path", type=FilePath, required=True, help="Labelled claims.")
@config_option
@click.option(
    "-o", "--output", type=FilePath, default=None, help="Write the metrics and every verdict."
)
@click.option(
    "--min-kappa",
    type=click.FloatRange(-1.0, 1.0),
    default=None,
    help="Exit 1 when the hallucinated-or-not kappa is below this.",
)
@_edge
def calibrate_command(
    labels_path: Path, config_path: Path, output: Path | None, min_kappa: float | None
) -> None:
    """Measure how far the configured judge agrees with labelled claims."""
    config = _config_or_default(config_path)
    labels = load_labels(labels_path)
    check_writable(output, reads=(labels_path, config_path))
    choice = build_judge(
        config.judge, env=os.environ, cache_path=local_cache_path(config, config_path)
    )

    async def go() -> Calibration:
        try:
            return await calibrate(
                labels,
                judge=choice.judge,
                concurrency=config.judge.concurrency,
                min_confidence=config.evaluators.options(HallucinationEvaluator).min_confidence,
                budget_usd=config.judge.budget_usd,
            )
        finally:
            await choice.judge.aclose()

    result = asyncio.run(go())
    for notice in choice.all_notices():
        echo(f"notice: {notice}", err=True)
    echo(format_calibration(result))
    _write(output, result.to_json(), "calibration")
    if result.n == 0:
        echo("error: no labelled claim could be judged; see the errors above", err=True)
        sys.exit(ExitCode.UNJUDGED)
    if min_kappa is not None and math.isnan(result.binary.kappa):
        echo(
            "error: the hallucinated-or-not kappa is undefined (every label or every verdict is "
            "in one class), so --min-kappa cannot be checked; label both kinds of claim",
            err=True,
        )
        sys.exit(ExitCode.FAILED)
    if min_kappa is not None and not result.binary.kappa >= min_kappa:
        echo(
            f"error: hallucinated-or-not kappa {result.binary.kappa:.3f} is below "
            f"--min-kappa {min_kappa:g}",
            err=True,
        )
        sys.exit(ExitCode.FAILED)


@cli.command("report", short_help="Write a self-contained HTML report.")
@click.option("--html", "html_path", type=FilePath, required=True, help="Write the HTML here.")
@click.option("--report", "report_path", type=FilePath, required=True, help="A run report.")
@click.option("--decision", "decision_path", type=FilePath, default=None, help="A gate decision.")
@click.option(
    "--dataset", type=FilePath, default=None, help="Show responses with their claims highlighted."
)
@click.option("--title", default="RagaliQ Gate report", show_default=True, help="The page's title.")
@_edge
def report_command(
    html_path: Path,
    report_path: Path,
    decision_path: Path | None,
    dataset: Path | None,
    title: str,
) -> None:
    """Write a self-contained HTML report (no network) from a run report."""
    check_writable(html_path, reads=(report_path, decision_path, dataset))
    run_report: RunReport = _read_model(report_path, RunReport, "run report")
    decision: GateDecision | None = (
        _read_model(decision_path, GateDecision, "gate decision") if decision_path else None
    )
    cases = load_dataset(dataset) if dataset else None
    html = render_html_report(run_report, decision=decision, cases=cases, title=title)
    _write(html_path, html, "HTML report")


@cli.command(short_help="Run as the GitHub Action.")
def action() -> None:
    """Run as the GitHub Action (reads INPUT_* and GITHUB_* from the environment)."""
    from ragaliq.action import main as action_main

    sys.exit(action_main())


def main(argv: list[str] | None = None) -> Any:
    """Entry point of the ``ragaliq`` console script."""
    return cli.main(args=argv, prog_name="ragaliq", auto_envvar_prefix="RAGALIQ")

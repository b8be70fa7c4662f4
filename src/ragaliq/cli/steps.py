"""The gate's steps one by one, for workflows that split the gate across jobs.

``compare``, ``render``, ``merge``, ``publish`` and ``report``; recording the baseline is in
:mod:`ragaliq.cli.baseline`.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ragaliq._files import check_writable, open_atomic
from ragaliq.action.hosts import DEFAULT_GITHUB_API, github_comment
from ragaliq.baseline import load_baseline
from ragaliq.cli._common import (
    FilePath,
    collaborators,
    comment_id_option,
    config_option,
    config_or_default,
    echo,
    edge,
    read_model,
    write_result,
)
from ragaliq.dataset import DatasetCases
from ragaliq.errors import BaselineError, ConfigError
from ragaliq.exits import gate_exit_code
from ragaliq.gate import GateDecision, compare
from ragaliq.redaction import redact
from ragaliq.report import format_decision, format_run_table
from ragaliq.report.html import write_html
from ragaliq.report.markdown import CaseDigest, UserTemplate, render_comment, render_summary
from ragaliq.report.marker import comment_marker
from ragaliq.run_report import ReportFile
from ragaliq.shards import merge_reports
from ragaliq.trust import hold_to_baseline

__all__ = ["compare_command", "merge", "publish", "render", "report_command"]


@click.command("compare", short_help="Decide the gate for a run report and a baseline.")
@click.option(
    "--baseline",
    "baseline_path",
    type=FilePath,
    default=None,
    help="The baseline (from ragaliq baseline record or update). Leave it out when there is "
    "none yet: then only the thresholds apply.",
)
@click.option(
    "--report", "report_path", type=FilePath, required=True, help="The run report to judge."
)
@click.option("-o", "--output", type=FilePath, default=None, help="Write the decision (JSON).")
@config_option
@edge
def compare_command(
    baseline_path: Path | None, report_path: Path, output: Path | None, config_path: Path
) -> None:
    """Compare a run report with a baseline; exit 1 when the gate fails.

    The gate policy (fail_on_new_hallucinations, max_drop, ...) is read from --config; when that
    file does not exist the defaults apply.
    """
    check_writable(output, reads=(report_path, baseline_path, config_path))
    report = ReportFile(report_path)
    recorded = None
    if baseline_path is not None:
        recorded = load_baseline(baseline_path)
        if recorded is None:
            raise BaselineError(
                f"{baseline_path}: not found; leave --baseline out to apply only the thresholds"
            )
    thresholds = {name: s.threshold for name, s in report.head.summary.evaluators.items()}
    floor = hold_to_baseline(thresholds, config_or_default(config_path).rules(), recorded)
    decision = compare(
        report, recorded, rules=floor.rules, thresholds=floor.thresholds, notices=floor.notices
    )
    echo(format_decision(decision))
    write_result(output, decision.model_dump_json(indent=2), "decision")
    sys.exit(gate_exit_code(report.head, decision))


@click.command()
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
@comment_id_option
@click.option("-o", "--output", type=FilePath, default=None, help="Write here, not to stdout.")
@edge
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
    decision: GateDecision = read_model(decision_path, GateDecision, "gate decision")
    user_template = UserTemplate.from_file(template) if template is not None else None
    if as_summary:
        if report_path is None:
            raise ConfigError("--summary needs --report")
        report = ReportFile(report_path)
        digest = CaseDigest()
        for case in report.iter_cases():
            digest.add(case)
        text = render_summary(decision, report=report.head, cases=digest, template=user_template)
    else:
        text = render_comment(decision, comment_id=comment_id, template=user_template)
    if output is None:
        echo(text, nl=False, level="result")
    else:
        write_result(output, text, "rendered Markdown")


@click.command(short_help="Join shard reports into one report.")
@click.argument("reports", nargs=-1, required=True, type=FilePath)
@click.option("-o", "--output", type=FilePath, required=True, help="Write the merged report.")
@edge
def merge(reports: tuple[Path, ...], output: Path) -> None:
    """Join shard reports (from `ragaliq run --shard K/N`) into one report."""
    check_writable(output, reads=reports)
    with open_atomic(output) as out:
        merged = merge_reports(
            [ReportFile(p) for p in reports], names=[str(p) for p in reports], out=out
        )
    echo(format_run_table(merged))
    echo(f"merged report written to {output}")


@click.command(short_help="Create or update the PR comment.")
@click.option("--body", "body_path", type=FilePath, required=True, help="The rendered comment.")
@click.option("--pr", "pr_number", type=click.IntRange(min=1), required=True, help="The PR number.")
@click.option(
    "--repository",
    envvar="GITHUB_REPOSITORY",
    required=True,
    help="owner/name [$GITHUB_REPOSITORY].",
)
@comment_id_option
@click.option(
    "--api-url",
    envvar="GITHUB_API_URL",
    default=DEFAULT_GITHUB_API,
    show_default=True,
    help="The GitHub API [$GITHUB_API_URL]; set for GitHub Enterprise Server.",
)
@edge
def publish(
    body_path: Path, pr_number: int, repository: str, comment_id: str, api_url: str
) -> None:
    """Create or update the PR comment from a rendered body (token in $GITHUB_TOKEN).

    For a gate assembled from its steps (ragaliq compare, then ragaliq render) in a job of your
    own, such as the sharded workflow's: the action posts its own comment. The comment is found
    by its hidden marker (--comment-id) and edited in place.
    """
    token = collaborators().env.get("GITHUB_TOKEN", "")
    if not token:
        raise ConfigError("publish: set GITHUB_TOKEN to a token that may write PR comments")
    try:
        body = body_path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = getattr(exc, "strerror", None) or type(exc).__name__
        raise ConfigError(
            f"{body_path}: cannot be read ({reason}); pass the Markdown ragaliq render wrote"
        ) from exc
    board = github_comment(token=token, repository=repository, api_url=api_url, number=pr_number)
    result = board.upsert(body=redact(body), marker=comment_marker(comment_id))
    echo(f"comment {result.action}: {result.url}")


@click.command("report", short_help="Write a self-contained HTML report.")
@click.option("--html", "html_path", type=FilePath, required=True, help="Write the HTML here.")
@click.option("--report", "report_path", type=FilePath, required=True, help="A run report.")
@click.option("--decision", "decision_path", type=FilePath, default=None, help="A gate decision.")
@click.option(
    "--dataset", type=FilePath, default=None, help="Show responses with their claims highlighted."
)
@click.option("--title", default="RagaliQ Gate report", show_default=True, help="The page's title.")
@edge
def report_command(
    html_path: Path,
    report_path: Path,
    decision_path: Path | None,
    dataset: Path | None,
    title: str,
) -> None:
    """Write a self-contained HTML report (no network) from a run report."""
    check_writable(html_path, reads=(report_path, decision_path, dataset))
    report = ReportFile(report_path)
    decision: GateDecision | None = (
        read_model(decision_path, GateDecision, "gate decision") if decision_path else None
    )
    cases = DatasetCases.read(dataset) if dataset else None
    write_html(
        html_path,
        head=report.head,
        cases=report.iter_cases(),
        decision=decision,
        dataset=cases,
        title=title,
    )
    echo(f"HTML report written to {html_path}")

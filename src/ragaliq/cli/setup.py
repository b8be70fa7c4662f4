"""Setting up and checking: ``init``, ``schema``, ``calibrate``, and the Action's ``action``."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path, PurePosixPath

import click

from ragaliq._files import check_writable
from ragaliq.calibrate import calibrate
from ragaliq.cli._common import (
    FilePath,
    collaborators,
    config_option,
    config_or_default,
    echo,
    edge,
    write_result,
)
from ragaliq.config import (
    DEFAULT_BASELINE_BRANCH,
    DEFAULT_CONFIG_FILE,
    DOCS_URL,
    GateConfig,
    config_json_schema,
)
from ragaliq.errors import ConfigError
from ragaliq.evaluators import HallucinationEvaluator
from ragaliq.exits import calibration_exit_code
from ragaliq.inputs import local_cache_path
from ragaliq.labels import LabelledClaim, load_labels
from ragaliq.metrics import Calibration
from ragaliq.report.calibration import format_calibration
from ragaliq.scaffold import (
    ACTION_REF,
    BASELINE_WORKFLOW_FILE,
    DATASET_FILE,
    FOLLOW_WORKFLOW_FILE,
    FORKS_WORKFLOW_FILE,
    GITIGNORE_FILE,
    WORKFLOW_FILE,
    Release,
    judge_note,
    this_release,
    write_scaffold,
)
from ragaliq.text.plain import one_line

__all__ = ["action", "calibrate_command", "init", "schema"]


_INIT_HELP = (
    "Write the files a repository needs to start gating, at --dir: the config "
    f"({DEFAULT_CONFIG_FILE}), a one-case sample dataset ({DATASET_FILE}), four workflows "
    f"({WORKFLOW_FILE} runs a pull request's pipeline without secrets, then gates it on a fresh "
    f"runner at the base commit; {FORKS_WORKFLOW_FILE} gates pull requests from forks; "
    f"{BASELINE_WORKFLOW_FILE} records main's baseline on the data branch "
    f"{DEFAULT_BASELINE_BRANCH}; {FOLLOW_WORKFLOW_FILE} gates again the pull requests that "
    f"waited for a baseline, once it lands) and {GITIGNORE_FILE} (keeps local results out of "
    "git). The "
    "config starts on the offline judge, which needs no API key. Nothing is overwritten without "
    "--force."
)


@click.command(
    short_help="Write the config, a sample dataset, four workflows, a .gitignore.",
    help=_INIT_HELP,
)
@click.option(
    "--dir",
    "root",
    type=click.Path(path_type=Path, file_okay=False),
    default=Path("."),
    show_default=True,
    help="The repository root to write the files in.",
)
@click.option("--force", is_flag=True, help="Overwrite files that already exist.")
@click.option(
    "--ci",
    type=click.Choice(["github", "gitlab"]),
    default="github",
    show_default=True,
    help="Write GitHub's four workflows, or GitLab's .gitlab-ci.yml.",
)
@click.option(
    "--image",
    default=None,
    help="For --ci gitlab: the image the record and gate jobs run, pinned by digest "
    "(ghcr.io/ragaliq/ragaliq-gate@sha256:...); a release's own image by default.",
)
@edge
def init(root: Path, force: bool, ci: str, image: str | None) -> None:
    if image is not None and "@sha256:" not in image:
        raise ConfigError(
            f"--image {image}: name the image by its digest (<name>@sha256:<digest>), so that "
            "the job that holds the key never runs whatever a tag points at now"
        )
    release = this_release()
    if image is None and release is not None and release.image:
        image = release.image
    for path in write_scaffold(root, force=force, ci=ci, image=image, release=release):
        echo(f"wrote {path}")
    echo(judge_note(collaborators().env))
    echo(next_steps(release) if ci == "github" else gitlab_steps(image))


def gitlab_steps(image: str | None) -> str:
    """What to do after ``init --ci gitlab``: the variables, the environment, the token."""
    pin = (
        ""
        if image
        else "Pin the image of ragaliq-record and ragaliq-gate by its digest (--image). "
    )
    return (
        f"next, on GitLab: {pin}Create a project access token with the `api` scope and the "
        "Developer role; store it as the CI/CD variable RAGALIQ_GITLAB_TOKEN and your Anthropic "
        "API key as ANTHROPIC_API_KEY, both protected and masked, with the environment scope "
        "`ragaliq` (only ragaliq-record and ragaliq-gate use it). Set the minimum role to use "
        "pipeline variables to Maintainer. Protect the default branch; add a pipeline schedule "
        "on it every 5 minutes; then require the gate's account as an approver (Premium, "
        f"Ultimate), or read its note and status ({DOCS_URL}/gitlab.md)"
    )


def next_steps(release: Release | None = None) -> str:
    """What to do after ``init``, in the README's order: on this machine, then on GitHub."""
    from ragaliq.forge import status_context

    pinned = (
        f"The workflows use the release {release.tag} by its commit."
        if release is not None
        else f"The workflows use {ACTION_REF}, which builds the image on every run: pin a "
        "release's commit instead (the README's \"Which ref to use\")."
    )
    return (
        "next: check them with `ragaliq validate`, commit, and record main's baseline with "
        "`ragaliq baseline record`; then `ragaliq gate` on a branch compares with it (local "
        'results stay out of git, in .ragaliq/). On GitHub: make the "Generate RAG outputs" '
        f"step of {WORKFLOW_FILE} and {BASELINE_WORKFLOW_FILE} run your pipeline; merge the "
        f"set-up; let {PurePosixPath(BASELINE_WORKFLOW_FILE).name} record main's baseline on "
        f"the data branch {DEFAULT_BASELINE_BRANCH} (while it records, pull requests wait, and "
        f"{PurePosixPath(FOLLOW_WORKFLOW_FILE).name} gates them when it lands); then require "
        "the status "
        f'"{status_context("default", "main")}" (named after the base branch) in main\'s '
        f"branch protection ({DOCS_URL}/baselines.md). {pinned}"
    )


@click.command()
def schema() -> None:
    """Print the JSON Schema of ragaliq.yaml (for editor completion)."""
    echo(config_json_schema(), level="result")


async def _calibrate(
    labels: list[LabelledClaim], config: GateConfig, cache_path: Path | None
) -> tuple[Calibration, tuple[str, ...]]:
    world = collaborators()
    async with world.open_judge(config.judge, env=world.env, cache_path=cache_path) as choice:
        result = await calibrate(
            labels,
            judge=choice.judge,
            concurrency=config.judge.concurrency,
            min_confidence=config.evaluators.options(HallucinationEvaluator).min_confidence,
            budget_usd=config.judge.budget_usd,
        )
        return result, choice.all_notices()


@click.command("calibrate", short_help="Measure the judge against labelled claims.")
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
@edge
def calibrate_command(
    labels_path: Path, config_path: Path, output: Path | None, min_kappa: float | None
) -> None:
    """Measure how far the configured judge agrees with labelled claims.

    Each labelled claim is verified against its context as a response's claims are, and compared
    with its label: accuracy, balanced accuracy and Cohen's kappa over the four verdicts and over
    supported-versus-hallucinated. This covers context recall too, since a case's needed facts
    are verified in the same call, by the same prompt and verdicts. Context precision's chunk
    ratings are not measured: they answer another question (is this chunk relevant to the
    query?) that needs labelled chunks, which a labels file does not hold.

    Exit code 0 when measured, 1 when the kappa is below --min-kappa, 2 when nothing could be
    judged.
    """
    config = config_or_default(config_path)
    labels = load_labels(labels_path)
    check_writable(output, reads=(labels_path, config_path))
    result, notices = asyncio.run(_calibrate(labels, config, local_cache_path(config, config_path)))
    for notice in notices:
        echo(f"notice: {one_line(notice)}", err=True)
    echo(format_calibration(result))
    write_result(output, result.to_json(), "calibration")
    code, problem = calibration_exit_code(result, min_kappa=min_kappa)
    if problem is not None:
        echo(f"error: {problem}", err=True)
    sys.exit(code)


@click.command(short_help="Run as the GitHub Action.", hidden=True)
def action() -> None:
    """Run as the GitHub Action (reads INPUT_* and GITHUB_* from the environment)."""
    from ragaliq.action import main as action_main

    sys.exit(action_main())

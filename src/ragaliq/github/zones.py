"""The two trust zones as the action sees them: what it gates, refuses, and reads from where.

The gate judges only where the pull request's code never ran (:mod:`ragaliq.checkout`), unless
the workflow says ``trust-pr-code: true``; the bar comes from the base commit, the change's own
config only as a proposal, and the dataset from the artifact its untrusted run handed over.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from ragaliq.checkout import unsafe_checkout
from ragaliq.errors import ConfigError, UnsafeSetupError
from ragaliq.github.remote import Remote
from ragaliq.github.settings import ActionSettings, PullRequest
from ragaliq.repository import FileSource, WorkTree

__all__ = [
    "PULL_REQUEST_EVENTS",
    "TRUSTED_CODE_NOTICE",
    "TWO_ZONES",
    "check_zone",
    "dataset_of",
    "proposal_source",
    "review_without_data",
]

TWO_ZONES = (
    "run the pull request's pipeline in one job and the gate in another, on a fresh runner that "
    "checks out the base commit (examples/workflows/ragaliq.yml; for forks, "
    "ragaliq-forks.yml), or set the action's input trust-pr-code: true if every contributor "
    "holds write access"
)
PULL_REQUEST_EVENTS = ("pull_request", "pull_request_review")
"""The events of a pull request's own run that a ``workflow_run`` gate judges."""
TRUSTED_CODE_NOTICE = (
    "trust-pr-code: true: this gate ran in the job that ran the pull request's code, so the bar "
    "is not protected from that code (its config, baseline and secrets could be reached)."
)


def review_without_data(settings: ActionSettings, remote: Remote) -> bool:
    """Whether a ``workflow_run`` gate follows a review's run that produced nothing.

    Reviews that accept nothing start no ``produce`` job, so their run hands over no artifact;
    that is no failure to report, and no reason to touch the status a real gate set.
    """
    run = settings.workflow_run
    if run is None or run.event != "pull_request_review" or not settings.artifact:
        return False
    if run.conclusion == "skipped":
        return True
    return not remote.has_artifact(run.id, settings.artifact)


def check_zone(settings: ActionSettings, pr: PullRequest | None) -> tuple[str, ...]:
    """Refuse to judge where the pull request's code may have run, unless the workflow says so.

    Returned: the notice to show when the workflow trusts the pull request's code.

    Raises:
        UnsafeSetupError: the workspace is not the base commit's untouched checkout.
        ConfigError: the run this gate follows found no pull request, or did not succeed.
    """
    run = settings.workflow_run
    if run is not None and pr is None:
        raise ConfigError(
            f"no open pull request has commit {run.head_sha[:12]}, the head of the run this "
            "gate follows; it may have been closed, or pushed to since"
        )
    if run is not None and run.conclusion != "success":
        raise ConfigError(
            f"the pull request's workflow run {run.id} ended "
            f"'{run.conclusion or 'without a conclusion'}', so it handed over no dataset to "
            "judge; fix that run and re-run it"
        )
    if pr is None:
        return ()
    if settings.trust_pr_code:
        return (TRUSTED_CODE_NOTICE,)
    problem = unsafe_checkout(settings.workspace, pr.base_sha)
    if problem is not None:
        raise UnsafeSetupError(
            f"RagaliQ Gate refuses to judge here: {problem}, so the pull request's code may have "
            f"run in this job. To fix it, {TWO_ZONES}."
        )
    return ()


def proposal_source(
    settings: ActionSettings, remote: Remote, pr: PullRequest | None, work: WorkTree
) -> FileSource | None:
    """Where the change's own config is read, for what it proposes."""
    if pr is None or settings.trust_pr_code:
        return work
    return remote.files_at(pr.head_sha, f"the pull request's head {pr.head_sha[:12]}")


def dataset_of(
    settings: ActionSettings, remote: Remote, pr: PullRequest | None
) -> tuple[Path | str | None, str]:
    """The dataset to judge, and a notice (with ``{cases}`` to fill) saying where it came from.

    With the ``artifact`` input the dataset comes from the run that produced it: the
    ``workflow_run`` event's run, or this run for the jobs of one ``pull_request`` workflow.
    """
    if not settings.artifact:
        return settings.dataset or None, ""
    run = settings.workflow_run
    run_id = run.id if run is not None else int(settings.run_id or 0)
    if not run_id:
        raise ConfigError("input artifact: the run that uploaded it is unknown (no GITHUB_RUN_ID)")
    name = PurePosixPath(settings.dataset).name if settings.dataset else ""
    found = remote.dataset_from(
        run_id, settings.artifact, name, pr.head_sha if pr is not None else None
    )
    ignored = (
        f" It also held {', '.join(found.ignored[:3])}{' …' if len(found.ignored) > 3 else ''}, "
        "which the gate did not read."
        if found.ignored
        else ""
    )
    return found.path, f"Judged {{cases}} from the {found.description}.{ignored}"

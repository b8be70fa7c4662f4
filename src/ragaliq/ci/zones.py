"""The two trust zones, on any host: what a gate judges, refuses, and reads from where.

The gate judges only where the change's code never ran (:mod:`ragaliq.checkout`), unless the
workflow says ``trust-pr-code: true``; the bar comes from the base commit, the change's own
config only as a proposal, and the dataset from the artifact its untrusted run handed over,
checked against the host's records. A gate started by a review, or by a baseline that landed,
runs none of the change's code: it judges the dataset the head commit's own run handed over.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from ragaliq.checkout import unsafe_checkout
from ragaliq.errors import ConfigError, DatasetMissingError, UnsafeSetupError
from ragaliq.forge import Change, HandOver, Host, JobSettings
from ragaliq.gate.acceptance import Acceptance, bind_to_dataset
from ragaliq.repository import FileSource, WorkTree

__all__ = [
    "CHANGE_RUNS",
    "TRUSTED_CODE_NOTICE",
    "TWO_ZONES",
    "GatedData",
    "bind_acceptances",
    "check_zone",
    "dataset_of",
    "proposal_source",
]

TWO_ZONES = (
    "run the pull request's pipeline in one job and the gate in another, on a fresh runner that "
    "checks out the base commit, as .github/workflows/ragaliq.yml does when `ragaliq init` "
    "writes it (for forks, .github/workflows/ragaliq-forks.yml), or set the action's input "
    "trust-pr-code: true if every contributor holds write access"
)
CHANGE_RUNS = ("change", "review")
"""The runs a follow-up gate judges: a change's own run, or a review's."""
TRUSTED_CODE_NOTICE = (
    "trust-pr-code: true: this gate ran in the job that ran the pull request's code, so the bar "
    "is not protected from that code (its config, baseline and secrets could be reached)."
)


def check_zone(settings: JobSettings, pr: Change | None) -> tuple[str, ...]:
    """Refuse to judge where the pull request's code may have run, unless the workflow says so.

    Returned: the notice to show when the workflow trusts the pull request's code.

    Raises:
        UnsafeSetupError: the workspace is not the base commit's untouched checkout.
        ConfigError: the run this gate follows found no pull request, or did not succeed.
    """
    run = settings.followed if settings.mode == "gate" else None
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
    settings: JobSettings, host: Host, pr: Change | None, work: WorkTree
) -> FileSource | None:
    """Where the change's own config is read, for what it proposes."""
    if pr is None or settings.trust_pr_code:
        return work
    return host.files_at(pr.head_sha, f"the pull request's head {pr.head_sha[:12]}")


@dataclass(frozen=True, kw_only=True)
class GatedData:
    """The dataset a gate judges, and where it came from."""

    path: Path | str | None
    """The file to judge; None for the config's own dataset."""
    notice: str = ""
    """Where it came from, with ``{cases}`` to fill; empty when read from the workspace."""
    artifact: HandOver | None = None
    """The artifact it was unpacked from, when it was handed over as one."""
    run_id: int | str = 0
    """Whose ``pull_request`` runs hand over the head's data: the run the gate belongs to (or
    follows), or the pull requests' workflow file, for a follower."""


def dataset_of(settings: JobSettings, host: Host, pr: Change | None) -> GatedData:
    """The dataset to judge.

    With the ``artifact`` input the dataset comes from the run that produced it: the
    ``workflow_run`` event's run, or this run for the jobs of one ``pull_request`` workflow. A
    gate started by a review judges the newest dataset that a ``pull_request`` run of the same
    workflow handed over for the head commit, as GitHub lists them: a review never runs the pull
    request's code, so it produces nothing of its own.

    Raises:
        ConfigError: the run is unknown, or no ``pull_request`` run handed over a dataset for
            the head commit a review is of.
        ArtifactError: the artifact cannot be listed, downloaded or unpacked.
    """
    if not settings.artifact:
        return GatedData(path=settings.dataset or None)
    run = settings.followed
    run_id: int | str = run.id if run is not None else int(settings.run_id or 0)
    if settings.mode in ("follow", "sweep"):
        run_id = settings.change_workflow
    if not run_id:
        raise ConfigError("input artifact: the run that uploaded it is unknown (no GITHUB_RUN_ID)")
    name = PurePosixPath(settings.dataset).name if settings.dataset else ""
    head = pr.head_sha if pr is not None else None
    produced_by, how = run.id if run is not None else int(settings.run_id or 0), ""
    if settings.by_review or settings.mode in ("follow", "sweep"):
        if pr is None or head is None:
            raise ConfigError("a review's gate found no pull request to judge")
        uploads = host.uploads(run_id, pr, settings.artifact)
        review = isinstance(run_id, int)
        which = "this workflow" if review else run_id
        if not uploads:
            raise DatasetMissingError(
                f"no pull_request run of {which} handed over the artifact "
                f"{settings.artifact} for the head commit {head[:12]}: "
                + ("a review's gate" if review else "a gate that follows a baseline")
                + " judges only what the pull request's own run produced, and runs none of its "
                "code. Let that run finish (or re-run it)"
                + (", then review again" if review else "")
            )
        produced_by = uploads[-1].run_id
        how = (
            f" (the pull_request run of the head commit {head[:12]}; the review ran no code)"
            if review
            else f" (handed over for the head commit {head[:12]} by the change's own run; "
            "this gate ran none of its code)"
        )
    found = host.handed_over(produced_by, settings.artifact, name, head or "")
    ignored = (
        f" It also held {', '.join(found.ignored[:3])}{' …' if len(found.ignored) > 3 else ''}, "
        "which the gate did not read."
        if found.ignored
        else ""
    )
    return GatedData(
        path=found.path,
        notice=f"Judged {{cases}} from the {found.description}{how}.{ignored}",
        artifact=found,
        run_id=run_id,
    )


def bind_acceptances(
    acceptances: tuple[Acceptance, ...],
    *,
    settings: JobSettings,
    host: Host,
    pr: Change,
    data: GatedData,
) -> tuple[tuple[Acceptance, ...], tuple[str, ...]]:
    """The reviewers' acceptances that hold for the dataset judged (``bind_to_dataset``)."""
    handed_over = data.artifact.handed_over if data.artifact is not None else None
    return bind_to_dataset(
        acceptances,
        handed_over=handed_over,
        all_handed_over=lambda: tuple(
            u.created_at for u in host.uploads(data.run_id, pr, settings.artifact)
        ),
    )

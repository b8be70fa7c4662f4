"""Where a gate runs: the change judged, the run it follows, the job's settings, the hand-over."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Literal

__all__ = [
    "DEFAULT_FOLLOW_LIMIT",
    "Change",
    "FollowedRun",
    "HandOver",
    "JobEvent",
    "JobSettings",
    "Mode",
    "Upload",
]

DEFAULT_FOLLOW_LIMIT = 10
"""Changes gated again per landing of a baseline, unless the workflow says another number."""

# -------------------------------------------------------------------------- the change and run


@dataclass(frozen=True, kw_only=True)
class Change:
    """The change a gate judges: a pull request, a merge request."""

    number: int
    base_sha: str
    head_sha: str
    base_repo: str
    head_repo: str
    author: str = ""
    """The login of the change's author."""
    base_ref: str = ""
    """The branch the change is to be merged into (``main``): the bar is that branch's."""
    head_ref: str = ""
    """The change's own branch, in its head repository."""

    @property
    def base(self) -> str:
        """The base as the status and messages name it: ``main@1a2b3c4``."""
        return f"{self.base_ref or 'base'}@{self.base_sha[:7]}"

    @property
    def from_fork(self) -> bool:
        """Whether the change comes from another repository than the one it merges into."""
        return self.head_repo.lower() != self.base_repo.lower()


@dataclass(frozen=True, kw_only=True)
class FollowedRun:
    """The run a follow-up job follows: a change's own run that ended, or a baseline run.

    Everything here comes from the host's event, never from the run's artifacts.
    """

    id: int
    kind: str
    """What started it: ``change`` (a change's own run), ``review`` (a review's), ``push``
    (a baseline run), or the host's own word for anything else."""
    conclusion: str
    head_sha: str
    head_branch: str
    head_owner: str = ""
    head_repo: str = ""
    change_numbers: tuple[int, ...] = ()
    """The changes the host lists on the run (none for a fork's, on GitHub)."""


@dataclass(frozen=True, kw_only=True)
class JobEvent:
    """What started this job, in the core's words (read by the adapter from the CI's event)."""

    kind: Literal["change", "review", "followed", "push", "other"]
    """``change``: a change's own run (a push to it, opened, re-targeted); ``review``: a review
    of it; ``followed``: a run that follows another (``followed_run``); ``push``: a push to a
    branch (recording); ``other``: anything else (a gate outside a change)."""
    change: Change | None = None
    """The event's change, for ``change`` and ``review`` (checked against the API before use)."""
    followed_run: FollowedRun | None = None
    trusted_branch: bool = False
    """The job runs on the repository's protected default branch, from that branch's own
    definition, started by no one's choice of inputs (a push, a schedule): where a host whose
    change pipelines run the change's own definition keeps its gate (``sweep``)."""


@dataclass(frozen=True, kw_only=True)
class Upload:
    """One dataset a change's run handed over."""

    run_id: int
    created_at: datetime
    """When the host recorded the upload."""


@dataclass(frozen=True, kw_only=True)
class HandOver:
    """The dataset the untrusted zone handed over, unpacked where the gate reads it as data."""

    path: Path
    """The unpacked file, in a private folder outside the workspace."""
    artifact: str
    run_id: int
    sha256: str
    """The digest of the dataset's bytes, shown in the comment."""
    size: int
    ignored: tuple[str, ...] = ()
    """Other files the hand-over held, which were not unpacked."""
    handed_over: datetime | None = None
    """When the host recorded the upload; None when it does not say."""

    @property
    def description(self) -> str:
        """Which artifact, from which run, and the dataset's digest, for notices."""
        return (
            f"artifact {self.artifact} of run {self.run_id}: {self.path.name}, "
            f"sha256 {self.sha256[:16]}"
        )


# -------------------------------------------------------------------------- the job

Mode = Literal["gate", "update-baseline", "store-baseline", "follow", "sweep"]


@dataclass(frozen=True, kw_only=True)
class JobSettings:
    """Everything the core reads of one job: its inputs, where it runs, and its event."""

    mode: Mode
    """``gate`` a change; record (``update-baseline``) or keep (``store-baseline``) the base
    branch's baseline; ``follow``: gate again the changes waiting on a baseline that landed;
    ``sweep``: gate every open change into the branch whose head the gate has not judged yet
    (a host whose trusted job finds the changes itself, as on GitLab)."""
    config: str
    dataset: str
    baseline: str
    anthropic_api_key: str
    anthropic_base_url: str
    """An Anthropic-compatible endpoint chosen by the workflow; empty for the config's."""
    comment: Literal["upsert", "off"]
    comment_id: str
    html_report: str
    junit_report: str = ""
    """Where a gate writes its JUnit XML, relative to the workspace; empty for none."""
    metrics_report: str = ""
    """Where a gate writes its OpenMetrics text, relative to the workspace; empty for none."""
    markdown_report: str = ""
    """Where a gate writes its comment's Markdown, relative to the workspace; empty for none."""
    artifact: str
    """The name of the artifact holding the dataset, handed over by the change's own run;
    empty to read the dataset from the workspace."""
    trust_pr_code: bool
    """The team runs the gate in the job that ran the change's code, and says so."""
    commit_status: bool
    """Whether the result is also set as a commit status on the change's head."""
    change_workflow: str
    """The workflow whose change runs hand over each change's dataset (``ragaliq.yml``): where a
    follower finds what to judge."""
    follow_limit: int
    """Changes a follower gates again per landing of a baseline."""
    workspace: Path
    repository: str
    """The repository, as the host names it (``owner/name``), recorded with a baseline."""
    run_id: str
    """This job's run, as the host numbers it."""
    run_url: str | None
    """Where this job's run is shown."""
    sha: str
    """The commit this job runs for (a push's, when recording)."""
    ref_name: str
    """The branch (or tag) this job runs for: ``main`` on a push to main."""
    event: JobEvent

    def __repr__(self) -> str:
        return f"JobSettings(mode={self.mode!r}, repository={self.repository!r})"

    @property
    def change(self) -> Change | None:
        """The change the event names, if it names one."""
        return self.event.change

    @property
    def followed(self) -> FollowedRun | None:
        """The run this job follows, if it follows one."""
        return self.event.followed_run

    @property
    def by_review(self) -> bool:
        """Whether a review started this job, directly or through a review's run."""
        run = self.followed
        if run is not None:
            return run.kind == "review"
        return self.event.kind == "review"

    @property
    def review_without_data(self) -> bool:
        """Whether this follows a review's run in which nothing ran (nothing to gate).

        A review that accepts nothing runs no job, so its run is skipped: that is no failure to
        report, and no reason to touch the status a real gate set.
        """
        run = self.followed
        return run is not None and run.kind == "review" and run.conclusion == "skipped"

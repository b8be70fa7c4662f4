"""What the gate asks of the code host's API: statuses, reviews, the comment, and the rest."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Literal, Protocol, TextIO

from ragaliq.forge.change import Change, FollowedRun, HandOver, Upload
from ragaliq.forge.runs import BaselineRuns

if TYPE_CHECKING:
    from ragaliq.config import BaselinesConfig
    from ragaliq.repository import FileSource
    from ragaliq.store.layout import BaselineStore

__all__ = [
    "ACCESS_LEVELS",
    "CONTEXT",
    "NO_BASELINE",
    "NO_DATASET",
    "WAITING",
    "Access",
    "CommentBoard",
    "CommentResult",
    "Host",
    "HostProfile",
    "JobLog",
    "ReviewRecord",
    "StatusBoard",
    "StatusRecord",
    "StatusState",
    "retired_context",
    "status_context",
    "waits_on_baseline",
    "waits_on_dataset",
]

# -------------------------------------------------------------------------- statuses

CONTEXT = "RagaliQ Gate"
StatusState = Literal["pending", "success", "failure", "error"]
WAITING = "waiting for the baseline"
"""How a change's status says it waits for its base's baseline run (state ``pending``)."""
NO_BASELINE = "no baseline"
"""How a change's status says the run records show no baseline of its base (state ``error``)."""
NO_DATASET = "no dataset"
"""How a change's status says its own run has handed over no dataset for its head (``error``)."""


def status_context(comment_id: str, base_ref: str) -> str:
    """The status's name, with the base branch: ``RagaliQ Gate (main)``.

    A second gate (comment-id ``docs``) is ``RagaliQ Gate docs (main)``. A status belongs to a
    commit, not to a change, so the base is in its name: a change re-targeted to another
    branch, or a second change from the same branch into another base, sets that base's
    context and never main's.
    """
    name = CONTEXT if comment_id == "default" else f"{CONTEXT} {comment_id}"
    return f"{name} ({base_ref or 'unknown base'})"


def retired_context(comment_id: str) -> str | None:
    """The context earlier versions set, which must never pass again.

    None for a second gate, whose old name (``RagaliQ Gate (<comment-id>)``) could be another
    gate's new one.
    """
    return CONTEXT if comment_id == "default" else None


def waits_on_baseline(state: str, description: str) -> bool:
    """Whether a gate's status (``main@1a2b3c4: ...``) says the change waits on a baseline.

    A change waiting, or not judged for want of a baseline, is gated again when one lands.
    """
    said = description.split(": ", 1)[1] if ": " in description else ""
    if state == "pending":
        return said.startswith(WAITING)
    return state == "error" and said.startswith(f"not judged: {NO_BASELINE}")


def waits_on_dataset(state: str, description: str) -> bool:
    """Whether a gate's status says the change's own run had handed over no dataset at its head.

    A gate that finds the changes itself judges such a change again; it is never green before.
    """
    said = description.split(": ", 1)[1] if ": " in description else ""
    return state == "error" and said.startswith(f"not judged: {NO_DATASET}")


@dataclass(frozen=True, kw_only=True)
class StatusRecord:
    """A commit status as the host shows it."""

    state: str
    description: str
    created_at: datetime | None = None
    creator: str = ""
    """The account that set it."""


class StatusBoard(Protocol):
    """The gate's status of one name on one commit."""

    @property
    def context(self) -> str: ...

    def set(self, state: StatusState, description: str) -> bool:
        """Set it; False (after saying why in the job's log) when the host refused."""
        ...


# -------------------------------------------------------------------------- reviews and comments

Access = Literal["none", "read", "triage", "write", "maintain", "admin"]
"""A person's access to the repository, in the core's words (GitHub's permissions; GitLab's
Guest/Reporter are ``read``, Developer ``write``, Maintainer ``maintain``, Owner ``admin``)."""
ACCESS_LEVELS: tuple[Access, ...] = ("none", "read", "triage", "write", "maintain", "admin")


@dataclass(frozen=True, kw_only=True)
class ReviewRecord:
    """A reviewer's record on a change that may carry ``/ragaliq accept``.

    A GitHub review, a GitLab note: the host's facts only; whether it accepts anything is the
    core's rule.
    """

    author: str
    by_person: bool
    """False for a bot's or an app's."""
    body: str
    commit: str | None
    """The commit it is of, when the host ties it to one (a GitHub review); None otherwise (a
    GitLab note names the commit in its command)."""
    standing: str = ""
    """Why it does not stand, in the host's words (``dismissed``, ``changes requested``,
    ``edited since it was written``); empty when it stands."""
    url: str = ""
    submitted_at: datetime | None = None


@dataclass(frozen=True, kw_only=True)
class CommentResult:
    """What an upsert of the gate's comment did."""

    action: Literal["created", "updated", "unchanged"]
    url: str


class CommentBoard(Protocol):
    """The change's one comment of the gate's, found by its hidden marker and its author."""

    def upsert(self, *, body: str, marker: str) -> CommentResult:
        """Create the comment marked ``marker``, or edit it to ``body`` if it exists.

        Raises:
            CommentForbiddenError: the token may read the change but not comment on it.
            PublishError: the host refused or failed otherwise.
        """
        ...


# -------------------------------------------------------------------------- the job and the host


class JobLog(Protocol):
    """The job's own channels: its log and annotations, its outputs, its summary."""

    stream: TextIO

    def notice(self, message: str, *, title: str = "") -> None: ...

    def warning(self, message: str, *, title: str = "") -> None: ...

    def error(self, message: str, *, title: str = "") -> None: ...

    def mask(self, secret: str) -> None: ...

    def log(self, message: str) -> None: ...

    def set_output(self, name: str, value: str) -> None: ...

    def write_summary(self, markdown: str) -> None: ...


@dataclass(frozen=True, kw_only=True)
class HostProfile:
    """What the host's surfaces hold, and how the gate's words name them."""

    comment: int = 65_536
    """The most characters of a comment."""
    summary: int = 1_048_576
    """The most UTF-8 bytes of the job's summary."""
    summary_name: str = "the job summary"
    """How the comment names where the full results are."""
    teams_hint: str = ""
    """What to do when a team's membership cannot be read (the token to give)."""
    accept_hint: str = ""
    """How a reviewer accepts a claim the gate got wrong, as the comment says it (trusted
    HTML); empty for the comment's own words."""


class Host(Protocol):
    """What the gate asks of the code host, through its API; every answer a fact.

    Every method may raise a :class:`~ragaliq.errors.RagaliqError` saying what failed and how to
    fix it (a token without a permission, an unreachable API), never a bare exception.
    """

    @property
    def name(self) -> str:
        """The host, for messages (``GitHub``)."""
        ...

    @property
    def profile(self) -> HostProfile: ...

    def files_at(self, sha: str, label: str) -> FileSource:
        """The repository's files at a commit; ``label`` names it in messages."""
        ...

    def check_change(self, change: Change) -> Change:
        """The event's change as the host has it now.

        Raises:
            ConfigError: it is closed, pushed to since, or re-targeted since the event.
        """
        ...

    def changes_of_run(self, run: FollowedRun) -> tuple[Change, ...]:
        """Every open change whose head is the followed run's commit, by number."""
        ...

    def open_changes(self, base_ref: str) -> tuple[Change, ...]:
        """The open changes into ``base_ref``, most recently updated first (one page)."""
        ...

    def handed_over(
        self, run_id: int, artifact: str, file_name: str, head_sha: str | None
    ) -> HandOver:
        """The dataset ``file_name`` of artifact ``artifact`` of run ``run_id``.

        Made for ``head_sha`` (when given), unpacked to a private folder outside the workspace.

        Raises:
            ArtifactError: it is missing, expired, from another commit, too large or unsafe.
        """
        ...

    def uploads(self, source: int | str, change: Change, artifact: str) -> tuple[Upload, ...]:
        """The datasets the change's own runs handed over for its head commit, oldest first.

        ``source``: run N (its workflow's runs), or a workflow file (``ragaliq.yml``). A run of
        another change, or of this change at another commit, hands over nothing of this one's
        where the host's records tell them apart.
        """
        ...

    def reviews(self, change: Change) -> tuple[tuple[ReviewRecord, ...], tuple[str, ...]]:
        """The reviewers' records on the change that carry a command, and notes on reading."""
        ...

    def access_of(self, login: str) -> Access | None:
        """``login``'s access to the repository; None for an account the host does not know.

        Raises:
            RepositoryError: the host cannot be asked.
        """
        ...

    def member_of(self, team: str, login: str) -> bool | str:
        """Whether ``login`` is an active member of ``org/team``.

        The host's words (``GitHub answered 404``) when that cannot be read.
        """
        ...

    def baseline_runs(self, branch: str, workflow: str, trusted: FileSource) -> BaselineRuns:
        """The records of ``workflow``'s push runs on ``branch``; its triggers at ``trusted``."""
        ...

    def baseline_store(self, config: BaselinesConfig) -> BaselineStore:
        """The store of baselines the trusted config names, to read from and write to."""
        ...

    def uploaded(self, run_id: int, name: str) -> bool:
        """Whether run ``run_id`` of the repository uploaded an artifact named ``name``."""
        ...

    def answer_files(self, change: Change) -> tuple[list[tuple[str, bytes]], list[str]]:
        """The signed answers the change's own earlier gates kept, and notes on those not read.

        Found by their runs, and read as data.
        """
        ...

    def status(self, sha: str, context: str) -> StatusBoard:
        """The gate's status named ``context`` on commit ``sha``, to set."""
        ...

    def latest_status(self, sha: str, context: str) -> StatusRecord | None:
        """The newest status of that name on a commit; None when there is none."""
        ...

    def comment(self, change: Change) -> CommentBoard:
        """The change's comment of the gate's."""
        ...

    def approve(self, change: Change, approved: bool) -> str | None:
        """Give (or take back) the gate's own approval of the change at its head.

        Where the host lets a required approver stand for the gate; what was done, for the log,
        or None where the host has no such thing.
        """
        ...

    def foreign_inputs(self) -> tuple[str, ...]:
        """The inputs this job got from someone else than its own definition.

        GitLab's pipeline variables, which anyone allowed to run a pipeline may set: the gate
        holding the key refuses to run with any. Empty where the host has no such thing.
        """
        ...

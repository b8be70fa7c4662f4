"""The baseline runs a host records, and what the core asks of those records."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal, Protocol

__all__ = [
    "ANSWERS_ARTIFACT",
    "BASELINE_ARTIFACT_PREFIX",
    "RUN_PHASES",
    "BaselineRuns",
    "RunPhase",
    "RunRecord",
    "answers_artifact",
    "baseline_artifact",
]

BASELINE_ARTIFACT_PREFIX = "ragaliq-baseline-"
"""A baseline run shows the file it recorded by uploading it as ``ragaliq-baseline-<sha256>``:
only code that ran in that run can add artifacts to it."""
ANSWERS_ARTIFACT = "ragaliq-answers"
"""The artifact a baseline run keeps its signed judge answers in."""


def baseline_artifact(digest: str) -> str:
    """The name of the artifact that shows a run recorded the baseline with this SHA-256."""
    return f"{BASELINE_ARTIFACT_PREFIX}{digest}"


def answers_artifact(number: int) -> str:
    """The artifact a gate of change ``number`` keeps its signed judge answers in."""
    return f"{ANSWERS_ARTIFACT}-pr{number}"


RunPhase = Literal["waiting", "running", "succeeded", "failed", "cancelled", "timed_out", "skipped"]
"""Where a host's run (a GitHub workflow run, a GitLab pipeline) stands, in the core's words.

``waiting`` (queued, pending, waiting for a resource or an approval) and ``running`` are not over;
the others are. A host's status or conclusion the adapter does not know is ``failed``: a run
the core cannot read is never taken for one that succeeded."""
RUN_PHASES: tuple[RunPhase, ...] = (
    "waiting",
    "running",
    "succeeded",
    "failed",
    "cancelled",
    "timed_out",
    "skipped",
)


@dataclass(frozen=True, kw_only=True)
class RunRecord:
    """One run of the baseline workflow (or pipeline) as the host's records show it."""

    id: int
    """The host's id of the run."""
    attempt: int = 1
    """Its latest attempt: a re-run is the same run, attempted again."""
    phase: RunPhase
    """Where its latest attempt stands."""
    said: str
    """The host's own words for it (``completed/cancelled``), for messages."""
    url: str = ""
    """Where a person sees it (and re-runs it)."""
    started_at: datetime | None = None
    """When its latest attempt started."""
    baselines: tuple[str, ...] = ()
    """The SHA-256 of each baseline its latest attempt showed it recorded (the artifact
    ``ragaliq-baseline-<sha256>``); a succeeded run that recorded one has exactly one."""

    @property
    def over(self) -> bool:
        """Whether the run has ended, one way or another."""
        return self.phase not in ("waiting", "running")

    def describe(self) -> str:
        """``run 123 (attempt 2)``."""
        return f"run {self.id}" + (f" (attempt {self.attempt})" if self.attempt > 1 else "")


class BaselineRuns(Protocol):
    """What a host's records say of the baseline runs of one base branch."""

    @property
    def workflow(self) -> str:
        """The baseline workflow (or pipeline), as messages name it (``ragaliq-baseline.yml``)."""
        ...

    def newest_run(self, commit: str) -> RunRecord | None:
        """The newest push run of the baseline workflow on the base branch at ``commit``.

        At its latest attempt; None when there is no such run.

        Raises:
            BaselineError: the records cannot be read.
        """
        ...

    def first_parent(self, commit: str) -> str | None:
        """The commit's first parent; None for a root commit or one the host does not know.

        Raises:
            RepositoryError: the host cannot be asked.
        """
        ...

    def run_due(self, since: str, commit: str) -> str | None:
        """Why a push of the changes from ``since`` to ``commit`` would start a baseline run.

        Read from the trusted baseline workflow's own triggers (at the base commit) and what
        changed; None when it would not. Where that cannot be shown (the workflow is not
        there, the changes cannot all be listed), the answer is a reason: a run may have been
        due.
        """
        ...

    def recorded_baseline(self, run: RunRecord, digest: str) -> bytes:
        """The baseline file ``run`` recorded with ``digest``, read from the run itself.

        Raises:
            BaselineError: the run's record of it cannot be read.
        """
        ...

    def recorded_answers(self, run: RunRecord) -> bytes | None:
        """The signed judge answers ``run`` kept as its own artifact; None when it kept none.

        Raises:
            BaselineError: they are there but cannot be read within the limits.
        """
        ...

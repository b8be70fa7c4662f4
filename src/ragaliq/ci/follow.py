"""When a baseline lands: the changes waiting on it, gated again without a new push.

A change whose base's baseline was still recording got ``pending``; one whose base had no usable
baseline got ``error`` (not judged: no baseline). When a baseline run of the base branch ends,
the follower lists the open changes into that branch and gates again those whose gate status
says they wait (:func:`~ragaliq.forge.waits_on_baseline`), most recently updated first, up to
a limit per landing (:data:`~ragaliq.forge.DEFAULT_FOLLOW_LIMIT` unless the workflow says
another); each against the base commit the host names for it now, within its own budget. The
rest keep ``pending`` with a line naming the next run of the follower, or a manual re-run, and
the follower's summary states what the landing cost in all.

A ``pending`` set longer than :data:`~ragaliq.ci.custody.PENDING_LIMIT` ago (a follower that
never ran, a run that never finished) becomes ``error`` the next time the follower or any gate
runs: a change never waits for ever.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Generic, TypeVar

from ragaliq.ci.custody import PENDING_LIMIT_HOURS, stale
from ragaliq.forge import NO_BASELINE, waits_on_baseline, waits_on_dataset
from ragaliq.models import Usage
from ragaliq.text.counts import plural

__all__ = [
    "LEFT_WAITING",
    "STALE",
    "FollowPlan",
    "Landing",
    "StatusSeen",
    "plan_follow",
    "stale_pending",
    "unjudged",
    "waiting",
]

LEFT_WAITING = (
    "gated again by the follower's next run (when the next baseline lands), or re-run this "
    "change's gate"
)
STALE = (
    f"{NO_BASELINE}: the change waited more than {PENDING_LIMIT_HOURS} hours for its base's "
    "baseline; re-run the baseline workflow's run for that commit, or this change's gate"
)
"""What a ``pending`` status that waited too long becomes (after ``not judged:``)."""

C = TypeVar("C")


@dataclass(frozen=True, kw_only=True)
class StatusSeen:
    """The gate's newest status on a change's head, as the host shows it."""

    state: str
    description: str
    created_at: datetime | None = None
    reviewed_since: bool = False
    """A reviewer's record with a command was written after it: the verdict may change."""


@dataclass(frozen=True, kw_only=True)
class FollowPlan(Generic[C]):
    """What a follower's run does with the open changes of the branch."""

    gate: tuple[C, ...]
    """Gated again now, in this order."""
    left: tuple[C, ...]
    """Waiting, past this run's limit: they keep ``pending``, saying when they are gated."""
    expired: tuple[C, ...]
    """``pending`` for too long: they become ``error``."""


def stale_pending(status: StatusSeen | None, now: datetime | None = None) -> bool:
    """Whether a change's ``pending`` status has waited past the limit."""
    return status is not None and status.state == "pending" and stale(status.created_at, now)


def unjudged(status: StatusSeen | None) -> bool:
    """Whether a change's head has no verdict of the gate's yet that still stands.

    No status, one that waits (for its base's baseline, or for its own run's dataset), or one
    a reviewer's command was written after: what a sweep gates (a host whose trusted job finds
    the changes itself).
    """
    return (
        status is None
        or status.state == "pending"
        or status.reviewed_since
        or waits_on_baseline(status.state, status.description)
        or waits_on_dataset(status.state, status.description)
    )


def waiting(status: StatusSeen | None) -> bool:
    """Whether a change's status says it waits for a baseline: what a follower gates again."""
    return status is not None and waits_on_baseline(status.state, status.description)


def plan_follow(
    changes: Sequence[tuple[C, StatusSeen | None]],
    *,
    limit: int,
    now: datetime | None = None,
    pick: Callable[[StatusSeen | None], bool] = waiting,
) -> FollowPlan[C]:
    """Which of the open changes (most recently updated first) are gated again now.

    A change waits when its status says so; a waiting change within the limit is gated again
    whatever its status's age (the baseline it waited for may be the one that landed). Any other
    change whose ``pending`` is older than the limit (a wait past this run's limit, a gate whose
    job died) expires.
    """
    picked = [change for change, status in changes if pick(status)]
    gate = picked[:limit]
    expired = [
        change for change, status in changes if change not in gate and stale_pending(status, now)
    ]
    return FollowPlan(
        gate=tuple(gate),
        left=tuple(change for change in picked[limit:] if change not in expired),
        expired=tuple(expired),
    )


@dataclass(kw_only=True)
class Landing:
    """What a follower's run did, for its summary."""

    branch: str
    gated: list[tuple[str, str]] = field(default_factory=list)
    """``(change, outcome)`` for each change gated again."""
    left: int = 0
    expired: int = 0
    usage: Usage = field(default_factory=Usage)

    def add(self, change: str, outcome: str, usage: Usage | None) -> None:
        self.gated.append((change, outcome))
        if usage is not None:
            self.usage = self.usage + usage

    def summary(self) -> str:
        """The follower's job summary: each change and its outcome, and what it cost."""
        lines = [f"## RagaliQ Gate: a baseline of {self.branch} landed", ""]
        if not self.gated and not self.left:
            lines.append("No open change was waiting for it.")
        for change, outcome in self.gated:
            lines.append(f"- {change}: {outcome}")
        if self.left:
            lines.append(f"- {plural(self.left, 'more change')} still waiting: {LEFT_WAITING}.")
        if self.expired:
            lines.append(f"- {plural(self.expired, 'change')} waited too long: not judged.")
        usage = self.usage
        lines += [
            "",
            f"This landing cost {plural(usage.calls, 'judge call')}, "
            f"{usage.input_tokens + usage.output_tokens:,} tokens, ${usage.cost_usd:.4f} "
            "(each gate within its own budget).",
        ]
        return "\n".join(lines) + "\n"

"""What a gate needs from a CI host, whichever it is: the port every host adapter fills.

The gate on a host is written once (:mod:`ragaliq.ci`) against the facts below; an adapter
(:mod:`ragaliq.github`, :mod:`ragaliq.gitlab`, the in-memory host of the tests) reads each fact
from its host's API and event and decides nothing. Every rule of trust (which run's baseline is
the bar, who may accept a finding, what a status means, which hand-over is judged) is the core's.

Two questions, two seams, as in danger-js: *where am I running* (the change judged, the run this
job is, the hand-over: :class:`JobEvent`) comes from the CI's environment; *what does the host
say* (files at a commit, baseline runs, statuses, the comment: :class:`Host`) from its API.
"""

from __future__ import annotations

from ragaliq.forge.change import (
    DEFAULT_FOLLOW_LIMIT,
    Change,
    FollowedRun,
    HandOver,
    JobEvent,
    JobSettings,
    Mode,
    Upload,
)
from ragaliq.forge.host import (
    ACCESS_LEVELS,
    CONTEXT,
    NO_BASELINE,
    NO_DATASET,
    WAITING,
    Access,
    CommentBoard,
    CommentResult,
    Host,
    HostProfile,
    JobLog,
    ReviewRecord,
    StatusBoard,
    StatusRecord,
    StatusState,
    retired_context,
    status_context,
    waits_on_baseline,
    waits_on_dataset,
)
from ragaliq.forge.runs import (
    ANSWERS_ARTIFACT,
    BASELINE_ARTIFACT_PREFIX,
    RUN_PHASES,
    BaselineRuns,
    RunPhase,
    RunRecord,
    answers_artifact,
    baseline_artifact,
)

__all__ = [
    "ACCESS_LEVELS",
    "ANSWERS_ARTIFACT",
    "BASELINE_ARTIFACT_PREFIX",
    "CONTEXT",
    "DEFAULT_FOLLOW_LIMIT",
    "NO_BASELINE",
    "NO_DATASET",
    "RUN_PHASES",
    "WAITING",
    "Access",
    "BaselineRuns",
    "Change",
    "CommentBoard",
    "CommentResult",
    "FollowedRun",
    "HandOver",
    "Host",
    "HostProfile",
    "JobEvent",
    "JobLog",
    "JobSettings",
    "Mode",
    "ReviewRecord",
    "RunPhase",
    "RunRecord",
    "StatusBoard",
    "StatusRecord",
    "StatusState",
    "Upload",
    "answers_artifact",
    "baseline_artifact",
    "retired_context",
    "status_context",
    "waits_on_baseline",
    "waits_on_dataset",
]

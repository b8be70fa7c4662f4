"""The exception tree of RagaliQ Gate.

Every error the user can cause or meet is one of these; the CLI and the action turn them into a
single message and an exit code, and nothing else is shown without ``--debug``::

    RagaliqError
    ├── ConfigError              ragaliq.yaml is missing, unreadable or invalid
    │   └── DatasetMissingError  the change's own run handed over no dataset at its head (yet)
    ├── DatasetError             the dataset file is missing, unreadable or invalid
    ├── JudgeError               one judge operation failed (the case becomes an ``error`` result)
    │   ├── JudgeResponseError   the judge answered, but not with a valid verdict for every claim
    │   ├── JudgeWorkError       the offline judge passed a case's work bound: an error, no stall
    │   └── JudgeUnavailableError  the judge cannot be used at all (bad key, API down): stop the run
    ├── BaselineError            the baseline file is missing, corrupt or incompatible
    │   ├── BaselineMissingError  the run records show no usable baseline for the base commit
    │   └── BaselinePendingError  the base's baseline is still being recorded: nothing to decide yet
    ├── ReportError              a run report or decision file is missing, unreadable or invalid
    ├── RepositoryError          a file of the repository cannot be read for certain (the base
    │                            commit is missing, git or the GitHub API failed, a symlink)
    ├── ArtifactError            the dataset's artifact is missing, unsafe or too large
    ├── UnsafeSetupError         the gate would run where a pull request's code ran: it refuses
    ├── BudgetError              the run would spend more than the gate's budget
    ├── TemplateError            a comment or summary template failed to render
    ├── OutputError              a report, decision, comment or baseline could not be written
    └── PublishError             GitHub refused or failed to take the comment
        └── CommentForbiddenError  the token may not write comments (a fork PR's token)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ragaliq.models import Usage

__all__ = [
    "ArtifactError",
    "BaselineError",
    "BaselineMissingError",
    "BaselinePendingError",
    "BudgetError",
    "CommentForbiddenError",
    "ConfigError",
    "DatasetError",
    "DatasetMissingError",
    "JudgeError",
    "JudgeResponseError",
    "JudgeUnavailableError",
    "JudgeWorkError",
    "OutputError",
    "PublishError",
    "RagaliqError",
    "ReportError",
    "RepositoryError",
    "TemplateError",
    "UnsafeSetupError",
]


class RagaliqError(Exception):
    """Root of every error RagaliQ Gate raises on purpose."""


class ConfigError(RagaliqError):
    """The configuration file is missing, unreadable or invalid."""


class DatasetError(RagaliqError):
    """The dataset file is missing, unreadable or invalid."""


class DatasetMissingError(ConfigError):
    """The change's own run has handed over no dataset for its head commit, or not yet.

    A gate that finds the changes itself judges the change again once that run hands one over.
    """


class JudgeError(RagaliqError):
    """A judge operation failed; the case it belongs to is recorded as an error.

    ``usage`` carries what the failed attempts cost, so that the run's totals stay true.
    """

    def __init__(self, message: str, *, usage: Usage | None = None) -> None:
        super().__init__(message)
        self.usage = usage


class JudgeResponseError(JudgeError):
    """The judge replied, but the reply could not be turned into a valid result."""


class JudgeWorkError(JudgeError):
    """The offline judge would have spent more than a case's work bound on it.

    The bound is linear in the size of the case, so that no case, however it is built, stalls a
    run: the case becomes an error instead (and the cascade sends its claims to Claude).
    """


class JudgeUnavailableError(JudgeError):
    """The judge cannot be used at all, so the run stops instead of failing every case."""


class BaselineError(RagaliqError):
    """The baseline file is missing, corrupt or from an incompatible version."""


class BaselineMissingError(BaselineError):
    """The host's run records show no usable baseline for the base commit.

    Its run failed, was cancelled or was deleted, or it showed no recorded baseline: the change
    is not judged, and is gated again when a baseline of its base lands.
    """


class BaselinePendingError(BaselineError):
    """The base commit's baseline run has not finished: the gate waits rather than decide.

    Not a failure of the change: its status is ``pending`` until the baseline lands, and then the
    change is gated again.
    """

    def __init__(self, message: str, *, commit: str, run_id: int) -> None:
        super().__init__(message)
        self.commit = commit
        self.run_id = run_id


class ReportError(RagaliqError):
    """A run report or decision file is missing, unreadable or not one RagaliQ Gate wrote."""


class RepositoryError(RagaliqError):
    """A file of the repository cannot be read for certain, so the gate cannot trust its absence.

    Raised for a base commit the checkout lacks when the GitHub API cannot stand in, a git or API
    failure, a path that is a symbolic link, a folder or a special file, or a file over its size
    limit.
    """


class ArtifactError(RagaliqError):
    """The artifact that hands the dataset over is missing, expired, unsafe or too large."""


class UnsafeSetupError(RagaliqError):
    """The gate was asked to judge where a pull request's code may have run, and refuses."""


class BudgetError(RagaliqError):
    """Judging would spend more tokens or dollars than the gate's budget allows."""


class TemplateError(RagaliqError):
    """A Jinja template could not be loaded or rendered."""


class OutputError(RagaliqError):
    """A result file (report, decision, comment, baseline, step output) could not be written."""


class PublishError(RagaliqError):
    """The PR comment could not be published."""


class CommentForbiddenError(PublishError):
    """The token may read the pull request but not write comments on it (a fork PR, typically)."""

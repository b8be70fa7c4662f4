"""The gate's result as a commit status on the pull request's head, for branch protection.

A job started by ``workflow_run`` runs on the default branch, so its own check never shows on the
pull request; a commit status on the PR's head SHA does, and a branch protection rule can require
it. A status belongs to a commit, not to a pull request, so its context names the base branch the
change was judged against (``RagaliQ Gate (main)``): a head shared by pull requests into several
branches, or a pull request re-targeted to another one, can never make main's context green with
another branch's bar. The gate sets it in both workflow forms, so one required status covers pull
requests from branches and from forks alike: ``pending`` while it judges, then ``success``,
``failure`` or ``error`` (not judged), its description starting with the base commit judged
(``main@1a2b3c4: ...``). Never ``success`` for a change nobody judged.

The context of earlier versions, ``RagaliQ Gate`` with no base, is set to ``error`` with a line
naming the context to require instead, so that a rule still requiring it never passes again.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from github import GithubException

from ragaliq.errors import RepositoryError
from ragaliq.github.client import (
    PER_PAGE,
    build_github,
    describe_failure,
    json_getter,
    read_time,
    retrying,
    unreachable,
)

__all__ = [
    "CONTEXT",
    "CommitStatus",
    "StatusRecord",
    "StatusState",
    "latest_status",
    "retired_context",
    "status_context",
]

CONTEXT = "RagaliQ Gate"
StatusState = Literal["pending", "success", "failure", "error"]
_MAX_DESCRIPTION = 140


def status_context(comment_id: str, base_ref: str) -> str:
    """The status's name, with the base branch: ``RagaliQ Gate (main)``.

    A second gate (comment-id ``docs``) is ``RagaliQ Gate docs (main)``.
    """
    name = CONTEXT if comment_id == "default" else f"{CONTEXT} {comment_id}"
    return f"{name} ({base_ref or 'unknown base'})"


def retired_context(comment_id: str) -> str | None:
    """The context earlier versions set, which must never pass again.

    None for a second gate, whose old name (``RagaliQ Gate (<comment-id>)``) could be another
    gate's new one.
    """
    return CONTEXT if comment_id == "default" else None


@dataclass(frozen=True, kw_only=True)
class StatusRecord:
    """A commit status as the host shows it."""

    state: str
    description: str
    created_at: datetime | None
    creator: str
    """The account that set it."""


def latest_status(
    *, token: str, repository: str, api_url: str, sha: str, context: str, attempts: int = 3
) -> StatusRecord | None:
    """The newest status named ``context`` on commit ``sha``; None when there is none.

    Raises:
        RepositoryError: the API cannot be asked.
    """
    try:
        github = build_github(token=token, api_url=api_url)
    except ValueError as exc:
        raise RepositoryError(f"the statuses of {sha[:12]} cannot be read: {exc}") from exc
    try:
        found = json_getter(github, attempts=attempts)(
            f"/repos/{repository}/commits/{sha}/statuses", {"per_page": PER_PAGE}
        )
    except GithubException as exc:
        raise RepositoryError(
            describe_failure(exc, doing=f"reading the statuses of {sha[:12]}", attempts=attempts)
        ) from exc
    except OSError as exc:
        raise RepositoryError(unreachable(api_url, attempts)) from exc
    finally:
        github.close()
    for status in found or ():  # newest first
        if isinstance(status, dict) and status.get("context") == context:
            return StatusRecord(
                state=str(status.get("state") or ""),
                description=str(status.get("description") or ""),
                created_at=read_time(status.get("created_at")),
                creator=str((status.get("creator") or {}).get("login") or ""),
            )
    return None


@dataclass(frozen=True, kw_only=True)
class CommitStatus:
    """Sets the gate's status on one commit of ``repository``."""

    token: str
    repository: str
    sha: str
    api_url: str
    context: str = CONTEXT
    target_url: str | None = None
    attempts: int = 3
    on_failure: Callable[[str], None] | None = None
    """Hears why a status could not be set; the gate goes on (the job's check still tells)."""

    def set(self, state: StatusState, description: str) -> bool:
        """Set the status; False (after telling ``on_failure``) when GitHub refused it."""
        body: dict[str, str] = {
            "state": state,
            "context": self.context,
            "description": _shorten(description),
        }
        if self.target_url:
            body["target_url"] = self.target_url
        try:
            github = build_github(token=self.token, api_url=self.api_url)
        except ValueError as exc:
            return self._failed(f"the commit status was not set: {exc}")
        try:
            retrying(
                lambda: github.requester.requestJsonAndCheck(
                    "POST", f"/repos/{self.repository}/statuses/{self.sha}", input=body
                ),
                attempts=self.attempts,
            )
        except GithubException as exc:
            return self._failed(
                "the commit status was not set: "
                + describe_failure(
                    exc,
                    doing=f"setting the status of {self.sha[:12]}",
                    attempts=self.attempts,
                    forbidden="the token may not set commit statuses; give the workflow "
                    "`permissions: statuses: write`",
                )
            )
        except OSError as exc:
            return self._failed(f"the commit status was not set ({type(exc).__name__})")
        finally:
            github.close()
        return True

    def _failed(self, message: str) -> bool:
        if self.on_failure is not None:
            self.on_failure(message)
        return False


def _shorten(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= _MAX_DESCRIPTION else line[: _MAX_DESCRIPTION - 1] + "…"

"""The gate's result as a commit status on the pull request's head, for branch protection.

A job started by ``workflow_run`` runs on the default branch, so its own check never shows on the
pull request; a commit status on the PR's head SHA does, and a branch protection rule can require
it. What the status is named and says is the core's (:func:`~ragaliq.forge.status_context`); this
module sets it and reads it back through the API.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from github import GithubException

from ragaliq._times import read_time
from ragaliq.errors import RepositoryError
from ragaliq.forge import CONTEXT, StatusRecord, StatusState
from ragaliq.github.client import PER_PAGE, GitHubApi, describe_failure, retrying

__all__ = ["CommitStatus", "latest_status"]

_MAX_DESCRIPTION = 140
_FORBIDDEN = (
    "the token may not set commit statuses; give the workflow `permissions: statuses: write`"
)


def latest_status(api: GitHubApi, *, sha: str, context: str) -> StatusRecord | None:
    """The newest status named ``context`` on commit ``sha``; None when there is none.

    Raises:
        RepositoryError: the API cannot be asked.
    """
    found = api.ask(
        lambda get: get(f"/repos/{api.repository}/commits/{sha}/statuses", {"per_page": PER_PAGE}),
        doing=f"reading the statuses of {sha[:12]}",
        error=RepositoryError,
    )
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
    """Sets the gate's status named ``context`` on one commit."""

    api: GitHubApi
    sha: str
    context: str = CONTEXT
    target_url: str | None = None
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
        api = self.api
        try:
            github = api.client()
        except ValueError as exc:
            return self._failed(f"the commit status was not set: {exc}")
        try:
            retrying(
                lambda: github.requester.requestJsonAndCheck(
                    "POST", f"/repos/{api.repository}/statuses/{self.sha}", input=body
                ),
                attempts=api.attempts,
            )
        except GithubException as exc:
            return self._failed(
                "the commit status was not set: "
                + describe_failure(
                    exc,
                    doing=f"setting the status of {self.sha[:12]}",
                    attempts=api.attempts,
                    forbidden=_FORBIDDEN,
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

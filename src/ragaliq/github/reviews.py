"""A pull request's reviews, and a reviewer's access, as GitHub's API has them: facts for the core.

Why reviews: a review is written by its author through GitHub only, carries the commit it
reviewed (``commit_id``) so that it covers exactly what was flagged there, and GitHub does not let
a pull request's author approve their own pull request. A label says nothing of which commit or
which claim, and anyone with triage access can add one; a comment command is tied to no commit.

Which reviews accept, and who may accept, is the core's rule (:mod:`ragaliq.ci.acceptances`):
this module reads every page of reviews (each a :class:`~ragaliq.forge.ReviewRecord`: who, a
person or not, the body, the commit, whether it stands), a login's permission on the repository,
and a team's membership.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from github import GithubException

from ragaliq._times import read_time
from ragaliq.errors import RepositoryError
from ragaliq.forge import Access, ReviewRecord
from ragaliq.github.client import PER_PAGE, Get, GitHubApi

__all__ = ["MAX_REVIEW_PAGES", "TEAMS_TOKEN", "access_of", "member_of", "read_reviews"]

MAX_REVIEW_PAGES = 50
"""Pages of reviews read at most (5,000 reviews); the notes say when there were more."""
_STANDING_STATES = frozenset({"APPROVED", "COMMENTED"})
_PERMISSIONS: dict[str, Access] = {
    "admin": "admin",
    "maintain": "maintain",
    "write": "write",
    "triage": "triage",
    "read": "read",
    "none": "none",
}
_FORBIDDEN = (
    "the token may not read pull requests; give the workflow `permissions: pull-requests: write`"
)
TEAMS_TOKEN = (
    "the job's GITHUB_TOKEN cannot read an organisation's teams; list logins in "
    "gate.accept_from, or give the action's github-token input a token that can read the "
    "organisation's members (docs/security.md, Accepting findings)"
)


def read_reviews(api: GitHubApi, number: int) -> tuple[tuple[ReviewRecord, ...], tuple[str, ...]]:
    """Every review of pull request ``number`` that carries a command, oldest first; and notes.

    Raises:
        RepositoryError: the reviews cannot be read.
    """
    notes: list[str] = []

    def ask(get: Get) -> list[ReviewRecord]:
        url = f"/repos/{api.repository}/pulls/{number}/reviews"
        return [_record(review) for review in _reviews(get, url, notes)]

    records = api.ask(
        ask,
        doing=f"reading the reviews of pull request #{number}",
        error=RepositoryError,
        forbidden=_FORBIDDEN,
    )
    return tuple(r for r in records if "/ragaliq" in r.body.lower()), tuple(notes)


def _record(review: dict[str, Any]) -> ReviewRecord:
    user = review.get("user") or {}
    state = str(review.get("state"))
    return ReviewRecord(
        author=str(user.get("login", "")),
        by_person=str(user.get("type", "")) != "Bot",
        body=str(review.get("body") or ""),
        commit=str(review.get("commit_id") or ""),
        standing="" if state in _STANDING_STATES else state.lower().replace("_", " "),
        url=str(review.get("html_url") or ""),
        submitted_at=read_time(review.get("submitted_at")),
    )


def _reviews(get: Get, url: str, notes: list[str]) -> Iterator[dict[str, Any]]:
    """Every review of the pull request, page by page, oldest first."""
    for page in range(1, MAX_REVIEW_PAGES + 1):
        found = get(url, {"per_page": PER_PAGE, "page": page}) or []
        yield from (r for r in found if isinstance(r, dict))
        if len(found) < PER_PAGE:
            return
    notes.append(
        f"The pull request has over {MAX_REVIEW_PAGES * PER_PAGE:,} reviews: only the first "
        f"{MAX_REVIEW_PAGES * PER_PAGE:,} were read for acceptances."
    )


def access_of(api: GitHubApi, login: str) -> Access | None:
    """``login``'s permission on the repository; None for a login GitHub does not know.

    Raises:
        RepositoryError: the permission API failed otherwise than not knowing the login.
    """

    def ask(get: Get) -> Access | None:
        try:
            found = get(f"/repos/{api.repository}/collaborators/{login}/permission")
        except GithubException as exc:
            if exc.status != 404:
                raise
            return None
        return _PERMISSIONS.get(str((found or {}).get("permission", "")), "none")

    return api.ask(ask, doing=f"reading {login}'s permission", error=RepositoryError)


def member_of(api: GitHubApi, team: str, login: str) -> bool | str:
    """Whether ``login`` is an active member of ``org/team``; GitHub's answer when unread.

    GitHub answers 404 both to a non-member and to a token that cannot see the team (every
    ``GITHUB_TOKEN``), so a 404 is not a "no".
    """
    org, name = team.split("/", 1)

    def ask(get: Get) -> bool | str:
        try:
            membership = get(f"/orgs/{org}/teams/{name}/memberships/{login}")
        except GithubException as exc:
            return f"GitHub answered {exc.status}"
        return str((membership or {}).get("state")) == "active"

    return api.ask(ask, doing=f"reading the team {team}", error=RepositoryError)

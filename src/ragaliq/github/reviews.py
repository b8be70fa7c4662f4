"""Reviewers' acceptances, read from the pull request's reviews and checked against the repository.

Why reviews: a review is written by its author through GitHub only, carries the commit it
reviewed (``commit_id``) so that it covers exactly what was flagged there, and GitHub does not let
a pull request's author approve their own pull request. A label says nothing of which commit or
which claim, and anyone with triage access can add one; a comment command is tied to no commit.

A review counts when its body holds ``/ragaliq accept <ids>`` or ``/ragaliq accept all``, it is
``APPROVED`` or ``COMMENTED`` at the head commit being gated, and its author may accept: the
base config's ``gate.accept_from`` (anyone with write access by default, checked with the
repository's permission API, or the logins and ``org/team`` slugs it lists), never the pull
request's author unless ``gate.author_may_accept`` says so.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from github import GithubException

from ragaliq.config import GatePolicy
from ragaliq.errors import RepositoryError
from ragaliq.gate.acceptance import Acceptance, parse_command
from ragaliq.github.client import build_github, describe_failure, retrying

__all__ = ["WRITE_PERMISSIONS", "read_acceptances_from_reviews"]

WRITE_PERMISSIONS = frozenset({"admin", "maintain", "write"})
_COUNTED_STATES = frozenset({"APPROVED", "COMMENTED"})


def read_acceptances_from_reviews(
    *,
    token: str,
    repository: str,
    api_url: str,
    number: int,
    head_sha: str,
    author: str,
    policy: GatePolicy,
    attempts: int = 3,
) -> tuple[tuple[Acceptance, ...], tuple[str, ...]]:
    """The acceptances the reviews of pull request ``number`` give at ``head_sha``, and notices.

    Every review with a command that does not count gets a notice saying why.

    Raises:
        RepositoryError: the reviews cannot be read.
    """
    if policy.accept_from == "nobody":
        return (), ()
    try:
        github = build_github(token=token, api_url=api_url)
    except ValueError as exc:
        raise RepositoryError(
            f"the reviews of pull request #{number} cannot be read: {exc}"
        ) from exc

    def get(url: str, parameters: dict[str, Any] | None = None) -> Any:
        _, data = retrying(
            lambda: github.requester.requestJsonAndCheck("GET", url, parameters=parameters),
            attempts=attempts,
        )
        return data

    accepted: list[Acceptance] = []
    notices: list[str] = []
    try:
        reviews = get(f"/repos/{repository}/pulls/{number}/reviews", {"per_page": 100}) or []
        for review in reviews:
            what = parse_command(str(review.get("body") or ""))
            if what is None:
                continue
            login = str((review.get("user") or {}).get("login", ""))
            why_not = _why_not(
                review,
                login,
                head_sha=head_sha,
                author=author,
                policy=policy,
                may_accept=lambda user: _may_accept(get, repository, user, policy),
            )
            if why_not is not None:
                notices.append(
                    f"The review by {login} that accepts findings does not count: {why_not}."
                )
                continue
            accepted.append(
                Acceptance(
                    by=login,
                    commit=head_sha,
                    claims=what,
                    source=str(review.get("html_url") or ""),
                )
            )
    except GithubException as exc:
        raise RepositoryError(
            describe_failure(
                exc,
                doing=f"reading the reviews of pull request #{number}",
                attempts=attempts,
                forbidden="the token may not read pull requests; give the workflow "
                "`permissions: pull-requests: write`",
            )
        ) from exc
    except OSError as exc:
        raise RepositoryError("the GitHub API could not be reached to read the reviews") from exc
    finally:
        github.close()
    return tuple(accepted), tuple(notices)


def _why_not(
    review: dict[str, Any],
    login: str,
    *,
    head_sha: str,
    author: str,
    policy: GatePolicy,
    may_accept: Callable[[str], bool],
) -> str | None:
    """Why a review with a command does not accept anything; None when it does."""
    if review.get("commit_id") != head_sha:
        return (
            f"it reviewed commit {str(review.get('commit_id'))[:12]}, not the head "
            f"{head_sha[:12]}; a new push needs a new review"
        )
    if str(review.get("state")) not in _COUNTED_STATES:
        return f"it is {str(review.get('state')).lower()}"
    if login.lower() == author.lower() and not policy.author_may_accept:
        return "it is by the pull request's author (gate.author_may_accept: false)"
    if not may_accept(login):
        return "its author may not accept findings here (gate.accept_from)"
    return None


def _may_accept(get: Callable[..., Any], repository: str, login: str, policy: GatePolicy) -> bool:
    """Whether ``login`` is one of ``gate.accept_from``: write access, or a listed login or team."""
    if policy.accept_from == "write":
        found = get(f"/repos/{repository}/collaborators/{login}/permission")
        return str((found or {}).get("permission", "")) in WRITE_PERMISSIONS
    for entry in policy.accept_from:
        if "/" not in entry:
            if entry.lower() == login.lower():
                return True
            continue
        org, team = entry.split("/", 1)
        try:
            membership = get(f"/orgs/{org}/teams/{team}/memberships/{login}")
        except GithubException:
            continue  # not a member, or a token that may not see the team: not accepted
        if str((membership or {}).get("state")) == "active":
            return True
    return False

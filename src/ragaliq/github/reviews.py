"""Reviewers' acceptances, read from the pull request's reviews and checked against the repository.

Why reviews: a review is written by its author through GitHub only, carries the commit it
reviewed (``commit_id``) so that it covers exactly what was flagged there, and GitHub does not let
a pull request's author approve their own pull request. A label says nothing of which commit or
which claim, and anyone with triage access can add one; a comment command is tied to no commit.

A review counts when its body holds ``/ragaliq accept <ids>`` or ``/ragaliq accept all``, it is
``APPROVED`` or ``COMMENTED`` (not dismissed, not a request for changes) at the head commit being
gated, it is by a person (a bot's or an app's review never accepts), and its author may accept:
the base config's ``gate.accept_from`` (anyone with write access by default, checked with the
repository's permission API, or the logins and ``org/team`` slugs it lists), never the pull
request's author unless ``gate.author_may_accept`` says so. A review edited since it was submitted
counts as it reads now, as long as it is of the head commit.

Every page of reviews is read. A login the permission API does not know (a deleted account,
shown as ``ghost``) has no access; a team whose membership cannot be read (the job's
``GITHUB_TOKEN`` can never read an organisation's teams) accepts no one, and the note says so.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from github import GithubException

from ragaliq.config import GatePolicy
from ragaliq.errors import RepositoryError
from ragaliq.gate.acceptance import Acceptance, parse_command
from ragaliq.github.client import (
    PER_PAGE,
    Get,
    build_github,
    describe_failure,
    json_getter,
    read_time,
)

__all__ = ["MAX_REVIEW_PAGES", "WRITE_PERMISSIONS", "read_acceptances_from_reviews"]

WRITE_PERMISSIONS = frozenset({"admin", "maintain", "write"})
MAX_REVIEW_PAGES = 50
"""Pages of reviews read at most (5,000 reviews); the notes say when there were more."""
_COUNTED_STATES = frozenset({"APPROVED", "COMMENTED"})
_TEAMS_TOKEN = (
    "the job's GITHUB_TOKEN cannot read an organisation's teams; list logins in "
    "gate.accept_from, or give the action's github-token input a token that can read the "
    "organisation's members (docs/security.md, Accepting findings)"
)


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

    Every review with a command that does not count, or with a command line that accepts
    nothing, gets a notice saying why.

    Raises:
        RepositoryError: the reviews, or a reviewer's permission, cannot be read.
    """
    if policy.accept_from == "nobody":
        return (), ()
    try:
        github = build_github(token=token, api_url=api_url)
    except ValueError as exc:
        raise RepositoryError(
            f"the reviews of pull request #{number} cannot be read: {exc}"
        ) from exc

    get = json_getter(github, attempts=attempts)

    accepted: list[Acceptance] = []
    notices: list[str] = []
    try:
        for review in _reviews(get, f"/repos/{repository}/pulls/{number}/reviews", notices):
            acceptance = _acceptance_of(
                review,
                head_sha=head_sha,
                author=author,
                policy=policy,
                may_accept=lambda user: _why_not_allowed(get, repository, user, policy),
                notices=notices,
            )
            if acceptance is not None:
                accepted.append(acceptance)
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


def _acceptance_of(
    review: dict[str, Any],
    *,
    head_sha: str,
    author: str,
    policy: GatePolicy,
    may_accept: Callable[[str], str | None],
    notices: list[str],
) -> Acceptance | None:
    """What one review accepts, if it counts; a notice for every command that accepts nothing."""
    command = parse_command(str(review.get("body") or ""))
    if command is None:
        return None
    login = str((review.get("user") or {}).get("login", ""))
    why_not = _why_not(
        review, login, head_sha=head_sha, author=author, policy=policy, may_accept=may_accept
    )
    if why_not is not None:
        notices.append(f"The review by {login} that accepts findings does not count: {why_not}.")
        return None
    if command.unread:
        notices.append(
            f"In the review by {login}, {'; '.join(repr(u) for u in command.unread)} "
            "accepts nothing: write the claim ids the comment shows, or `all` on its "
            "own, after /ragaliq accept."
        )
    if not command.claims:
        return None
    return Acceptance(
        by=login,
        commit=head_sha,
        claims=command.claims,
        source=str(review.get("html_url") or ""),
        submitted_at=read_time(review.get("submitted_at")),
    )


def _reviews(get: Get, url: str, notices: list[str]) -> Iterator[dict[str, Any]]:
    """Every review of the pull request, page by page, oldest first."""
    for page in range(1, MAX_REVIEW_PAGES + 1):
        found = get(url, {"per_page": PER_PAGE, "page": page}) or []
        yield from (r for r in found if isinstance(r, dict))
        if len(found) < PER_PAGE:
            return
    notices.append(
        f"The pull request has over {MAX_REVIEW_PAGES * PER_PAGE:,} reviews: only the first "
        f"{MAX_REVIEW_PAGES * PER_PAGE:,} were read for acceptances."
    )


def _why_not(
    review: dict[str, Any],
    login: str,
    *,
    head_sha: str,
    author: str,
    policy: GatePolicy,
    may_accept: Callable[[str], str | None],
) -> str | None:
    """Why a review with a command does not accept anything; None when it does."""
    if review.get("commit_id") != head_sha:
        return (
            f"it reviewed commit {str(review.get('commit_id'))[:12]}, not the head "
            f"{head_sha[:12]}; a new push needs a new review"
        )
    if str(review.get("state")) not in _COUNTED_STATES:
        return f"it is {str(review.get('state')).lower().replace('_', ' ')}"
    if str((review.get("user") or {}).get("type", "")) == "Bot" or not login:
        return "it is by a bot or an app, and only people accept findings"
    if login.lower() == author.lower() and not policy.author_may_accept:
        return "it is by the pull request's author (gate.author_may_accept: false)"
    return may_accept(login)


def _why_not_allowed(get: Get, repository: str, login: str, policy: GatePolicy) -> str | None:
    """Why ``login`` is not one of ``gate.accept_from``; None when it is.

    Raises:
        GithubException: the permission API failed otherwise than not knowing the login.
    """
    if policy.accept_from == "write":
        try:
            found = get(f"/repos/{repository}/collaborators/{login}/permission")
        except GithubException as exc:
            if exc.status != 404:
                raise
            return "GitHub knows no such collaborator (a deleted account has no access)"
        permission = str((found or {}).get("permission", "")) or "no"
        if permission in WRITE_PERMISSIONS:
            return None
        return (
            f"its author may not accept findings here: they have {permission} access, and "
            "gate.accept_from asks for write access"
        )
    unread: list[str] = []
    for entry in policy.accept_from:
        if "/" not in entry:
            if entry.lower() == login.lower():
                return None
            continue
        org, team = entry.split("/", 1)
        try:
            membership = get(f"/orgs/{org}/teams/{team}/memberships/{login}")
        except GithubException as exc:
            unread.append(f"{entry} (GitHub answered {exc.status})")
            continue
        if str((membership or {}).get("state")) == "active":
            return None
    if unread:
        return (
            f"its author is not listed in gate.accept_from, and their membership of "
            f"{', '.join(unread)} could not be confirmed: either they are not a member, or "
            f"{_TEAMS_TOKEN}"
        )
    return "its author may not accept findings here (gate.accept_from)"

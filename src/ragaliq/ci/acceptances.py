"""Reviewers' acceptances, decided from the host's records of a change's reviews.

A record counts when its body holds ``/ragaliq accept <ids>`` or ``/ragaliq accept all``, it
stands (not dismissed, not a request for changes, not edited since it was written where the host
cannot say what it said then), it is of the head commit being gated (the commit the host ties it
to, or the one its command names), it is by a person (a bot's or an app's never accepts), and
its author may accept: the base config's ``gate.accept_from`` (anyone with write access by
default, or the logins and ``org/team`` slugs it lists), never the change's author unless
``gate.author_may_accept`` says so. The host reports facts (:class:`~ragaliq.forge.ReviewRecord`,
a person's access, a team's membership); every rule is here, the same on every host.
"""

from __future__ import annotations

import re

from ragaliq.config import GatePolicy
from ragaliq.forge import ACCESS_LEVELS, Access, Change, Host, ReviewRecord
from ragaliq.gate.acceptance import Acceptance, parse_command

__all__ = ["WRITE", "acceptances_of", "why_not_allowed"]

WRITE: Access = "write"
"""The least access that may accept findings under ``gate.accept_from: write``."""
_COMMIT = re.compile(r"(?<![0-9a-f])(?:[0-9a-f]{40}|[0-9a-f]{64})(?![0-9a-f])")


def acceptances_of(
    host: Host, change: Change, policy: GatePolicy
) -> tuple[tuple[Acceptance, ...], tuple[str, ...]]:
    """The acceptances the change's reviews give at its head, and a note on each that does not.

    Raises:
        RepositoryError: the reviews, or a reviewer's access, cannot be read.
    """
    if policy.accept_from == "nobody":
        return (), ()
    records, notices = host.reviews(change)
    notes = list(notices)
    accepted = []
    for record in records:
        acceptance = _acceptance_of(record, host=host, change=change, policy=policy, notes=notes)
        if acceptance is not None:
            accepted.append(acceptance)
    return tuple(accepted), tuple(notes)


def _acceptance_of(
    record: ReviewRecord, *, host: Host, change: Change, policy: GatePolicy, notes: list[str]
) -> Acceptance | None:
    """What one record accepts, if it counts; a note for every command that accepts nothing."""
    body = _COMMIT.sub(" ", record.body) if record.commit is None else record.body
    command = parse_command(body)
    if command is None:
        return None
    login = record.author
    why_not = _why_not(record, change=change, policy=policy)
    if why_not is None:
        why_not = why_not_allowed(host, login, policy)
    if why_not is not None:
        notes.append(f"The review by {login} that accepts findings does not count: {why_not}.")
        return None
    if command.unread:
        notes.append(
            f"In the review by {login}, {'; '.join(repr(u) for u in command.unread)} "
            "accepts nothing: write the claim ids the comment shows, or `all` on its "
            "own, after /ragaliq accept."
        )
    if not command.claims:
        return None
    return Acceptance(
        by=login,
        commit=change.head_sha,
        claims=command.claims,
        source=record.url,
        submitted_at=record.submitted_at,
    )


def _commit_of(record: ReviewRecord) -> str | None:
    """The commit a record is of: the host's, or the one its command names."""
    if record.commit is not None:
        return record.commit
    named = set(_COMMIT.findall(record.body.lower()))
    return named.pop() if len(named) == 1 else None


def _why_not(record: ReviewRecord, *, change: Change, policy: GatePolicy) -> str | None:
    """Why a record with a command does not accept anything, whoever wrote it."""
    commit = _commit_of(record)
    if commit is None:
        return (
            "it names no one head commit; write `/ragaliq accept <ids> <head commit>`, with the "
            f"head {change.head_sha[:12]}'s full id"
        )
    if commit != change.head_sha:
        return (
            f"it reviewed commit {commit[:12]}, not the head {change.head_sha[:12]}; a new push "
            "needs a new review"
        )
    if record.standing:
        return f"it is {record.standing}"
    if not record.by_person or not record.author:
        return "it is by a bot or an app, and only people accept findings"
    if record.author.lower() == change.author.lower() and not policy.author_may_accept:
        return "it is by the pull request's author (gate.author_may_accept: false)"
    return None


def why_not_allowed(host: Host, login: str, policy: GatePolicy) -> str | None:
    """Why ``login`` is not one of ``gate.accept_from``; None when it is.

    Raises:
        RepositoryError: the host cannot say what access the login has.
    """
    if policy.accept_from == "write":
        access = host.access_of(login)
        if access is None:
            return f"{host.name} knows no such collaborator (a deleted account has no access)"
        if ACCESS_LEVELS.index(access) >= ACCESS_LEVELS.index(WRITE):
            return None
        return (
            f"its author may not accept findings here: they have {access} access, and "
            "gate.accept_from asks for write access"
        )
    unread: list[str] = []
    for entry in policy.accept_from:
        if "/" not in entry:
            if entry.lower() == login.lower():
                return None
            continue
        member = host.member_of(entry, login)
        if member is True:
            return None
        if isinstance(member, str):
            unread.append(f"{entry} ({member})")
    if unread:
        return (
            f"its author is not listed in gate.accept_from, and their membership of "
            f"{', '.join(unread)} could not be confirmed: either they are not a member, or "
            f"{host.profile.teams_hint}"
        )
    return "its author may not accept findings here (gate.accept_from)"

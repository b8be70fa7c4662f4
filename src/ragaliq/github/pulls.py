"""The pull requests a gate judges, as GitHub's API has them now.

A commit status belongs to a commit, not to a pull request, so the gate makes sure of the pull
request before it reads any bar:

- on ``pull_request`` and ``pull_request_review`` events, :func:`check_pull_request` asks the API
  for the event's pull request and refuses one that is closed, pushed to since, or re-targeted to
  another base since the event (that change starts a run of its own);
- on ``workflow_run``, :func:`find_pull_requests` finds **every** open pull request whose head is
  the run's commit: GitHub lists a run's pull requests on the event only when they come from the
  same repository, and none for a fork's, so the gate asks for the open pull requests of the run's
  ``owner:branch``. Each is judged against its own base, under its own status context; the first
  one is never taken for all.

Nothing the untrusted run produced (its artifacts, its logs) takes part.
"""

from __future__ import annotations

from typing import Any

from ragaliq.errors import ConfigError, RepositoryError
from ragaliq.forge import Change, FollowedRun
from ragaliq.github.client import Get, GitHubApi

__all__ = ["MAX_PULLS", "check_pull_request", "find_pull_requests", "open_pulls_into"]

MAX_PULLS = 100
"""Open pull requests of one head branch read at most (one page)."""
_FORBIDDEN = (
    "the token may not read pull requests; give the workflow `permissions: pull-requests: write`"
)


def find_pull_requests(run: FollowedRun, api: GitHubApi) -> tuple[Change, ...]:
    """Every open pull request of ``repository`` whose head is ``run``'s commit, by number.

    Raises:
        RepositoryError: the API cannot be asked, or refuses.
    """
    repository = api.repository

    def ask(get: Get) -> list[Any]:
        candidates = [get(f"/repos/{repository}/pulls/{number}") for number in run.change_numbers]
        if not candidates and run.head_owner and run.head_branch:
            found = get(
                f"/repos/{repository}/pulls",
                {
                    "state": "open",
                    "head": f"{run.head_owner}:{run.head_branch}",
                    "per_page": MAX_PULLS,
                },
            )
            candidates = list(found or [])
        return candidates

    doing = f"the pull requests of run {run.id}"
    candidates = _asking(api, ask, doing=doing)
    found = {}
    for pull in candidates:
        pr = _open_pull(pull, repository)
        if pr is not None and pr.head_sha == run.head_sha:
            found[pr.number] = pr
    return tuple(found[number] for number in sorted(found))


def open_pulls_into(base_ref: str, api: GitHubApi) -> tuple[Change, ...]:
    """The open pull requests into ``base_ref``, most recently updated first (one page).

    Raises:
        RepositoryError: the API cannot be asked, or refuses.
    """
    repository = api.repository
    found = _asking(
        api,
        lambda get: get(
            f"/repos/{repository}/pulls",
            {
                "state": "open",
                "base": base_ref,
                "sort": "updated",
                "direction": "desc",
                "per_page": MAX_PULLS,
            },
        ),
        doing=f"the open pull requests into {base_ref}",
    )
    pulls = (_open_pull(pull, repository) for pull in found or ())
    return tuple(pr for pr in pulls if pr is not None and pr.base_ref == base_ref)


def check_pull_request(pr: Change, api: GitHubApi) -> Change:
    """The event's pull request, once the API says it is still what the event says.

    Raises:
        ConfigError: it is closed, its head is another commit now, or its base another branch
            (re-targeted since the event: the run for the new base gates it).
        RepositoryError: the API cannot be asked, or refuses.
    """
    repository = api.repository
    pull = _asking(
        api,
        lambda get: get(f"/repos/{repository}/pulls/{pr.number}"),
        doing=f"pull request #{pr.number}",
    )
    now = _open_pull(pull, repository)
    if now is None:
        raise ConfigError(f"pull request #{pr.number} is not open any more, so it was not judged")
    if now.head_sha != pr.head_sha:
        raise ConfigError(
            f"pull request #{pr.number} has been pushed to since this run started (its head is "
            f"{now.head_sha[:12]}, not {pr.head_sha[:12]}); the run of the new head gates it"
        )
    if pr.base_ref and now.base_ref != pr.base_ref:
        raise ConfigError(
            f"pull request #{pr.number} was re-targeted from {pr.base_ref} to {now.base_ref} "
            "since this run started, so it was not judged against either; the run the "
            "re-targeting started gates it against its new base"
        )
    if now.base_repo != pr.base_repo:
        raise ConfigError(
            f"pull request #{pr.number} is into {now.base_repo} by the API, not {pr.base_repo}"
        )
    return Change(
        number=pr.number,
        base_sha=pr.base_sha,  # the commit the event named, which the job checked out
        head_sha=pr.head_sha,
        base_repo=now.base_repo,
        head_repo=now.head_repo,
        author=now.author,
        base_ref=now.base_ref,
        head_ref=now.head_ref,
    )


def _asking(api: GitHubApi, ask: Any, *, doing: str) -> Any:
    """``ask(get)`` on the API; failures as one line with the fix."""
    return api.ask(ask, doing=f"looking up {doing}", error=RepositoryError, forbidden=_FORBIDDEN)


def _open_pull(pull: Any, repository: str) -> Change | None:
    """A pull request of the API's, when it is open and well formed."""
    if not isinstance(pull, dict) or pull.get("state", "open") != "open":
        return None
    head, base = pull.get("head") or {}, pull.get("base") or {}
    try:
        return Change(
            number=int(pull["number"]),
            base_sha=str(base.get("sha", "")),
            head_sha=str(head.get("sha", "")),
            base_repo=str((base.get("repo") or {}).get("full_name", repository)),
            head_repo=str((head.get("repo") or {}).get("full_name", "")),
            author=str((pull.get("user") or {}).get("login", "")),
            base_ref=str(base.get("ref") or ""),
            head_ref=str(head.get("ref") or ""),
        )
    except (KeyError, TypeError, ValueError):
        return None

"""The pull request a ``workflow_run`` event is about, found from trusted data only.

GitHub lists a run's pull requests on the event only when they come from the same repository;
for a fork's it lists none. The gate then asks the API for the open pull requests whose head is
the run's branch of the run's repository, and keeps the one whose head is the run's commit.
Nothing the untrusted run produced (its artifacts, its logs) takes part.
"""

from __future__ import annotations

from typing import Any

from github import GithubException

from ragaliq.errors import RepositoryError
from ragaliq.github.client import build_github, describe_failure, json_getter
from ragaliq.github.settings import PullRequest, WorkflowRun

__all__ = ["find_pull_request"]


def find_pull_request(
    run: WorkflowRun, *, token: str, repository: str, api_url: str, attempts: int = 3
) -> PullRequest | None:
    """The open pull request of ``repository`` whose head is ``run``'s commit; None if none.

    Raises:
        RepositoryError: the API cannot be asked, or refuses.
    """
    try:
        github = build_github(token=token, api_url=api_url)
    except ValueError as exc:
        raise RepositoryError(
            f"the pull request of run {run.id} cannot be looked up: {exc}"
        ) from exc

    get = json_getter(github, attempts=attempts)

    try:
        candidates: list[Any] = [
            get(f"/repos/{repository}/pulls/{number}") for number in run.pull_numbers
        ]
        if not candidates and run.head_owner and run.head_branch:
            found = get(
                f"/repos/{repository}/pulls",
                {"state": "open", "head": f"{run.head_owner}:{run.head_branch}", "per_page": 100},
            )
            candidates = list(found or [])
    except GithubException as exc:
        raise RepositoryError(
            describe_failure(
                exc,
                doing=f"looking up the pull request of run {run.id}",
                attempts=attempts,
                forbidden="the token may not read pull requests; give the workflow "
                "`permissions: pull-requests: write`",
            )
        ) from exc
    except OSError as exc:
        raise RepositoryError(
            f"the GitHub API could not be reached to look up the pull request of run {run.id}"
        ) from exc
    finally:
        github.close()
    for pull in candidates:
        if not isinstance(pull, dict) or pull.get("state", "open") != "open":
            continue
        head, base = pull.get("head") or {}, pull.get("base") or {}
        if head.get("sha") != run.head_sha:
            continue
        return PullRequest(
            number=int(pull["number"]),
            base_sha=str(base.get("sha", "")),
            head_sha=run.head_sha,
            base_repo=str((base.get("repo") or {}).get("full_name", repository)),
            head_repo=str((head.get("repo") or {}).get("full_name", "")),
            author=str((pull.get("user") or {}).get("login", "")),
        )
    return None

"""The datasets a head commit's pull request runs handed over, found from GitHub's records only.

A gate started by a review runs none of the pull request's code: it judges the dataset that a
``pull_request`` run of the same workflow handed over for the head commit. Which runs those are
comes from the API alone: the workflow of the run the gate belongs to (or follows), that
workflow's runs for the head commit started by ``pull_request``, and the artifacts they uploaded,
with the time GitHub recorded for each. Nothing the pull request wrote takes part.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from github import GithubException

from ragaliq._times import read_time
from ragaliq.errors import ArtifactError
from ragaliq.forge import Upload
from ragaliq.github.client import PER_PAGE, Get, GitHubApi, describe_failure, json_getter

__all__ = ["MAX_RUN_PAGES", "handed_over_at"]

MAX_RUN_PAGES = 10
"""Pages of a workflow's runs for one commit read at most (1,000 runs)."""


def handed_over_at(
    api: GitHubApi,
    *,
    head_sha: str,
    artifact: str,
    run_id: int = 0,
    workflow: str = "",
) -> tuple[Upload, ...]:
    """The datasets handed over for ``head_sha``, oldest first.

    Every unexpired artifact named ``artifact`` that a ``pull_request`` run of the workflow
    uploaded for that commit: the workflow of run ``run_id``, or the workflow file ``workflow``
    (``ragaliq.yml``) when no run is given.

    Raises:
        ArtifactError: the API cannot be asked, or refuses.
    """
    repository, attempts = api.repository, api.attempts
    where = f"the pull_request runs of commit {head_sha[:12]} in {repository}"
    try:
        github = api.client()
    except ValueError as exc:
        raise ArtifactError(f"{where}: cannot be listed: {exc}") from exc

    get = json_getter(github, attempts=attempts)

    uploads: list[Upload] = []
    try:
        path = ""
        if run_id:
            this = get(f"/repos/{repository}/actions/runs/{run_id}") or {}
            workflow = str(this.get("workflow_id") or "")
            if not workflow:
                raise ArtifactError(f"run {run_id}: GitHub names no workflow for it")
        else:
            path = f".github/workflows/{workflow}"
        for run in _runs(get, f"/repos/{repository}/actions/workflows/{workflow}/runs", head_sha):
            if (
                run.get("event") != "pull_request"
                or run.get("head_sha") != head_sha
                or (not path and str(run.get("workflow_id") or "") != workflow)
                or (path and str(run.get("path") or "").split("@", 1)[0] != path)
            ):
                continue
            listing = get(
                f"/repos/{repository}/actions/runs/{int(run['id'])}/artifacts",
                {"name": artifact, "per_page": PER_PAGE},
            )
            for found in (listing or {}).get("artifacts") or []:
                created = read_time(found.get("created_at"))
                if found.get("name") != artifact or found.get("expired") or created is None:
                    continue
                uploads.append(Upload(run_id=int(run["id"]), created_at=created))
    except GithubException as exc:
        raise ArtifactError(
            f"{where}: "
            + describe_failure(
                exc,
                doing=f"listing {where}",
                attempts=attempts,
                forbidden="the token may not read the workflow's runs; give the workflow "
                "`permissions: actions: read`",
            )
        ) from exc
    except (OSError, KeyError, TypeError, ValueError) as exc:
        raise ArtifactError(
            f"{where}: could not be listed ({type(exc).__name__}); re-run the job"
        ) from exc
    finally:
        github.close()
    return tuple(sorted(uploads, key=lambda u: (u.created_at, u.run_id)))


def _runs(get: Get, url: str, head_sha: str) -> Iterator[dict[str, Any]]:
    for page in range(1, MAX_RUN_PAGES + 1):
        found = get(
            url,
            {"event": "pull_request", "head_sha": head_sha, "per_page": PER_PAGE, "page": page},
        )
        runs = (found or {}).get("workflow_runs") or []
        yield from (r for r in runs if isinstance(r, dict))
        if len(runs) < PER_PAGE:
            return

"""The proof a baseline run gives of the file it recorded: an artifact named for its SHA-256.

Only code that ran in a run can add artifacts to it, so a run that uploaded
``ragaliq-baseline-<sha256>`` shows it recorded exactly that file. The gate reads which run's
file is the bar from the baseline workflow's run records (:mod:`ragaliq.github.baseline_runs`,
decided by :mod:`ragaliq.ci.custody`); the ``store-baseline`` step checks, before it keeps a
file on the data branch, that its own run uploaded that file's artifact (:func:`uploaded`).
"""

from __future__ import annotations

from github import GithubException

from ragaliq.errors import BaselineError
from ragaliq.github.client import PER_PAGE, build_github, describe_failure, json_getter, unreachable

__all__ = ["ARTIFACT_PREFIX", "baseline_artifact", "uploaded"]

ARTIFACT_PREFIX = "ragaliq-baseline-"
_ACTIONS_READ = (
    "the token may not read the repository's workflow runs; give the job `permissions: "
    "actions: read`"
)


def baseline_artifact(digest: str) -> str:
    """The name of the artifact that shows a run recorded the baseline with this SHA-256."""
    return f"{ARTIFACT_PREFIX}{digest}"


def uploaded(
    *, token: str, repository: str, api_url: str, run_id: int, name: str, attempts: int = 3
) -> bool:
    """Whether run ``run_id`` of ``repository`` uploaded an artifact named ``name``.

    Raises:
        BaselineError: the API cannot be asked.
    """
    try:
        github = build_github(token=token, api_url=api_url)
    except ValueError as exc:
        raise BaselineError(f"the artifacts of run {run_id} cannot be listed: {exc}") from exc
    url = f"/repos/{repository}/actions/runs/{run_id}/artifacts"
    try:
        listing = json_getter(github, attempts=attempts)(url, {"name": name, "per_page": PER_PAGE})
    except GithubException as exc:
        raise BaselineError(
            "the run's artifacts could not be listed: "
            + describe_failure(
                exc, doing=f"reading {url}", attempts=attempts, forbidden=_ACTIONS_READ
            )
        ) from exc
    except OSError as exc:
        raise BaselineError(unreachable(api_url, attempts)) from exc
    finally:
        github.close()
    return any(a.get("name") == name for a in (listing or {}).get("artifacts") or ())

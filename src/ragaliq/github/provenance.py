"""The proof a baseline run gives of the file it recorded: an artifact named for its SHA-256.

Only code that ran in a run can add artifacts to it, so a run that uploaded
``ragaliq-baseline-<sha256>`` shows it recorded exactly that file. The gate reads which run's
file is the bar from the baseline workflow's run records (:mod:`ragaliq.github.baseline_runs`,
decided by :mod:`ragaliq.ci.custody`); the ``store-baseline`` step checks, before it keeps a
file on the data branch, that its own run uploaded that file's artifact (:func:`uploaded`).
"""

from __future__ import annotations

from ragaliq.errors import BaselineError
from ragaliq.github.client import PER_PAGE, GitHubApi

__all__ = ["uploaded"]

_ACTIONS_READ = (
    "the token may not read the repository's workflow runs; give the job `permissions: "
    "actions: read`"
)


def uploaded(api: GitHubApi, *, run_id: int, name: str) -> bool:
    """Whether run ``run_id`` of the repository uploaded an artifact named ``name``.

    Raises:
        BaselineError: the API cannot be asked.
    """
    url = f"/repos/{api.repository}/actions/runs/{run_id}/artifacts"
    listing = api.ask(
        lambda get: get(url, {"name": name, "per_page": PER_PAGE}),
        doing=f"reading {url}",
        error=BaselineError,
        forbidden=_ACTIONS_READ,
    )
    return any(a.get("name") == name for a in (listing or {}).get("artifacts") or ())

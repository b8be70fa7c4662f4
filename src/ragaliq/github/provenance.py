"""Where a stored baseline came from, shown through GitHub's API before a gate trusts it.

Anyone who can push to the repository can write to the data branch, and a pull request from a
branch of the repository runs workflow files of its own. So a baseline counts only when GitHub's
records show that the run it names (:class:`~ragaliq.baseline.Origin`):

- is a run of this repository, started by ``push``, on the base branch, at the baseline's commit;
- ran the baseline workflow file the base commit's config names (``baselines.workflow``);
- uploaded an artifact named ``ragaliq-baseline-<sha256>`` for exactly the file read: only code
  that ran in that run can add artifacts to it.

A pull request's run (``pull_request``), a dispatched run, a run on another branch or of another
workflow file, or a file other than the one the run recorded, is refused with one line. Reading
the first parents of a commit (to find the nearest baseline) goes through the API too.
"""

from __future__ import annotations

from typing import Any

from github import GithubException, UnknownObjectException

from ragaliq.baseline import Baseline
from ragaliq.config import BaselinesConfig
from ragaliq.errors import BaselineError, RepositoryError
from ragaliq.github.client import Get, build_github, describe_failure, json_getter, unreachable

__all__ = ["ARTIFACT_PREFIX", "Provenance", "baseline_artifact"]

ARTIFACT_PREFIX = "ragaliq-baseline-"
_ACTIONS_READ = (
    "the token may not read the repository's workflow runs; give the job `permissions: "
    "actions: read`"
)


def baseline_artifact(digest: str) -> str:
    """The name of the artifact that shows a run recorded the baseline with this SHA-256."""
    return f"{ARTIFACT_PREFIX}{digest}"


class Provenance:
    """Checks stored baselines, and reads first parents, through the API of ``repository``."""

    def __init__(self, *, token: str, repository: str, api_url: str, attempts: int = 3) -> None:
        self.token = token
        self.repository = repository
        self.api_url = api_url
        self.attempts = attempts

    def verify(
        self, baseline: Baseline, digest: str, settings: BaselinesConfig, branch: str
    ) -> str:
        """How ``baseline`` was shown to be recorded by the baseline workflow on ``branch``.

        Raises:
            BaselineError: it names no run, or the run or its artifacts say otherwise.
        """
        said = f"the baseline of {(baseline.commit or '')[:12]} names"
        origin = baseline.origin
        if origin is None or baseline.commit is None:
            raise BaselineError(
                f"{said} no run that recorded it, so where it came from cannot be shown; re-run "
                f"the baseline workflow ({settings.workflow}) on {branch}"
            )
        if origin.repository.lower() != self.repository.lower():
            raise BaselineError(f"{said} a run of {origin.repository}, not of {self.repository}")
        run = self._ask(
            f"/repos/{self.repository}/actions/runs/{origin.run_id}",
            missing=f"{said} run {origin.run_id}, which GitHub does not know",
        )
        workflow = f".github/workflows/{settings.workflow}"
        path = str(run.get("path") or "").split("@", 1)[0]
        problems = []
        if run.get("event") != "push":
            problems.append(f"it was started by {run.get('event')!r}, not a push")
        if run.get("head_branch") != branch:
            problems.append(f"it ran on {run.get('head_branch')!r}, not {branch}")
        if run.get("head_sha") != baseline.commit:
            problems.append(f"it ran at {str(run.get('head_sha'))[:12]}, not the baseline's commit")
        if path != workflow:
            problems.append(f"it ran {path or 'an unknown workflow'}, not {workflow}")
        if problems:
            raise BaselineError(
                f"{said} run {origin.run_id}, which cannot have recorded it: "
                + "; ".join(problems)
                + f". Only a push run of {settings.workflow} on {branch} sets the bar"
            )
        name = baseline_artifact(digest)
        if not self.uploaded(origin.run_id, name):
            raise BaselineError(
                f"{said} run {origin.run_id}, which uploaded no artifact {name}: the file in the "
                "store is not the one that run recorded; re-run the baseline workflow on "
                f"{branch}"
            )
        return (
            f"recorded by run {origin.run_id} of {settings.workflow} on a push to {branch}, "
            "which uploaded this file's digest"
        )

    def uploaded(self, run_id: int, name: str) -> bool:
        """Whether run ``run_id`` of this repository uploaded an artifact named ``name``.

        Raises:
            BaselineError: the API cannot be asked.
        """
        listing = self._ask(
            f"/repos/{self.repository}/actions/runs/{run_id}/artifacts",
            {"name": name, "per_page": 100},
            missing=f"the artifacts of run {run_id} cannot be listed",
        )
        return any(a.get("name") == name for a in listing.get("artifacts") or ())

    def first_parent(self, commit: str) -> str | None:
        """The first parent of ``commit``; None for a root commit or one GitHub does not know.

        Raises:
            RepositoryError: the API cannot be asked.
        """
        try:
            found = self._ask(f"/repos/{self.repository}/git/commits/{commit}", missing="")
        except _Missing:
            return None
        except BaselineError as exc:
            raise RepositoryError(str(exc)) from exc
        parents = found.get("parents") or []
        first = parents[0] if parents and isinstance(parents[0], dict) else {}
        return str(first.get("sha") or "") or None

    def _ask(self, url: str, parameters: dict[str, Any] | None = None, *, missing: str) -> Any:
        try:
            github = build_github(token=self.token, api_url=self.api_url)
        except ValueError as exc:
            raise BaselineError(f"the baseline's run cannot be checked: {exc}") from exc
        get: Get = json_getter(github, attempts=self.attempts)
        try:
            found = get(url, parameters)
        except UnknownObjectException as exc:
            if not missing:
                raise _Missing from exc
            raise BaselineError(f"{missing} (404); {_ACTIONS_READ} if it should") from exc
        except GithubException as exc:
            raise BaselineError(
                "the baseline's run could not be checked: "
                + describe_failure(
                    exc, doing=f"reading {url}", attempts=self.attempts, forbidden=_ACTIONS_READ
                )
            ) from exc
        except OSError as exc:
            raise BaselineError(unreachable(self.api_url, self.attempts)) from exc
        finally:
            github.close()
        return found if isinstance(found, dict) else {}


class _Missing(Exception):
    """GitHub answered 404."""

"""The baseline workflow's runs, as GitHub's records have them: the facts the bar is decided from.

:class:`GitHubBaselineRuns` answers :class:`~ragaliq.ci.custody.BaselineRuns` from the REST API
and decides nothing: which run's baseline is the bar is the core's rule
(:mod:`ragaliq.ci.custody`).

- a commit's runs: ``GET /actions/workflows/<file>/runs`` with ``event=push``, the base branch
  and the commit, each checked again for all three and for the workflow file's path; the newest
  (by id) is the one that counts, read at its latest attempt;
- what a run recorded: the artifacts ``ragaliq-baseline-<sha256>`` it holds that were created
  after its latest attempt started (an earlier attempt's never count);
- a run's status and conclusion, in the core's words (:func:`run_phase`);
- what changed between two commits (``GET /compare``, at most 300 files listed: beyond them,
  not known), and a commit's first parent;
- the baseline workflow's push filters, from the file at the base commit (the trusted source).
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from github import GithubException

from ragaliq._times import read_time
from ragaliq._yaml import load_yaml
from ragaliq.baseline import MAX_BASELINE_BYTES
from ragaliq.errors import ArtifactError, BaselineError, ConfigError, RepositoryError
from ragaliq.forge import (
    ANSWERS_ARTIFACT,
    BASELINE_ARTIFACT_PREFIX,
    RunPhase,
    RunRecord,
    baseline_artifact,
)
from ragaliq.github.artifacts import fetch_archive, read_entries
from ragaliq.github.client import PER_PAGE, Get, GitHubApi
from ragaliq.github.push_filters import MAX_FILTERED_PATHS, PushFilters
from ragaliq.judges.answers import MAX_ANSWER_FILE_BYTES
from ragaliq.repository import FileSource

__all__ = ["WORKFLOWS_FOLDER", "GitHubBaselineRuns", "run_phase"]

WORKFLOWS_FOLDER = ".github/workflows"
_WAITING = frozenset({"queued", "waiting", "requested", "pending", "action_required"})
_ENDED: dict[str, RunPhase] = {
    "success": "succeeded",
    "cancelled": "cancelled",
    "timed_out": "timed_out",
    "skipped": "skipped",
}
_ACTIONS_READ = (
    "the token may not read the repository's workflow runs; give the job `permissions: "
    "actions: read`"
)
MAX_WORKFLOW_BYTES = 1024 * 1024


def run_phase(status: str, conclusion: str) -> RunPhase:
    """A run's status and conclusion, as GitHub gives them, in the core's words.

    Any conclusion but success, cancelled, timed_out and skipped (failure, startup_failure,
    neutral, stale, one GitHub adds later) is ``failed``: never taken for a success.
    """
    if status in _WAITING:
        return "waiting"
    if status != "completed":
        return "running"
    return _ENDED.get(conclusion, "failed")


@dataclass(kw_only=True)
class GitHubBaselineRuns:
    """The runs of ``workflow`` (a file in ``.github/workflows``) on ``branch`` of a repository."""

    api: GitHubApi
    server_url: str
    branch: str
    workflow: str
    trusted: FileSource
    """The base commit, where the workflow's push filters are read."""

    @property
    def path(self) -> str:
        return f"{WORKFLOWS_FOLDER}/{self.workflow}"

    def newest_run(self, commit: str) -> RunRecord | None:
        runs = self._get(
            f"/repos/{self.api.repository}/actions/workflows/{self.workflow}/runs",
            {"event": "push", "branch": self.branch, "head_sha": commit, "per_page": PER_PAGE},
            doing=f"listing the runs of {self.workflow} at {commit[:12]}",
        )
        mine = [
            run
            for run in (runs or {}).get("workflow_runs") or ()
            if isinstance(run, dict)
            and run.get("event") == "push"
            and run.get("head_branch") == self.branch
            and run.get("head_sha") == commit
            and str(run.get("path") or "").split("@", 1)[0] == self.path
        ]
        if not mine:
            return None
        newest = max(mine, key=lambda run: int(run.get("id") or 0))
        return self._record(newest)

    def _record(self, run: dict[str, Any]) -> RunRecord:
        run_id = int(run["id"])
        status, conclusion = str(run.get("status") or ""), str(run.get("conclusion") or "")
        phase = run_phase(status, conclusion)
        started = read_time(run.get("run_started_at") or run.get("created_at"))
        baselines: tuple[str, ...] = ()
        if phase == "succeeded":
            listing = self._get(
                f"/repos/{self.api.repository}/actions/runs/{run_id}/artifacts",
                {"per_page": PER_PAGE},
                doing=f"listing the artifacts of run {run_id}",
            )
            found = []
            for artifact in (listing or {}).get("artifacts") or ():
                name = str(artifact.get("name") or "") if isinstance(artifact, dict) else ""
                created = read_time(artifact.get("created_at")) if name else None
                if not name.startswith(BASELINE_ARTIFACT_PREFIX) or artifact.get("expired"):
                    continue
                if started is not None and (created is None or created < started):
                    continue  # an earlier attempt's: never the bar
                found.append(name.removeprefix(BASELINE_ARTIFACT_PREFIX))
            baselines = tuple(sorted(set(found)))
        return RunRecord(
            id=run_id,
            attempt=int(run.get("run_attempt") or 1),
            phase=phase,
            said=f"{status}/{conclusion}" if conclusion else status or "unknown",
            url=str(
                run.get("html_url")
                or f"{self.server_url}/{self.api.repository}/actions/runs/{run_id}"
            ),
            started_at=started,
            baselines=baselines,
        )

    def _run_url(self, run_id: int) -> str:
        return f"{self.server_url}/{self.api.repository}/actions/runs/{run_id}"

    def first_parent(self, commit: str) -> str | None:
        try:
            found = self._get(
                f"/repos/{self.api.repository}/git/commits/{commit}",
                doing=f"reading commit {commit[:12]}",
                missing_ok=True,
            )
        except BaselineError as exc:
            raise RepositoryError(str(exc)) from exc
        parents = (found or {}).get("parents") or []
        first = parents[0] if parents and isinstance(parents[0], dict) else {}
        return str(first.get("sha") or "") or None

    def changed_paths(self, old: str, new: str) -> Sequence[str] | None:
        """The paths that differ between two commits; None when they cannot all be listed."""
        found = self._get(
            f"/repos/{self.api.repository}/compare/{old}...{new}",
            {"per_page": PER_PAGE},
            doing=f"comparing {old[:12]} with {new[:12]}",
            missing_ok=True,
        )
        files = (found or {}).get("files")
        if not isinstance(files, list) or len(files) >= MAX_FILTERED_PATHS:
            return None
        paths: set[str] = set()
        for entry in files:
            if not isinstance(entry, dict) or not entry.get("filename"):
                return None
            paths.add(str(entry["filename"]))
            if entry.get("previous_filename"):
                paths.add(str(entry["previous_filename"]))
        return sorted(paths)

    def run_due(self, since: str, commit: str) -> str | None:
        filters = self.push_filters()
        if filters is None:
            return f"{self.path} is not in {self.trusted.description} to show none was"
        changed = self.changed_paths(since, commit)
        if not filters.starts(self.branch, changed):
            return None
        if changed is None:
            return (
                f"its push filters start it, and the changes since {since[:7]} cannot all be listed"
            )
        return f"its push filters start it for the {len(changed)} paths changed since {since[:7]}"

    def push_filters(self) -> PushFilters | None:
        """The workflow's push filters at the base commit; None when it is not there."""
        data = self.trusted.read(self.path, limit=MAX_WORKFLOW_BYTES, what="baseline workflow")
        if data is None:
            return None
        try:
            workflow = load_yaml(data.decode("utf-8-sig"))
        except (ConfigError, UnicodeDecodeError, ValueError) as exc:
            raise BaselineError(
                f"{self.path} at {self.trusted.description} cannot be read ({exc}), so whether "
                "a baseline run was due cannot be shown"
            ) from exc
        return PushFilters.of_workflow(workflow)

    def recorded_baseline(self, run: RunRecord, digest: str) -> bytes:
        name = baseline_artifact(digest)
        where = f"artifact {name[:40]}… of run {run.id}"
        data = self._one_file(run, name, where=where, limit=MAX_BASELINE_BYTES)
        if data is None:
            raise BaselineError(
                f"{where}: not found or expired, and the baseline store has no entry for it "
                "either; re-run the run to record it again"
            )
        return data

    def recorded_answers(self, run: RunRecord) -> bytes | None:
        where = f"artifact {ANSWERS_ARTIFACT} of run {run.id}"
        return self._one_file(run, ANSWERS_ARTIFACT, where=where, limit=MAX_ANSWER_FILE_BYTES)

    def _one_file(self, run: RunRecord, name: str, *, where: str, limit: int) -> bytes | None:
        """The one file of the run's artifact ``name``; None when the run has no such artifact.

        Raises:
            BaselineError: it is listed twice, holds another number of files, or cannot be read.
        """
        listing = self._get(
            f"/repos/{self.api.repository}/actions/runs/{run.id}/artifacts",
            {"name": name, "per_page": PER_PAGE},
            doing=f"listing the artifacts of run {run.id}",
        )
        found = [
            a
            for a in (listing or {}).get("artifacts") or ()
            if isinstance(a, dict) and a.get("name") == name and not a.get("expired")
        ]
        if not found:
            return None
        if len(found) > 1:
            raise BaselineError(f"{where}: listed twice; re-run the run")
        buffer = io.BytesIO()
        try:
            fetch_archive(
                str(found[0].get("archive_download_url") or ""),
                token=self.api.token,
                into=buffer,
                where=where,
                limit=limit,
            )
            files = read_entries(buffer, where=where, limit=limit)
        except ArtifactError as exc:
            raise BaselineError(str(exc)) from exc
        if len(files) != 1:
            raise BaselineError(f"{where}: holds {len(files)} files, not one")
        return files[0][1]

    def _get(
        self,
        url: str,
        parameters: dict[str, Any] | None = None,
        *,
        doing: str,
        missing_ok: bool = False,
    ) -> Any:
        def ask(get: Get) -> Any:
            try:
                return get(url, parameters)
            except GithubException as exc:
                if exc.status == 404 and missing_ok:
                    return None
                raise

        return self.api.ask(
            ask,
            doing=f"reading the base's baseline runs ({doing})",
            error=BaselineError,
            forbidden=_ACTIONS_READ,
        )

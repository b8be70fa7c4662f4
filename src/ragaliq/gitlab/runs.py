"""The record job's pipelines, as GitLab's records have them: the facts its bar is decided from.

:class:`GitLabBaselineRuns` answers :class:`~ragaliq.forge.BaselineRuns` and decides nothing:

- a commit's runs: the project's pipelines started by ``push`` on the default branch at that
  commit, newest first; one started with pipeline variables (which anyone allowed to run a
  pipeline may set) is never the base's bar: it is reported ``failed``, saying why;
- what a pipeline recorded: the record job of that pipeline (its latest attempt: a retried job
  replaces the earlier one) keeps the baseline as its artifact ``.ragaliq/baseline.json``, which
  only that job can write; its SHA-256 is the bar's digest;
- whether a run was due: the record job runs on every push to the default branch, as ``ragaliq
  init`` writes it, so a run is due for any change at all (an ancestor's baseline never stands
  in for a commit that changed anything).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import gitlab
from gitlab.exceptions import GitlabError

from ragaliq._times import read_time
from ragaliq.errors import BaselineError
from ragaliq.forge import RunPhase, RunRecord
from ragaliq.gitlab.client import GitLabApi
from ragaliq.repository import FileSource

__all__ = ["BASELINE_FILE", "GitLabBaselineRuns", "pipeline_phase"]

BASELINE_FILE = ".ragaliq/baseline.json"
"""Where the record job keeps the baseline it recorded, among its artifacts."""
ANSWERS_FILE = ".ragaliq/answers.jsonl"
_PHASES: dict[str, RunPhase] = {
    "created": "waiting",
    "waiting_for_resource": "waiting",
    "preparing": "waiting",
    "pending": "waiting",
    "scheduled": "waiting",
    "manual": "waiting",
    "running": "running",
    "success": "succeeded",
    "failed": "failed",
    "canceled": "cancelled",
    "canceling": "cancelled",
    "skipped": "skipped",
}


def pipeline_phase(status: str) -> RunPhase:
    """A pipeline's status in the core's words; one GitLab adds later is ``failed``."""
    return _PHASES.get(status, "failed")


@dataclass(kw_only=True)
class GitLabBaselineRuns:
    """The pipelines of the record job ``workflow`` on ``branch`` of the project."""

    api: GitLabApi
    branch: str
    workflow: str
    """The record job's name (``ragaliq-record``)."""
    trusted: FileSource
    download: Callable[[gitlab.Gitlab, int, str, int], bytes | None]
    """``(client, job, path, limit)``: a file of a job's artifacts; None when it has none."""

    def newest_run(self, commit: str) -> RunRecord | None:
        def ask(client: gitlab.Gitlab) -> RunRecord | None:
            pipelines = self.api.all(
                client,
                "/pipelines",
                most=20,
                ref=self.branch,
                sha=commit,
                source="push",
                order_by="id",
                sort="desc",
            )
            mine = [p for p in pipelines if p.get("sha") == commit and p.get("ref") == self.branch]
            if not mine:
                return None
            return self._record(client, max(mine, key=lambda p: int(p["id"])))

        return self.api.ask(
            ask, doing=f"listing the pipelines of {commit[:12]}", error=BaselineError
        )

    def _record(self, client: gitlab.Gitlab, pipeline: dict[str, Any]) -> RunRecord:
        pid = int(pipeline["id"])
        status = str(pipeline.get("status") or "")
        phase = pipeline_phase(status)
        said = status or "unknown"
        variables = self.api.all(client, f"/pipelines/{pid}/variables", most=10)
        if variables:
            phase, said = "failed", "started with pipeline variables, which no bar comes from"
        baselines: tuple[str, ...] = ()
        if phase == "succeeded":
            job = self._record_job(client, pid)
            data = self.download(client, int(job["id"]), BASELINE_FILE, 1 << 30) if job else None
            baselines = (hashlib.sha256(data).hexdigest(),) if data is not None else ()
        return RunRecord(
            id=pid,
            phase=phase,
            said=said,
            url=str(pipeline.get("web_url") or ""),
            started_at=read_time(pipeline.get("started_at") or pipeline.get("created_at")),
            baselines=baselines,
        )

    def _record_job(self, client: gitlab.Gitlab, pipeline: int) -> dict[str, Any] | None:
        jobs = self.api.all(client, f"/pipelines/{pipeline}/jobs", most=200)
        named = [j for j in jobs if j.get("name") == self.workflow and j.get("status") == "success"]
        return max(named, key=lambda j: int(j["id"])) if named else None

    def first_parent(self, commit: str) -> str | None:
        def ask(client: gitlab.Gitlab) -> str | None:
            try:
                found = self.api.get(client, f"/repository/commits/{commit}")
            except GitlabError as exc:
                if exc.response_code == 404:
                    return None
                raise
            parents = found.get("parent_ids") or []
            return str(parents[0]) if parents else None

        return self.api.ask(ask, doing=f"reading commit {commit[:12]}", error=BaselineError)

    def run_due(self, since: str, commit: str) -> str | None:
        def ask(client: gitlab.Gitlab) -> Any:
            return self.api.get(client, "/repository/compare", **{"from": since, "to": commit})

        found = self.api.ask(
            ask, doing=f"comparing {since[:12]} with {commit[:12]}", error=BaselineError
        )
        diffs = (found or {}).get("diffs") or []
        if not diffs:
            return None
        return (
            f"the record job runs on every push to {self.branch}, and {len(diffs)} paths "
            f"changed since {since[:7]}"
        )

    def recorded_baseline(self, run: RunRecord, digest: str) -> bytes:
        data = self._file(run, BASELINE_FILE)
        if data is None:
            raise BaselineError(
                f"pipeline {run.id}'s record job keeps no {BASELINE_FILE}; re-run the pipeline"
            )
        return data

    def recorded_answers(self, run: RunRecord) -> bytes | None:
        return self._file(run, ANSWERS_FILE)

    def _file(self, run: RunRecord, path: str) -> bytes | None:
        def ask(client: gitlab.Gitlab) -> bytes | None:
            job = self._record_job(client, run.id)
            return self.download(client, int(job["id"]), path, 1 << 30) if job else None

        return self.api.ask(ask, doing=f"reading {path} of pipeline {run.id}", error=BaselineError)

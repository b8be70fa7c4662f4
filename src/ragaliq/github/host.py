"""GitHub as a host of the gate: the port (:class:`~ragaliq.forge.Host`) filled from its REST API.

Each answer is a fact read by one module of this package through the one client
(:class:`~ragaliq.github.client.GitHubApi`); nothing here decides. Tests point it at the fake
GitHub over real HTTP.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragaliq.config import BaselinesConfig
from ragaliq.errors import CommentForbiddenError
from ragaliq.forge import (
    Access,
    BaselineRuns,
    Change,
    CommentBoard,
    CommentResult,
    FollowedRun,
    HandOver,
    HostProfile,
    JobLog,
    ReviewRecord,
    StatusBoard,
    StatusRecord,
    Upload,
    answers_artifact,
)
from ragaliq.github.artifacts import download_dataset, read_answer_files
from ragaliq.github.baseline_runs import GitHubBaselineRuns
from ragaliq.github.client import GitHubApi
from ragaliq.github.comment import GitHubPublisher
from ragaliq.github.contents import ContentsAtCommit
from ragaliq.github.data_branch import BranchBackend
from ragaliq.github.provenance import uploaded
from ragaliq.github.pulls import check_pull_request, find_pull_requests, open_pulls_into
from ragaliq.github.reviews import TEAMS_TOKEN, access_of, member_of, read_reviews
from ragaliq.github.runs import handed_over_at
from ragaliq.github.status import CommitStatus, latest_status
from ragaliq.report.markdown import ACCEPT_HINT
from ragaliq.repository import FallbackSource, FileSource, GitCommit
from ragaliq.store.layout import BaselineStore

__all__ = ["ANSWER_BYTES_READ", "ANSWER_RUNS_READ", "GitHubHost", "comment_on", "gate_of"]

ANSWER_RUNS_READ = 5
"""How many of a pull request's earlier gates' answers a gate reads, newest first."""
ANSWER_BYTES_READ = 64 * 1024 * 1024
"""The most bytes of earlier gates' answers one gate downloads, all artifacts together."""
PROFILE = HostProfile(
    comment=65_536,
    summary=1_048_576,
    summary_name="the job summary",
    teams_hint=TEAMS_TOKEN,
    accept_hint=ACCEPT_HINT,
)
"""GitHub's limits: a comment body of 65,536 characters, a job summary of 1 MiB."""


def gate_of(pr: Change) -> Any:
    """Whether a run (as the API shows it) may hold answers of a gate of ``pr``.

    A run started by ``workflow_run`` runs a workflow of the default branch, where no pull
    request's code runs; a ``pull_request`` run is kept only when it is of this pull request's
    own head repository and branch, so another pull request's untrusted job can never push its
    uploads in front of this one's. (Every file read is still checked as a whole against the
    judge's key before a row of it is.)
    """

    def trusted(run: dict[str, Any]) -> bool:
        event = run.get("event")
        if event == "workflow_run":
            return True
        head = (run.get("head_repository") or {}).get("full_name")
        return (
            event in ("pull_request", "pull_request_review")
            and str(head or "").lower() == pr.head_repo.lower()
            and run.get("head_branch") == pr.head_ref
        )

    return trusted


@dataclass(frozen=True, kw_only=True)
class _Comment:
    api: GitHubApi
    number: int

    def upsert(self, *, body: str, marker: str) -> CommentResult:
        if not self.api.token.strip():
            raise CommentForbiddenError("No github-token: no comment.")
        with GitHubPublisher.on(self.api, self.number) as publisher:
            result = publisher.upsert(body=body, marker=marker)
        return CommentResult(action=result.action, url=result.url)


def comment_on(api: GitHubApi, change: Change) -> CommentBoard:
    """The gate's comment on pull request ``change.number``."""
    return _Comment(api=api, number=change.number)


@dataclass(frozen=True, kw_only=True)
class GitHubHost:
    """The repository on GitHub (or GitHub Enterprise Server) behind one job."""

    api: GitHubApi
    server_url: str
    workspace: Path
    """The job's workspace: a commit's files are read with git there when the checkout has it."""
    log: JobLog
    run_url: str | None = None
    """The job's run, linked from the statuses it sets."""

    @property
    def name(self) -> str:
        return "GitHub"

    @property
    def profile(self) -> HostProfile:
        return PROFILE

    def files_at(self, sha: str, label: str) -> FileSource:
        api = ContentsAtCommit(api=self.api, sha=sha, label=label)
        return FallbackSource(
            (GitCommit(self.workspace, sha, label=label), api), on_fallback=self.log.log
        )

    def check_change(self, change: Change) -> Change:
        return check_pull_request(change, self.api)

    def changes_of_run(self, run: FollowedRun) -> tuple[Change, ...]:
        return find_pull_requests(run, self.api)

    def open_changes(self, base_ref: str) -> tuple[Change, ...]:
        return open_pulls_into(base_ref, self.api)

    def handed_over(
        self, run_id: int, artifact: str, file_name: str, head_sha: str | None
    ) -> HandOver:
        return download_dataset(
            self.api, run_id=run_id, artifact=artifact, file_name=file_name, head_sha=head_sha
        )

    def uploads(self, source: int | str, change: Change, artifact: str) -> tuple[Upload, ...]:
        return handed_over_at(
            self.api,
            head_sha=change.head_sha,
            artifact=artifact,
            run_id=source if isinstance(source, int) else 0,
            workflow=source if isinstance(source, str) else "",
        )

    def reviews(self, change: Change) -> tuple[tuple[ReviewRecord, ...], tuple[str, ...]]:
        return read_reviews(self.api, change.number)

    def access_of(self, login: str) -> Access | None:
        return access_of(self.api, login)

    def member_of(self, team: str, login: str) -> bool | str:
        return member_of(self.api, team, login)

    def baseline_runs(self, branch: str, workflow: str, trusted: FileSource) -> BaselineRuns:
        return GitHubBaselineRuns(
            api=self.api,
            server_url=self.server_url,
            branch=branch,
            workflow=workflow,
            trusted=trusted,
        )

    def baseline_store(self, config: BaselinesConfig) -> BaselineStore:
        return BaselineStore(BranchBackend(api=self.api, branch=config.branch), keep=config.keep)

    def uploaded(self, run_id: int, name: str) -> bool:
        return uploaded(self.api, run_id=run_id, name=name)

    def answer_files(self, change: Change) -> tuple[list[tuple[str, bytes]], list[str]]:
        return read_answer_files(
            self.api,
            artifact=answers_artifact(change.number),
            trusted_run=gate_of(change),
            runs=ANSWER_RUNS_READ,
            limit=ANSWER_BYTES_READ,
        )

    def status(self, sha: str, context: str) -> StatusBoard:
        return CommitStatus(
            api=self.api,
            sha=sha,
            context=context,
            target_url=self.run_url,
            on_failure=lambda message: self.log.notice(message, title="No commit status"),
        )

    def latest_status(self, sha: str, context: str) -> StatusRecord | None:
        return latest_status(self.api, sha=sha, context=context)

    def comment(self, change: Change) -> CommentBoard:
        return comment_on(self.api, change)

    def approve(self, change: Change, approved: bool) -> str | None:
        return None  # branch protection requires the status; GitHub needs no approval

    def foreign_inputs(self) -> tuple[str, ...]:
        return ()  # a workflow's inputs are its file's, at the ref it runs

"""What the action asks of GitHub, built once from its settings: tests point it at fakes."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ragaliq.config import BaselinesConfig, GatePolicy
from ragaliq.forge import BaselineRuns
from ragaliq.gate.acceptance import Acceptance
from ragaliq.github.artifacts import ArtifactDataset, download_dataset, read_answer_files
from ragaliq.github.baseline_runs import ANSWERS_ARTIFACT, GitHubBaselineRuns
from ragaliq.github.commands import Workflow
from ragaliq.github.comment import GitHubPublisher
from ragaliq.github.contents import ContentsAtCommit
from ragaliq.github.data_branch import BranchBackend
from ragaliq.github.provenance import uploaded
from ragaliq.github.pulls import check_pull_request, find_pull_requests, open_pulls_into
from ragaliq.github.reviews import read_acceptances_from_reviews
from ragaliq.github.runs import Upload, handed_over_at
from ragaliq.github.settings import ActionSettings, PullRequest, WorkflowRun
from ragaliq.github.status import CommitStatus, StatusRecord, latest_status
from ragaliq.repository import FallbackSource, FileSource, GitCommit
from ragaliq.store.layout import BaselineStore

__all__ = [
    "ANSWERS_ARTIFACT",
    "ANSWER_BYTES_READ",
    "ANSWER_RUNS_READ",
    "Remote",
    "answers_artifact",
    "connect",
    "gate_of",
]

ANSWER_RUNS_READ = 5
"""How many of a pull request's earlier gates' answers a gate reads, newest first."""
ANSWER_BYTES_READ = 64 * 1024 * 1024
"""The most bytes of earlier gates' answers one gate downloads, all artifacts together."""


def answers_artifact(number: int) -> str:
    """The artifact a gate of pull request ``number`` uploads its signed answers as.

    (A baseline run's are :data:`~ragaliq.github.baseline_runs.ANSWERS_ARTIFACT`.)
    """
    return f"{ANSWERS_ARTIFACT}-pr{number}"


def gate_of(pr: PullRequest) -> Callable[[dict[str, Any]], bool]:
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
class Remote:
    """What the action asks of GitHub; :func:`main` builds it from the settings."""

    files_at: Callable[[str, str], FileSource]
    """``(sha, label)``: the repository's files at a commit: git in the workspace, else the
    Contents API; ``label`` names the commit in messages."""
    publisher: Callable[[int], GitHubPublisher]
    """The comment of pull request N."""
    pull_requests_of: Callable[[WorkflowRun], tuple[PullRequest, ...]]
    """Every open pull request whose head is a ``workflow_run`` event's commit."""
    check_pull_request: Callable[[PullRequest], PullRequest]
    """The event's pull request, checked against the API (open, same head, same base)."""
    dataset_from: Callable[[int, str, str, str | None], ArtifactDataset]
    """``(run_id, artifact, file_name, head_sha)``: the dataset unpacked from an artifact."""
    handed_over_at: Callable[[int | str, str, str], tuple[Upload, ...]]
    """``(run_id or workflow file, head_sha, artifact)``: the artifacts of that name the
    ``pull_request`` runs of that workflow (run N's, or the file's) uploaded for the head commit,
    oldest first."""
    open_pulls_into: Callable[[str], tuple[PullRequest, ...]]
    """The open pull requests into a branch, most recently updated first."""
    latest_status: Callable[[str, str], StatusRecord | None]
    """``(sha, context)``: the newest status of that name on a commit."""
    status_of: Callable[[str, str], CommitStatus]
    """``(sha, context)``: a commit status of the gate's on a commit."""
    acceptances_of: Callable[
        [PullRequest, GatePolicy], tuple[tuple[Acceptance, ...], tuple[str, ...]]
    ]
    """Reviewers' acceptances at the pull request's head under the trusted policy, and notes on
    the reviews that do not count."""
    baseline_runs: Callable[[str, str, FileSource], BaselineRuns]
    """``(branch, workflow, trusted)``: the records of ``workflow``'s push runs on ``branch``,
    with ``trusted`` (the base commit) to read the workflow's triggers from."""
    baseline_store: Callable[[BaselinesConfig], BaselineStore]
    """The data branch a config names, to write a baseline to."""
    uploaded: Callable[[int, str], bool]
    """``(run_id, name)``: whether that run of the repository uploaded an artifact so named."""
    answer_files: Callable[[PullRequest], tuple[list[tuple[str, bytes]], list[str]]]
    """The signed answers this pull request's earlier gates uploaded, found by their runs and
    read as data, and notes on those that were not read."""


def connect(settings: ActionSettings, workflow: Workflow) -> Remote:
    """The real GitHub (or GHES) behind the action's settings."""

    def files_at(sha: str, label: str) -> FileSource:
        api = ContentsAtCommit(
            token=settings.github_token,
            repository=settings.repository,
            sha=sha,
            api_url=settings.api_url,
            label=label,
        )
        return FallbackSource(
            (GitCommit(settings.workspace, sha, label=label), api), on_fallback=workflow.log
        )

    def dataset_from(run_id: int, artifact: str, name: str, head: str | None) -> ArtifactDataset:
        return download_dataset(
            token=settings.github_token,
            repository=settings.repository,
            api_url=settings.api_url,
            run_id=run_id,
            artifact=artifact,
            file_name=name,
            head_sha=head,
        )

    def baseline_store(config: BaselinesConfig) -> BaselineStore:
        backend = BranchBackend(
            token=settings.github_token,
            repository=settings.repository,
            api_url=settings.api_url,
            branch=config.branch,
        )
        return BaselineStore(backend, keep=config.keep)

    def baseline_runs(branch: str, workflow: str, trusted: FileSource) -> BaselineRuns:
        return GitHubBaselineRuns(
            token=settings.github_token,
            repository=settings.repository,
            api_url=settings.api_url,
            server_url=settings.server_url,
            branch=branch,
            workflow=workflow,
            trusted=trusted,
        )

    return Remote(
        answer_files=lambda pr: read_answer_files(
            token=settings.github_token,
            repository=settings.repository,
            api_url=settings.api_url,
            artifact=answers_artifact(pr.number),
            trusted_run=gate_of(pr),
            runs=ANSWER_RUNS_READ,
            limit=ANSWER_BYTES_READ,
        ),
        baseline_runs=baseline_runs,
        baseline_store=baseline_store,
        uploaded=lambda run_id, name: uploaded(
            token=settings.github_token,
            repository=settings.repository,
            api_url=settings.api_url,
            run_id=run_id,
            name=name,
        ),
        files_at=files_at,
        publisher=lambda number: GitHubPublisher(
            token=settings.github_token,
            repository=settings.repository,
            pr_number=number,
            api_url=settings.api_url,
        ),
        pull_requests_of=lambda run: find_pull_requests(
            run,
            token=settings.github_token,
            repository=settings.repository,
            api_url=settings.api_url,
        ),
        check_pull_request=lambda pr: check_pull_request(
            pr,
            token=settings.github_token,
            repository=settings.repository,
            api_url=settings.api_url,
        ),
        dataset_from=dataset_from,
        handed_over_at=lambda source, head, name: handed_over_at(
            token=settings.github_token,
            repository=settings.repository,
            api_url=settings.api_url,
            run_id=source if isinstance(source, int) else 0,
            workflow=source if isinstance(source, str) else "",
            head_sha=head,
            artifact=name,
        ),
        open_pulls_into=lambda base: open_pulls_into(
            base,
            token=settings.github_token,
            repository=settings.repository,
            api_url=settings.api_url,
        ),
        latest_status=lambda sha, context: latest_status(
            token=settings.github_token,
            repository=settings.repository,
            api_url=settings.api_url,
            sha=sha,
            context=context,
        ),
        status_of=lambda sha, context: CommitStatus(
            token=settings.github_token,
            repository=settings.repository,
            sha=sha,
            api_url=settings.api_url,
            context=context,
            target_url=settings.run_url,
            on_failure=lambda message: workflow.notice(message, title="No commit status"),
        ),
        acceptances_of=lambda pr, policy: read_acceptances_from_reviews(
            token=settings.github_token,
            repository=settings.repository,
            api_url=settings.api_url,
            number=pr.number,
            head_sha=pr.head_sha,
            author=pr.author,
            policy=policy,
        ),
    )

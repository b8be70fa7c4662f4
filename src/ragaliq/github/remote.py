"""What the action asks of GitHub, built once from its settings: tests point it at fakes."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ragaliq.config import BaselinesConfig, GatePolicy
from ragaliq.gate.acceptance import Acceptance
from ragaliq.github.artifacts import ArtifactDataset, download_dataset, read_answer_files
from ragaliq.github.commands import Workflow
from ragaliq.github.comment import GitHubPublisher
from ragaliq.github.contents import ContentsAtCommit
from ragaliq.github.data_branch import BranchBackend
from ragaliq.github.provenance import Provenance
from ragaliq.github.pulls import check_pull_request, find_pull_requests
from ragaliq.github.reviews import read_acceptances_from_reviews
from ragaliq.github.runs import Upload, handed_over_at
from ragaliq.github.settings import ActionSettings, PullRequest, WorkflowRun
from ragaliq.github.status import CommitStatus
from ragaliq.judges.answers import MAX_ANSWER_FILE_BYTES
from ragaliq.repository import FallbackSource, FileSource, GitCommit
from ragaliq.store.finder import StoreFinder
from ragaliq.store.layout import BaselineStore

__all__ = ["ANSWERS_ARTIFACT", "ANSWER_ARTIFACTS_READ", "Remote", "connect"]

ANSWERS_ARTIFACT = "ragaliq-answers"
"""The artifact the workflows upload a gate's signed judge answers as."""
ANSWER_ARTIFACTS_READ = 10
"""How many of the newest such artifacts a gate reads."""


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
    handed_over_at: Callable[[int, str, str], tuple[Upload, ...]]
    """``(run_id, head_sha, artifact)``: the artifacts of that name the ``pull_request`` runs of
    run N's workflow uploaded for the head commit, oldest first."""
    status_of: Callable[[str, str], CommitStatus]
    """``(sha, context)``: a commit status of the gate's on a commit."""
    acceptances_of: Callable[
        [PullRequest, GatePolicy], tuple[tuple[Acceptance, ...], tuple[str, ...]]
    ]
    """Reviewers' acceptances at the pull request's head under the trusted policy, and notes on
    the reviews that do not count."""
    baselines_of: Callable[[str, str], StoreFinder]
    """``(commit, branch)``: the stored baseline of a commit of ``branch`` (or of its nearest
    first-parent ancestor), each checked for the run that recorded it."""
    baseline_store: Callable[[BaselinesConfig], BaselineStore]
    """The data branch a config names, to write a baseline to."""
    provenance: Provenance
    """Checks runs and reads first parents through the API."""
    answer_files: Callable[[], tuple[list[tuple[str, bytes]], list[str]]]
    """The signed answers earlier gates uploaded (the newest ``ragaliq-answers`` artifacts),
    read as data, and notes on those that could not be read."""


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

    provenance = Provenance(
        token=settings.github_token, repository=settings.repository, api_url=settings.api_url
    )

    def baseline_store(config: BaselinesConfig) -> BaselineStore:
        backend = BranchBackend(
            token=settings.github_token,
            repository=settings.repository,
            api_url=settings.api_url,
            branch=config.branch,
        )
        return BaselineStore(backend, keep=config.keep)

    def baselines_of(commit: str, branch: str) -> StoreFinder:
        return StoreFinder(
            stores=lambda config: (baseline_store(config),),
            commit=commit,
            base=f"{branch}@{commit[:7]}",
            parent_of=provenance.first_parent,
            verify=lambda baseline, digest, config: provenance.verify(
                baseline, digest, config, branch
            ),
        )

    return Remote(
        answer_files=lambda: read_answer_files(
            token=settings.github_token,
            repository=settings.repository,
            api_url=settings.api_url,
            artifact=ANSWERS_ARTIFACT,
            newest=ANSWER_ARTIFACTS_READ,
            limit=MAX_ANSWER_FILE_BYTES,
        ),
        baselines_of=baselines_of,
        baseline_store=baseline_store,
        provenance=provenance,
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
        handed_over_at=lambda run_id, head, name: handed_over_at(
            token=settings.github_token,
            repository=settings.repository,
            api_url=settings.api_url,
            run_id=run_id,
            head_sha=head,
            artifact=name,
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

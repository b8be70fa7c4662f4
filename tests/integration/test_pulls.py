"""A workflow_run gate finds its pull request from GitHub's own data, and only an open one whose
head is still the run's commit."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from ragaliq.github.pulls import find_pull_request
from ragaliq.github.settings import WorkflowRun
from tests.fakes.github_server import FakeGitHub

TOKEN = "ghs_pulls"
REPO = "acme/rag"
FORK = "mallory/rag"
HEAD, BASE, NEWER = "a" * 40, "b" * 40, "c" * 40


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    with FakeGitHub(token=TOKEN) as server:
        yield server


def fork_run(head_sha: str = HEAD, *, branch: str = "feature") -> WorkflowRun:
    return WorkflowRun(
        id=99,
        event="pull_request",
        conclusion="success",
        head_sha=head_sha,
        head_branch=branch,
        head_owner="mallory",
        head_repo=FORK,
    )


def find(github: FakeGitHub, run: WorkflowRun):
    return find_pull_request(run, token=TOKEN, repository=REPO, api_url=github.base_url)


def test_the_open_pull_request_whose_head_is_the_runs_commit_is_found(github):
    github.add_pull(REPO, 5, head_sha=HEAD, base_sha=BASE, head_repo=FORK, user="mallory")
    found = find(github, fork_run())
    assert found is not None
    assert (found.number, found.base_sha, found.head_sha, found.author) == (
        5,
        BASE,
        HEAD,
        "mallory",
    )


def test_a_pull_request_pushed_to_since_the_run_is_not_the_runs(github):
    github.add_pull(REPO, 5, head_sha=NEWER, base_sha=BASE, head_repo=FORK)
    assert find(github, fork_run()) is None


def test_a_closed_pull_request_is_not_gated(github):
    github.add_pull(REPO, 5, head_sha=HEAD, base_sha=BASE, head_repo=FORK)
    github.close_pull(REPO, 5)
    assert find(github, fork_run()) is None


def test_another_forks_branch_of_the_same_name_is_not_the_runs(github):
    github.add_pull(REPO, 6, head_sha=HEAD, base_sha=BASE, head_repo="eve/rag")
    assert find(github, fork_run()) is None

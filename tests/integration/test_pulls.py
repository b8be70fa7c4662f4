"""A gate is sure of its pull requests before it reads a bar: a workflow_run gate finds every open
pull request whose head is still the run's commit, from GitHub's own data; a pull_request gate
checks the event's pull request against the API (still open, same head, same base)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from ragaliq.errors import ConfigError
from ragaliq.forge import Change, FollowedRun
from ragaliq.github.client import GitHubApi
from ragaliq.github.pulls import check_pull_request, find_pull_requests
from tests.fakes.github_server import FakeGitHub

TOKEN = "ghs_pulls"
REPO = "acme/rag"
FORK = "mallory/rag"
HEAD, BASE, NEWER = "a" * 40, "b" * 40, "c" * 40


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    with FakeGitHub(token=TOKEN) as server:
        yield server


def fork_run(head_sha: str = HEAD, *, branch: str = "feature") -> FollowedRun:
    return FollowedRun(
        id=99,
        kind="change",
        conclusion="success",
        head_sha=head_sha,
        head_branch=branch,
        head_owner="mallory",
        head_repo=FORK,
    )


def api(github: FakeGitHub) -> GitHubApi:
    return GitHubApi(token=TOKEN, repository=REPO, api_url=github.base_url)


def find(github: FakeGitHub, run: FollowedRun):
    return find_pull_requests(run, api(github))


def test_the_open_pull_request_whose_head_is_the_runs_commit_is_found(github):
    github.add_pull(REPO, 5, head_sha=HEAD, base_sha=BASE, head_repo=FORK, user="mallory")
    (found,) = find(github, fork_run())
    assert (found.number, found.base_sha, found.head_sha, found.author, found.base_ref) == (
        5,
        BASE,
        HEAD,
        "mallory",
        "main",
    )


def test_every_open_pull_request_of_the_head_is_found_each_with_its_own_base(github):
    github.add_pull(REPO, 10, head_sha=HEAD, base_sha=BASE, head_repo=FORK, base_ref="main")
    github.add_pull(REPO, 11, head_sha=HEAD, base_sha=NEWER, head_repo=FORK, base_ref="release")
    found = find(github, fork_run())
    assert [(p.number, p.base_ref, p.base_sha) for p in found] == [
        (10, "main", BASE),
        (11, "release", NEWER),
    ]


def test_a_pull_request_pushed_to_since_the_run_is_not_the_runs(github):
    github.add_pull(REPO, 5, head_sha=NEWER, base_sha=BASE, head_repo=FORK)
    assert find(github, fork_run()) == ()


def test_a_closed_pull_request_is_not_gated(github):
    github.add_pull(REPO, 5, head_sha=HEAD, base_sha=BASE, head_repo=FORK)
    github.close_pull(REPO, 5)
    assert find(github, fork_run()) == ()


def test_another_forks_branch_of_the_same_name_is_not_the_runs(github):
    github.add_pull(REPO, 6, head_sha=HEAD, base_sha=BASE, head_repo="eve/rag")
    assert find(github, fork_run()) == ()


def event_pull(number: int = 5, *, base_ref: str = "main", head: str = HEAD) -> Change:
    return Change(
        number=number,
        base_sha=BASE,
        head_sha=head,
        base_repo=REPO,
        head_repo=FORK,
        base_ref=base_ref,
    )


def check(github: FakeGitHub, pr: Change) -> Change:
    return check_pull_request(pr, api(github))


def test_the_events_pull_request_is_checked_against_the_api(github):
    github.add_pull(REPO, 5, head_sha=HEAD, base_sha=BASE, head_repo=FORK, user="mallory")
    checked = check(github, event_pull())
    assert (checked.number, checked.base_ref, checked.base_sha, checked.author) == (
        5,
        "main",
        BASE,
        "mallory",
    )


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ("retarget", "re-targeted from main to old"),
        ("push", "pushed to since"),
        ("close", "not open any more"),
    ],
)
def test_an_event_the_pull_request_no_longer_matches_is_not_judged(github, change, said):
    github.add_pull(
        REPO,
        5,
        head_sha=NEWER if change == "push" else HEAD,
        base_sha=BASE,
        head_repo=FORK,
        base_ref="old" if change == "retarget" else "main",
    )
    if change == "close":
        github.close_pull(REPO, 5)
    with pytest.raises(ConfigError, match=said):
        check(github, event_pull())

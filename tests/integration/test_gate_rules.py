"""The gate's rules, written once against the port and run on every host adapter: the in-memory
host, and GitHub's over real HTTP to the fake GitHub (:mod:`tests.integration.hosts`).

The core runs in the test's own process (no subprocess, no workflow play): each rule's one played
job-by-job test stays in ``tests/e2e``; here each rule is checked on both hosts.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from ragaliq.github.client import GitHubApi
from ragaliq.github.commands import Workflow
from ragaliq.github.host import GitHubHost
from tests.e2e.workspace import cases
from tests.fakes.github_server import FakeGitHub
from tests.fakes.memory_host import MemoryHost
from tests.integration.hosts import CONFIG, REPO, GitHubWorld, MemoryWorld, World, git

TOKEN = "ghs_rules"


def new_repository(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.email", "ci@example.com")
    git(repo, "config", "user.name", "CI")
    (repo / "ragaliq.yaml").write_text(CONFIG, encoding="utf-8")
    return repo


@pytest.fixture(params=["memory", "github"])
def world(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[World]:
    repo = new_repository(tmp_path)
    if request.param == "memory":
        host = MemoryHost(repository=repo, store_root=tmp_path / "stores", unpacked=tmp_path)
        yield MemoryWorld(tmp=tmp_path, repo=repo, host=host)
        return
    with FakeGitHub(token=TOKEN) as fake:
        fake.mirror_git(REPO, str(repo))
        host = GitHubHost(
            api=GitHubApi(token=TOKEN, repository=REPO, api_url=fake.base_url),
            server_url="https://github.example",
            workspace=tmp_path / "unused",
            log=Workflow(output_file=None, summary_file=None),
        )
        yield GitHubWorld(tmp=tmp_path, repo=repo, host=host, fake=fake)


def test_a_change_is_held_to_its_bases_bar_under_a_status_named_for_the_base(world):
    main = world.commit_main()
    world.record(main)
    regressed = world.open_change(1, regressed=True)
    job = world.gate(regressed)
    assert job.code == 1, job.text
    state, description = world.statuses(regressed.head_sha)[-1]
    assert state == "failure" and description.startswith(f"main@{main[:7]}: ")
    clean = world.open_change(2)
    assert world.gate(clean).code == 0
    assert world.statuses(clean.head_sha)[-1][0] == "success"
    assert world.statuses(clean.head_sha, "RagaliQ Gate (release)") == []


def test_the_comment_is_one_updated_in_place_and_never_a_stale_pass(world):
    main = world.commit_main()
    world.record(main)
    change = world.open_change(3)
    assert world.gate(change).code == 0
    (body,) = world.comments(3)
    assert "RagaliQ Gate passed" in body
    world.gate(change, anthropic_api_key="", artifact="absent-artifact")
    (body,) = world.comments(3)  # the same comment, saying it could not judge
    assert "could not judge" in body and "passed" not in body.split("\n", 2)[1]
    assert world.statuses(change.head_sha)[-1][0] == "error"


def test_a_change_cannot_loosen_its_own_bar(world):
    main = world.commit_main()
    world.record(main)
    loosened = CONFIG.replace("threshold: 0.5", "threshold: 0.0").replace(
        "fail_on_new_hallucinations: true", "fail_on_new_hallucinations: false"
    )
    change = world.open_change(4, regressed=True, **{"ragaliq.yaml": loosened})
    job = world.gate(change)
    assert job.code == 1, job.text
    assert "apply once it is merged" in world.comments(4)[0]


def test_a_base_whose_baseline_records_waits_and_the_follower_ends_the_wait(world):
    main = world.commit_main()
    run = world.start_record(main)
    change = world.open_change(5, regressed=True)
    job = world.gate(change)
    assert job.code == 0 and job.log.outputs["passed"] == "false"
    state, description = world.statuses(change.head_sha)[-1]
    assert state == "pending" and "waiting for the baseline" in description
    world.record(main, run)
    follower = world.follow(main, run)
    assert follower.code == 0, follower.text
    assert world.statuses(change.head_sha)[-1][0] == "failure"
    assert "#5: failure" in follower.log.summary


def test_a_base_with_no_baseline_run_is_not_judged_never_green(world):
    main = world.commit_main()
    change = world.open_change(6)
    job = world.gate(change)
    assert job.code == 2
    assert job.log.outputs["passed"] == "false"
    said = f"no baseline run of ragaliq-baseline.yml is recorded for main@{main[:7]}"
    assert said in job.text and said in job.log.summary
    assert "No baseline yet" not in job.text  # never the first run's pass on thresholds
    # Never ``pending`` first: a change is marked judging only once its bar is read.
    assert [state for state, _ in world.statuses(change.head_sha)] == ["error"]
    _state, description = world.statuses(change.head_sha)[-1]
    assert description.startswith(f"main@{main[:7]}: not judged: no baseline")


def test_a_reviewer_with_write_access_accepts_and_the_author_cannot(world):
    main = world.commit_main()
    world.record(main)
    rows = cases()
    invented = [{**rows[0], "response": rows[0]["response"] + " It also costs $99 in 2031."}]
    change = world.open_change(7, invented + rows[1:], author="dev")
    assert world.gate(change).code == 1
    world.grant("dev", "write")
    world.review(change, author="dev", body="/ragaliq accept all")
    job = world.gate(change)
    assert job.code == 1
    assert "by the pull request's author" in job.text
    world.grant("lead", "maintain")
    world.review(change, author="lead", body="/ragaliq accept all")
    assert world.gate(change).code == 0


def test_a_review_by_someone_with_read_access_accepts_nothing(world):
    main = world.commit_main()
    world.record(main)
    change = world.open_change(8, regressed=True)
    world.grant("visitor", "read")
    world.review(change, author="visitor", body="/ragaliq accept all")
    job = world.gate(change)
    assert job.code == 1
    assert "they have read access" in job.text


def test_a_change_pushed_to_since_its_event_is_not_judged(world):
    main = world.commit_main()
    world.record(main)
    change = world.open_change(9)
    newer = world.open_change(9, regressed=True)  # the same change, pushed to
    job = world.gate(change)
    assert job.code == 2 and "pushed to since" in job.text
    assert world.statuses(newer.head_sha) == []

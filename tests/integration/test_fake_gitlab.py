"""Self-test of tests/fakes/gitlab_server.py driven by the real python-gitlab over real HTTP."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import zipfile
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import gitlab
import pytest
import requests

from tests.fakes.gitlab_ci import (
    CiProject,
    CiVariable,
    MergeRequestInfo,
    PipelineContext,
    load_config,
    plan_pipeline,
)
from tests.fakes.gitlab_server import DEVELOPER, GUEST, MAINTAINER, REPORTER, FakeGitLab

PROJECT = "acme/rag-app"
ENCODED = "acme%2Frag-app"
NAME = "RagaliQ Gate (main)"


@pytest.fixture
def fake() -> Iterator[FakeGitLab]:
    with FakeGitLab() as server:
        server.add_project(PROJECT)
        yield server
        assert server.errors == []


def client(fake: FakeGitLab, token: str | None = None, **kwargs: Any) -> gitlab.Gitlab:
    return gitlab.Gitlab(fake.url, private_token=token or fake.token, **kwargs)


def raw(
    fake: FakeGitLab, method: str, path: str, token: str | None = None, **kwargs: Any
) -> requests.Response:
    headers = {"PRIVATE-TOKEN": token or fake.token}
    return requests.request(method, fake.api_url + path, headers=headers, timeout=5, **kwargs)


def seed_repo(fake: FakeGitLab) -> tuple[str, str]:
    base = fake.add_commit(
        PROJECT, {"ragaliq.yaml": "gate: {}\n", "data/cases.jsonl": "{}\n"}, branch="main"
    )
    head = fake.add_commit(
        PROJECT, {"data/cases.jsonl": "{}\n{}\n", "new.txt": "n"}, parents=[base], branch="feature"
    )
    return base, head


def test_user_and_project_by_path_and_id(fake: FakeGitLab) -> None:
    gl = client(fake)
    gl.auth()
    assert gl.user is not None
    assert gl.user.username == "ragaliq-gate-bot"
    assert gl.user.bot is True
    by_path = gl.projects.get(PROJECT)
    by_id = gl.projects.get(by_path.id)
    assert by_path.path_with_namespace == by_id.path_with_namespace == PROJECT
    assert by_path.default_branch == "main"
    assert by_path.permissions["project_access"]["access_level"] == DEVELOPER
    assert by_path.ci_pipeline_variables_minimum_override_role == "developer"
    assert fake.requests_matching("GET", rf"^/projects/{ENCODED}$")


def test_bad_token_and_missing_project_are_shaped_as_gitlab(fake: FakeGitLab) -> None:
    with pytest.raises(gitlab.GitlabAuthenticationError) as bad:
        client(fake, token="glpat-wrong").auth()
    assert bad.value.response_code == 401
    answer = raw(fake, "GET", "/projects/acme%2Fnope")
    assert (answer.status_code, answer.json()) == (404, {"message": "404 Project Not Found"})
    missing_mr = raw(fake, "GET", f"/projects/{ENCODED}/merge_requests/99")
    assert (missing_mr.status_code, missing_mr.json()) == (404, {"message": "404 Not Found"})
    no_route = raw(fake, "GET", f"/projects/{ENCODED}/wikis")
    assert (no_route.status_code, no_route.json()) == (404, {"error": "404 Not Found"})
    fake.add_project("other/private", gate_access=None)
    with pytest.raises(gitlab.GitlabGetError) as hidden:
        client(fake).projects.get("other/private")
    assert hidden.value.response_code == 404


def test_merge_requests_filters_order_and_fork(fake: FakeGitLab) -> None:
    base, head = seed_repo(fake)
    fork = fake.add_project("someone/rag-app", forked_from=PROJECT)
    first = fake.add_merge_request(PROJECT, head_sha=head, author="alice")
    second = fake.add_merge_request(
        PROJECT, head_sha="f" * 40, source_branch="patch", source_project=fork, author="mallory"
    )
    third = fake.add_merge_request(PROJECT, head_sha="e" * 40, target_branch="release")
    fake.set_merge_request_state(PROJECT, third, "merged")
    fake.push_to_merge_request(PROJECT, first, head_sha=head)
    project = client(fake).projects.get(PROJECT)

    opened = project.mergerequests.list(state="opened", target_branch="main", get_all=True)
    assert sorted(mr.iid for mr in opened) == [first, second]
    newest = project.mergerequests.list(order_by="updated_at", sort="desc", get_all=True)
    assert [mr.iid for mr in newest] == [first, third, second]

    mr = project.mergerequests.get(second)
    assert mr.source_project_id == fork
    assert mr.target_project_id == project.id
    assert mr.sha == "f" * 40
    assert mr.diff_refs == {"base_sha": base, "head_sha": "f" * 40, "start_sha": base}
    assert mr.author["username"] == "mallory"
    assert (mr.source_branch, mr.target_branch) == ("patch", "main")
    assert client(fake).projects.get(fork).forked_from_project["id"] == project.id


def test_notes_paginate_with_gitlab_headers_and_only_the_author_edits(fake: FakeGitLab) -> None:
    iid = fake.add_merge_request(PROJECT, head_sha="a" * 40)
    for number in range(45):
        fake.add_note(PROJECT, iid, f"note {number}", author=f"user{number % 3}")
    fake.requests.clear()
    mr = client(fake).projects.get(PROJECT).mergerequests.get(iid)
    notes = mr.notes.list(get_all=True)
    assert [n.body for n in notes] == [f"note {n}" for n in reversed(range(45))]
    pages = fake.requests_matching("GET", r"/notes$")
    assert [r.query.get("page", ["1"])[0] for r in pages] == ["1", "2", "3"]
    assert [n.body for n in mr.notes.list(sort="asc", iterator=True)][:2] == ["note 0", "note 1"]

    answer = raw(fake, "GET", f"/projects/{ENCODED}/merge_requests/{iid}/notes?per_page=20&page=2")
    assert answer.headers["X-Page"] == "2"
    assert answer.headers["X-Per-Page"] == "20"
    assert answer.headers["X-Next-Page"] == "3"
    assert answer.headers["X-Prev-Page"] == "1"
    assert answer.headers["X-Total"] == "45"
    assert answer.headers["X-Total-Pages"] == "3"
    assert set(answer.links) == {"next", "prev", "first", "last"}
    assert answer.links["next"]["url"].startswith(fake.api_url)

    mine = mr.notes.create({"body": "<!-- ragaliq:comment -->\nfirst"})
    assert mine.author["username"] == "ragaliq-gate-bot"
    assert mine.system is False
    mine.body = "<!-- ragaliq:comment -->\nsecond"
    mine.save()
    stored = {n.id: n for n in fake.notes(PROJECT, iid)}[mine.id]
    assert stored.body.endswith("second")
    assert stored.updated_at > stored.created_at
    theirs = mr.notes.get(notes[0].id)
    theirs.body = "rewritten by the gate"
    with pytest.raises(gitlab.GitlabUpdateError) as refused:
        theirs.save()
    assert refused.value.response_code == 403


def test_statuses_carry_their_author_and_latest_per_name(fake: FakeGitLab) -> None:
    _, head = seed_repo(fake)
    developer = "glpat-dev"
    fake.add_user("dev", token=developer)
    fake.add_member(PROJECT, "dev", DEVELOPER)
    fake.add_user("reporter", token="glpat-rep")
    fake.add_member(PROJECT, "reporter", REPORTER)

    gate = client(fake).projects.get(PROJECT).commits.get(head)
    gate.statuses.create({"state": "pending", "name": NAME, "ref": "feature"})
    with pytest.raises(gitlab.GitlabCreateError) as again:
        gate.statuses.create({"state": "pending", "name": NAME, "ref": "feature"})
    assert again.value.response_code == 400
    gate.statuses.create({"state": "failed", "name": NAME, "description": "2 new claims"})
    forged = client(fake, developer).projects.get(PROJECT).commits.get(head)
    forged.statuses.create({"state": "success", "name": NAME})
    with pytest.raises(gitlab.GitlabCreateError) as reporter:
        client(fake, "glpat-rep").projects.get(PROJECT).commits.get(head).statuses.create(
            {"state": "success", "name": NAME}
        )
    assert reporter.value.response_code == 403

    latest = gate.statuses.list(get_all=True)
    assert [(s.name, s.status, s.author["username"]) for s in latest] == [(NAME, "success", "dev")]
    every = gate.statuses.list(all=True, get_all=True)
    assert [(s.status, s.author["username"]) for s in every] == [
        ("pending", "ragaliq-gate-bot"),
        ("failed", "ragaliq-gate-bot"),
        ("success", "dev"),
    ]
    assert [s.author for s in fake.statuses(PROJECT, head, name=NAME)] == [
        "ragaliq-gate-bot",
        "ragaliq-gate-bot",
        "dev",
    ]
    # A status on a commit without a pipeline makes GitLab create an external one for it.
    external = client(fake).projects.get(PROJECT).pipelines.list(sha=head, get_all=True)
    assert [p.source for p in external] == ["external"]


def test_approvals_follow_the_head_and_refuse_the_author(fake: FakeGitLab) -> None:
    _, head = seed_repo(fake)
    iid = fake.add_merge_request(PROJECT, head_sha=head, author="alice")
    fake.add_user("alice", token="glpat-alice")
    fake.add_member(PROJECT, "alice", DEVELOPER)
    mr = client(fake).projects.get(PROJECT).mergerequests.get(iid)
    with pytest.raises(gitlab.GitlabAuthenticationError):
        client(fake, "glpat-alice").projects.get(PROJECT).mergerequests.get(iid).approve()
    with pytest.raises(gitlab.GitlabMRApprovalError) as stale:
        mr.approve(sha="0" * 40)
    assert stale.value.response_code == 409
    mr.approve(sha=head)
    assert [a["user"]["username"] for a in mr.approvals.get().approved_by] == ["ragaliq-gate-bot"]
    with pytest.raises(gitlab.GitlabAuthenticationError):
        mr.approve(sha=head)
    mr.unapprove()
    assert mr.approvals.get().approved_by == []
    with pytest.raises(gitlab.GitlabMRApprovalError) as none:
        mr.unapprove()
    assert none.value.response_code == 404
    mr.approve()
    fake.push_to_merge_request(PROJECT, iid, head_sha="9" * 40)
    assert fake.approvals(PROJECT, iid) == []


def test_members_with_access_levels(fake: FakeGitLab) -> None:
    levels = {"guest": GUEST, "reporter": REPORTER, "dev": DEVELOPER, "lead": MAINTAINER}
    ids = {name: fake.add_member(PROJECT, name, level) for name, level in levels.items()}
    outsider = fake.add_user("outsider")
    project = client(fake).projects.get(PROJECT)
    for name, level in levels.items():
        member = project.members_all.get(ids[name])
        assert (member.username, member.access_level) == (name, level)
    with pytest.raises(gitlab.GitlabGetError) as missing:
        project.members_all.get(outsider)
    assert missing.value.response_code == 404
    listed = {m.username: m.access_level for m in project.members_all.list(get_all=True)}
    assert listed == {"ragaliq-gate-bot": DEVELOPER, **levels}


def test_pipelines_their_sources_variables_jobs_and_schedules(fake: FakeGitLab) -> None:
    base, head = seed_repo(fake)
    push = fake.add_pipeline(PROJECT, ref="main", sha=base, source="push", user="lead")
    web = fake.add_pipeline(
        PROJECT, ref="main", sha=base, source="web", user="dev", variables={"PIP_INDEX_URL": "x"}
    )
    schedule = fake.add_schedule(PROJECT, ref="main", owner="lead", variables={"MODE": "gate"})
    scheduled = fake.add_pipeline(
        PROJECT, ref="main", sha=base, source="schedule", user="lead", schedule_id=schedule
    )
    fake.add_pipeline(
        PROJECT, ref="refs/merge-requests/1/head", sha=head, source="merge_request_event"
    )
    fake.add_job(push, "record", stage="record", environment="ragaliq")
    project = client(fake).projects.get(PROJECT)

    listed = project.pipelines.list(ref="main", order_by="id", sort="asc", get_all=True)
    assert [p.id for p in listed] == [push, web, scheduled]
    assert [p.source for p in project.pipelines.list(sha=head, get_all=True)] == [
        "merge_request_event"
    ]
    assert [p.id for p in project.pipelines.list(source="schedule", get_all=True)] == [scheduled]
    one = project.pipelines.get(web)
    assert (one.source, one.ref, one.sha, one.user["username"]) == ("web", "main", base, "dev")
    assert [(v.key, v.value) for v in one.variables.list(get_all=True)] == [("PIP_INDEX_URL", "x")]
    assert project.pipelines.get(push).variables.list(get_all=True) == []

    plan = project.pipelineschedules.get(schedule)
    assert (plan.ref, plan.owner["username"], plan.last_pipeline["id"]) == (
        "main",
        "lead",
        scheduled,
    )
    assert [v["key"] for v in plan.attributes["variables"]] == ["MODE"]
    assert [s.id for s in project.pipelineschedules.list(get_all=True)] == [schedule]

    mr_pipeline = project.pipelines.list(source="merge_request_event", get_all=True)[0].id
    iid = fake.add_merge_request(PROJECT, 1, head_sha=head)
    mr = project.mergerequests.get(iid)
    assert [p.id for p in mr.pipelines.list(get_all=True)] == [mr_pipeline]
    assert mr.head_pipeline["id"] == mr_pipeline
    assert [m["iid"] for m in project.commits.get(head).merge_requests()] == [iid]

    jobs = project.pipelines.get(push).jobs.list(get_all=True)
    assert [(j.name, j.stage, j.status) for j in jobs] == [("record", "record", "success")]
    environments = project.environments.list(get_all=True)
    assert [e.name for e in environments] == ["ragaliq"]
    assert project.environments.get(environments[0].id).name == "ragaliq"


def test_artifacts_by_job_and_by_ref_and_their_expiry(fake: FakeGitLab) -> None:
    base, _ = seed_repo(fake)
    older = fake.add_pipeline(PROJECT, ref="main", sha=base)
    older_job = fake.add_job(older, "produce", artifacts={"out/rag.jsonl": "old\n"}, expired=True)
    latest = fake.add_pipeline(PROJECT, ref="main", sha=base)
    latest_job = fake.add_job(
        latest, "produce", artifacts={"out/rag.jsonl": "new\n"}, expire_in=timedelta(days=1)
    )
    project = client(fake).projects.get(PROJECT)

    job = project.jobs.get(latest_job)
    assert job.artifacts_expire_at is not None
    with zipfile.ZipFile(io.BytesIO(job.artifacts())) as archive:
        assert archive.read("out/rag.jsonl") == b"new\n"
    assert job.artifact("out/rag.jsonl") == b"new\n"
    assert project.artifacts.download(ref_name="main", job="produce")[:2] == b"PK"
    assert project.artifacts.raw("main", "out/rag.jsonl", "produce") == b"new\n"
    with pytest.raises(gitlab.GitlabGetError) as gone:
        project.jobs.get(older_job).artifacts()
    assert gone.value.response_code == 404
    with pytest.raises(gitlab.GitlabGetError):
        job.artifact("missing.txt")

    # The latest successful pipeline's artifacts of a ref outlive their expiry while the
    # project keeps them, and not once it stops.
    fake.set_job(latest_job, expired=True)
    assert job.artifact("out/rag.jsonl") == b"new\n"
    fake.set_project(PROJECT, keep_latest_artifact=False)
    with pytest.raises(gitlab.GitlabGetError):
        job.artifact("out/rag.jsonl")


def test_repository_files_commits_compare_and_branches(fake: FakeGitLab) -> None:
    base, head = seed_repo(fake)
    fake.protect_branch(PROJECT, "main")
    project = client(fake).projects.get(PROJECT)
    assert project.files.raw(file_path="ragaliq.yaml", ref=base) == b"gate: {}\n"
    assert project.files.raw(file_path="data/cases.jsonl", ref="feature") == b"{}\n{}\n"
    with pytest.raises(gitlab.GitlabGetError) as absent:
        project.files.raw(file_path="new.txt", ref="main")
    assert absent.value.response_code == 404
    info = project.files.get(file_path="new.txt", ref=head)
    assert info.decode() == b"n"
    assert info.last_commit_id == head
    assert project.commits.get(head).parent_ids == [base]
    compare = project.repository_compare(base, head)
    assert isinstance(compare, dict)
    assert sorted((d["new_path"], d["new_file"]) for d in compare["diffs"]) == [
        ("data/cases.jsonl", False),
        ("new.txt", True),
    ]
    assert [c["id"] for c in compare["commits"]] == [head]
    branches = {b.name: b.protected for b in project.branches.list(get_all=True)}
    assert branches == {"main": True, "feature": False}
    assert project.branches.get("main").commit["id"] == base


def test_mirrored_git_repository(fake: FakeGitLab, tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    env = {**os.environ, "GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@example.com"}
    env |= {"GIT_COMMITTER_NAME": "a", "GIT_COMMITTER_EMAIL": "a@example.com"}

    def git(*args: str) -> str:
        done = subprocess.run(
            ["git", "-C", str(repo), *args], env=env, check=True, text=True, capture_output=True
        )
        return done.stdout.strip()

    repo.mkdir()
    git("init", "-q", "-b", "main")
    (repo / "ragaliq.yaml").write_text("bar: 1\n")
    git("add", ".")
    git("commit", "-qm", "first")
    first = git("rev-parse", "HEAD")
    (repo / "ragaliq.yaml").write_text("bar: 2\n")
    git("commit", "-qam", "second")
    second = git("rev-parse", "HEAD")
    fake.mirror_git(PROJECT, str(repo))
    project = client(fake).projects.get(PROJECT)
    assert project.files.raw(file_path="ragaliq.yaml", ref=first) == b"bar: 1\n"
    assert project.files.raw(file_path="ragaliq.yaml", ref="main") == b"bar: 2\n"
    assert project.commits.get(second).parent_ids == [first]
    compare = project.repository_compare(first, second)
    assert isinstance(compare, dict)
    assert [d["new_path"] for d in compare["diffs"]] == ["ragaliq.yaml"]


def test_commits_api_writes_a_data_branch_and_refuses_races_and_protection(
    fake: FakeGitLab,
) -> None:
    base, _ = seed_repo(fake)
    project = client(fake).projects.get(PROJECT)
    created = project.commits.create(
        {
            "branch": "ragaliq-data",
            "start_branch": "main",
            "commit_message": "baseline for main",
            "actions": [
                {"action": "create", "file_path": "index.json", "content": "{}"},
                {
                    "action": "create",
                    "file_path": f"baselines/{base}.json.gz",
                    "content": "AAEC",
                    "encoding": "base64",
                },
            ],
        }
    )
    assert created.parent_ids == [base]
    files = fake.branch_files(PROJECT, "ragaliq-data")
    assert files["index.json"] == b"{}"
    assert files[f"baselines/{base}.json.gz"] == b"\x00\x01\x02"

    tip = created.id
    update = {"action": "update", "file_path": "index.json", "content": '{"n": 1}'}
    with pytest.raises(gitlab.GitlabCreateError) as exists:
        project.commits.create(
            {
                "branch": "ragaliq-data",
                "commit_message": "again",
                "actions": [{"action": "create", "file_path": "index.json", "content": "{}"}],
            }
        )
    assert exists.value.response_code == 400

    fake.race_next_commit(PROJECT, "ragaliq-data", {"index.json": '{"other": 1}'})
    with pytest.raises(gitlab.GitlabCreateError) as race:
        project.commits.create(
            {"branch": "ragaliq-data", "start_sha": tip, "commit_message": "m", "actions": [update]}
        )
    assert race.value.response_code == 400
    assert "Please refresh and try again" in race.value.error_message
    with pytest.raises(gitlab.GitlabCreateError) as changed:
        project.commits.create(
            {
                "branch": "ragaliq-data",
                "commit_message": "m",
                "actions": [{**update, "last_commit_id": tip}],
            }
        )
    assert changed.value.response_code == 400
    project.commits.create({"branch": "ragaliq-data", "commit_message": "m", "actions": [update]})
    assert fake.branch_files(PROJECT, "ragaliq-data")["index.json"] == b'{"n": 1}'

    fake.protect_branch(PROJECT, "ragaliq-data")
    with pytest.raises(gitlab.GitlabCreateError) as protected:
        project.commits.create(
            {"branch": "ragaliq-data", "commit_message": "m", "actions": [update]}
        )
    assert protected.value.response_code == 403
    assert "not allowed to push" in protected.value.error_message


def test_failures_on_demand_with_retry_after(fake: FakeGitLab) -> None:
    fake.fail("GET", rf"^/projects/{ENCODED}$", 429, retry_after=0)
    assert client(fake).projects.get(PROJECT).path_with_namespace == PROJECT
    assert len(fake.requests_matching("GET", rf"^/projects/{ENCODED}$")) == 2

    fake.fail("GET", rf"^/projects/{ENCODED}$", 429, retry_after=7)
    answer = raw(fake, "GET", f"/projects/{ENCODED}")
    assert (answer.status_code, answer.headers["Retry-After"], answer.text) == (
        429,
        "7",
        "Retry later\n",
    )
    fake.fail("GET", rf"^/projects/{ENCODED}$", 429, retry_after=0)
    with pytest.raises(gitlab.GitlabGetError) as limited:
        client(fake).projects.get(PROJECT, obey_rate_limit=False)
    assert limited.value.response_code == 429

    fake.fail("*", r"/merge_requests", 502, times=2)
    assert (
        client(fake, retry_transient_errors=True)
        .projects.get(PROJECT, lazy=True)
        .mergerequests.list()
        == []
    )
    for status, error in [
        (500, gitlab.GitlabListError),
        (403, gitlab.GitlabListError),
        (404, gitlab.GitlabListError),
        (409, gitlab.GitlabListError),
        (401, gitlab.GitlabAuthenticationError),
    ]:
        fake.fail("GET", r"/merge_requests$", status)
        with pytest.raises(error) as failed:
            client(fake).projects.get(PROJECT, lazy=True).mergerequests.list()
        assert failed.value.response_code == status
    fake.fail("GET", r"/merge_requests$", 404)
    assert raw(fake, "GET", f"/projects/{ENCODED}/merge_requests").json() == {
        "message": "404 Not Found"
    }


def test_job_token_reaches_only_what_gitlab_lets_it(fake: FakeGitLab) -> None:
    _, head = seed_repo(fake)
    iid = fake.add_merge_request(PROJECT, head_sha=head)
    pipeline = fake.add_pipeline(
        PROJECT, ref=f"refs/merge-requests/{iid}/head", sha=head, source="merge_request_event"
    )
    job = fake.add_job(pipeline, "produce", status="running")
    token = fake.job_token(job)
    gl = gitlab.Gitlab(fake.url, job_token=token)
    project = gl.projects.get(PROJECT, lazy=True)
    mr = project.mergerequests.get(iid)
    assert mr.sha == head
    assert mr.notes.list(get_all=True) == []
    assert project.files.raw(file_path="new.txt", ref=head) == b"n"
    with pytest.raises(gitlab.GitlabAuthenticationError):
        mr.notes.create({"body": "from the merge request's own pipeline"})
    with pytest.raises(gitlab.GitlabAuthenticationError):
        project.commits.get(head, lazy=True).statuses.create({"state": "success", "name": NAME})
    fake.set_job(job, status="success")
    with pytest.raises(gitlab.GitlabAuthenticationError):
        project.mergerequests.get(iid)


def test_variables_api_is_for_maintainers_and_feeds_the_player(fake: FakeGitLab) -> None:
    key = CiVariable(
        key="ANTHROPIC_API_KEY",
        value="sk-ant-0123456789",
        protected=True,
        masked=True,
        environment_scope="ragaliq",
    )
    fake.add_variable(PROJECT, key)
    with pytest.raises(gitlab.GitlabListError) as developer:
        client(fake).projects.get(PROJECT, lazy=True).variables.list()
    assert developer.value.response_code == 403
    fake.add_user("lead", token="glpat-lead")
    fake.add_member(PROJECT, "lead", MAINTAINER)
    listed = (
        client(fake, "glpat-lead").projects.get(PROJECT, lazy=True).variables.list(get_all=True)
    )
    assert [(v.key, v.protected, v.masked, v.environment_scope) for v in listed] == [
        ("ANTHROPIC_API_KEY", True, True, "ragaliq")
    ]
    assert fake.variables(PROJECT) == [key]

    # What the fake holds is what the player plays: the key reaches only the gate's job on the
    # protected default branch, never a merge request pipeline.
    fake.protect_branch(PROJECT, "main")
    fake.set_project(PROJECT, ci_pipeline_variables_minimum_override_role="maintainer")
    head = fake.add_commit(PROJECT, {"a.txt": "a"}, branch="feature")
    iid = fake.add_merge_request(PROJECT, head_sha=head)
    project = fake.ci_project(PROJECT)
    assert (project.protected_branches, project.variables) == (("main",), (key,))
    yaml = {
        "produce": {"script": ["true"], "rules": [{"when": "always"}]},
        "gate": {"script": ["true"], "environment": "ragaliq", "rules": [{"when": "always"}]},
    }
    on_main = plan_pipeline(yaml, PipelineContext(source="schedule", project=project, ref="main"))
    assert "ANTHROPIC_API_KEY" in on_main.job("gate").variables
    assert "ANTHROPIC_API_KEY" not in on_main.job("produce").variables
    mr = fake.ci_merge_request(PROJECT, iid)
    assert (mr.source_sha, mr.source_branch) == (head, "feature")
    in_mr = plan_pipeline(
        yaml, PipelineContext(source="merge_request_event", project=project, merge_request=mr)
    )
    assert all("ANTHROPIC_API_KEY" not in job.variables for job in in_mr.jobs)
    refused = plan_pipeline(
        yaml,
        PipelineContext(source="web", project=project, ref="main", pipeline_variables={"X": "1"}),
    )
    assert refused.refusal == "Insufficient permissions to set pipeline variables"


TINY_PIPELINE = """
stages: [produce, report]
produce:
  stage: produce
  rules:
    - if: $CI_PIPELINE_SOURCE == "merge_request_event"
  script:
    - mkdir -p out
    - echo "case-$CI_MERGE_REQUEST_IID" > out/rag.jsonl
    - echo "key=${GATE_KEY:-absent}"
  artifacts:
    paths: [out/]
report:
  stage: report
  rules:
    - if: $CI_PIPELINE_SOURCE == "merge_request_event"
  script:
    - >
      curl -sf -X POST -H "PRIVATE-TOKEN: $NOTE_TOKEN"
      --data-urlencode "body=rows $(wc -l < out/rag.jsonl)"
      "$API_URL/projects/$PROJECT_ID/merge_requests/$CI_MERGE_REQUEST_IID/notes"
record:
  stage: report
  rules:
    - if: $CI_COMMIT_BRANCH == $CI_DEFAULT_BRANCH && $CI_PIPELINE_SOURCE == "push"
  script:
    - echo recording
"""


def _gitlab_ci_local() -> list[str] | None:
    """The command that runs gitlab-ci-local here, or None."""
    if shutil.which("rsync") is None:
        return None
    found = os.environ.get("GITLAB_CI_LOCAL") or shutil.which("gitlab-ci-local")
    if found:
        return [found]
    npx = shutil.which("npx")
    if npx is None:
        return None
    probe = subprocess.run(
        [npx, "--no-install", "gitlab-ci-local", "--version"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return [npx, "--no-install", "gitlab-ci-local"] if probe.returncode == 0 else None


def test_gitlab_ci_local_plays_a_tiny_pipeline_against_the_fake(
    fake: FakeGitLab, tmp_path: Path
) -> None:
    command = _gitlab_ci_local()
    if command is None:
        pytest.skip(
            "gitlab-ci-local is not installed (npm install gitlab-ci-local@4.70.0; it needs rsync)"
        )
    if shutil.which("curl") is None:
        pytest.skip("curl is not installed")
    iid = fake.add_merge_request(PROJECT, head_sha="a" * 40)
    project_id = client(fake).projects.get(PROJECT).id
    repo, home = tmp_path / "repo", tmp_path / "home"
    repo.mkdir()
    home.mkdir()
    (repo / ".gitlab-ci.yml").write_text(TINY_PIPELINE)
    env = {"PATH": os.environ["PATH"], "HOME": str(home), "LANG": "C.UTF-8", "GATE_KEY": "sk-leak"}
    git_env = {**env, "GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@example.com"}
    git_env |= {"GIT_COMMITTER_NAME": "a", "GIT_COMMITTER_EMAIL": "a@example.com"}
    for args in (["init", "-q", "-b", "feature"], ["add", "."], ["commit", "-qm", "ci"]):
        subprocess.run(["git", "-C", str(repo), *args], env=git_env, check=True)
    variables = {
        "CI_PIPELINE_SOURCE": "merge_request_event",
        "CI_MERGE_REQUEST_IID": str(iid),
        "API_URL": fake.api_url,
        "PROJECT_ID": str(project_id),
        "NOTE_TOKEN": fake.token,
    }
    played = subprocess.run(
        [
            *command,
            "--home",
            str(home),
            "--force-shell-executor",
            "--json-schema-validation=false",
            "--ignore-predefined-vars",
            "CI_PIPELINE_SOURCE,CI_MERGE_REQUEST_IID",
            *[arg for key, value in variables.items() for arg in ("--variable", f"{key}={value}")],
        ],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert played.returncode == 0, played.stdout + played.stderr
    assert "PASS  produce" in played.stdout
    assert "PASS  report" in played.stdout
    assert "record" not in played.stdout
    # gitlab-ci-local's shell executor hands the job its own process's environment: an e2e
    # must start it with a scrubbed one.
    assert "key=sk-leak" in played.stdout
    assert [n.body for n in fake.notes(PROJECT, iid)] == ["rows 1"]

    # The project's own player decides the same jobs for the same pipeline.
    plan = plan_pipeline(
        load_config(TINY_PIPELINE),
        PipelineContext(
            source="merge_request_event",
            project=CiProject(id=project_id, path=PROJECT),
            merge_request=_merge_request(iid, project_id),
        ),
    )
    assert plan.names == ["produce", "report"]
    assert "GATE_KEY" not in plan.job("report").variables


def _merge_request(iid: int, project_id: int) -> MergeRequestInfo:
    project = CiProject(id=project_id, path=PROJECT)
    return MergeRequestInfo(
        iid=iid,
        target_project=project,
        source_project=project,
        source_branch="feature",
        target_branch="main",
        source_sha="a" * 40,
        target_sha="b" * 40,
        diff_base_sha="b" * 40,
    )

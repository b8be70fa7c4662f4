"""GitLab merge requests held to the target branch's bar: the ``.gitlab-ci.yml`` that ``ragaliq
init --ci gitlab`` writes, played job by job against the fake GitLab API
(:mod:`tests.e2e.gitlab_play`): the produce job in each merge request's pipeline with no secret,
the record job on each push to the protected default branch, the gate in a scheduled pipeline of
it, holding the key.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator

import pytest
from junitparser import JUnitXml
from prometheus_client.openmetrics.parser import text_string_to_metric_families

from tests.e2e.gitlab_play import CONFIG, FORK, KEY, PROJECT, GitLabProject, jsonl
from tests.e2e.workspace import cases
from tests.fakes.anthropic_server import FakeAnthropic, RecordedRequest
from tests.fakes.claude_sim import claude_like, request_text
from tests.fakes.gitlab_ci import CiVariable
from tests.fakes.gitlab_server import DEVELOPER, FakeGitLab

MAIN = "RagaliQ Gate (main)"


@pytest.fixture
def gitlab(tmp_path) -> Iterator[GitLabProject]:
    with FakeGitLab() as fake:
        yield GitLabProject(tmp=tmp_path, fake=fake)


def statuses(project: GitLabProject, sha: str) -> list[tuple[str, str]]:
    return [(s.state, s.description) for s in project.fake.statuses(PROJECT, sha, name=MAIN)]


def gate_notes(project: GitLabProject, iid: int) -> list[str]:
    return [
        n.body
        for n in project.fake.notes(PROJECT, iid)
        if n.body.startswith("<!-- ragaliq:comment")
    ]


def invented(rows: list[dict]) -> list[dict]:
    first = {**rows[0], "response": rows[0]["response"] + " It also costs $99 a seat in 2031."}
    return [first, *rows[1:]]


def test_a_merge_request_with_invented_details_fails_then_its_fix_passes_and_is_approved(gitlab):
    main = gitlab.commit_main()
    record = gitlab.record(main)
    assert record.jobs["ragaliq-record"].passed, record.jobs["ragaliq-record"].log
    iid, head = gitlab.open_merge_request("feature", rows=invented(cases()))
    produced = gitlab.produce(iid, head)
    assert list(produced.jobs) == ["ragaliq-produce"]
    assert KEY not in str(produced.jobs["ragaliq-produce"].environment)

    gate = gitlab.gate()
    assert gate.jobs["ragaliq-gate"].passed, gate.jobs["ragaliq-gate"].log
    ((state, description),) = statuses(gitlab, head)[-1:]
    assert state == "failed" and description.startswith(f"main@{main[:7]}: ")
    (note,) = gate_notes(gitlab, iid)
    ids = re.findall(r"<sub>`([0-9a-f]{16})`</sub>", note)
    assert ids and "$99" in note.replace("&#36;", "$")
    assert gitlab.fake.approvals(PROJECT, iid) == []
    # The reports the template names (artifacts: reports: junit, metrics) are there and true.
    kept = gate.folders["ragaliq-gate"]
    junit = JUnitXml.fromfile(str(kept / ".ragaliq/junit.xml"))
    failed = {
        claim_id
        for suite in junit
        if suite.name == "cases"
        for test in suite
        for result in test.result
        if result.type == "new_hallucination"
        for claim_id in re.findall(r"\[([0-9a-f]{16})\]", result.text)
    }
    assert failed == set(ids)
    metrics = (kept / ".ragaliq/metrics.txt").read_text(encoding="utf-8")
    assert {f.name for f in text_string_to_metric_families(metrics)} >= {"ragaliq_gate_passed"}

    # The fix: pushed to the merge request, produced again, gated by the next scheduled run.
    fixed = gitlab.branch("feature", rows=cases())
    gitlab.fake.push_to_merge_request(PROJECT, iid, head_sha=fixed)
    gitlab.produce(iid, fixed)
    gate = gitlab.gate()
    assert gate.jobs["ragaliq-gate"].passed, gate.jobs["ragaliq-gate"].log
    assert statuses(gitlab, fixed)[-1][0] == "success"
    (note,) = gate_notes(gitlab, iid)  # the same note, updated
    assert "RagaliQ Gate passed" in note
    assert [who for who, _ in gitlab.fake.approvals(PROJECT, iid)] == [gitlab.fake.username]


def test_a_merge_request_that_loosens_its_own_bar_is_judged_against_mains(gitlab):
    main = gitlab.commit_main()
    gitlab.record(main)
    loose = CONFIG.replace("threshold: 0.5", "threshold: 0.0").replace(
        "fail_on_new_hallucinations: true", "fail_on_new_hallucinations: false"
    )
    hostile_ci = gitlab.config_at(main).replace(
        'rules:\n    - if: $CI_PIPELINE_SOURCE == "merge_request_event"\n  script:',
        'rules:\n    - if: $CI_PIPELINE_SOURCE == "merge_request_event"\n  environment:\n'
        "    name: ragaliq\n  script:\n    - env | sort",
        1,
    )
    iid, head = gitlab.open_merge_request(
        "loosen", regressed=True, **{"ragaliq.yaml": loose, ".gitlab-ci.yml": hostile_ci}
    )
    produced = gitlab.produce(iid, head)
    job = produced.jobs["ragaliq-produce"]
    assert KEY not in job.log and KEY not in str(job.environment)  # the MR's pipeline: no key
    assert "RAGALIQ_GITLAB_TOKEN" not in job.environment
    gate = gitlab.gate()
    assert gate.jobs["ragaliq-gate"].passed, gate.jobs["ragaliq-gate"].log
    assert statuses(gitlab, head)[-1][0] == "failed"
    (note,) = gate_notes(gitlab, iid)
    assert "apply once it is merged" in note


def test_a_merge_request_from_a_fork_is_judged_once_its_produce_job_ran_in_the_parent(gitlab):
    main = gitlab.commit_main()
    gitlab.record(main)
    iid, head = gitlab.open_merge_request("fork-change", regressed=True, fork=True)
    parent = gitlab.produce(iid, head)  # a maintainer ran its pipeline in the parent project
    assert list(parent.jobs) == ["ragaliq-produce"]  # no preview in the parent's pipeline
    gitlab.gate()
    assert statuses(gitlab, head)[-1][0] == "failed"


def test_a_forks_own_pipeline_previews_keyless_with_the_offline_judge_and_posts_nothing(gitlab):
    main = gitlab.commit_main()
    gitlab.record(main)
    strict = CONFIG.replace("judge: {provider: offline}", "judge: {provider: claude}")
    iid, head = gitlab.open_merge_request(
        "fork-preview", regressed=True, fork=True, **{"ragaliq.yaml": strict}
    )
    gitlab.fake.add_variable(FORK, CiVariable(key="LOG_LEVEL", value="fork-debug"))
    sent = len(gitlab.fake.requests)
    fork = gitlab.fork_pipeline(iid, head)
    assert list(fork.jobs) == ["ragaliq-produce", "ragaliq-fork-preview"]
    preview = fork.jobs["ragaliq-fork-preview"]
    assert preview.environment["LOG_LEVEL"] == "fork-debug"  # the fork's variables, no key
    assert "ANTHROPIC_API_KEY" not in preview.environment
    assert "RAGALIQ_GITLAB_TOKEN" not in preview.environment
    assert KEY not in str(preview.environment) and gitlab.fake.token not in preview.log
    assert "not main's gate" in preview.log and "offline judge" in preview.log
    assert "gate: PASSED" in preview.log or "gate: FAILED" in preview.log, preview.log
    assert "Judged by the offline judge on request" in preview.log
    assert gitlab.fake.requests[sent:] == []  # no status, note or approval: nothing sent at all
    assert statuses(gitlab, head) == [] and gitlab.fake.notes(PROJECT, iid) == []


def test_acceptances_count_from_a_developer_at_the_head_and_never_otherwise(gitlab):
    main = gitlab.commit_main()
    gitlab.record(main)
    iid, head = gitlab.open_merge_request("accept", rows=invented(cases()), author="dev")
    gitlab.produce(iid, head)
    gitlab.gate()
    (note,) = gate_notes(gitlab, iid)
    claims = re.findall(r"<sub>`([0-9a-f]{16})`</sub>", note)
    assert claims
    claim = claims[0]
    gitlab.fake.add_note(PROJECT, iid, f"/ragaliq accept {claim} {head}", author="dev")
    gitlab.fake.add_note(PROJECT, iid, f"/ragaliq accept {claim} {head}", author="reader")
    gitlab.fake.add_note(PROJECT, iid, f"/ragaliq accept {claim} {'0' * 40}", author="lead")
    edited = gitlab.fake.add_note(PROJECT, iid, "LGTM", author="lead")
    gitlab.fake.edit_note(PROJECT, iid, edited.id, f"/ragaliq accept {claim} {head}")
    gate = gitlab.gate()  # the notes written since the last verdict gate it again
    log = gate.jobs["ragaliq-gate"].log
    assert statuses(gitlab, head)[-1][0] == "failed", log
    assert "by the pull request's author" in log
    assert "they have read access" in log
    assert "not the head" in log
    assert "edited since it was written" in log
    gitlab.fake.add_note(PROJECT, iid, f"/ragaliq accept {claim} {head}", author="lead")
    gitlab.gate()
    assert statuses(gitlab, head)[-1][0] == "success"


def test_a_gate_started_with_pipeline_variables_refuses_to_run(gitlab):
    main = gitlab.commit_main()
    gitlab.record(main)
    iid, head = gitlab.open_merge_request("vars", regressed=True)
    gitlab.produce(iid, head)
    for name, value in (
        ("ANTHROPIC_BASE_URL", "https://collector.example"),
        ("HTTPS_PROXY", "http://proxy.example:3128"),
        ("PIP_INDEX_URL", "https://index.example/simple"),
    ):
        gate = gitlab.gate(variables={name: value})
        job = gate.jobs["ragaliq-gate"]
        assert not job.passed and "variables from whoever started its pipeline" in job.log
        assert name in job.log
    assert statuses(gitlab, head) == []  # nothing judged, nothing set


def test_statuses_and_notes_of_others_never_stand_for_the_gate(gitlab):
    main = gitlab.commit_main()
    gitlab.record(main)
    iid, head = gitlab.open_merge_request("forged", regressed=True, author="dev")
    gitlab.produce(iid, head)
    # A Developer posts a green status of the gate's name, and the author a note with its marker.
    gitlab.fake.add_status(PROJECT, head, name=MAIN, state="success", author="dev")
    gitlab.fake.add_note(
        PROJECT,
        iid,
        "<!-- ragaliq:comment id=default -->\n### ✅ RagaliQ Gate passed",
        author="dev",
    )
    gitlab.gate()
    assert statuses(gitlab, head)[-1][0] == "failed"  # the gate still judged it
    bodies = gate_notes(gitlab, iid)
    assert len(bodies) == 2 and "RagaliQ Gate failed" in bodies[-1]
    assert bodies[0].endswith("passed")  # the author's own note is left as they wrote it


def test_a_baseline_from_a_pipeline_run_by_hand_is_never_the_bar(gitlab):
    main = gitlab.commit_main()
    # Someone runs a pipeline through the API at main's commit with a record job of their own
    # (or uploads a "baseline" as its artifact): only a push pipeline records the bar.
    forged = gitlab.fake.add_pipeline(PROJECT, ref="main", sha=main, source="api")
    gitlab.fake.add_job(
        forged,
        "ragaliq-record",
        stage="record",
        artifacts={".ragaliq/baseline.json": b'{"forged": true}'},
    )
    iid, head = gitlab.open_merge_request("hand", regressed=True)
    gitlab.produce(iid, head)
    gate = gitlab.gate()
    state, description = statuses(gitlab, head)[-1]
    assert state == "failed" and "not judged: no baseline" in description
    assert "no baseline run of ragaliq-record is recorded" in gate.jobs["ragaliq-gate"].log


def test_the_gate_warns_while_developers_may_set_pipeline_variables(gitlab):
    gitlab.fake.set_project(PROJECT, ci_pipeline_variables_minimum_override_role="developer")
    main = gitlab.commit_main()
    gitlab.record(main)
    log = gitlab.gate().jobs["ragaliq-gate"].log
    assert "anyone with the Developer role may set pipeline variables" in log


def test_merge_requests_wait_while_mains_baseline_records_and_are_judged_when_it_lands(gitlab):
    main = gitlab.commit_main()
    recording = gitlab.recording(main)  # main's push pipeline: created, its record job not run
    clean, clean_head = gitlab.open_merge_request("clean")
    worse, worse_head = gitlab.open_merge_request("worse", regressed=True)
    gitlab.produce(clean, clean_head)
    gitlab.produce(worse, worse_head)
    for phase in ("created", "pending", "running"):
        gitlab.fake.set_pipeline(recording, status=phase)
        gate = gitlab.gate().jobs["ragaliq-gate"]
        assert gate.passed, gate.log  # waiting is no failure of the gate's job
        for iid, head in ((clean, clean_head), (worse, worse_head)):
            state, description = statuses(gitlab, head)[-1]
            assert state == "pending" and "waiting for the baseline" in description
            assert "being recorded" in description and f"run {recording}" in description
            (note,) = gate_notes(gitlab, iid)
            assert "waiting for the base's baseline" in note and "being recorded" in note
    # The record job lands in that same pipeline; no one pushes to either merge request.
    landed = gitlab.record(main, pipeline=recording)
    assert landed.jobs["ragaliq-record"].passed, landed.jobs["ragaliq-record"].log
    gate = gitlab.gate().jobs["ragaliq-gate"]
    assert gate.passed, gate.log
    assert statuses(gitlab, clean_head)[-1][0] == "success"
    assert statuses(gitlab, worse_head)[-1][0] == "failed"
    (note,) = gate_notes(gitlab, worse)  # the waiting note, now the verdict
    assert "RagaliQ Gate failed" in note
    assert [state for state, _ in statuses(gitlab, worse_head)].count("success") == 0


@pytest.mark.parametrize("ended", ["failed", "canceled"])
def test_a_record_pipeline_that_did_not_succeed_is_an_error_not_an_older_bar(gitlab, ended):
    older = gitlab.commit_main()
    assert gitlab.record(older).jobs["ragaliq-record"].passed  # a good bar one commit back
    main = gitlab.commit_main(**{"README.md": "a change to main\n"})
    broken = gitlab.recording(main)
    gitlab.fake.set_pipeline(broken, status=ended)
    iid, head = gitlab.open_merge_request("on-broken")  # clean: it would pass on the older bar
    gitlab.produce(iid, head)
    gate = gitlab.gate().jobs["ragaliq-gate"]
    states = statuses(gitlab, head)
    assert "success" not in [state for state, _ in states], gate.log
    state, description = states[-1]
    assert state == "failed" and "not judged: no baseline" in description
    assert f"run {broken}" in description and f"ended {ended}" in description
    (note,) = gate_notes(gitlab, iid)
    assert f"run {broken}" in note and f"ended {ended}" in note
    assert gitlab.fake.approvals(PROJECT, iid) == []


def test_an_artifact_from_another_pipeline_or_commit_is_never_judged(gitlab):
    main = gitlab.commit_main()
    gitlab.record(main)
    iid, old = gitlab.open_merge_request("swap")
    gitlab.produce(iid, old)
    gitlab.gate()
    assert statuses(gitlab, old)[-1][0] == "success"  # clean at its first head
    # A push makes the outputs worse; the merge request's own pipeline has produced nothing
    # at the new head yet. Clean datasets wait elsewhere at that commit: in the pipeline of
    # another merge request with the same head (into another branch), and in a push pipeline
    # of the source branch, each in a job named like the produce job.
    new = gitlab.branch("swap", regressed=True)
    gitlab.fake.push_to_merge_request(PROJECT, iid, head_sha=new)
    other = gitlab.fake.add_merge_request(
        PROJECT, source_branch="swap-copy", target_branch="sandbox", head_sha=new, author="dev"
    )
    clean = {"rag_outputs.jsonl": jsonl(cases())}
    for ref, source in (
        (f"refs/merge-requests/{other}/head", "merge_request_event"),
        ("swap", "push"),
    ):
        elsewhere = gitlab.fake.add_pipeline(PROJECT, ref=ref, sha=new, source=source)
        gitlab.fake.add_job(elsewhere, "ragaliq-produce", stage="produce", artifacts=clean)
    gate = gitlab.gate().jobs["ragaliq-gate"]
    state, description = statuses(gitlab, new)[-1]
    assert state == "failed" and "not judged: no dataset" in description, gate.log
    assert f"for the head commit {new[:12]}" in gate.log
    assert gitlab.fake.approvals(PROJECT, iid) == []  # the approval at the old head is gone
    # Its own pipeline at the new head produces: judged on that, the worse outputs, and fails.
    gitlab.produce(iid, new)
    gate = gitlab.gate().jobs["ragaliq-gate"]
    assert statuses(gitlab, new)[-1][0] == "failed", gate.log
    (note,) = gate_notes(gitlab, iid)
    assert "RagaliQ Gate failed" in note
    assert "success" not in [state for state, _ in statuses(gitlab, new)]


def test_a_bots_merge_request_without_a_produce_run_is_never_green(gitlab):
    main = gitlab.commit_main()
    gitlab.record(main)
    gitlab.fake.add_user("renovate-bot", bot=True)
    gitlab.fake.add_member(PROJECT, "renovate-bot", DEVELOPER)
    # The bot pushed with `-o ci.skip`: its merge request has no pipeline at all.
    iid, head = gitlab.open_merge_request("renovate/deps", author="renovate-bot")
    gate = gitlab.gate().jobs["ragaliq-gate"]
    assert gate.passed, gate.log  # the sweep itself does its work
    state, description = statuses(gitlab, head)[-1]
    assert state == "failed" and "not judged: no dataset" in description
    (note,) = gate_notes(gitlab, iid)
    assert "could not judge" in note
    # Then its pipeline runs, and its produce job fails: still nothing of its own to judge.
    own = gitlab.fake.add_pipeline(
        PROJECT, ref=f"refs/merge-requests/{iid}/head", sha=head, source="merge_request_event"
    )
    gitlab.fake.add_job(own, "ragaliq-produce", stage="produce", status="failed")
    gitlab.gate()
    states = statuses(gitlab, head)
    assert states[-1][0] == "failed" and "not judged: no dataset" in states[-1][1]
    assert "success" not in [state for state, _ in states]
    assert gitlab.fake.approvals(PROJECT, iid) == []


def asked_about(request: RecordedRequest, rows: list[dict]) -> set[str]:
    """The cases (by id) whose query, response or first context chunk a request to Claude reads."""
    text = html.unescape(request_text(request.body))
    return {
        row["id"]
        for row in rows
        if any(part in text for part in (row["query"], row["response"], *row["context"][:1]))
    }


def test_a_merge_requests_unchanged_cases_reuse_the_answers_main_recorded_with_claude(tmp_path):
    rows = cases()
    changed = {**rows[0], "response": rows[0]["response"] + " Support answers within 4 hours."}
    with FakeAnthropic(claude_like()) as anthropic, FakeGitLab() as fake:
        # The endpoint comes from main's committed config: the gate takes no pipeline variable.
        judge = f"judge: {{provider: claude, base_url: '{anthropic.base_url}', max_retries: 1}}"
        config = CONFIG.replace("judge: {provider: offline}", judge)
        gitlab = GitLabProject(tmp=tmp_path, fake=fake, config=config)
        main = gitlab.commit_main()
        played = gitlab.record(main)
        record = played.jobs["ragaliq-record"]
        assert record.passed, record.log
        recorded = list(anthropic.requests)
        assert {case for r in recorded for case in asked_about(r, rows)} == {
            row["id"] for row in rows
        }  # Claude judged every case on main
        kept = played.folders["ragaliq-record"] / ".ragaliq" / "answers.jsonl"
        assert kept.stat().st_size > 0  # the record job's artifact, beside the baseline

        iid, head = gitlab.open_merge_request("one-case", rows=[changed, *rows[1:]])
        gitlab.produce(iid, head)
        gate = gitlab.gate().jobs["ragaliq-gate"]
        assert gate.passed, gate.log
        asked = anthropic.requests[len(recorded) :]
        about = [asked_about(r, rows) for r in asked]
        print(
            f"record: {len(recorded)} calls for {len(rows)} cases; gate: {len(asked)} calls, "
            f"{sum(1 for a in about if a == {changed['id']})} for the changed case"
        )
        assert f"{len(recorded)} judge answers read from the baseline store" in gate.log
        assert statuses(gitlab, head)[-1][0] == "failed", gate.log  # its invented detail
        assert about and all(a == {changed["id"]} for a in about), gate.log
        assert len(asked) <= 3  # its two questions, and one confirming ask of a new hallucination

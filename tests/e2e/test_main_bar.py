"""The status main requires is green only if main's bar passed: every workflow ``ragaliq init``
writes, played job by job against the fake GitHub and Anthropic APIs, in a repository whose main
is protected and whose baselines live on the data branch (:mod:`tests.e2e.scenarios`).
"""

from __future__ import annotations

import gzip
import json
import re

from tests.e2e.scenarios import FORK, STORE_CONFIG, Repository
from tests.e2e.workflows import JobResult, Player, load_workflow
from tests.e2e.workspace import KEY, REPO, cases, git
from tests.fakes.anthropic_server import FakeAnthropic
from tests.fakes.claude_sim import claude_like


def test_a_baseline_recorded_on_a_protected_main_sets_the_bar_of_its_pull_requests(setup):
    repo = Repository.adopted(setup)
    sha, job = repo.push_main()
    assert job.code == 0, job.log_all
    assert repo.writes_to_main() == []  # nothing pushed to main: its protection holds
    stored = setup.github.branch_files(REPO, "ragaliq-baselines")
    assert {"index.json", f"baselines/{sha}.json.gz", f"answers/{sha}.jsonl.gz"} <= set(stored)
    assert f"Stored: the baseline of main@{sha[:7]}" in job.log_all

    event = repo.open_pull(21, regressed=True)
    gate = repo.play_pull_request(event)["gate"]
    head = event["pull_request"]["head"]["sha"]
    assert gate.code == 1, gate.log
    state, description = repo.main_status(head)[-1]
    assert state == "failure" and description.startswith(f"main@{sha[:7]}: ")
    body = setup.github.comments(REPO, 21)[0].body
    said = f"the baseline of main@\u200b{sha[:7]}, read from the branch ragaliq-baselines"
    assert said in body  # (an @ in a comment is kept from mentioning anyone)
    assert "a push to main, which uploaded this file" in body
    # The context of earlier versions never passes again, and says which one to require.
    (retired,) = setup.github.statuses(REPO, head, context="RagaliQ Gate")
    assert retired.state == "error" and "'RagaliQ Gate (main)'" in retired.description

    clean = repo.open_pull(22, regressed=False)
    before = setup.anthropic.count()
    gate = repo.play_pull_request(clean)["gate"]
    assert gate.code == 0, gate.log
    assert setup.anthropic.count() == before  # every case unchanged: the baseline run's answers
    assert repo.main_status(clean["pull_request"]["head"]["sha"])[-1][0] == "success"


def test_unchanged_cases_cost_nothing_and_a_changed_case_only_its_own_calls(setup):
    repo = Repository.adopted(setup)
    repo.push_main()
    rows = cases()
    one = [{**rows[0], "response": rows[0]["response"] + " Support answers within 4 hours."}]
    event = repo.open_pull(23, regressed=False, rows=one + rows[1:])
    before = setup.anthropic.count()
    first = repo.play_pull_request(event)["gate"]
    assert first.code in (0, 1), first.log
    spent = setup.anthropic.count() - before
    assert 0 < spent <= 3  # the changed case's questions; the rest from the baseline's run

    # A second push with the same outputs: every answer from the first gate's artifact, read
    # through the API as data; no cache archive anywhere.
    again = repo.push_to_pull(event, message="reword a comment")
    before = setup.anthropic.count()
    second = repo.play_pull_request(again)["gate"]
    assert second.code == first.code, second.log
    assert setup.anthropic.count() == before
    assert repo.player.restored == [] and repo.player.caches == []

    # A push that changes one more case pays for that case alone.
    two = [{**rows[1], "response": rows[1]["response"] + " Refunds take 30 days."}]
    third_event = repo.push_to_pull(again, rows=one + two + rows[2:])
    before = setup.anthropic.count()
    repo.play_pull_request(third_event)
    assert 0 < setup.anthropic.count() - before <= 3


def edited(event: dict, *, base_ref: str, base_sha: str, was: str) -> dict:
    """The ``edited`` event of a pull request whose base was changed from ``was``."""
    changed = json.loads(json.dumps(event))
    changed["action"] = "edited"
    changed["changes"] = {"base": {"ref": {"from": was}, "sha": {"from": "0" * 40}}}
    changed["pull_request"]["base"].update(ref=base_ref, sha=base_sha)
    return changed


def test_a_fork_pull_request_re_targeted_away_and_back_never_turns_mains_status_green(setup):
    # An old branch, cut before the gate was set up: no config, so no bar there.
    (setup.workspace / "ragaliq.yaml").unlink()
    old = setup.commit("before the gate")
    git(setup.workspace, "branch", "old", old)
    repo = Repository.adopted(setup)
    main, _ = repo.push_main()
    event = repo.open_pull(31, regressed=True, head_repo=FORK)
    head = event["pull_request"]["head"]["sha"]

    def gate(pull_event: dict) -> JobResult | None:
        produced = repo.play_pull_request(pull_event)
        assert not produced["gate"].ran  # a fork's pull_request run only produces
        if not produced["produce"].ran:
            return None  # nothing ran: the fork gate is skipped (conclusion 'skipped')
        return repo.play_fork_gate(pull_event, produced["run_id"])

    assert gate(event).code == 1
    assert repo.main_status(head)[-1][0] == "failure"

    # Re-targeted to the old branch: gated again, against that branch, under its own context.
    setup.github.retarget_pull(REPO, 31, base_ref="old", base_sha=old)
    away = edited(event, base_ref="old", base_sha=old, was="main")
    assert gate(away) is not None
    judged_at_old = repo.main_status(head, "old")
    assert judged_at_old and judged_at_old[-1][1].startswith(f"old@{old[:7]}: ")
    assert repo.main_status(head)[-1][0] == "failure"  # main's context is main's alone
    # Closed and reopened on the old base: still the old branch's context only.
    setup.github.close_pull(REPO, 31)
    setup.github.reopen_pull(REPO, 31)
    reopened = {**away, "action": "reopened"}
    reopened.pop("changes")
    assert gate(reopened) is not None
    # A title edit runs nothing at all.
    titled = {**reopened, "action": "edited", "changes": {"title": {"from": "x"}}}
    assert gate(titled) is None
    # Back to main: judged against main's bar again, and main's context fails again.
    setup.github.retarget_pull(REPO, 31, base_ref="main", base_sha=main)
    back = edited(event, base_ref="main", base_sha=main, was="old")
    assert gate(back).code == 1
    states = [state for state, _ in repo.main_status(head)]
    assert "success" not in states and states[-1] == "failure"


def test_two_pull_requests_from_one_fork_branch_are_each_judged_against_their_own_base(setup):
    repo = Repository.adopted(setup)
    main, _ = repo.push_main()
    git(setup.workspace, "branch", "release", main)  # release has main's config; no baseline
    event = repo.open_pull(10, regressed=False, head_repo=FORK)
    head = event["pull_request"]["head"]["sha"]
    setup.github.add_pull(
        REPO, 11, base_sha=main, head_sha=head, head_repo=FORK, base_ref="release"
    )
    produced = repo.play_pull_request(event)
    gate = repo.play_fork_gate(event, produced["run_id"])
    assert gate.code == 2, gate.log_all  # #11's base has a bar and no baseline of its own
    assert repo.main_status(head)[-1][0] == "success"
    state, description = repo.main_status(head, "release")[-1]
    assert state == "error" and description.startswith(f"release@{main[:7]}: not judged")
    # main's baseline is not release's: no baseline run is recorded for release's commit
    assert "no baseline run of ragaliq-baseline.yml is recorded for release@" in gate.log_all
    # Each pull request got its own comment; neither was judged against the other's base.
    assert "RagaliQ Gate passed" in setup.github.comments(REPO, 10)[0].body
    assert "could not judge" in setup.github.comments(REPO, 11)[0].body


def test_a_cache_archive_saved_in_the_pull_requests_scope_is_never_unpacked_where_the_key_is(
    setup,
):
    repo = Repository.adopted(setup)
    repo.push_main()
    event = repo.open_pull(41, regressed=True)
    head = event["pull_request"]["head"]["sha"]
    forged_event = json.dumps({**event, "pull_request": {**event["pull_request"], "number": 99}})
    archive = {
        "/github/workflow/event.json": forged_event.encode(),
        "/github/workspace/.git/hooks/post-checkout": b"#!/bin/sh\ntouch /tmp/owned\n",
        "/github/workspace/ragaliq.yaml": b"evaluators: {}\n",
        ".ragaliq/cache.sqlite": b"not a database",
    }

    def pipeline(runner):  # the pull request's code, holding the runner's cache token
        for key in ("ragaliq-judge-Linux-", "ragaliq-judge-Linux-9999", "ragaliq-"):
            repo.player.save_cache(f"refs/pull/{event['number']}/merge", key, archive)

    gate = repo.play_pull_request(event, pipeline=pipeline)["gate"]
    assert repo.player.restored == []  # no job that holds the key restores anything
    assert gate.code == 1, gate.log
    assert repo.main_status(head)[-1][0] == "failure"
    assert not (gate.runner / ".git" / "hooks" / "post-checkout").exists()

    # The archive is live: a job that did restore the pull request's scope would unpack it
    # over its checkout and its event file, as the gate job of earlier versions did.
    workflow = load_workflow("ragaliq.yml")
    restoring = json.loads(json.dumps(workflow))
    restoring["jobs"]["gate"]["steps"].insert(
        1,
        {
            "uses": "actions/cache/restore@9255dc7a253b0ccc959486e2bca901246202afeb",
            "with": {
                "path": ".ragaliq/cache.sqlite*",
                "key": "ragaliq-judge-Linux-1",
                "restore-keys": "ragaliq-judge-Linux-",
            },
        },
    )
    restoring["jobs"]["gate"]["steps"] = restoring["jobs"]["gate"]["steps"][:2]
    earlier = repo.player.play(
        restoring, "gate", event=event, event_name="pull_request", run_id=repo.next_run()
    )
    assert repo.player.restored == [("gate", "ragaliq-judge-Linux-9999")]
    assert (earlier.runner / ".git" / "hooks" / "post-checkout").exists()
    assert (earlier.runner / "ragaliq.yaml").read_text() == "evaluators: {}\n"


def test_a_forged_baseline_pushed_to_the_store_sets_no_bar(setup):
    repo = Repository.adopted(setup)
    main, _ = repo.push_main()
    stored = setup.github.branch_files(REPO, "ragaliq-baselines")
    genuine = gzip.decompress(stored[f"baselines/{main}.json.gz"])
    # Someone with write access rewrites main's baseline: every score 0, every threshold 0.
    forged = re.sub(rb'"(faithfulness|hallucination|relevance)":[0-9.]+', rb'"\1":0.0', genuine)
    assert forged != genuine
    setup.github.write_branch(
        REPO, "ragaliq-baselines", {f"baselines/{main}.json.gz": gzip.compress(forged)}
    )
    event = repo.open_pull(51, regressed=True)
    head = event["pull_request"]["head"]["sha"]
    gate = repo.play_pull_request(event)["gate"]
    assert gate.code == 2, gate.log
    state, description = repo.main_status(head)[-1]
    assert state == "error"
    assert "is not the file run" in gate.log  # the run uploaded another file's digest
    assert "the store was written by something else, so it sets no bar" in gate.log
    assert description.startswith(f"main@{main[:7]}: not judged")


def test_a_base_without_its_baseline_is_an_error_never_a_pass_on_thresholds(setup):
    repo = Repository.adopted(setup)
    main = setup.commit("main: the gate set up, no baseline run yet")
    event = repo.open_pull(61, regressed=False)
    head = event["pull_request"]["head"]["sha"]
    gate = repo.play_pull_request(event)["gate"]
    assert gate.code == 2, gate.log
    state, description = repo.main_status(head)[-1]
    assert state == "error"
    assert f"no baseline run of ragaliq-baseline.yml is recorded for main@{main[:7]}" in (
        description
    )
    assert "re-run ragaliq-baseline.yml's run for that commit" in gate.log


def test_the_first_pull_request_of_a_repository_never_sends_the_key_to_its_config(setup):
    with FakeAnthropic(claude_like()) as collector:
        hostile = STORE_CONFIG.replace(
            "  provider: auto\n", f"  provider: claude\n  base_url: {collector.base_url}\n"
        )
        (setup.workspace / "ragaliq.yaml").unlink()
        repo = Repository(action=setup, player=Player(setup))
        setup.github.mirror_git(REPO, str(setup.workspace))
        setup.github.protect_branch(REPO, "main")
        main = setup.commit("main: before the gate")
        event = repo.open_pull(71, regressed=False, files={"ragaliq.yaml": hostile})
        head = event["pull_request"]["head"]["sha"]
        gate = repo.play_pull_request(event)["gate"]
        assert gate.code == 0, gate.log
        assert collector.requests == []  # the key went nowhere the change chose
        assert KEY not in json.dumps([r.headers for r in collector.requests])
    body = setup.github.comments(REPO, 71)[0].body
    assert f"No bar protects main@\u200b{main[:7]} yet" in body
    assert "judge.base_url unset → " in gate.log
    state, description = repo.main_status(head)[-1]
    assert state == "success" and "no bar protects this base yet" in description


def test_a_dependabot_pull_request_without_the_key_is_never_green(setup):
    repo = Repository.adopted(
        setup, config=STORE_CONFIG.replace("provider: auto", "provider: claude")
    )
    repo.push_main()
    repo.player.secrets = {}  # Dependabot's runs get Dependabot secrets only: none set here
    event = repo.open_pull(81, regressed=False, head_ref="dependabot/pip/requests-2.33.0")
    head = event["pull_request"]["head"]["sha"]
    jobs = repo.play_pull_request(event)
    assert jobs["produce"].ran and jobs["gate"].ran
    assert jobs["gate"].code == 2, jobs["gate"].log
    state, description = repo.main_status(head)[-1]
    assert state == "error" and "not judged" in description
    assert "anthropic-api-key" in jobs["gate"].log


def test_a_config_without_a_dataset_records_main_as_its_pull_requests_are_judged(setup):
    repo = Repository.adopted(
        setup, config=STORE_CONFIG.replace("dataset: rag_outputs.jsonl\n", "")
    )
    sha, job = repo.push_main()
    assert job.code == 0, job.log_all  # the workflow names the dataset, as the gate's does
    event = repo.open_pull(91, regressed=False)
    assert repo.play_pull_request(event)["gate"].code == 0

    # Run without the dataset input, the baseline job says which input to set, in its summary too.
    setup.runs += 1
    runner = setup.trusted_checkout(sha)
    code, log, _, summary = setup.invoke(
        workspace=runner,
        event={"ref": "refs/heads/main", "after": sha},
        event_name="push",
        run_id=repo.next_run(),
        inputs={"INPUT_MODE": "update-baseline"},
        sha=sha,
        ref_name="main",
    )
    assert code == 2, log
    assert "set the action's `dataset` input, or 'dataset' in the config" in log
    assert "--dataset" not in log
    assert "## RagaliQ Gate: the baseline was not recorded" in summary

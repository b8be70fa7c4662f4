"""A green check never rests on a stale or missing bar: every way the base's own baseline can be
missing, late, re-run or overwritten, played job by job through the workflows ``ragaliq init``
writes against the fake GitHub and Anthropic APIs, with main protected and baselines on the data
branch. In each, ``RagaliQ Gate (main)`` is never ``success`` on another commit's bar, and once
the base's baseline lands the follower ends the waiting pull request on it, without a push.

Main's history in each: commit A records a *weak* bar (most answers regressed), commit B a strong
one (the quick start's answers). The pull request, based on B, hands over A's weak outputs: it
fails B's bar and would pass A's.
"""

from __future__ import annotations

import json

from tests.e2e.scenarios import FORK, Repository
from tests.e2e.workspace import REPO, cases, regress, write_dataset

WEAK, STRONG = regress(cases()), cases()


def main_a_then_b(repo: Repository, *, record_b: bool = True) -> tuple[str, str]:
    """A recorded with the weak outputs; B committed with the strong ones (recorded or not)."""
    a = repo.commit_main("main: A", rows=WEAK)
    assert repo.record(a).code == 0
    b = repo.commit_main("main: B", rows=STRONG)
    if record_b:
        assert repo.record(b).code == 0
    return a, b


def weak_pull(repo: Repository, number: int, **kw) -> tuple[dict, str]:
    event = repo.open_pull(number, regressed=False, rows=WEAK, **kw)
    return event, event["pull_request"]["head"]["sha"]


def test_a_store_pruned_of_the_bases_entry_reads_the_bar_from_its_run_not_an_ancestors(setup):
    repo = Repository.adopted(setup)
    a, b = main_a_then_b(repo)
    stored = setup.github.branch_files(REPO, "ragaliq-baselines")
    index = json.loads(stored["index.json"])
    assert [e["commit"] for e in index["entries"]] == [b, a]
    # Someone with write access prunes main@B's entry (or rolls the branch back to before it).
    index["entries"] = [e for e in index["entries"] if e["commit"] != b]
    setup.github.write_branch(REPO, "ragaliq-baselines", {"index.json": json.dumps(index).encode()})
    event, head = weak_pull(repo, 101)
    gate = repo.play_pull_request(event)["gate"]
    assert gate.code == 1, gate.log  # B's bar, read from B's own run
    state, description = repo.main_status(head)[-1]
    assert state == "failure" and description.startswith(f"main@{b[:7]}: ")
    assert f"own artifact (the branch ragaliq-baselines of {REPO} has no entry)" in gate.log_all


def test_a_pull_request_waits_while_its_bases_baseline_records_then_the_follower_gates_it(setup):
    repo = Repository.adopted(setup)
    _a, b = main_a_then_b(repo, record_b=False)
    run = repo.start_baseline(b)
    event, head = weak_pull(repo, 102)
    gate = repo.play_pull_request(event)["gate"]
    assert gate.code == 0, gate.log  # the job does not fail: nothing was decided
    assert gate.outputs["passed"] == "false"
    state, description = repo.main_status(head)[-1]
    assert state == "pending"
    assert description.startswith(f"main@{b[:7]}: waiting for the baseline: ")
    assert f"main@{b[:7]}'s baseline is being recorded (run {run}" in description
    body = setup.github.comments(REPO, 102)[0].body
    assert "waiting for the base's baseline" in body and "passed" not in body.lower()

    setup.github.set_run(REPO, run, status="in_progress")
    again = repo.play_pull_request(repo.push_to_pull(event, message="retry"))["gate"]
    new_head = setup.github.pull(REPO, 102)["head"]["sha"]
    assert again.code == 0 and repo.main_status(new_head)[-1][0] == "pending"

    assert repo.record(b, run).code == 0
    follower = repo.follow(b)
    assert follower.code == 0, follower.log_all
    state, description = repo.main_status(new_head)[-1]
    assert state == "failure" and description.startswith(f"main@{b[:7]}: ")
    assert "- #102: failure: " in follower.summary
    assert "This landing cost" in follower.summary
    assert len(setup.github.comments(REPO, 102)) == 1  # the same comment, now the verdict
    assert "RagaliQ Gate failed" in setup.github.comments(REPO, 102)[0].body


def test_a_fork_pull_request_pushed_while_main_records_waits_and_is_gated_when_it_lands(setup):
    repo = Repository.adopted(setup)
    _a, b = main_a_then_b(repo, record_b=False)
    run = repo.start_baseline(b)
    event, head = weak_pull(repo, 103, head_repo=FORK)
    produced = repo.play_pull_request(event)
    gate = repo.play_fork_gate(event, produced["run_id"])
    assert gate.code == 0, gate.log
    assert repo.main_status(head)[-1][0] == "pending"
    assert repo.record(b, run).code == 0
    assert repo.follow(b).code == 0
    state, description = repo.main_status(head)[-1]
    assert state == "failure" and description.startswith(f"main@{b[:7]}: ")


def test_the_follower_passes_a_waiting_pull_request_that_meets_its_bases_bar(setup):
    repo = Repository.adopted(setup)
    _a, b = main_a_then_b(repo, record_b=False)
    run = repo.start_baseline(b)
    event = repo.open_pull(104, regressed=False, rows=STRONG)
    head = event["pull_request"]["head"]["sha"]
    assert repo.play_pull_request(event)["gate"].code == 0
    assert repo.main_status(head)[-1][0] == "pending"
    repo.record(b, run)
    repo.follow(b)
    state, description = repo.main_status(head)[-1]
    assert state == "success" and description.startswith(f"main@{b[:7]}: passed")


def test_a_cancelled_or_failed_baseline_run_is_an_error_naming_the_run(setup):
    repo = Repository.adopted(setup)
    _a, b = main_a_then_b(repo, record_b=False)
    run = repo.start_baseline(b)
    for conclusion in ("cancelled", "failure"):
        setup.github.set_run(REPO, run, status="completed", conclusion=conclusion)
        event, head = weak_pull(repo, 105 if conclusion == "cancelled" else 106)
        gate = repo.play_pull_request(event)["gate"]
        assert gate.code == 2, gate.log
        state, description = repo.main_status(head)[-1]
        assert state == "error"
        assert description.startswith(f"main@{b[:7]}: not judged: no baseline: ")
        assert f"run {run} of ragaliq-baseline.yml" in gate.log
        assert f"ended completed/{conclusion}" in gate.log and "re-run that run" in gate.log

    # Re-run, it records: the follower gates both waiting pull requests on B's bar.
    setup.github.rerun(REPO, run)
    repo.record(b, run)
    follower = repo.follow(b)
    assert {s for s, _ in (repo.main_status(h)[-1] for h in _heads(setup, 105, 106))} == {"failure"}
    assert follower.summary.count(": failure: ") == 2


def _heads(setup, *numbers: int) -> list[str]:
    return [setup.github.pull(REPO, n)["head"]["sha"] for n in numbers]


def test_a_re_run_is_the_bar_at_its_latest_attempt_never_an_earlier_one(setup):
    repo = Repository.adopted(setup)
    _a, b = main_a_then_b(repo)
    run = repo.baseline_runs[b]
    # B's run is re-run: while its new attempt records, attempt 1's strong baseline is no bar.
    setup.github.rerun(REPO, run)
    event, head = weak_pull(repo, 107)
    assert repo.play_pull_request(event)["gate"].code == 0
    assert repo.main_status(head)[-1][0] == "pending"
    # The new attempt records weaker outputs (a flaky pipeline): that is B's bar now, read from
    # the store the attempt rewrote, and named with its attempt.
    job = repo.record(b, run, pipeline=lambda runner: write_dataset(runner, WEAK))
    assert job.code == 0, job.log_all
    follower = repo.follow(b)
    state, _description = repo.main_status(head)[-1]
    assert state == "success", follower.log_all
    assert f"run {run} (attempt 2)" in setup.github.comments(REPO, 107)[0].body

    # A third attempt fails: neither earlier attempt's baseline is the bar any more.
    setup.github.rerun(REPO, run)
    setup.github.set_run(REPO, run, status="completed", conclusion="failure")
    event2, head2 = weak_pull(repo, 108)
    gate = repo.play_pull_request(event2)["gate"]
    assert gate.code == 2, gate.log
    assert repo.main_status(head2)[-1][0] == "error"
    assert f"run {run} (attempt 3) of ragaliq-baseline.yml" in gate.log


def test_a_base_no_baseline_run_was_due_for_uses_its_ancestors_and_says_which(setup):
    repo = Repository.adopted(setup)
    workflow = setup.workspace / ".github" / "workflows" / "ragaliq-baseline.yml"
    workflow.parent.mkdir(parents=True)
    workflow.write_text(
        "name: ragaliq-baseline\non:\n  push:\n    branches: [main]\n"
        "    paths: ['rag_outputs.jsonl', 'ragaliq.yaml']\njobs: {}\n",
        encoding="utf-8",
    )
    a = repo.commit_main("main: A", rows=STRONG)
    assert repo.record(a).code == 0
    (setup.workspace / "README.md").write_text("docs only\n", encoding="utf-8")
    b = repo.commit_main("main: B, docs only")  # the paths filter starts no run for it
    event, head = weak_pull(repo, 109)
    gate = repo.play_pull_request(event)["gate"]
    assert gate.code == 1, gate.log  # judged, against A's baseline, named
    state, description = repo.main_status(head)[-1]
    assert state == "failure" and description.startswith(f"main@{b[:7]}: ")
    body = setup.github.comments(REPO, 109)[0].body
    assert f"the baseline of {a[:7]}, 1 commit before main@\u200b{b[:7]}" in body
    assert "push filters started no run for the changes since" in body


def test_a_base_whose_run_was_deleted_is_an_error_with_the_recovery(setup):
    repo = Repository.adopted(setup)
    workflow = setup.workspace / ".github" / "workflows" / "ragaliq-baseline.yml"
    workflow.parent.mkdir(parents=True)
    workflow.write_text(
        "name: ragaliq-baseline\non:\n  push:\n    branches: [main]\n"
        "    paths: ['rag_outputs.jsonl', 'ragaliq.yaml']\njobs: {}\n",
        encoding="utf-8",
    )
    _a, b = main_a_then_b(repo)
    setup.github.delete_run(REPO, repo.baseline_runs[b])
    event, head = weak_pull(repo, 110)
    gate = repo.play_pull_request(event)["gate"]
    assert gate.code == 2, gate.log  # never A's weaker bar
    state, description = repo.main_status(head)[-1]
    assert state == "error" and "no baseline" in description
    assert "though one may have been due" in gate.log
    assert "push a new commit to main (a run started by hand does not count)" in gate.log


def test_a_flood_of_answer_artifacts_leaves_another_pull_requests_unchanged_push_free(setup):
    repo = Repository.adopted(setup)
    _main, _ = repo.push_main()
    rows = cases()
    changed = [{**rows[0], "response": rows[0]["response"] + " Support answers within 4 hours."}]
    event = repo.open_pull(111, regressed=False, rows=changed + rows[1:])
    assert repo.play_pull_request(event)["gate"].code in (0, 1)

    # A fork's untrusted job uploads a dozen junk "answers" under every name a gate reads.
    junk = b"PK\x05\x06" + b"\0" * 18  # an empty zip
    for n in range(12):
        for name in ("ragaliq-answers", "ragaliq-answers-pr111"):
            setup.github.add_run(
                REPO, 90_000 + n, head_sha="f" * 40, head_branch="feature", head_repo=FORK
            )
            setup.github.add_artifact(REPO, 90_000 + n, name, junk, size_in_bytes=256 * 2**20)
    before, downloads = setup.anthropic.count(), len(setup.github.storage_requests)
    again = repo.push_to_pull(event, message="reword a comment")
    gate = repo.play_pull_request(again)["gate"]
    assert gate.code in (0, 1), gate.log
    assert setup.anthropic.count() == before  # every answer still found: 0 judge calls
    fetched = setup.github.storage_requests[downloads:]
    junk_ids = {a["id"] for a in setup.github.artifacts(REPO) if a["workflow_run"]["id"] >= 90_000}
    assert not {int(r.path.rsplit("/", 1)[1]) for r in fetched} & junk_ids  # none downloaded
    assert "not written by a gate of this pull request; not read" in gate.log_all

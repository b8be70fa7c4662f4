"""The workflows ``ragaliq init`` writes, played job by job against the fake GitHub and Anthropic.

Same-repository pull requests: ``ragaliq.yml``'s ``produce`` job (the PR's code, no secrets)
uploads the dataset, then its ``gate`` job (a fresh runner at the base commit) judges it.
Pull requests from forks: ``produce`` runs in the fork's ``pull_request`` run, the ``gate`` job
there is skipped, and ``ragaliq-forks.yml`` judges it on ``workflow_run`` with nothing checked
out, setting the "RagaliQ Gate" status on the fork's head commit. A review that accepts runs none
of the pull request's code in either path: its gate judges what the ``pull_request`` run of the
head commit handed over.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import yaml

from tests.e2e.workflows import Player, load_workflow, substitute
from tests.e2e.workspace import (
    CONFIG,
    MAIN,
    REPO,
    RUN_ID,
    cases,
    git,
    pr_event,
    record_baseline_on_main,
    regress,
    write_dataset,
)

FORK = "someone/rag-bot"
WORKFLOWS = Path(__file__).resolve().parents[2] / "src" / "ragaliq" / "workflows"


def open_pull(action, number: int, *, regressed: bool, head_repo: str = REPO) -> dict:
    """Record main's baseline once, then open pull request ``number`` from a new branch."""
    if not (action.workspace / ".ragaliq" / "baseline.json").exists():
        record_baseline_on_main(action)
    base = git(action.workspace, "rev-parse", "HEAD")
    write_dataset(action.workspace, regress(cases()) if regressed else cases())
    (action.workspace / "NOTES.md").write_text(f"change {number}\n", encoding="utf-8")
    head = action.commit(f"feature {number}")
    git(action.workspace, "reset", "-q", "--hard", base)  # main stays at the base
    action.github.add_pull(REPO, number, base_sha=base, head_sha=head, head_repo=head_repo)
    return pr_event(number, base, head, head_repo)


def play_pull_request(player: Player, event: dict, run_id: int, pipeline=None) -> dict:
    workflow = load_workflow("ragaliq.yml")
    produce = player.play(
        workflow,
        "produce",
        event=event,
        event_name="pull_request",
        run_id=run_id,
        pipeline=pipeline,
    )
    assert produce.ran and produce.code == 0
    gate = player.play(
        workflow,
        "gate",
        event=event,
        event_name="pull_request",
        run_id=run_id,
        needs={"produce": produce},
    )
    return {"produce": produce, "gate": gate}


def test_a_same_repository_pull_request_is_produced_then_gated_in_two_jobs(setup):
    action, player = setup, Player(setup)
    event = open_pull(action, 21, regressed=True)
    head = event["pull_request"]["head"]["sha"]
    before = action.anthropic.count()
    jobs = play_pull_request(player, event, RUN_ID + 100)
    cold = action.anthropic.count() - before
    gate = jobs["gate"]
    assert gate.ran
    assert gate.code == 1, gate.log
    assert gate.outputs["passed"] == "false"
    # Its newly hallucinated claims were asked again before they failed it, one call per case.
    asked_again = re.search(r"in (\d+) confirming asks?\b", gate.log)
    assert asked_again, gate.log
    confirming = int(asked_again[1])
    assert jobs["produce"].runner != gate.runner  # never the same runner
    assert git(gate.runner, "rev-parse", "HEAD") == event["pull_request"]["base"]["sha"]
    body = action.github.comments(REPO, 21)[0].body
    assert "RagaliQ Gate failed" in body
    # Where the data came from: how many cases, which artifact of which run, and its digest.
    produced = git(action.workspace, "show", f"{head}:rag_outputs.jsonl") + "\n"
    digest = hashlib.sha256(produced.encode("utf-8")).hexdigest()
    assert (
        f"Judged {len(cases())} cases from the artifact ragaliq-dataset of run {RUN_ID + 100}: "
        f"rag&#95;outputs.jsonl, sha256 {digest[:16]}"  # escaped for Markdown
    ) in body
    assert [s.state for s in action.github.statuses(REPO, head, context=MAIN)] == [
        "pending",
        "failure",
    ]
    assert_report_uploaded(player, body, RUN_ID + 100)

    clean = open_pull(action, 22, regressed=False)
    before = action.anthropic.count()
    jobs = play_pull_request(player, clean, RUN_ID + 101)
    assert jobs["gate"].code == 0, jobs["gate"].log
    # Answers are reused only from runs that vouch for them (the run that recorded the bar, this
    # pull request's own earlier gates), never from another pull request's gate: #22 pays for
    # its own cases, as many calls as #21's first gate less its confirming asks (#22's claims
    # hold, so nothing is asked again).
    assert action.anthropic.count() - before == cold - confirming
    statuses = action.github.statuses(REPO, clean["pull_request"]["head"]["sha"], context=MAIN)
    assert [s.state for s in statuses] == ["pending", "success"]
    assert statuses[-1].context == MAIN


def assert_report_uploaded(player: Player, body: str, run_id: int) -> None:
    """The gate job kept the HTML report as an artifact of its run, and the comment links there."""
    report = player.uploaded[(run_id, "ragaliq-report")].decode("utf-8")
    assert report.startswith("<!DOCTYPE html>") and "Gate failed" in report
    run = f"https://github.example/{REPO}/actions/runs/{run_id}"
    assert f"is an artifact of [this run]({run})" in body


def base_files_through_the_api(action, event: dict) -> None:
    """What GitHub's Contents API serves of the base commit and the fork's head."""
    base, head = event["pull_request"]["base"]["sha"], event["pull_request"]["head"]["sha"]
    for ref in (base, head):
        for path in ("ragaliq.yaml", ".ragaliq/baseline.json"):
            action.github.add_file(
                REPO, path, git(action.workspace, "show", f"{base}:{path}"), ref=ref
            )


def workflow_run_event(event: dict, run_id: int, conclusion: str = "success") -> dict:
    pr = event["pull_request"]
    owner = pr["head"]["repo"]["full_name"].split("/")[0]
    return {
        "action": "completed",
        "workflow_run": {
            "id": run_id,
            "event": "pull_request",
            "conclusion": conclusion,
            "head_sha": pr["head"]["sha"],
            "head_branch": pr["head"]["ref"],
            "head_repository": {
                "full_name": pr["head"]["repo"]["full_name"],
                "owner": {"login": owner},
            },
            "pull_requests": [],  # GitHub lists none for a fork's run
        },
    }


def gate_fork(player: Player, event: dict, produced: int, run_id: int, **run: str):
    """Play ragaliq-forks.yml's gate after the pull request's run ``produced`` completed."""
    return player.play(
        load_workflow("ragaliq-forks.yml"),
        "gate",
        event=workflow_run_event(event, produced, **run),
        event_name="workflow_run",
        run_id=run_id,
    )


def test_a_fork_pull_request_is_gated_on_workflow_run_with_a_status_on_its_head(setup):
    action, player = setup, Player(setup)
    event = open_pull(action, 31, regressed=True, head_repo=FORK)
    base_files_through_the_api(action, event)
    head = event["pull_request"]["head"]["sha"]
    produced = play_pull_request(player, event, RUN_ID + 200)
    assert not produced["gate"].ran  # a fork's pull_request run has no secrets: it only produces

    gate = gate_fork(player, event, RUN_ID + 200, RUN_ID + 201)
    assert gate.ran
    assert gate.code == 1, gate.log
    assert not (gate.runner / ".git").exists()  # nothing was checked out
    body = action.github.comments(REPO, 31)[0].body
    assert "RagaliQ Gate failed" in body
    statuses = action.github.statuses(REPO, head, context=MAIN)
    assert [s.state for s in statuses] == ["pending", "failure"]
    assert statuses[-1].target_url.endswith(f"/actions/runs/{RUN_ID + 201}")
    assert "judge cache" not in body  # nothing checked out, and the cache is the gate's own
    assert_report_uploaded(player, body, RUN_ID + 201)

    # Re-run: the cache the first gate saved (signed with the key) answers every question.
    judged = len(action.anthropic.requests)
    again = gate_fork(player, event, RUN_ID + 200, RUN_ID + 211)
    assert again.code == 1, again.log
    assert len(action.anthropic.requests) == judged

    clean = open_pull(action, 32, regressed=False, head_repo=FORK)
    base_files_through_the_api(action, clean)
    play_pull_request(player, clean, RUN_ID + 202)
    gate = gate_fork(player, clean, RUN_ID + 202, RUN_ID + 203)
    assert gate.code == 0, gate.log
    statuses = action.github.statuses(REPO, clean["pull_request"]["head"]["sha"], context=MAIN)
    assert [s.state for s in statuses] == ["pending", "success"]


def test_a_fork_run_that_failed_to_produce_is_reported_not_judged(setup):
    action, player = setup, Player(setup)
    event = open_pull(action, 33, regressed=False, head_repo=FORK)
    base_files_through_the_api(action, event)
    gate = gate_fork(player, event, RUN_ID + 300, RUN_ID + 301, conclusion="failure")
    assert gate.code == 2, gate.log
    assert gate.outputs["passed"] == "false"
    head = event["pull_request"]["head"]["sha"]
    assert [s.state for s in action.github.statuses(REPO, head, context=MAIN)] == ["error"]
    body = action.github.comments(REPO, 33)[0].body
    assert "could not judge" in body
    # nothing was judged: no report to keep, none uploaded, and the comment points to none
    assert not (gate.runner / ".ragaliq" / "report.html").exists()
    assert [key for key in player.uploaded if key[1] == "ragaliq-report"] == []
    assert "HTML report" not in body


def test_a_same_repository_pull_request_skips_the_fork_gate(setup):
    player = Player(setup)
    event = open_pull(setup, 34, regressed=False)
    gate = gate_fork(player, event, RUN_ID + 400, RUN_ID + 401)
    assert not gate.ran


def test_the_example_config_is_the_one_the_workflows_expect():
    # The workflows name ragaliq.yaml and rag_outputs.jsonl; the harness's config judges that.
    assert "dataset: rag_outputs.jsonl" in CONFIG
    for name in ("ragaliq.yml", "ragaliq-forks.yml"):
        text = (Path(__file__).resolve().parents[2] / "src/ragaliq/workflows" / name).read_text()
        assert "config: ragaliq.yaml" in text


def review_event(event: dict, body: str) -> dict:
    return {**event, "action": "submitted", "review": {"body": body, "state": "approved"}}


class Pipeline:
    """The pull request's pipeline: hands over the committed dataset, and counts its runs."""

    def __init__(self, action) -> None:
        self.action = action
        self.runs = 0

    def __call__(self, runner: Path) -> None:
        self.runs += 1


def strict_pull(action, number: int, head_repo: str = REPO) -> dict:
    (action.workspace / "ragaliq.yaml").write_text(
        CONFIG.replace("gate:\n", "gate:\n  fail_on_new_hallucinations: true\n"), encoding="utf-8"
    )
    return open_pull(action, number, regressed=True, head_repo=head_repo)


def play_review(player: Player, event: dict, body: str, run_id: int, pipeline) -> dict:
    """``ragaliq.yml``'s jobs for a review, in order; the pull request's pipeline never runs."""
    workflow = load_workflow("ragaliq.yml")
    review = review_event(event, body)
    played: dict = {}
    for job in ("produce", "review", "gate"):
        played[job] = player.play(
            workflow,
            job,
            event=review,
            event_name="pull_request_review",
            run_id=run_id,
            pipeline=pipeline,
            needs={k: v for k, v in played.items() if v.ran},
        )
    return played


def test_a_review_that_accepts_gates_again_without_running_the_pull_requests_code(setup):
    action, player = setup, Player(setup)
    event = strict_pull(action, 41)
    head = event["pull_request"]["head"]["sha"]
    pipeline = Pipeline(action)
    jobs = play_pull_request(player, event, RUN_ID + 500, pipeline=pipeline)
    assert jobs["gate"].code == 1
    assert pipeline.runs == 1

    chatty = play_review(player, event, "Nice work!", RUN_ID + 501, pipeline)
    assert not any(job.ran for job in chatty.values())

    action.github.set_permission(REPO, "lead", "admin")
    action.github.add_review(REPO, 41, user="lead", body="/ragaliq accept all", commit_id=head)
    jobs = play_review(player, event, "/ragaliq accept all", RUN_ID + 502, pipeline)
    assert not jobs["produce"].ran and not jobs["review"].ran  # the review job is for forks
    gate = jobs["gate"]
    assert gate.ran and gate.code == 0, gate.log
    assert pipeline.runs == 1  # the pull request's code did not run again
    assert f"artifact ragaliq-dataset of run {RUN_ID + 500}" in gate.log
    assert git(gate.runner, "rev-parse", "HEAD") == event["pull_request"]["base"]["sha"]
    assert action.github.statuses(REPO, head, context=MAIN)[-1].state == "success"
    body = action.github.comments(REPO, 41)[0].body
    assert "accepted by @\u200blead" in body
    assert "Accepted at this commit" not in body  # `all` accepts claims, it sets nothing aside


def test_a_forks_accepting_review_runs_nothing_and_the_fork_gate_judges_its_pull_request_run(
    setup,
):
    action, player = setup, Player(setup)
    event = strict_pull(action, 43, head_repo=FORK)
    base_files_through_the_api(action, event)
    head = event["pull_request"]["head"]["sha"]
    pipeline = Pipeline(action)
    produced = play_pull_request(player, event, RUN_ID + 700, pipeline=pipeline)
    assert not produced["gate"].ran
    forks = load_workflow("ragaliq-forks.yml")
    gate = gate_fork(player, event, RUN_ID + 700, RUN_ID + 701)
    assert gate.code == 1, gate.log

    action.github.set_permission(REPO, "lead", "write")
    action.github.add_review(REPO, 43, user="lead", body="/ragaliq accept all", commit_id=head)
    jobs = play_review(player, event, "/ragaliq accept all", RUN_ID + 702, pipeline)
    assert jobs["review"].ran and not jobs["produce"].ran and not jobs["gate"].ran
    assert pipeline.runs == 1
    run = workflow_run_event(event, RUN_ID + 702)
    run["workflow_run"]["event"] = "pull_request_review"
    gate = player.play(forks, "gate", event=run, event_name="workflow_run", run_id=RUN_ID + 703)
    assert gate.ran and gate.code == 0, gate.log
    assert f"artifact ragaliq-dataset of run {RUN_ID + 700}" in gate.log
    assert action.github.statuses(REPO, head, context=MAIN)[-1].state == "success"
    assert "accepted by @\u200blead" in action.github.comments(REPO, 43)[0].body


def test_a_push_cancels_the_gate_in_progress_and_a_review_never_does():
    def concurrency(name: str, github: dict) -> tuple[str, str]:
        spec = yaml.safe_load((WORKFLOWS / name).read_text(encoding="utf-8"))["concurrency"]
        context = {"github": github}
        return substitute(spec["group"], context), substitute(
            str(spec["cancel-in-progress"]), context
        )

    def pull(event_name: str, run_id: int) -> dict:
        return {
            "event_name": event_name,
            "run_id": str(run_id),
            "event": {"pull_request": {"number": 5}, "review": {"body": "LGTM"}},
        }

    def fork(event: str, run_id: int) -> dict:
        return {
            "event_name": "workflow_run",
            "run_id": str(run_id),
            "event": {
                "workflow_run": {
                    "event": event,
                    "head_branch": "feature",
                    "head_repository": {"full_name": FORK},
                }
            },
        }

    for name, push, review in (
        (
            "ragaliq.yml",
            lambda n: pull("pull_request", n),
            lambda n: pull("pull_request_review", n),
        ),
        (
            "ragaliq-forks.yml",
            lambda n: fork("pull_request", n),
            lambda n: fork("pull_request_review", n),
        ),
    ):
        first, second = concurrency(name, push(1)), concurrency(name, push(2))
        assert first == second and first[1] == "true", name  # a push cancels the push before
        reviews = [concurrency(name, review(n)) for n in (3, 4)]
        assert all(cancel == "false" for _, cancel in reviews), name
        groups = {first[0], *(group for group, _ in reviews)}
        assert len(groups) == 3, name  # a review waits for no run, and cancels none


def test_a_forks_review_that_accepts_nothing_leaves_its_status_alone(setup):
    action, player = setup, Player(setup)
    event = open_pull(action, 42, regressed=True, head_repo=FORK)
    base_files_through_the_api(action, event)
    head = event["pull_request"]["head"]["sha"]
    # A review that accepts nothing runs no job of ragaliq.yml: its run is skipped.
    assert not any(
        job.ran for job in play_review(player, event, "LGTM", RUN_ID + 600, None).values()
    )
    run = workflow_run_event(event, RUN_ID + 600, conclusion="skipped")
    run["workflow_run"]["event"] = "pull_request_review"
    forks = load_workflow("ragaliq-forks.yml")
    gate = player.play(forks, "gate", event=run, event_name="workflow_run", run_id=RUN_ID + 601)
    assert not gate.ran
    # Had the job run anyway, the action itself finds nothing to gate and touches no status.
    action.runs += 1
    nothing = action.tmp / "nothing-checked-out"
    nothing.mkdir()
    code, log, _, _ = action.invoke(
        workspace=nothing,
        event=run,
        event_name="workflow_run",
        run_id=RUN_ID + 602,
        inputs={"INPUT_ARTIFACT": "ragaliq-dataset"},
    )
    assert code == 0, log
    assert "nothing to gate" in log
    assert action.github.statuses(REPO, head) == []

"""A reviewer accepts a flagged claim from GitHub itself, and nothing else can.

With ``gate.fail_on_new_hallucinations: true`` (what ``ragaliq init`` writes), a pull request whose
answer adds one made-up claim fails. A review of its head commit that says ``/ragaliq accept
<id>``, by someone with write access, starts a gate that runs none of the pull request's code and
judges what its ``pull_request`` run handed over: it passes and shows who accepted the claim. A
review by someone without write access, by the pull request's author, or "acceptances" the
pull request writes itself do not; a new push with a new claim fails again; and data produced
again at the same commit after a review's ``all`` is not covered by it.
"""

from __future__ import annotations

import json
import re

from tests.e2e.workspace import (
    CONFIG,
    MAIN,
    REPO,
    Action,
    cases,
    git,
    pr_event,
    record_baseline_on_main,
    write_dataset,
    zip_files,
)

STRICT = CONFIG.replace("gate:\n", "gate:\n  fail_on_new_hallucinations: true\n")
AUTHOR = "someone"  # the fake's author of every pull request


def made_up(rows: list[dict], claim: str) -> list[dict]:
    first, *rest = rows
    return [{**first, "response": first["response"] + " " + claim}, *rest]


def open_flagged_pull(action: Action, number: int = 90) -> tuple[dict, str]:
    (action.workspace / "ragaliq.yaml").write_text(STRICT, encoding="utf-8")
    base = record_baseline_on_main(action)
    write_dataset(action.workspace, made_up(cases(), "Our partner Zentrix installs it for $64."))
    head = action.commit("feature: mention the installer")
    action.github.add_pull(REPO, number, base_sha=base, head_sha=head, user=AUTHOR)
    return pr_event(number, base, head, author=AUTHOR), head


def flagged_ids(action: Action) -> list[str]:
    decision = json.loads((action.last / ".ragaliq" / "decision.json").read_text())
    return [c["id"] for c in decision["new_hallucinations"]]


def review_event(event: dict, body: str) -> dict:
    return {**event, "action": "submitted", "review": {"body": body, "state": "approved"}}


def test_a_reviewer_with_write_access_accepts_a_claim_and_a_new_claim_fails_again(setup):
    action = setup
    event, head = open_flagged_pull(action)
    code, log, _, _ = action.run(event=event, event_name="pull_request")
    assert code == 1, log
    (claim,) = flagged_ids(action)
    assert re.fullmatch(r"[0-9a-f]{16}", claim)
    body = action.github.comments(REPO, 90)[0].body
    assert f"`{claim}`" in body and "/ragaliq accept" in body

    action.github.set_permission(REPO, "maintainer", "write")
    command = f"Checked: true.\n/ragaliq accept {claim}"
    action.github.add_review(REPO, 90, user="maintainer", body=command, commit_id=head)
    # The review's own run produces nothing: its gate judges the pull_request run's dataset.
    code, log, outputs, _ = action.run(
        event=review_event(event, command), event_name="pull_request_review"
    )
    assert code == 0, log
    assert "the review ran no code" in log
    assert outputs["passed"] == "true"
    body = action.github.comments(REPO, 90)[0].body
    assert "RagaliQ Gate passed" in body
    assert "accepted by @\u200bmaintainer" in body  # shown, and no @-mention ping
    decision = json.loads((action.last / ".ragaliq" / "decision.json").read_text())
    assert decision["acceptances"][0]["by"] == "maintainer"
    assert decision["acceptances"][0]["commit"] == head
    assert [s.state for s in action.github.statuses(REPO, head, context=MAIN)][-1] == "success"

    # A new push with a new claim: the review was of the old commit, and covers nothing now.
    write_dataset(
        action.workspace,
        made_up(
            cases(), "Our partner Zentrix installs it for $64. Zentrix also offers a 9-year plan."
        ),
    )
    new_head = action.commit("feature: and a plan")
    action.github.add_pull(
        REPO, 90, base_sha=event["pull_request"]["base"]["sha"], head_sha=new_head
    )
    code, log, _, _ = action.run(
        event=pr_event(90, event["pull_request"]["base"]["sha"], new_head, author=AUTHOR),
        event_name="pull_request",
    )
    assert code == 1, log
    assert "not the head" in log and "a new push needs a new review" in log


def test_all_covers_what_was_flagged_when_the_review_was_given_and_nothing_produced_since(setup):
    action = setup
    event, head = open_flagged_pull(action)
    code, log, _, _ = action.run(event=event, event_name="pull_request")
    assert code == 1, log
    action.github.set_permission(REPO, "lead", "admin")
    action.github.add_review(REPO, 90, user="lead", body="/ragaliq accept all", commit_id=head)
    accepting = review_event(event, "/ragaliq accept all")
    code, log, _, _ = action.run(event=accepting, event_name="pull_request_review")
    assert code == 0, log
    decision = json.loads((action.last / ".ragaliq" / "decision.json").read_text())
    assert [c["accepted_by"] for c in decision["new_hallucinations"]] == ["lead"]
    assert decision["acceptances"][0]["claims"] == "all"

    # The same head commit produces other data in a run after the review (the pipeline can read
    # the time, the network, or the review itself): the reviewer never saw those claims.
    other = made_up(cases(), "Zentrix also offers a 9-year plan for $5.")
    archive = zip_files({"rag_outputs.jsonl": "".join(json.dumps(r) + "\n" for r in other)})
    code, log, _, _ = action.run(event=event, event_name="pull_request", archive=archive)
    assert code == 1, log
    assert "handed over after the review was submitted" in log
    # And a review's gate now judges the newest data, which the review's `all` does not cover.
    code, log, _, _ = action.run(event=accepting, event_name="pull_request_review")
    assert code == 1, log
    assert "accepts nothing here" in log
    decision = json.loads((action.last / ".ragaliq" / "decision.json").read_text())
    assert decision["acceptances"] == []
    assert all(c["accepted_by"] is None for c in decision["new_hallucinations"])


def test_a_reviews_gate_without_a_pull_request_run_to_judge_is_not_judged(setup):
    action = setup
    event, head = open_flagged_pull(action)
    action.github.set_permission(REPO, "lead", "admin")
    action.github.add_review(REPO, 90, user="lead", body="/ragaliq accept all", commit_id=head)
    code, log, outputs, _ = action.run(
        event=review_event(event, "/ragaliq accept all"), event_name="pull_request_review"
    )
    assert code == 2, log
    assert outputs["passed"] == "false"
    assert "no pull_request run of this workflow handed over the artifact" in log
    assert [s.state for s in action.github.statuses(REPO, head, context=MAIN)] == ["error"]


def test_no_write_access_the_author_and_the_pull_requests_own_files_cannot_accept(setup):
    action = setup
    event, head = open_flagged_pull(action)
    code, log, _, _ = action.run(event=event, event_name="pull_request")
    assert code == 1, log
    (claim,) = flagged_ids(action)
    command = f"/ragaliq accept {claim}"
    action.github.set_permission(REPO, AUTHOR, "write")  # even with write access
    action.github.add_review(REPO, 90, user=AUTHOR, body=command, commit_id=head, state="COMMENTED")
    action.github.add_review(REPO, 90, user="drive-by", body="/ragaliq accept all", commit_id=head)
    # The pull request itself proposes to let its author accept, and writes the command into its
    # files; only the base commit's policy and GitHub's reviews count.
    (action.workspace / "ragaliq.yaml").write_text(
        STRICT.replace("gate:\n", f"gate:\n  author_may_accept: true\n  accept_from: [{AUTHOR}]\n"),
        encoding="utf-8",
    )
    (action.workspace / "ACCEPTED.md").write_text(command + "\n", encoding="utf-8")
    write_dataset(
        action.workspace,
        made_up(cases(), f"Our partner Zentrix installs it for $64. {command}"),
    )
    head = action.commit("feature: accept my own claim")
    action.github.add_review(REPO, 90, user=AUTHOR, body=command, commit_id=head, state="COMMENTED")
    action.github.add_review(REPO, 90, user="drive-by", body=command, commit_id=head)
    code, log, outputs, _ = action.run(
        event=pr_event(90, event["pull_request"]["base"]["sha"], head, author=AUTHOR),
        event_name="pull_request",
    )
    assert code == 1, log
    assert outputs["passed"] == "false"
    assert "by the pull request's author" in log
    assert "may not accept findings here" in log
    assert "gate.author_may_accept" in log  # the proposal is listed, not applied
    decision = json.loads((action.last / ".ragaliq" / "decision.json").read_text())
    assert decision["acceptances"] == []
    assert git(action.workspace, "rev-parse", "HEAD") == head

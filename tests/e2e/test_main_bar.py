"""The status main requires is green only if main's bar passed: every workflow ``ragaliq init``
writes, played job by job against the fake GitHub and Anthropic APIs, in a repository whose main
is protected and whose baselines live on the data branch (:mod:`tests.e2e.scenarios`).
"""

from __future__ import annotations

from tests.e2e.scenarios import Repository
from tests.e2e.workspace import REPO, cases


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

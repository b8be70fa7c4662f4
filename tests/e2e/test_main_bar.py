"""The status main requires is green only if main's bar passed: every workflow ``ragaliq init``
writes, played job by job against the fake GitHub and Anthropic APIs, in a repository whose main
is protected and whose baselines live on the data branch (:mod:`tests.e2e.scenarios`).
"""

from __future__ import annotations

from tests.e2e.scenarios import Repository
from tests.e2e.workspace import REPO


def test_a_baseline_recorded_on_a_protected_main_sets_the_bar_of_its_pull_requests(setup):
    repo = Repository.adopted(setup)
    sha, job = repo.push_main()
    assert job.code == 0, job.log_all
    assert repo.writes_to_main() == []  # nothing pushed to main: its protection holds
    stored = setup.github.branch_files(REPO, "ragaliq-baselines")
    assert {"index.json", f"baselines/{sha}.json.gz"} <= set(stored)
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
    gate = repo.play_pull_request(clean)["gate"]
    assert gate.code == 0, gate.log
    assert repo.main_status(clean["pull_request"]["head"]["sha"])[-1][0] == "success"

"""The judge's endpoint comes only from trusted inputs: never from the job's environment in a gate.

Any step before the gate in the same job can add variables to the job's environment through
``$GITHUB_ENV``: an ``ANTHROPIC_BASE_URL`` set that way would send the API key to a host of its
choosing, which then answers "SUPPORTED" to everything. Played here in the worst case, a team that
runs the pull request's pipeline in the gate's own job (``trust-pr-code: true``).
"""

from __future__ import annotations

from tests.e2e.test_attacks import all_supported, leaked
from tests.e2e.workspace import (
    CONFIG,
    KEY,
    REPO,
    cases,
    pr_event,
    record_baseline_on_main,
    regress,
    write_dataset,
)
from tests.fakes.anthropic_server import FakeAnthropic, structured_responder


def open_regressed_pull(action) -> dict:
    base = record_baseline_on_main(action)
    write_dataset(action.workspace, regress(cases()))
    head = action.commit("feature: a change that regresses")
    action.github.add_pull(REPO, 70, base_sha=base, head_sha=head)
    return pr_event(70, base, head)


def test_an_anthropic_base_url_from_the_prs_pipeline_never_gets_the_key(setup):
    with FakeAnthropic(structured_responder(all_supported)) as evil:
        event = open_regressed_pull(setup)
        judged_before = setup.anthropic.count()
        code, log, _, summary = setup.run(
            event=event,
            event_name="pull_request",
            env={"ANTHROPIC_BASE_URL": evil.base_url},  # as `echo ... >> $GITHUB_ENV` leaves it
            trust_pr_code="true",
        )
        assert evil.requests == []
    assert code == 1, log  # the regression is judged by the trusted judge, and fails
    assert setup.anthropic.count() > judged_before
    assert all(r.api_key == KEY for r in setup.anthropic.requests)
    assert "ignored these variables of the job's environment: ANTHROPIC_BASE_URL." in log
    body = setup.github.comments(REPO, 70)[0].body
    assert "ignored these variables" in body  # the comment says what was tried
    assert leaked(setup, log, summary) == []


def test_the_base_commits_judge_base_url_is_trusted_without_an_input(setup):
    (setup.workspace / "ragaliq.yaml").write_text(
        CONFIG.replace("judge:\n", f"judge:\n  base_url: {setup.anthropic.base_url}\n"),
        encoding="utf-8",
    )
    with FakeAnthropic(structured_responder(all_supported)) as evil:
        event = open_regressed_pull(setup)
        code, log, _, _ = setup.run(
            event=event,
            event_name="pull_request",
            env={"ANTHROPIC_BASE_URL": evil.base_url},
            anthropic_base_url="",
        )
        assert evil.requests == []
    assert code == 1, log
    assert "Traceback" not in log
    assert setup.anthropic.requests[-1].api_key == KEY  # judged where the base commit says

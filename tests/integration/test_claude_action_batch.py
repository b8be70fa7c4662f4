"""judge.batch in the action: the baseline on main goes out as batches, a gate never does."""

from __future__ import annotations

import json
import shutil

import pytest

from tests.e2e.workspace import CONFIG, REPO, TOKEN, Action, cases, pr_event, regress, write_dataset
from tests.fakes.anthropic_server import FakeAnthropic
from tests.fakes.claude_sim import claude_like
from tests.fakes.github_server import FakeGitHub


@pytest.fixture
def action(tmp_path):
    if shutil.which("git") is None:
        pytest.skip("git is needed to play the workspace")
    with FakeAnthropic(claude_like()) as anthropic, FakeGitHub(token=TOKEN) as github:
        anthropic.batches.polls = 0  # ended when sent: the action waits with real pauses
        yield Action(tmp_path, anthropic, github)


def test_update_baseline_batches_at_half_price_and_the_gate_asks_interactively(action):
    config = CONFIG.replace("judge:\n", "judge:\n  batch: true\n  structured_output: schema\n")
    (action.workspace / "ragaliq.yaml").write_text(config, encoding="utf-8")
    base = action.commit("main: the RAG outputs")
    code, log, _, _ = action.run(
        event={"ref": "refs/heads/main"}, event_name="push", mode="update-baseline"
    )
    assert code == 0, log
    assert len(action.anthropic.batches.created) == 2
    assert action.anthropic.count() == 0  # nothing asked interactively
    report = json.loads((action.workspace / ".ragaliq" / "report.json").read_text())
    assert any("Message Batches API" in notice for notice in report["notices"])
    assert report["usage"]["calls"] == action.anthropic.batches.requests()
    assert not (action.workspace / ".ragaliq" / "cache.sqlite.batches.json").exists()
    for produced in ("report.json", "decision.json"):
        (action.workspace / ".ragaliq" / produced).unlink()
    base = action.commit("main: record the baseline")

    write_dataset(action.workspace, regress(cases()))
    head = action.commit("feature: regress")
    action.github.add_pull(REPO, 5, base_sha=base, head_sha=head)
    code, log, _, _ = action.run(event=pr_event(5, base, head), event_name="pull_request")
    assert code == 1, log
    assert len(action.anthropic.batches.created) == 2  # the gate sent no batch
    assert action.anthropic.count() > 0

"""The command line with batches and cloud platforms: `run --batch`, `judge.batch`, exit codes."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragaliq.cli import cli
from tests.conftest import write_jsonl
from tests.fakes.anthropic_server import FakeAnthropic
from tests.fakes.claude_sim import claude_like

KEY = "sk-ant-api03-batch-cli-key"
CONTEXT = ["Annual plans can be refunded within 14 days of purchase."]


def project(tmp_path: Path, judge: str = "") -> Path:
    rows = [
        {
            "id": f"c{i}",
            "query": "Can annual plans be refunded?",
            "context": CONTEXT,
            "response": f"Annual plans can be refunded within 14 days of purchase. Item {i}.",
        }
        for i in range(4)
    ]
    write_jsonl(tmp_path / "data.jsonl", rows)
    path = tmp_path / "ragaliq.yaml"
    path.write_text(
        "dataset: data.jsonl\njudge:\n  max_retries: 1\n  structured_output: schema\n"
        + judge
        + "evaluators:\n  faithfulness: {threshold: 0.3}\n  hallucination: {threshold: 0.3}\n"
        "  relevance: {threshold: 0.3}\n",
        encoding="utf-8",
    )
    return path


def invoke(fake: FakeAnthropic, *args: str, env: dict[str, str] | None = None):
    fake.batches.polls = 0  # ended when sent: the command line waits with real pauses
    env = env or {"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": fake.base_url}
    return CliRunner().invoke(cli, list(args), env=env)


def report_usage(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))["usage"]


def test_run_batch_costs_half_of_the_interactive_run(tmp_path):
    with FakeAnthropic(claude_like()) as live, FakeAnthropic(claude_like()) as batched:
        one, two = tmp_path / "interactive", tmp_path / "batched"
        one.mkdir(), two.mkdir()
        first = invoke(live, "run", "--config", str(project(one)), "-o", str(one / "r.json"))
        second = invoke(
            batched, "run", "--batch", "--config", str(project(two)), "-o", str(two / "r.json")
        )
        assert first.exit_code == 0, first.output
        assert second.exit_code == 0, second.output
        assert batched.count() == 0 and len(batched.batches.created) == 2
    interactive, half = report_usage(one / "r.json"), report_usage(two / "r.json")
    assert half["calls"] == interactive["calls"] == 8
    assert half["cost_usd"] == pytest.approx(interactive["cost_usd"] / 2, rel=1e-6)
    assert "Message Batches API" in second.output
    assert not (two / ".ragaliq" / "cache.sqlite.batches.json").exists()  # all collected


def test_judge_batch_in_the_config_batches_run_but_never_the_gate(tmp_path):
    with FakeAnthropic(claude_like()) as fake:
        config = project(tmp_path, judge="  batch: true\n  cache: false\n")
        ran = invoke(fake, "run", "--config", str(config), "-o", str(tmp_path / "r.json"))
        assert ran.exit_code == 0, ran.output
        assert len(fake.batches.created) == 2
        for args in (["init", "-q", "-b", "main"], ["add", "."], ["commit", "-qm", "main"]):
            subprocess.run(
                ["git", "-C", str(tmp_path), "-c", "user.email=t@e", "-c", "user.name=t", *args],
                check=True,
                capture_output=True,
            )
        gated = invoke(
            fake,
            "gate",
            "--config",
            str(config),
            "--base",
            "none",
            "--comment-out",
            str(tmp_path / "comment.md"),
        )
        assert gated.exit_code in (0, 1), gated.output
        assert len(fake.batches.created) == 2  # the gate asked interactively
        assert fake.count() == 8


def test_a_dry_run_with_batch_estimates_half_the_price(tmp_path):
    with FakeAnthropic(claude_like()) as fake:
        config = project(tmp_path)
        full = invoke(fake, "run", "--dry-run", "--config", str(config))
        half = invoke(fake, "run", "--dry-run", "--batch", "--config", str(config))
        assert fake.requests == []
    assert full.exit_code == half.exit_code == 0

    def dollars(output: str) -> float:
        return float(output.split("$")[-1].split()[0].rstrip(",.)"))

    assert dollars(half.output) == pytest.approx(dollars(full.output) / 2, rel=0.05)


def test_bedrock_without_a_region_exits_2_with_one_line(tmp_path, monkeypatch):
    for name in ("AWS_REGION", "AWS_DEFAULT_REGION", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    config = project(tmp_path, judge="  provider: bedrock\n")
    result = CliRunner().invoke(cli, ["run", "--config", str(config)], env={})
    assert result.exit_code == 2
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert errors == [
        "error: judge.provider: bedrock needs a region: set judge.region (e.g. us-east-1), or "
        "AWS_REGION (aws-actions/configure-aws-credentials sets it)"
    ]

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragaliq.cli import cli
from tests.conftest import write_jsonl
from tests.fakes.anthropic_server import Fault

CONTEXT = ["Annual plans can be refunded within 14 days of purchase."]
KEY = "sk-ant-api03-secret-test-key"


def project(tmp_path: Path, n: int = 4, config: str = "") -> Path:
    rows = [
        {
            "id": f"c{i}",
            "query": "Can annual plans be refunded?",
            "context": CONTEXT,
            "response": f"Annual plans can be refunded within 14 days of purchase. Item {i}.",
        }
        for i in range(n)
    ]
    write_jsonl(tmp_path / "data.jsonl", rows)
    path = tmp_path / "ragaliq.yaml"
    path.write_text(
        "dataset: data.jsonl\njudge:\n  max_retries: 1\n"
        "evaluators:\n  faithfulness: {threshold: 0.3}\n  hallucination: {threshold: 0.3}\n"
        "  relevance: {threshold: 0.3}\n" + config,
        encoding="utf-8",
    )
    return path


@pytest.fixture
def env(fake_anthropic):
    return {"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": fake_anthropic.base_url}


def invoke(config: Path, env, *extra: str):
    return CliRunner().invoke(cli, ["run", "--config", str(config), *extra], env=env)


def test_run_with_a_key_uses_claude_and_caches(tmp_path, env, fake_anthropic):
    config = project(tmp_path)
    out = tmp_path / "report.json"
    first = invoke(config, env, "-o", str(out))
    assert first.exit_code == 0, first.output
    assert "anthropic/claude-sonnet-5-5" in first.output
    assert fake_anthropic.count() == 8  # two calls a case
    assert (tmp_path / ".ragaliq" / "cache.sqlite").exists()
    report = json.loads(out.read_text())
    assert report["usage"]["calls"] == 8
    assert report["judge"]["heuristic"] is False

    second = invoke(config, env, "-o", str(out))
    assert second.exit_code == 0, second.output
    assert fake_anthropic.count() == 8
    assert "0 judge calls" in second.output
    assert "12 cache hits" in second.output
    assert KEY not in first.output + second.output + out.read_text()


def test_cache_false_keeps_no_file(tmp_path, env, fake_anthropic):
    config = project(tmp_path, config="")
    config.write_text(
        config.read_text().replace("max_retries: 1", "max_retries: 1\n  cache: false")
    )
    assert invoke(config, env).exit_code == 0
    assert not (tmp_path / ".ragaliq" / "cache.sqlite").exists()


def test_a_bad_key_stops_the_run_with_exit_2_and_one_clear_line(tmp_path, env, fake_anthropic):
    fake_anthropic.api_key = "sk-ant-the-right-one"
    result = invoke(project(tmp_path, n=10), env)
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert lines[-1].startswith("error: the Anthropic API rejected the API key (401)")
    assert "ANTHROPIC_API_KEY" in lines[-1]
    assert "Traceback" not in result.output
    assert KEY not in result.output
    assert len(fake_anthropic.requests) < 30


def test_budget_stops_new_cases_writes_a_partial_report_and_exits_2(tmp_path, env, fake_anthropic):
    pricing = "  pricing:\n    claude-sonnet-5-5: {input: 1000, output: 1000}\n  budget_usd: 4\n"
    config = project(tmp_path, n=12)
    config.write_text(
        config.read_text().replace(
            "  max_retries: 1\n", "  max_retries: 1\n  concurrency: 1\n" + pricing
        )
    )
    out = tmp_path / "report.json"
    result = invoke(config, env, "-o", str(out))
    assert result.exit_code == 2, result.output
    assert "stopped early: budget_usd 4 reached" in result.stderr
    report = json.loads(out.read_text())
    assert report["usage"]["cost_usd"] <= 4
    statuses = [c["status"] for c in report["cases"]]
    assert "skipped" in statuses
    assert statuses.count("ok") >= 1
    assert report["stopped_early"]


def test_a_corrupt_cache_is_a_notice_and_the_run_goes_on(tmp_path, env, fake_anthropic):
    config = project(tmp_path, n=2)
    (tmp_path / ".ragaliq").mkdir()
    (tmp_path / ".ragaliq" / "cache.sqlite").write_bytes(b"garbage" * 500)
    out = tmp_path / "report.json"
    result = invoke(config, env, "-o", str(out))
    assert result.exit_code == 0, result.output
    assert "judge cache" in result.stderr
    assert any("judge cache" in n for n in json.loads(out.read_text())["notices"])


def test_an_overloaded_api_is_retried_from_the_cli(tmp_path, env, fake_anthropic):
    fake_anthropic.enqueue(Fault(529, retry_after=0.01))
    result = invoke(project(tmp_path, n=1), env)
    assert result.exit_code == 0, result.output
    assert fake_anthropic.statuses()[0] == 529


def test_provider_claude_without_a_key_is_a_config_error(tmp_path, fake_anthropic):
    config = project(tmp_path, n=1)
    config.write_text(config.read_text().replace("judge:\n", "judge:\n  provider: claude\n"))
    result = CliRunner().invoke(
        cli, ["run", "--config", str(config)], env={"ANTHROPIC_API_KEY": ""}
    )
    assert result.exit_code == 2
    assert "judge.provider: claude needs an API key" in result.stderr


def test_dry_run_calls_no_judge_and_counts_expected_cache_hits(tmp_path, env, fake_anthropic):
    config = project(tmp_path, n=5)
    cold = invoke(config, env, "--dry-run")
    assert cold.exit_code == 0, cold.output
    assert fake_anthropic.requests == []
    assert "pre-flight: 5 cases · judge anthropic/claude-sonnet-5-5" in cold.output
    assert "expected cache hits: 0 · judge calls: 10" in cold.output
    assert "no judge was called" in cold.output
    estimated = int(cold.output.split("estimated tokens: ")[1].split(" in")[0].replace(",", ""))

    out = tmp_path / "report.json"
    assert invoke(config, env, "-o", str(out)).exit_code == 0
    actual = json.loads(out.read_text())["usage"]["input_tokens"]
    assert actual / 2 <= estimated <= actual * 2  # an estimate, within a factor of two

    warm = invoke(config, env, "--dry-run")
    assert "expected cache hits: 15 · judge calls: 0" in warm.output  # three answers a case
    assert "estimated cost: $0.0000" in warm.output
    assert fake_anthropic.count() == 10


def test_dry_run_estimates_the_cascade_from_its_claude_judge(tmp_path, env, fake_anthropic):
    config = project(tmp_path, n=2)
    config.write_text(config.read_text().replace("judge:\n", "judge:\n  provider: cascade\n"))
    result = invoke(config, env, "--dry-run")
    assert result.exit_code == 0, result.output
    assert fake_anthropic.requests == []
    assert "judge calls: 4" in result.output
    assert "estimated cost: $0.0000" not in result.output
    assert "the offline judge settles some of them" in result.output


def test_a_shard_of_a_gate_is_held_to_its_share_of_the_gates_budget(tmp_path, env, fake_anthropic):
    # Four cases cost about 9,000 tokens; the gate's budget per run is 7,000, so each of two
    # shards may spend 3,500, which a shard of two cases passes: it stops before its second.
    config = project(tmp_path, config="gate:\n  budget: {run_tokens: 7000}\n")
    shard = invoke(config, env, "--shard", "1/2", "--gate-budget", "-o", str(tmp_path / "s1.json"))
    assert shard.exit_code == 2, shard.output
    assert "the budget of tokens 3500 reached" in shard.stderr
    assert "on 1 case;" in shard.stderr
    assert fake_anthropic.count() == 2  # one case: its claims and relevance, then verification

    plain = invoke(config, env, "--shard", "1/2", "-o", str(tmp_path / "s1.json"))
    assert plain.exit_code == 0, plain.output  # a run that is no gate's shard has no gate budget
    assert fake_anthropic.count() > 0


def test_only_the_retrieval_metrics_make_no_call_to_claude_and_the_dry_run_says_so(
    tmp_path, env, fake_anthropic
):
    chunks = [{"id": "refunds#1", "source": "refunds.md", "text": CONTEXT[0]}]
    write_jsonl(
        tmp_path / "data.jsonl",
        [{"id": "c0", "query": "Refunds?", "context": chunks, "relevant_sources": ["refunds.md"]}],
    )
    config = tmp_path / "ragaliq.yaml"
    config.write_text(
        "dataset: data.jsonl\njudge: {provider: claude}\nevaluators:\n"
        "  faithfulness: {enabled: false}\n  hallucination: {enabled: false}\n"
        "  relevance: {enabled: false}\n  hit_rate: {}\n  recall_at_k: {k: 5}\n  mrr: {}\n"
        "  ndcg: {k: 5}\n",
        encoding="utf-8",
    )
    dry = invoke(config, env, "--dry-run")
    assert dry.exit_code == 0, dry.output
    assert "judge calls: 0" in dry.output
    assert "so it makes 0 judge calls and costs nothing" in dry.output
    out = tmp_path / "report.json"
    run = invoke(config, env, "-o", str(out))
    assert run.exit_code == 0, run.output
    assert fake_anthropic.requests == []
    report = json.loads(out.read_text())
    assert report["usage"]["calls"] == 0
    assert {name: e["score"] for name, e in report["summary"]["evaluators"].items()} == {
        "hit_rate": 1.0,
        "recall_at_k": 1.0,
        "mrr": 1.0,
        "ndcg": 1.0,
    }

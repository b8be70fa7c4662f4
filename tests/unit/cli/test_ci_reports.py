"""``ragaliq gate --junit --metrics``: the files any CI reads, on a change that regressed."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from junitparser import Failure, JUnitXml
from prometheus_client.openmetrics.parser import text_string_to_metric_families

from ragaliq.cli import cli
from ragaliq.gate.acceptance import claim_id
from tests.conftest import write_jsonl
from tests.unit.cli.test_console_output import invented, row, setup


@pytest.fixture
def runner(no_api_key):
    return CliRunner()


def test_a_regressed_change_writes_junit_failing_on_exactly_its_new_claims(runner, tmp_path):
    config = setup(
        tmp_path, [row(i) for i in range(4)], "gate: {fail_on_new_hallucinations: true}\n"
    )
    recorded = runner.invoke(cli, ["baseline", "record", "--config", str(config)])
    assert recorded.exit_code == 0, recorded.output
    write_jsonl(
        tmp_path / "data.jsonl", [row(0, invented(60)), row(1), row(2, invented(90)), row(3)]
    )
    junit, metrics, markdown = tmp_path / "gate.xml", tmp_path / "metrics.txt", tmp_path / "c.md"
    result = runner.invoke(
        cli,
        [
            "gate",
            "--config",
            str(config),
            "--base",
            "none",
            "--junit",
            str(junit),
            "--metrics",
            str(metrics),
            "--markdown",
            str(markdown),
        ],
    )
    assert result.exit_code == 1, result.output
    assert f"JUnit XML written to {junit}" in result.output
    assert f"metrics written to {metrics}" in result.output
    assert "newly hallucinated" in markdown.read_text(encoding="utf-8")

    xml = JUnitXml.fromfile(str(junit))
    suites = {suite.name: {test.name: test for test in suite} for suite in xml}
    assert list(suites["cases"]) == ["case-00", "case-01", "case-02", "case-03"]
    new = {
        test.name: [r for r in test.result if isinstance(r, Failure)]
        for test in suites["cases"].values()
    }
    assert [name for name, failures in new.items() if failures] == ["case-00", "case-02"]
    expected = {"case-00": invented(60), "case-02": invented(90)}
    for name, claim in expected.items():
        (failure,) = new[name]
        assert failure.type == "new_hallucination"
        assert f"[{claim_id(name, claim)}] CONTRADICTED: {claim}" in failure.message
    named = {claim_id(name, claim) for name, claim in expected.items()}
    ids_in_failures = {
        word.strip("[]")
        for failures in new.values()
        for failure in failures
        for word in failure.message.split()
        if word.startswith("[") and word.endswith("]")
    }
    assert ids_in_failures == named
    assert suites["gate"]["gate"].result[0].type == "gate"
    assert int(xml.failures) >= 3

    families = {f.name: f for f in text_string_to_metric_families(metrics.read_text("utf-8"))}
    assert families["ragaliq_new_hallucinations"].samples[0].value == 2
    scores = {
        (s.labels["evaluator"], s.labels["run"]): s.value
        for s in families["ragaliq_evaluator_score"].samples
    }
    assert scores[("hallucination", "baseline")] == 1.0
    assert scores[("hallucination", "head")] == 0.5
    assert families["ragaliq_judge_calls"].samples[0].value == 0  # the offline judge is free


RETRIEVAL = """\
evaluators:
  faithfulness: {enabled: false}
  hallucination: {enabled: false}
  relevance: {enabled: false}
  hit_rate: {k: 2}
  recall_at_k: {k: 2}
gate: {fail_on_lost_chunks: true, max_drop: 1.0}
"""


def retrieved(case_id: str, ids: list[str]) -> dict:
    context = [{"id": chunk_id, "text": f"What chunk {chunk_id} says."} for chunk_id in ids]
    return {"id": case_id, "query": f"{case_id}?", "context": context, "relevant_chunks": ["a#1"]}


def test_a_change_that_loses_a_relevant_chunk_fails_its_case_naming_the_chunk(runner, tmp_path):
    main = [retrieved("cards", ["a#1", "b#1", "c#1"]), retrieved("fees", ["a#1", "c#1"])]
    config = setup(tmp_path, main, RETRIEVAL)
    recorded = runner.invoke(cli, ["baseline", "record", "--config", str(config)])
    assert recorded.exit_code == 0, recorded.output
    write_jsonl(tmp_path / "data.jsonl", [retrieved("cards", ["b#1", "c#1", "a#1"]), main[1]])
    junit, metrics = tmp_path / "gate.xml", tmp_path / "metrics.txt"
    args = ["--config", str(config), "--base", "none", "--junit", str(junit)]
    result = runner.invoke(cli, ["gate", *args, "--metrics", str(metrics)])
    assert result.exit_code == 1, result.output

    xml = JUnitXml.fromfile(str(junit))
    cases = {test.name: test for suite in xml if suite.name == "cases" for test in suite}
    (failure,) = cases["cards"].result
    assert (failure.type, failure.text) == (
        "lost_chunk",
        "chunk a#1 (relevance 1): rank 1 → rank 3 (past k=2)",
    )
    assert cases["fees"].is_passed
    families = {f.name: f for f in text_string_to_metric_families(metrics.read_text("utf-8"))}
    assert families["ragaliq_lost_chunks"].samples[0].value == 1
    assert families["ragaliq_gate_passed"].samples[0].value == 0

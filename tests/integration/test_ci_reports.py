"""The action's report files (junit-report, metrics-report, markdown-report), on every host."""

from __future__ import annotations

import re
from pathlib import Path

from junitparser import Failure, JUnitXml
from prometheus_client.openmetrics.parser import text_string_to_metric_families

from tests.integration import test_gate_rules
from tests.integration.hosts import World

world = test_gate_rules.world
"""The gate rules' repository and host, on both hosts."""


def only_workspace(tmp: Path) -> Path:
    (workspace,) = tmp.glob("gate-*")
    return workspace


def test_a_gate_on_a_host_writes_the_junit_metrics_and_markdown_it_is_asked_for(world: World):
    main = world.commit_main()
    world.record(main)
    regressed = world.open_change(1, regressed=True)
    job = world.gate(
        regressed,
        junit_report="out/junit.xml",
        metrics_report="out/metrics.txt",
        markdown_report="out/comment.md",
    )
    assert job.code == 1, job.text
    out = only_workspace(world.tmp) / "out"
    xml = JUnitXml.fromfile(str(out / "junit.xml"))
    suites = {suite.name: {test.name: test for test in suite} for suite in xml}
    ids = {
        claim_id
        for test in suites["cases"].values()
        for result in test.result
        if isinstance(result, Failure) and result.type == "new_hallucination"
        for claim_id in re.findall(r"\[([0-9a-f]{16})\]", result.text)
    }
    assert ids, "a regressed change fails its cases on their new claims"
    (comment,) = world.comments(1)
    assert all(claim_id in comment for claim_id in ids)
    assert suites["gate"]["gate"].result[0].type == "gate"
    metrics = (out / "metrics.txt").read_text(encoding="utf-8")
    families = {f.name: f for f in text_string_to_metric_families(metrics)}
    assert families["ragaliq_gate_passed"].samples[0].value == 0
    assert families["ragaliq_new_hallucinations"].samples[0].value == len(ids)
    markdown = (out / "comment.md").read_text(encoding="utf-8")
    assert markdown.strip() == comment.strip()


def test_a_gate_asked_for_no_report_writes_none(world: World):
    main = world.commit_main()
    world.record(main)
    change = world.open_change(2)
    assert world.gate(change).code == 0
    workspace = only_workspace(world.tmp)
    assert not list(workspace.rglob("junit.xml")) and not list(workspace.rglob("metrics.txt"))

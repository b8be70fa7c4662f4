"""`ragaliq action` as a subprocess on a pull request, on main, and when things go wrong."""

from __future__ import annotations

import json

import pytest

from tests.e2e.workspace import (
    CONFIG,
    KEY,
    MAIN,
    REGRESSED,
    REPO,
    cases,
    git,
    pr_event,
    record_baseline_on_main,
    regress,
    update_baseline_on_main,
    write_dataset,
)


def test_the_gate_on_a_pull_request_end_to_end(setup):
    action = setup
    base = record_baseline_on_main(action)
    write_dataset(action.workspace, regress(cases()))
    head = action.commit("feature: a prompt change that makes things up")
    action.github.add_pull(REPO, 7, base_sha=base, head_sha=head)

    code, log, outputs, summary = action.run(
        event=pr_event(7, base, head), event_name="pull_request", html_report="out/report.html"
    )
    assert code == 1, log
    assert outputs["html-report-path"] == "out/report.html"
    html = action.last / outputs["html-report-path"]
    assert "999 TB" in html.read_text(encoding="utf-8")
    assert outputs["passed"] == "false"
    assert int(outputs["new-hallucinations"]) == REGRESSED
    assert set(json.loads(outputs["scores"])) == {"faithfulness", "hallucination", "relevance"}
    assert (action.last / outputs["report-path"]).is_file()
    decision = json.loads((action.last / ".ragaliq" / "decision.json").read_text())
    assert decision["passed"] is False
    assert len(decision["new_hallucinations"]) == REGRESSED
    comments = action.github.comments(REPO, 7)
    assert len(comments) == 1
    body = comments[0].body
    assert body.splitlines()[0] == "<!-- ragaliq:comment id=default -->"
    assert "999 TB" in body
    assert outputs["comment-url"].endswith(f"#issuecomment-{comments[0].id}")
    assert "999 TB" in summary
    assert f"::add-mask::{KEY}" in log
    assert log.count(KEY) == 1  # only in the mask command
    assert KEY not in body + summary
    assert 1 <= log.count("::error ") <= 10

    # The author fixes the PR: the same comment is edited, and the gate passes.
    write_dataset(action.workspace, cases())
    head2 = action.commit("feature: fix the prompt")
    action.github.add_pull(REPO, 7, base_sha=base, head_sha=head2)
    code, log, outputs, _ = action.run(event=pr_event(7, base, head2), event_name="pull_request")
    assert code == 0, log
    assert outputs["passed"] == "true"
    assert outputs["new-hallucinations"] == "0"
    comments = action.github.comments(REPO, 7)
    assert len(comments) == 1
    assert "999 TB" not in comments[0].body
    assert "::error " not in log


def test_a_fork_pr_without_write_access_still_gets_a_summary(setup):
    action = setup
    base = record_baseline_on_main(action)
    write_dataset(action.workspace, regress(cases()))
    head = action.commit("fork: change")
    action.github.add_pull(REPO, 8, base_sha=base, head_sha=head, head_repo="someone/rag-bot")
    action.github.fail("POST", r"/issues/8/comments$", 403)
    code, log, outputs, summary = action.run(
        event=pr_event(8, base, head, "someone/rag-bot"), event_name="pull_request"
    )
    assert code == 1, log
    assert "Traceback" not in log
    assert "::notice title=No PR comment::" in log
    assert "read-only" in log
    assert outputs["comment-url"] == ""
    assert "999 TB" in summary
    assert action.github.comments(REPO, 8) == []


def test_a_pr_that_edits_the_baseline_is_compared_with_the_base_version(setup):
    action = setup
    base = record_baseline_on_main(action)
    write_dataset(action.workspace, regress(cases()))
    baseline = action.workspace / ".ragaliq" / "baseline.json"
    data = json.loads(baseline.read_text())
    data["thresholds"] = {k: 0.0 for k in data["thresholds"]}
    baseline.write_text(json.dumps(data), encoding="utf-8")
    head = action.commit("feature: lower the bar")
    action.github.add_pull(REPO, 9, base_sha=base, head_sha=head)
    code, log, _, _ = action.run(event=pr_event(9, base, head), event_name="pull_request")
    assert code == 1, log
    assert "This change edits .ragaliq/baseline.json" in log


def test_a_base_with_a_bar_and_no_baseline_is_not_judged_on_thresholds_alone(setup):
    action = setup
    base = action.commit("main: the config, no baseline")
    action.github.add_pull(REPO, 3, base_sha=base, head_sha=base)
    code, log, outputs, summary = action.run(
        event=pr_event(3, base, base), event_name="pull_request"
    )
    assert code == 2, log
    said = f"no baseline for main@{base[:7]}"
    assert said in log and said in summary
    assert outputs["passed"] == "false"
    statuses = action.github.statuses(REPO, base, context=MAIN)
    assert [s.state for s in statuses] == ["error"]  # judging starts once the bar is read
    assert statuses[-1].description.startswith(f"main@{base[:7]}: not judged: no baseline")
    assert "No baseline yet" not in log
    assert action.anthropic.requests == []


def test_the_first_run_where_the_base_has_no_config_says_no_bar_protects_it(setup):
    action = setup
    (action.workspace / "ragaliq.yaml").unlink()
    base = action.commit("main: before the set-up")
    (action.workspace / "ragaliq.yaml").write_text(CONFIG, encoding="utf-8")
    head = action.commit("set up RagaliQ Gate")
    action.github.add_pull(REPO, 2, base_sha=base, head_sha=head)
    code, log, _, _ = action.run(event=pr_event(2, base, head), event_name="pull_request")
    assert code == 0, log
    body = action.github.comments(REPO, 2)[0].body
    assert f"No bar protects main@\u200b{base[:7]} yet" in body  # no @mention
    assert "No baseline yet" in body
    statuses = action.github.statuses(REPO, head, context=MAIN)
    assert statuses[-1].description.startswith(f"main@{base[:7]}: ")


@pytest.mark.parametrize("policy", ["", "  on_missing_key: skip\n"])
def test_a_pull_request_nobody_judged_is_never_green(setup, policy):
    action = setup
    config = CONFIG.replace("provider: auto", "provider: claude")
    (action.workspace / "ragaliq.yaml").write_text(
        config.replace("gate:\n", "gate:\n" + policy), encoding="utf-8"
    )
    record_baseline_on_main(action)
    judged = len(action.anthropic.requests)
    code, log, outputs, summary = action.run_unchanged_pull(4, anthropic_api_key="")
    assert code == 2, log
    assert "was not judged" in log
    assert outputs["passed"] == "false"
    assert "could not judge" in summary
    assert "could not judge" in action.github.comments(REPO, 4)[0].body
    head = git(action.workspace, "rev-parse", "HEAD")
    assert [s.state for s in action.github.statuses(REPO, head, context=MAIN)] == ["error"]
    assert len(action.anthropic.requests) == judged


def test_a_bad_key_fails_with_one_clear_error(setup):
    action = setup
    record_baseline_on_main(action)
    action.anthropic.api_key = "sk-ant-the-real-one"
    code, log, _, _ = action.run_unchanged_pull(5)
    assert code == 2, log
    assert "::error title=RagaliQ Gate::" in log
    assert "401" in log
    assert "Traceback" not in log


def test_a_bad_comment_id_or_html_path_fails_before_any_judge_call(setup):
    action = setup
    record_baseline_on_main(action)
    judged = len(action.anthropic.requests)
    code, log, _, _ = action.run_unchanged_pull(6, comment_id="bad id!")
    assert code == 2, log
    assert "::error title=RagaliQ Gate::" in log
    (action.workspace / "blocker").write_text("x", encoding="utf-8")
    action.commit("main: a file where the report's folder would be")
    code, log, _, _ = action.run_unchanged_pull(7, html_report="blocker/r.html")
    assert code == 2, log
    assert "blocker/r.html: cannot be written" in log
    assert "Traceback" not in log
    assert len(action.anthropic.requests) == judged


def test_a_run_that_cannot_judge_replaces_a_passing_comment(setup):
    action = setup
    base = record_baseline_on_main(action)
    action.github.add_pull(REPO, 12, base_sha=base, head_sha=base)
    head = base
    code, log, outputs, _ = action.run(event=pr_event(12, base, head), event_name="pull_request")
    assert code == 0, log
    assert "RagaliQ Gate passed" in action.github.comments(REPO, 12)[0].body

    # The next push regresses while the judge API refuses the key: nothing can be judged.
    write_dataset(action.workspace, regress(cases()))
    head = action.commit("feature: regress")
    action.anthropic.api_key = "sk-ant-another-key"
    code, log, outputs, summary = action.run(
        event=pr_event(12, base, head), event_name="pull_request"
    )
    assert code == 2, log
    assert outputs["passed"] == "false"
    (comment,) = action.github.comments(REPO, 12)
    assert "could not judge this change" in comment.body
    assert "401" in comment.body
    assert "passed" not in comment.body
    assert "could not judge" in summary


def test_a_shallow_checkout_reads_the_base_through_the_api_or_stops(setup):
    action = setup
    record_baseline_on_main(action)
    write_dataset(action.workspace, regress(cases()))
    head = action.commit("feature: regress")
    missing_base = "b" * 40  # a base commit no checkout has: the gate's job checked out nothing
    action.github.add_pull(REPO, 14, base_sha=missing_base, head_sha=head)

    # GitHub answers 404 for the commit too (or the token may not read the repository):
    # not "no baseline yet", but a stop with one line.
    code, log, outputs, _ = action.run(
        event=pr_event(14, missing_base, head),
        event_name="pull_request",
        workspace=action.trusted_checkout(None),
    )
    assert code == 2, log
    assert "does not have the base commit bbbbbbbbbbbb" in log and "trying the next source" in log
    assert "contents: read" in log and "fetch-depth: 0" in log
    assert outputs["passed"] == "false"
    assert "No baseline yet" not in log
    assert "This change edits" not in log

    # With the commit readable through the API, the gate runs and fails on the regression.
    for path in ("ragaliq.yaml", ".ragaliq/baseline.json"):
        original = git(action.workspace, "show", f"HEAD~1:{path}")
        action.github.add_file(REPO, path, original + "\n", ref=missing_base)
    code, log, outputs, _ = action.run(
        event=pr_event(14, missing_base, head),
        event_name="pull_request",
        workspace=action.trusted_checkout(None),
    )
    assert code == 1, log
    assert outputs["new-hallucinations"] == str(REGRESSED)


def test_all_five_evaluators_and_the_retrieval_section(setup):
    action = setup
    config = CONFIG.replace(
        "  relevance: {threshold: 0.5}\n",
        "  relevance: {threshold: 0.5}\n"
        "  context_precision: {enabled: true, threshold: 0.1}\n"
        "  context_recall: {enabled: true, threshold: 0.1}\n",
    )
    (action.workspace / "ragaliq.yaml").write_text(config, encoding="utf-8")
    rows = [
        {**row, "expected_facts": [row["context"][0].split(". ")[0] + "."]}
        for row in cases()
        if row["context"]
    ]
    write_dataset(action.workspace, rows)
    base = record_baseline_on_main(action)
    # The PR's retrieval loses the first chunk of three cases and brings an unrelated one.
    broken = [
        {**row, "context": [*row["context"][1:], "Our office is closed on public holidays."]}
        if i < 3
        else row
        for i, row in enumerate(rows)
    ]
    write_dataset(action.workspace, broken)
    head = action.commit("feature: a retriever change")
    action.github.add_pull(REPO, 15, base_sha=base, head_sha=head)
    code, log, outputs, _ = action.run(event=pr_event(15, base, head), event_name="pull_request")
    assert code in (0, 1), log
    scores = json.loads(outputs["scores"])
    assert set(scores) == {
        "faithfulness",
        "hallucination",
        "relevance",
        "context_precision",
        "context_recall",
    }
    body = action.github.comments(REPO, 15)[0].body
    assert "🔎 Retrieval:" in body
    assert "lost since the baseline" in body
    decision = json.loads((action.last / ".ragaliq" / "decision.json").read_text())
    assert {f["case_id"] for f in decision["lost_facts"]} <= {r["id"] for r in rows[:3]}
    assert decision["lost_facts"]
    assert any(c["reason"] for c in decision["irrelevant_chunks"])


RETRIEVAL_ONLY = """\
dataset: rag_outputs.jsonl
judge:
  provider: claude
evaluators:
  faithfulness: {enabled: false}
  hallucination: {enabled: false}
  relevance: {enabled: false}
  hit_rate: {k: 2}
  recall_at_k: {k: 2}
"""


def _retrieval_rows(narrowed: int = 0) -> list[dict]:
    """Six cases whose relevant chunk is retrieved first; the first ``narrowed`` lose it."""
    rows = []
    for i in range(6):
        kept = [] if i < narrowed else [{"id": f"guide-{i}", "text": f"Step {i} of the guide."}]
        rows.append(
            {
                "id": f"step-{i}",
                "query": f"What is step {i}?",
                "context": [*kept, {"id": f"blog-{i}", "text": f"A post about step {i}."}],
                "relevant_chunks": [f"guide-{i}"],
            }
        )
    return rows


def test_a_gate_whose_evaluators_ask_no_judge_needs_no_key(setup):
    action = setup
    (action.workspace / "ragaliq.yaml").write_text(RETRIEVAL_ONLY, encoding="utf-8")
    write_dataset(action.workspace, _retrieval_rows())
    action.commit("main: retrieval data")
    code, log, _, _ = update_baseline_on_main(action, anthropic_api_key="")
    assert code == 0, log
    assert "Baseline recorded" in log
    assert action.anthropic.requests == []
    base = action.commit("main: record the baseline")

    write_dataset(action.workspace, _retrieval_rows(narrowed=4))
    head = action.commit("feature: a narrower retriever")
    action.github.add_pull(REPO, 21, base_sha=base, head_sha=head)
    code, log, outputs, _ = action.run(
        event=pr_event(21, base, head), event_name="pull_request", anthropic_api_key=""
    )
    assert code == 1, log
    assert "was not judged" not in log
    assert outputs["passed"] == "false"
    body = action.github.comments(REPO, 21)[0].body
    assert "guide-0" in body and "guide-3" in body
    assert action.anthropic.requests == []

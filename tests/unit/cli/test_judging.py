from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragaliq.cli import Collaborators, cli
from tests.conftest import write_jsonl
from tests.fakes.judge import FakeJudge, Opener

CONTEXT = ["Annual plans can be refunded within 14 days of purchase."]


def setup(tmp_path: Path, rows, config: str = "") -> Path:
    write_jsonl(tmp_path / "data.jsonl", rows)
    path = tmp_path / "ragaliq.yaml"
    path.write_text("dataset: data.jsonl\njudge: {provider: offline}\n" + config, encoding="utf-8")
    return path


def faithful(i: int = 0) -> dict:
    return {
        "id": f"ok-{i}",
        "query": "Can annual plans be refunded?",
        "context": CONTEXT,
        "response": "Annual plans can be refunded within 14 days of purchase.",
    }


def hallucinated(i: int = 0) -> dict:
    return {
        **faithful(i),
        "id": f"bad-{i}",
        "response": "Annual plans can be refunded within 60 days of purchase.",
    }


@pytest.fixture
def runner(no_api_key):
    return CliRunner()


def test_run_passes_prints_the_table_and_writes_the_report(runner, tmp_path):
    config = setup(tmp_path, [faithful(i) for i in range(3)])
    out = tmp_path / "report.json"
    result = runner.invoke(cli, ["run", "--config", str(config), "-o", str(out)])
    assert result.exit_code == 0, result.output
    for column in ("evaluator", "score", "threshold", "pass rate", "status"):
        assert column in result.output
    assert "faithfulness" in result.output
    assert "heuristic" in result.output
    report = json.loads(out.read_text())
    assert report["schema_version"] == 1
    assert report["judge"]["provider"] == "offline"
    assert set(report["summary"]["evaluators"]) == {"faithfulness", "hallucination", "relevance"}
    assert report["summary"]["evaluators"]["faithfulness"]["score"] == 1.0
    assert set(report["usage"]) >= {"calls", "input_tokens", "cache_hits", "cost_usd"}
    case = report["cases"][0]
    assert set(case) >= {"id", "input_hash", "status", "claims", "results"}
    assert set(case["claims"][0]) >= {"text", "verdict", "evidence", "reason", "confidence"}


def test_run_exits_1_when_an_evaluator_is_below_its_threshold(runner, tmp_path):
    config = setup(tmp_path, [faithful(), hallucinated()])
    result = runner.invoke(cli, ["run", "--config", str(config)])
    assert result.exit_code == 1, result.output
    assert "FAIL" in result.output


def test_per_evaluator_threshold_decides(runner, tmp_path):
    lenient = "evaluators:\n  faithfulness: {threshold: 0.5}\n  hallucination: {threshold: 0.5}\n"
    config = setup(tmp_path, [faithful(), hallucinated()], lenient)
    result = runner.invoke(cli, ["run", "--config", str(config)])
    assert result.exit_code == 0, result.output


def test_run_exits_2_on_a_bad_config_with_one_line_and_no_traceback(runner, tmp_path):
    config = setup(tmp_path, [faithful()], "evaluators:\n  faithfulness: {threshold: 1.7}\n")
    result = runner.invoke(cli, ["run", "--config", str(config)])
    assert result.exit_code == 2
    assert result.stderr.strip() == (
        f"error: {config}: evaluators.faithfulness.threshold: must be between 0 and 1 (got 1.7)"
    )
    assert "Traceback" not in result.output


def test_debug_shows_the_traceback(runner, tmp_path):
    config = setup(tmp_path, [faithful()], "evaluators:\n  faithfulness: {threshold: 1.7}\n")
    result = runner.invoke(cli, ["--debug", "run", "--config", str(config)])
    assert result.exit_code == 2
    assert "Traceback" in result.stderr


def test_run_exits_2_on_a_bad_dataset(runner, tmp_path):
    config = setup(tmp_path, [{"id": "x", "query": "q", "context": ["c"]}])
    result = runner.invoke(cli, ["run", "--config", str(config)])
    assert result.exit_code == 2
    assert "data.jsonl:1: response: missing or empty; faithfulness, hallucination and " in (
        result.stderr
    )


def with_judge(judge) -> Collaborators:
    return Collaborators(env={}, open_judge=Opener(judge))


def test_run_exits_2_when_nothing_could_be_judged(runner, tmp_path):
    from ragaliq.errors import JudgeError

    broken = FakeJudge(fail={f"ok-{i}": JudgeError("judging failed") for i in range(2)})
    config = setup(tmp_path, [faithful(0), faithful(1)])
    result = runner.invoke(cli, ["run", "--config", str(config)], obj=with_judge(broken))
    assert result.exit_code == 2
    assert "no case could be judged" in result.stderr


def test_errors_fail_the_run_unless_ignored(runner, tmp_path):
    from ragaliq.errors import JudgeError

    flaky = with_judge(FakeJudge(fail={"ok-1": JudgeError("no verdict")}))
    rows = [faithful(0), faithful(1), faithful(2)]
    run = ["run", "--config", str(setup(tmp_path, rows))]
    assert runner.invoke(cli, run, obj=flaky).exit_code == 1
    ignore = setup(tmp_path, rows, "gate: {on_error: ignore}\n")
    assert runner.invoke(cli, ["run", "--config", str(ignore)], obj=flaky).exit_code == 0


def test_dataset_option_overrides_the_config(runner, tmp_path):
    config = setup(tmp_path, [hallucinated()])
    other = write_jsonl(tmp_path / "other.jsonl", [faithful()])
    result = runner.invoke(cli, ["run", "--config", str(config), "--dataset", str(other)])
    assert result.exit_code == 0, result.output


def test_validate_checks_without_judging(runner, tmp_path):
    config = setup(tmp_path, [faithful(0), faithful(1)])
    result = runner.invoke(cli, ["validate", "--config", str(config)])
    assert result.exit_code == 0
    assert "ok (2 cases, JSON Lines)" in result.output


def test_validate_reports_dataset_errors(runner, tmp_path):
    config = setup(tmp_path, [faithful(0), faithful(0)])
    result = runner.invoke(cli, ["validate", "--config", str(config)])
    assert result.exit_code == 2
    assert "duplicate id 'ok-0'" in result.stderr


def test_missing_dataset_setting(runner, tmp_path):
    path = tmp_path / "ragaliq.yaml"
    path.write_text("judge: {provider: offline}\n", encoding="utf-8")
    result = runner.invoke(cli, ["run", "--config", str(path)])
    assert result.exit_code == 2
    assert "no dataset given" in result.stderr


def test_schema_prints_json_schema(runner):
    result = runner.invoke(cli, ["schema"])
    assert result.exit_code == 0
    assert json.loads(result.output)["title"] == "ragaliq.yaml"


def test_an_unwritable_report_path_fails_before_judging(runner, tmp_path):
    config = setup(tmp_path, [faithful()])
    world = with_judge(FakeJudge())
    (tmp_path / "file").write_text("x", encoding="utf-8")
    args = ["run", "--config", str(config), "-o", str(tmp_path / "file/r")]
    result = runner.invoke(cli, args, obj=world)
    assert result.exit_code == 2
    assert "file/r: cannot be written" in result.stderr
    assert "Traceback" not in result.output
    assert world.open_judge.opened == []


def test_a_result_never_overwrites_an_input(runner, tmp_path):
    config = setup(tmp_path, [faithful()])
    before = config.read_text(encoding="utf-8")
    result = runner.invoke(cli, ["run", "--config", str(config), "-o", str(config)])
    assert result.exit_code == 2
    assert "is also an input of this command" in result.stderr
    assert config.read_text(encoding="utf-8") == before
    twins = runner.invoke(
        cli,
        [
            "gate",
            "--config",
            str(config),
            "-o",
            str(tmp_path / "x"),
            "--decision-out",
            str(tmp_path / "x"),
        ],
    )
    assert twins.exit_code == 2
    assert "two results would be written to this one file" in twins.stderr


def test_validate_finds_a_broken_comment_template_before_anything_is_judged(runner, tmp_path):
    config = setup(tmp_path, [faithful()], "templates: {comment: mine.md.j2}\n")
    missing = runner.invoke(cli, ["validate", "--config", str(config)])
    assert missing.exit_code == 2
    assert "templates.comment: mine.md.j2 not found" in missing.stderr
    (tmp_path / "mine.md.j2").write_text("{% extends 'comment.md.j2' %}\n{% block x %}", "utf-8")
    broken = runner.invoke(cli, ["validate", "--config", str(config)])
    assert broken.exit_code == 2
    assert "mine.md.j2:2:" in broken.stderr
    (tmp_path / "mine.md.j2").write_text("{% extends 'comment.md.j2' %}\n", "utf-8")
    assert runner.invoke(cli, ["validate", "--config", str(config)]).exit_code == 0


def test_ctrl_c_exits_130_and_leaves_the_old_report(runner, tmp_path):
    config = setup(tmp_path, [faithful()])
    out = tmp_path / "report.json"
    out.write_text("previous", encoding="utf-8")

    def interrupted(op, case):
        raise KeyboardInterrupt

    world = with_judge(FakeJudge(on_call=interrupted))
    result = runner.invoke(cli, ["run", "--config", str(config), "-o", str(out)], obj=world)
    assert result.exit_code == 130
    assert "interrupted" in result.stderr
    assert out.read_text(encoding="utf-8") == "previous"


def test_a_file_that_is_not_a_run_report_is_named_with_its_first_problem(runner, tmp_path):
    config = setup(tmp_path, [faithful()])
    report = tmp_path / "report.json"
    assert runner.invoke(cli, ["run", "--config", str(config), "-o", str(report)]).exit_code == 0
    data = json.loads(report.read_text(encoding="utf-8"))
    del data["summary"]
    report.write_text(json.dumps(data), encoding="utf-8")
    result = runner.invoke(cli, ["compare", "--report", str(report)])
    assert result.exit_code == 2
    assert f"{report}: not a valid run report: summary: missing required field" in result.stderr


def test_a_pr_that_turns_an_evaluator_off_is_still_judged_on_it(runner, tmp_path):
    config = setup(tmp_path, [faithful(), hallucinated()])
    report = tmp_path / "main.json"
    assert runner.invoke(cli, ["run", "--config", str(config), "-o", str(report)]).exit_code in (
        0,
        1,
    )
    baseline = tmp_path / ".ragaliq" / "baseline.json"
    recorded = runner.invoke(
        cli, ["baseline", "update", "--report", str(report), "--config", str(config)]
    )
    assert recorded.exit_code == 0, recorded.output
    assert json.loads(baseline.read_text())["policy"]["drops"]["hallucination"] == 0.05
    config.write_text(
        config.read_text(encoding="utf-8") + "evaluators: {hallucination: {enabled: false}}\n",
        encoding="utf-8",
    )
    out = tmp_path / "pr.json"
    gated = runner.invoke(
        cli,
        ["gate", "--config", str(config), "-o", str(out), "--comment-out", str(tmp_path / "c.md")],
    )
    assert "This PR turns off hallucination" in gated.output
    assert "hallucination" in json.loads(out.read_text())["summary"]["evaluators"]


def test_baseline_update_without_a_config_records_no_policy_and_says_so(
    runner, tmp_path, monkeypatch
):
    config = setup(tmp_path, [faithful()])
    report = tmp_path / "r.json"
    assert runner.invoke(cli, ["run", "--config", str(config), "-o", str(report)]).exit_code == 0
    monkeypatch.chdir(tmp_path / "..")
    out = tmp_path / "b.json"
    result = runner.invoke(cli, ["baseline", "update", "--report", str(report), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "no gate policy is recorded" in result.stderr
    assert json.loads(out.read_text())["policy"] is None


@pytest.mark.parametrize("how", ["--batch", "judge.batch"])
def test_batch_on_the_offline_judge_says_it_has_nothing_to_batch(runner, tmp_path, how):
    config = setup(tmp_path, [faithful()])
    if how == "judge.batch":
        config.write_text(
            "dataset: data.jsonl\njudge: {provider: offline, batch: true}\n", encoding="utf-8"
        )
    args = ["run", "--config", str(config), *(["--batch"] if how == "--batch" else [])]
    result = runner.invoke(cli, args)
    assert result.exit_code == 0, result.output
    assert (
        "notice: judge.batch (--batch) has no effect on the offline judge: it makes no API "
        "calls to send as batches, so the run was judged as usual" in result.stderr
    )
    plain = runner.invoke(cli, ["run", "--config", str(setup(tmp_path, [faithful()]))])
    assert "batch" not in plain.stderr


def test_a_gate_outside_a_git_repository_says_so(runner, tmp_path):
    config = setup(tmp_path, [faithful()])
    comment = str(tmp_path / "comment.md")
    result = runner.invoke(cli, ["gate", "--config", str(config), "--comment-out", comment])
    assert result.exit_code == 0, result.output
    assert (
        f"notice: {tmp_path} is not in a git repository, so the bar (config, baseline, "
        "templates) is read from the working tree" in result.stderr
    )
    shown = result.stdout + result.stderr
    assert "git cannot say" not in shown
    assert "judge cache" not in shown  # no commit can carry it: it is used

    named = runner.invoke(
        cli, ["gate", "--config", str(config), "--base", "main", "--comment-out", comment]
    )
    assert named.exit_code == 2
    assert (
        f"error: --base main: {tmp_path} is not in a git repository, so there is no commit to "
        "read the bar from; run the gate inside the repository, or pass --base none"
    ) in named.stderr


def test_a_gate_with_offline_judges_offline_whatever_the_config_names_and_needs_no_key(
    runner, tmp_path
):
    config = tmp_path / "ragaliq.yaml"
    write_jsonl(tmp_path / "data.jsonl", [faithful(), hallucinated()])
    config.write_text("dataset: data.jsonl\njudge: {provider: claude}\n", encoding="utf-8")
    comment = str(tmp_path / "comment.md")
    args = ["gate", "--config", str(config), "--base", "none", "--comment-out", comment]
    refused = runner.invoke(cli, args)
    assert refused.exit_code == 2  # Claude without a key
    result = runner.invoke(cli, [*args, "--offline"])
    assert result.exit_code in (0, 1), result.output
    shown = result.stdout + result.stderr
    assert "judge: offline/offline-heuristic" in shown
    assert "Judged by the offline judge on request (--offline)" in shown
    assert "60 days" in shown  # judged: the invented detail is listed


@pytest.mark.parametrize("place", ["~/elsewhere.json", "/tmp/elsewhere.json", "../out.json"])
def test_baseline_record_writes_only_where_the_gate_reads(runner, tmp_path, place):
    repo = tmp_path / "repo"
    repo.mkdir()
    config = setup(repo, [faithful()], config=f"baseline: {place}\n")
    result = runner.invoke(cli, ["baseline", "record", "--config", str(config)])
    assert result.exit_code == 2, result.output
    assert "baseline:" in result.stderr and "repository" in result.stderr
    assert not (tmp_path / "out.json").exists()


def test_results_are_never_written_through_a_folder_committed_as_a_link(
    runner, tmp_path, monkeypatch
):
    repo = tmp_path / "repo"
    repo.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    config = setup(repo, [faithful()])
    config.write_text("dataset: data.jsonl\njudge: {provider: offline, cache: false}\n")
    (repo / ".ragaliq").symlink_to(outside)
    monkeypatch.chdir(repo)
    result = runner.invoke(cli, ["run", "--config", str(config), "-o", ".ragaliq/report.json"])
    assert result.exit_code == 2, result.output
    assert ".ragaliq is a symbolic link" in result.stderr
    assert list(outside.iterdir()) == []


def test_run_says_why_it_fails_when_an_evaluator_could_score_no_case(runner, tmp_path):
    config = setup(tmp_path, [faithful(0), faithful(1)], "evaluators:\n  context_recall: {}\n")
    result = runner.invoke(cli, ["run", "--config", str(config)])
    assert result.exit_code == 1, result.output
    table = next(line for line in result.output.splitlines() if line.startswith("context_recall"))
    assert table.endswith("no score") and "error" not in table
    assert "failed: context_recall: no case could be scored" in result.output


def test_run_names_each_evaluator_below_its_threshold_and_the_case_errors(runner, tmp_path):
    from ragaliq.errors import JudgeError

    flaky = with_judge(FakeJudge(fail={"ok-1": JudgeError("no verdict")}, relevance={"ok-0": 0.2}))
    config = setup(tmp_path, [faithful(0), faithful(1)])
    result = runner.invoke(cli, ["run", "--config", str(config)], obj=flaky)
    assert result.exit_code == 1, result.output
    assert "failed: relevance: 0.200 is below the threshold 0.70" in result.output
    assert "failed: 1 case could not be judged (gate.on_error: fail)" in result.output


def test_validate_warns_when_context_recall_has_nothing_to_score(runner, tmp_path):
    config = setup(tmp_path, [faithful(0), faithful(1)], "evaluators:\n  context_recall: {}\n")
    result = runner.invoke(cli, ["validate", "--config", str(config)])
    assert result.exit_code == 0, result.output
    assert (
        "notice: context_recall has nothing to score: no case names expected_facts or an "
        "expected_answer" in result.stderr
    )
    with_facts = {**faithful(2), "expected_facts": ["Annual plans can be refunded."]}
    config = setup(tmp_path, [faithful(0), with_facts], "evaluators:\n  context_recall: {}\n")
    result = runner.invoke(cli, ["validate", "--config", str(config)])
    assert "nothing to score" not in result.output + result.stderr


def test_the_gates_comment_goes_beside_its_config_from_any_directory(runner, tmp_path, monkeypatch):
    project = tmp_path / "proj"
    project.mkdir()
    config = setup(project, [faithful()])
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(cli, ["gate", "--config", "proj/ragaliq.yaml"])
    assert result.exit_code == 0, result.output
    written = project / ".ragaliq" / "comment.md"
    assert written.is_file()
    assert not (tmp_path / ".ragaliq").exists()
    assert f"comment written to {written}" in result.output
    # A path given on the command line is the user's, read from where they are.
    result = runner.invoke(cli, ["gate", "--config", str(config), "--comment-out", "mine.md"])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "mine.md").is_file()

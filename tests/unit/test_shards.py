from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragaliq.cli import cli
from ragaliq.errors import ConfigError
from ragaliq.models import RunReport
from ragaliq.run_report import ReportFile
from ragaliq.shards import merge_reports, parse_shard, shard_index

QUICKSTART = Path(__file__).resolve().parents[2] / "examples" / "quickstart" / "ragaliq.yaml"


def test_parse_shard():
    assert tuple(parse_shard("2/8")) == (2, 8)
    assert str(parse_shard(" 1 / 4 ")) == "1/4"
    for bad in ("0/4", "5/4", "x", "1-4", "/4"):
        with pytest.raises(ConfigError, match="--shard"):
            parse_shard(bad)


def test_the_partition_is_stable_and_covers_every_case():
    ids = [f"case-{i}" for i in range(400)]
    shards = [shard_index(i, 4) for i in ids]
    assert set(shards) == {1, 2, 3, 4}
    assert all(50 < shards.count(k) < 150 for k in range(1, 5))
    assert shards == [shard_index(i, 4) for i in ids]  # no randomness between runs


def run_cli(*args: str) -> None:
    result = CliRunner().invoke(cli, list(args), env={"ANTHROPIC_API_KEY": ""})
    assert result.exit_code in (0, 1), result.output


def test_four_shards_merged_equal_one_unsharded_run(tmp_path):
    whole = tmp_path / "whole.json"
    run_cli("run", "--config", str(QUICKSTART), "-o", str(whole))
    parts = []
    for k in range(1, 5):
        part = tmp_path / f"shard-{k}.json"
        run_cli("run", "--config", str(QUICKSTART), "--shard", f"{k}/4", "-o", str(part))
        parts.append(part)
        assert RunReport.model_validate_json(part.read_text()).shard == f"{k}/4"
    merged = tmp_path / "merged.json"
    run_cli("merge", *map(str, parts), "-o", str(merged))
    a = RunReport.model_validate_json(whole.read_text())
    b = RunReport.model_validate_json(merged.read_text())
    assert b.summary == a.summary
    assert b.usage == a.usage
    assert b.judge == a.judge
    assert b.evaluators == a.evaluators
    assert sorted(b.cases, key=lambda c: c.id) == sorted(a.cases, key=lambda c: c.id)
    assert sum(len(RunReport.model_validate_json(p.read_text()).cases) for p in parts) == len(
        a.cases
    )


def report(tmp_path: Path) -> RunReport:
    path = tmp_path / "r.json"
    run_cli("run", "--config", str(QUICKSTART), "-o", str(path))
    return RunReport.model_validate_json(path.read_text())


def test_merge_refuses_overlapping_ids(tmp_path):
    r = report(tmp_path)
    with pytest.raises(ConfigError, match=r"is in both a\.json and b\.json"):
        merge_reports([r, r], names=["a.json", "b.json"])


def test_merge_refuses_mixed_provenance(tmp_path):
    r = report(tmp_path)
    half = len(r.cases) // 2
    a = r.model_copy(update={"cases": r.cases[:half]})
    other_judge = r.judge.model_copy(update={"model": "claude-x", "provider": "anthropic"})
    b = r.model_copy(update={"cases": r.cases[half:], "judge": other_judge})
    with pytest.raises(ConfigError, match="shards must share one judge"):
        merge_reports([a, b])
    c = r.model_copy(
        update={
            "cases": r.cases[half:],
            "evaluators": {
                n: e.model_copy(update={"threshold": 0.1}) for n, e in r.evaluators.items()
            },
        }
    )
    with pytest.raises(ConfigError, match="other evaluator settings"):
        merge_reports([a, c])


def invoke(*args: str):
    return CliRunner().invoke(cli, list(args), env={"ANTHROPIC_API_KEY": ""})


def strict_quickstart(tmp_path: Path) -> Path:
    """The quick start with a hallucination threshold that some shards miss on their own."""
    config = tmp_path / "ragaliq.yaml"
    text = QUICKSTART.read_text(encoding="utf-8").replace("threshold: 0.75", "threshold: 0.999")
    config.write_text(text, encoding="utf-8")
    shutil.copy(QUICKSTART.parent / "rag_outputs.jsonl", tmp_path / "rag_outputs.jsonl")
    return config


def test_a_shard_below_a_threshold_exits_0_and_the_merged_compare_decides(tmp_path):
    config = strict_quickstart(tmp_path)
    whole = invoke("run", "--config", str(config))
    assert whole.exit_code == 1, whole.output
    parts = []
    for k in range(1, 5):
        part = tmp_path / f"shard-{k}.json"
        result = invoke("run", "--config", str(config), "--shard", f"{k}/4", "-o", str(part))
        assert result.exit_code == 0, result.output
        parts.append(part)
    assert any(
        "applied to the merged report"
        in invoke("run", "--config", str(config), "--shard", f"{k}/4").output
        for k in range(1, 5)
    )
    merged = tmp_path / "merged.json"
    assert invoke("merge", *map(str, parts), "-o", str(merged)).exit_code == 0
    decision = tmp_path / "decision.json"
    compared = invoke(
        "compare", "--report", str(merged), "--config", str(config), "-o", str(decision)
    )
    assert compared.exit_code == 1, compared.output
    assert "No baseline yet: only thresholds apply" in decision.read_text(encoding="utf-8")
    assert "hallucination" in compared.output


@pytest.mark.parametrize("bad", ["5/4", "0/4", "two/4"])
def test_a_bad_shard_is_a_usage_error_without_a_traceback(bad):
    result = invoke("run", "--config", str(QUICKSTART), "--shard", bad)
    assert result.exit_code == 2
    assert "Invalid value for '--shard'" in result.stderr
    assert "Traceback" not in result.output + result.stderr


def shard_reports(tmp_path: Path, total: int) -> list[Path]:
    tmp_path.mkdir(exist_ok=True)
    parts = []
    for k in range(1, total + 1):
        part = tmp_path / f"shard-{k}.json"
        run_cli("run", "--config", str(QUICKSTART), "--shard", f"{k}/{total}", "-o", str(part))
        parts.append(part)
    return parts


def test_merging_some_of_the_shards_is_an_error_naming_the_missing_ones(tmp_path):
    parts = shard_reports(tmp_path, 3)
    merged = tmp_path / "merged.json"
    result = CliRunner().invoke(cli, ["merge", str(parts[0]), "-o", str(merged)])
    assert result.exit_code == 2
    assert "merge: shards 2/3 and 3/3 are missing" in result.stderr
    assert not merged.exists()


def test_merging_shards_of_different_splits_or_one_shard_twice_is_an_error(tmp_path):
    three = shard_reports(tmp_path / "three", 3)
    two = shard_reports(tmp_path / "two", 2)
    with pytest.raises(ConfigError, match=r"c is shard 3/3 of a suite split into 3 shards, a of"):
        merge_reports([ReportFile(p) for p in [*two, three[2]]], names=["a", "b", "c"])
    with pytest.raises(ConfigError, match="shard 1/2 is given twice"):
        merge_reports([ReportFile(p) for p in [two[0], two[0], two[1]]], names=["a", "b", "c"])
    whole = tmp_path / "whole.json"
    run_cli("run", "--config", str(QUICKSTART), "-o", str(whole))
    with pytest.raises(ConfigError, match="is not a shard's report"):
        merge_reports([ReportFile(p) for p in [two[0], whole]], names=["a", "b"])

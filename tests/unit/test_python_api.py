from __future__ import annotations

import contextlib
from pathlib import Path

import pytest

from ragaliq import evaluate
from ragaliq.config import GateConfig
from ragaliq.errors import ConfigError
from ragaliq.judges import JudgeChoice
from tests.conftest import make_case
from tests.fakes.judge import FakeJudge


class CacheOpener:
    """Opens a fake judge and keeps the judge cache it was given."""

    def __init__(self) -> None:
        self.cache_paths: list[Path | None] = []

    @contextlib.asynccontextmanager
    async def __call__(self, config: object, *, cache_path: Path | None = None, **_: object):
        self.cache_paths.append(cache_path)
        yield JudgeChoice(judge=FakeJudge())


def test_a_config_in_memory_keeps_its_cache_beside_the_current_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    opener = CacheOpener()
    config = GateConfig.model_validate({"judge": {"cache": True}})
    report = evaluate([make_case()], config=config, env={}, open_judge=opener)
    assert report.summary.cases == 1
    assert opener.cache_paths == [tmp_path / ".ragaliq" / "cache.sqlite"]


@pytest.mark.parametrize("cache_path", ["/tmp/elsewhere.sqlite", "~/cache.sqlite", "../up.sqlite"])
def test_a_config_in_memory_may_not_keep_its_cache_outside_the_folder(
    tmp_path, monkeypatch, cache_path
):
    monkeypatch.chdir(tmp_path)
    config = GateConfig.model_validate({"judge": {"cache": True, "cache_path": cache_path}})
    with pytest.raises(ConfigError, match=r"judge\.cache_path"):
        evaluate([make_case()], config=config, env={}, open_judge=CacheOpener())


def test_a_config_file_keeps_its_cache_beside_the_file(tmp_path):
    (tmp_path / "gate").mkdir()
    config_file = tmp_path / "gate" / "ragaliq.yaml"
    config_file.write_text("judge:\n  cache: true\n  cache_path: verdicts.sqlite\n")
    opener = CacheOpener()
    evaluate([make_case()], config=config_file, env={}, open_judge=opener)
    assert opener.cache_paths == [tmp_path / "gate" / "verdicts.sqlite"]


def test_a_config_that_keeps_no_cache_opens_none(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    opener = CacheOpener()
    config = GateConfig.model_validate({"judge": {"cache": False}})
    evaluate([make_case()], config=config, env={}, open_judge=opener)
    assert opener.cache_paths == [None]


def test_a_missing_config_file_names_the_config_argument(tmp_path):
    with pytest.raises(ConfigError) as missing:
        evaluate([make_case()], config=tmp_path / "x.yaml", env={}, open_judge=CacheOpener())
    message = str(missing.value)
    assert "x.yaml: not found" in message
    assert "pass the config= argument with the right path" in message
    assert "--config" not in message


def test_evaluate_takes_plain_dicts_in_any_shape_a_dataset_may_have(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    context = ["Unused bikes may be returned within 30 days of delivery."]
    ours = {"id": "r1", "query": "Can I return a bike?", "context": context, "response": context[0]}
    ragas = {"user_input": "Can I return a bike?", "retrieved_contexts": context, "response": "No."}
    report = evaluate([ours], config=GateConfig(), env={})
    assert [c.id for c in report.cases] == ["r1"]
    assert report.summary.evaluators["faithfulness"].score == 1.0
    report = evaluate([ragas, make_case(id="mine")], config=GateConfig(), env={})
    assert report.cases[0].id.startswith("can-i-return-a-bike-")
    assert report.cases[1].id == "mine"


def test_evaluate_names_each_bad_record_by_its_position(tmp_path, monkeypatch):
    from ragaliq.errors import DatasetError

    monkeypatch.chdir(tmp_path)
    good = {"id": "a", "query": "q?", "context": ["c"], "response": "c"}
    with pytest.raises(DatasetError) as raised:
        evaluate([good, {"id": "b", "query": "q?"}, 5, dict(good)], config=GateConfig(), env={})
    lines = str(raised.value).splitlines()
    assert lines[0].startswith("cases:2: response, context: both missing or empty")
    assert lines[1] == (
        "cases:3: a case must be a ragaliq.TestCase or a mapping of a dataset record's fields "
        "(got int)"
    )
    assert lines[2].startswith("cases:4: id: duplicate id 'a' (first used on line 1)")


CASE = {
    "id": "return-window",
    "query": "How long do I have to return a bike?",
    "context": ["Unused bikes may be returned within 30 days of delivery."],
    "response": "Unused bikes may be returned within 30 days of delivery.",
}


def test_without_a_config_evaluate_reads_the_folders_ragaliq_yaml_as_run_does(
    tmp_path, monkeypatch
):
    import json

    from click.testing import CliRunner

    from ragaliq.cli import cli

    monkeypatch.chdir(tmp_path)
    (tmp_path / "ragaliq.yaml").write_text(
        "dataset: cases.jsonl\n"
        "judge: {provider: offline, cache: true, cache_path: answers.sqlite}\n"
        "evaluators:\n  faithfulness: {threshold: 0.95}\n  relevance: {enabled: false}\n",
        encoding="utf-8",
    )
    (tmp_path / "cases.jsonl").write_text(json.dumps(CASE) + "\n", encoding="utf-8")
    opener = CacheOpener()
    report = evaluate([CASE], env={}, open_judge=opener)
    run = CliRunner().invoke(cli, ["run", "-o", "report.json"], env={"ANTHROPIC_API_KEY": ""})
    assert run.exit_code == 0, run.output
    by_run = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    thresholds = {name: info.threshold for name, info in report.evaluators.items()}
    assert thresholds == {"faithfulness": 0.95, "hallucination": 0.8}
    assert thresholds == {name: info["threshold"] for name, info in by_run["evaluators"].items()}
    assert opener.cache_paths == [tmp_path / "answers.sqlite"]
    assert not any("built-in defaults" in notice for notice in report.notices)


def test_without_a_config_or_a_ragaliq_yaml_evaluate_says_it_uses_the_defaults(
    tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    report = evaluate([CASE], env={}, open_judge=CacheOpener())
    from ragaliq.evaluators import EVALUATORS

    defaults = {cls.name: cls.default_threshold for cls in EVALUATORS}
    assert set(report.evaluators) == {"faithfulness", "hallucination", "relevance"}
    assert all(info.threshold == defaults[name] for name, info in report.evaluators.items())
    assert report.notices[0] == (
        "ragaliq.yaml is not there, so this run uses the built-in defaults; write one with "
        "`ragaliq init`, or pass the config= argument with the right path."
    )

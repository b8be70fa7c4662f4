"""Judging from Python: a pipeline's cases in, the run report out.

    from ragaliq import evaluate
    report = evaluate("rag_outputs.jsonl", config="ragaliq.yaml")
    report.summary.evaluators["faithfulness"].score

The same judge, cache and evaluators as ``ragaliq run``; the judge is opened and closed around the
run. :func:`evaluate_async` is the same for code that already runs an event loop.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ragaliq.config import DEFAULT_CONFIG_FILE, GateConfig, config_or_defaults
from ragaliq.dataset import cases_from_records, load_dataset
from ragaliq.evaluators import build_evaluators, response_judged_by
from ragaliq.inputs import local_cache_path
from ragaliq.judges.factory import JudgeOpener, open_judge
from ragaliq.judging import run_settings
from ragaliq.models import RunReport, TestCase
from ragaliq.runner import run_suite

__all__ = ["evaluate", "evaluate_async"]


def evaluate(
    cases: Iterable[TestCase | Mapping[str, Any]] | str | Path,
    *,
    config: GateConfig | str | Path | None = None,
    env: Mapping[str, str] | None = None,
    open_judge: JudgeOpener = open_judge,
) -> RunReport:
    """Judge ``cases`` (or a dataset file) with a config's judge and evaluators.

    Args:
        cases: Test cases (:class:`~ragaliq.TestCase`, or mappings of a dataset record's fields,
            RagaliQ's, RAGAS's or DeepEval's, checked as a file's records are), or the path of
            a dataset file (JSONL, JSON, YAML, CSV, RAGAS or DeepEval shaped).
        config: A config, or the path of a ``ragaliq.yaml``, which must exist. Without one,
            ``ragaliq.yaml`` of the current folder, as ``ragaliq run`` finds it; the built-in
            defaults (with a notice in the report) when there is none.
        env: Where the API key is looked up (``ANTHROPIC_API_KEY``); the process's environment
            by default.
        open_judge: Opens the judge (a fake one in tests).

    Raises:
        RagaliqError: the config or the dataset is invalid, or the judge cannot be used.
    """
    return asyncio.run(evaluate_async(cases, config=config, env=env, open_judge=open_judge))


async def evaluate_async(
    cases: Iterable[TestCase | Mapping[str, Any]] | str | Path,
    *,
    config: GateConfig | str | Path | None = None,
    env: Mapping[str, str] | None = None,
    open_judge: JudgeOpener = open_judge,
) -> RunReport:
    """:func:`evaluate`, awaited."""
    notice: str | None = None
    if isinstance(config, GateConfig):
        # A config held in memory is read as if it were a ragaliq.yaml in the current folder.
        config_path = Path.cwd() / DEFAULT_CONFIG_FILE
        gate_config = config
    else:
        # As a command finds it: the one named, else ./ragaliq.yaml, else the defaults.
        config_path = Path(DEFAULT_CONFIG_FILE if config is None else config)
        gate_config, notice = config_or_defaults(
            config_path, named=config is not None, named_by="the config= argument"
        )
    cache_path = local_cache_path(gate_config, config_path)
    if isinstance(cases, str | Path):
        loaded = load_dataset(
            Path(cases),
            dataset_format=gate_config.dataset_format,
            response_judged_by=response_judged_by(gate_config.evaluators),
        )
    else:
        loaded = cases_from_records(
            cases,
            dataset_format=gate_config.dataset_format,
            response_judged_by=response_judged_by(gate_config.evaluators),
        )
    environment = os.environ if env is None else env
    judge_config = gate_config.judge
    async with open_judge(judge_config, env=environment, cache_path=cache_path) as choice:
        report = await run_suite(
            loaded,
            judge=choice.judge,
            evaluators=build_evaluators(gate_config.evaluators),
            settings=run_settings(judge_config),
        )
        notices = (*((notice,) if notice else ()), *choice.all_notices(), *report.notices)
        return report.model_copy(update={"notices": notices})

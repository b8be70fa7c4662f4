"""RAG quality as test assertions: judge one case, fail with the claims behind the failure.

    from ragaliq.testing import assert_rag_quality, project_session
    assert_rag_quality(case)                 # the ragaliq.yaml of the current folder
    session = project_session(root=Path("."))  # the same, as a session of your own
    session.assert_quality(case, faithfulness=0.8, hallucination=0.9)

The pytest plugin (:mod:`ragaliq.pytest_plugin`) builds its session the same way, from pytest's
root folder or ``--ragaliq-config``, and adds a budget that stops the spending and a summary of
what was spent at the end.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragaliq.config import DEFAULT_CONFIG_FILE, GateConfig, config_or_defaults
from ragaliq.evaluators import build_evaluators
from ragaliq.inputs import local_cache_path
from ragaliq.judges.factory import JudgeOpener, open_judge
from ragaliq.models import CaseResult, TestCase, Usage
from ragaliq.redaction import redact
from ragaliq.report.filters import verdict_label
from ragaliq.runner import run_suite
from ragaliq.text.counts import plural

__all__ = [
    "BudgetSpentError",
    "JudgeSession",
    "QualityFailure",
    "assert_rag_quality",
    "project_session",
]

MAX_LISTED = 10
"""Claims, facts or chunks listed in a failure before the rest are counted."""


class QualityFailure(AssertionError):
    """A case scored below a minimum; the message lists the claims behind it."""


class BudgetSpentError(RuntimeError):
    """The session's budget is spent; no more case is judged."""


@dataclass(kw_only=True)
class JudgeSession:
    """Judges cases one by one with a config's judge, and keeps count of what it spent."""

    config: GateConfig = field(default_factory=GateConfig)
    env: Mapping[str, str] = field(default_factory=lambda: os.environ)
    cache_path: Path | None = None
    budget_usd: float | None = None
    """Judge no more case once this much is spent."""
    open_judge: JudgeOpener = open_judge
    usage: Usage = field(default_factory=Usage)
    judged: int = 0
    notices: list[str] = field(default_factory=list)

    def judge(self, case: TestCase, **minimums: float | None) -> CaseResult:
        """Judge one case with every evaluator named in ``minimums`` (or the config's).

        Raises:
            BudgetSpentError: the budget was spent before this case.
            RagaliqError: the judge cannot be used at all.
        """
        return self._judge_now(case, self._sections(minimums))

    def assert_quality(self, case: TestCase, **minimums: float | None) -> CaseResult:
        """Judge ``case``; fail when a score is below its minimum or cannot be had.

        ``minimums`` name evaluators (``faithfulness=0.8``); without any, the config's enabled
        evaluators and thresholds apply.

        Raises:
            QualityFailure: with every failing score and the claims, facts or chunks behind it.
        """
        __tracebackhide__ = True
        config = self._sections(minimums)
        result = self._judge_now(case, config)
        evaluators = {e.name: e for e in build_evaluators(config.evaluators)}
        problems: list[str] = []
        for name, evaluation in result.results.items():
            # The evaluator's own threshold: the minimum named here, else the config's, else
            # the evaluator's default, resolved in one place (never a section's raw None).
            floor = evaluators[name].threshold
            if evaluation.status == "error":
                problems.append(f"{name}: could not be judged: {evaluation.reasoning}")
            elif evaluation.status == "skipped":
                if name in minimums:
                    problems.append(f"{name}: nothing to score: {evaluation.reasoning}")
            elif evaluation.score is not None and evaluation.score < floor:
                problems.append(
                    f"{name}: {evaluation.score:.3f} is below the threshold {floor:g}: "
                    f"{evaluation.reasoning}"
                    + _listed(evaluators[name].describe_shortfall(result, label=verdict_label))
                )
        if problems:
            raise QualityFailure(redact(f"case {case.id!r}: " + "\n".join(problems)))
        return result

    def _sections(self, minimums: Mapping[str, float | None]) -> GateConfig:
        """The config, with only the evaluators named (when any), at their minimums."""
        if not minimums:
            return self.config
        update: dict[str, Any] = {}
        for name, options in self.config.evaluators.sections():
            wanted = name in minimums
            change: dict[str, Any] = {"enabled": wanted}
            if wanted and minimums[name] is not None:
                change["threshold"] = minimums[name]
            update[name] = options.model_copy(update=change)
        unknown = sorted(set(minimums) - set(update))
        if unknown:
            raise ValueError(f"unknown evaluators {unknown}; choose from {sorted(update)}")
        evaluators = self.config.evaluators.model_copy(update=update)
        return self.config.model_copy(update={"evaluators": evaluators})

    def _judge_now(self, case: TestCase, config: GateConfig) -> CaseResult:
        if self.budget_usd is not None and self.usage.cost_usd >= self.budget_usd:
            raise BudgetSpentError(
                f"the RagaliQ budget of ${self.budget_usd:g} is spent "
                f"(${self.usage.cost_usd:.4f} on {plural(self.judged, 'case')})"
            )
        return asyncio.run(self._judge(case, config))

    async def _judge(self, case: TestCase, config: GateConfig) -> CaseResult:
        judge = config.judge
        async with self.open_judge(judge, env=self.env, cache_path=self.cache_path) as choice:
            report = await run_suite(
                [case], judge=choice.judge, evaluators=build_evaluators(config.evaluators)
            )
            for notice in choice.all_notices():
                if notice not in self.notices:
                    self.notices.append(notice)
        self.usage += report.usage
        self.judged += 1
        return report.cases[0]


def _listed(lines: list[str]) -> str:
    """What an evaluator says brought its score down, one item per line, the first few."""
    if not lines:
        return ""
    shown = [f"  - {line}" for line in lines[:MAX_LISTED]]
    if len(lines) > MAX_LISTED:
        shown.append(f"  - ... and {len(lines) - MAX_LISTED} more")
    return "\n" + "\n".join(shown)


def project_session(
    *,
    root: Path,
    config_path: Path | None = None,
    named_by: str = "--config",
    judge: Mapping[str, Any] | None = None,
    cache_path: Path | None = None,
    budget_usd: float | None = None,
) -> JudgeSession:
    """A session that judges with a project's config: its judge, evaluators and judge cache.

    The pytest plugin's session and a direct :func:`assert_rag_quality` are both built here.

    Args:
        root: The project's folder; its ``ragaliq.yaml`` is the config unless ``config_path``
            names one, and the built-in defaults apply when there is none.
        config_path: A config named explicitly, which must exist.
        named_by: How the user named ``config_path``, for the message when it is missing.
        judge: Judge settings over the config's (``provider``, ``model``, ``cache``).
        cache_path: The judge cache file, instead of the config's ``judge.cache_path``.
        budget_usd: Judge no more case once this much is spent.

    Raises:
        ConfigError: the config is missing (when named), invalid, or keeps its judge cache
            outside its repository.
        RepositoryError: the judge cache passes through a symbolic link.
    """
    path = config_path or root / DEFAULT_CONFIG_FILE
    config, _ = config_or_defaults(path, named=config_path is not None, named_by=named_by)
    if judge:
        config = config.model_copy(update={"judge": config.judge.model_copy(update=dict(judge))})
    if cache_path is None:
        cache_path = local_cache_path(config, path)
    return JudgeSession(config=config, cache_path=cache_path, budget_usd=budget_usd)


_defaults: dict[Path, JudgeSession] = {}
"""The session of each folder :func:`assert_rag_quality` was called from without one."""


def assert_rag_quality(
    case: TestCase, *, session: JudgeSession | None = None, **minimums: float | None
) -> CaseResult:
    """Judge ``case`` and fail with the claims behind any score below its minimum.

    Without ``session``, the :func:`project_session` of the current folder judges: its
    ``ragaliq.yaml`` (the built-in defaults without one), kept for every later call from that
    folder. The pytest plugin's ``assert_rag_quality`` fixture passes its own session, which
    also honours ``--ragaliq-config`` and the plugin's other options.
    """
    __tracebackhide__ = True
    if session is None:
        root = Path.cwd()
        if root not in _defaults:
            _defaults[root] = project_session(root=root)
        session = _defaults[root]
    return session.assert_quality(case, **minimums)

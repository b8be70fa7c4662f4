"""The glue shared by the CLI and the action: load, judge, compare, render.

Each function takes its collaborators as parameters and returns plain models; only the CLI and
the action build real objects and turn results into exit codes and messages.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from ragaliq.baseline import Baseline
from ragaliq.compare import GateDecision, GateRules, compare
from ragaliq.config import GateConfig, JudgeConfig, load_config
from ragaliq.dataset import load_dataset
from ragaliq.errors import ConfigError
from ragaliq.evaluators import build_evaluators
from ragaliq.judges import build_judge
from ragaliq.models import RunReport, TestCase
from ragaliq.outcome import ExitCode
from ragaliq.report.markdown import check_templates, render_comment, render_summary
from ragaliq.runner import Progress, RunSettings, run_suite

__all__ = [
    "GateOutcome",
    "Inputs",
    "gate_exit_code",
    "judge_inputs",
    "keep_baseline_evaluators",
    "load_inputs",
    "run_gate",
]


@dataclass(frozen=True, kw_only=True)
class Inputs:
    """A validated config and dataset, ready to judge."""

    config: GateConfig
    config_path: Path
    config_dir: Path
    dataset_path: Path
    cases: list[TestCase]

    @property
    def comment_template(self) -> Path | None:
        """Your PR comment template, if the config names one."""
        return self._template(self.config.templates.comment)

    @property
    def summary_template(self) -> Path | None:
        """Your job summary template, if the config names one."""
        return self._template(self.config.templates.summary)

    def _template(self, name: str | None) -> Path | None:
        return self.config.resolve(name, base=self.config_dir) if name else None

    @property
    def files(self) -> tuple[Path, ...]:
        """Every file these inputs were read from: the config, the dataset and any templates."""
        templates = (self.comment_template, self.summary_template)
        return (self.config_path, self.dataset_path, *(t for t in templates if t is not None))

    @property
    def baseline_path(self) -> Path:
        """The baseline file named by the config."""
        return self.config.resolve(self.config.baseline, base=self.config_dir)


def load_inputs(config_path: Path, dataset: Path | None) -> Inputs:
    """Load and validate the config and the dataset it names (or ``dataset``)."""
    config = load_config(config_path)
    config_dir = config_path.resolve().parent
    if dataset is None:
        if config.dataset is None:
            raise ConfigError(
                f"{config_path}: dataset: no dataset given; set 'dataset' in the config "
                "or pass --dataset"
            )
        dataset = config.resolve(config.dataset, base=config_dir)
    inputs = Inputs(
        config=config,
        config_path=config_path,
        config_dir=config_dir,
        dataset_path=dataset,
        cases=load_dataset(dataset),
    )
    check_templates(comment=inputs.comment_template, summary=inputs.summary_template)
    return inputs


def keep_baseline_evaluators(
    inputs: Inputs, baseline: Baseline | None
) -> tuple[Inputs, tuple[str, ...]]:
    """The inputs with every evaluator the baseline has turned on, and a notice if one was off.

    A PR cannot lower its own bar by turning an evaluator off: until it is merged and the
    baseline updated, what the baseline measured is still measured.
    """
    if baseline is None:
        return inputs, ()
    sections = inputs.config.evaluators
    off = [
        name
        for name in sorted(baseline.thresholds)
        if name in type(sections).model_fields and not getattr(sections, name).enabled
    ]
    if not off:
        return inputs, ()
    turned_on = {name: getattr(sections, name).model_copy(update={"enabled": True}) for name in off}
    config = inputs.config.model_copy(update={"evaluators": sections.model_copy(update=turned_on)})
    notice = (
        f"This PR turns off {', '.join(off)}; the baseline has "
        f"{'it' if len(off) == 1 else 'them'}, so the gate still judges "
        f"{'it' if len(off) == 1 else 'them'} until the PR is merged and the baseline updated."
    )
    return dataclasses.replace(inputs, config=config), (notice,)


def judge_inputs(
    inputs: Inputs,
    *,
    env: Mapping[str, str],
    judge_config: JudgeConfig | None = None,
    on_progress: Callable[[Progress], None] | None = None,
) -> RunReport:
    """Judge the inputs' cases with the configured judge (or ``judge_config``) and evaluators."""
    config = judge_config or inputs.config.judge
    choice = build_judge(config, env=env, base_dir=inputs.config_dir)
    evaluators = build_evaluators(inputs.config.evaluators)
    settings = RunSettings(
        concurrency=config.concurrency,
        budget_usd=config.budget_usd,
        on_progress=on_progress,
        repeat=config.repeat,
    )

    async def go() -> RunReport:
        try:
            report = await run_suite(
                inputs.cases, judge=choice.judge, evaluators=evaluators, settings=settings
            )
        finally:
            await choice.judge.aclose()
        return report.model_copy(update={"notices": (*choice.all_notices(), *report.notices)})

    return asyncio.run(go())


@dataclass(frozen=True, kw_only=True)
class GateOutcome:
    """A finished gate: the run, the decision, what to show and how to exit."""

    report: RunReport
    decision: GateDecision
    comment: str
    summary: str
    exit_code: ExitCode


def gate_exit_code(report: RunReport, decision: GateDecision) -> ExitCode:
    """2 when nothing could be judged or the run stopped early, else 0 or 1 by the decision."""
    judged = any(s.judged for s in report.summary.evaluators.values())
    if report.stopped_early or not judged:
        return ExitCode.UNJUDGED
    return ExitCode.PASSED if decision.passed else ExitCode.FAILED


def run_gate(
    inputs: Inputs,
    *,
    report: RunReport,
    baseline: Baseline | None,
    comment_id: str = "default",
    details_url: str | None = None,
    extra_notices: tuple[str, ...] = (),
) -> GateOutcome:
    """Compare a finished run with the baseline and render the comment and the summary."""
    decision = compare(report, baseline, rules=GateRules.from_config(inputs.config))
    if extra_notices:
        decision = decision.model_copy(update={"notices": (*decision.notices, *extra_notices)})
    comment = render_comment(
        decision,
        comment_id=comment_id,
        template=inputs.comment_template,
        details_url=details_url,
    )
    summary = render_summary(decision, report=report, template=inputs.summary_template)
    return GateOutcome(
        report=report,
        decision=decision,
        comment=comment,
        summary=summary,
        exit_code=gate_exit_code(report, decision),
    )

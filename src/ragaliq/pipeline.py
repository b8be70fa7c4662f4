"""The glue shared by the CLI and the action: load, judge, compare, render.

Each function takes its collaborators as parameters and returns plain models; only the CLI and
the action build real objects and turn results into exit codes and messages.

Two ways in: :func:`load_inputs` reads a config and its dataset from the working tree (``run``,
``validate``); :func:`load_gate_inputs` reads the bar from a trusted source (the base commit) and
only the dataset from the change (``gate`` and the action on a pull request).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from ragaliq.baseline import Baseline
from ragaliq.config import GateConfig, JudgeConfig
from ragaliq.dataset import DatasetInfo, DatasetReader, read_dataset
from ragaliq.errors import ConfigError
from ragaliq.evaluators import build_evaluators
from ragaliq.exits import ExitCode, gate_exit_code
from ragaliq.gate import GateDecision, GateRules, compare
from ragaliq.judges import JudgeChoice
from ragaliq.judges.factory import describe_judge
from ragaliq.models import Progress, RunReport, RunSummary, TestCase, Usage
from ragaliq.report.markdown import UserTemplate, check_template, render_comment, render_summary
from ragaliq.repository import WorkTree, git_toplevel, is_tracked, repo_path
from ragaliq.runner import RunSettings, run_suite
from ragaliq.trust import Bar, judge_of_baseline, read_bar

__all__ = [
    "GateRun",
    "Inputs",
    "baseline_judge",
    "empty_report",
    "judge_inputs",
    "keep_baseline_evaluators",
    "load_gate_inputs",
    "load_inputs",
    "local_cache_path",
    "local_root",
    "repo_relative",
    "run_gate",
    "run_settings",
]


@dataclass(frozen=True, kw_only=True)
class Inputs:
    """A validated config and dataset, ready to judge."""

    config: GateConfig
    root: Path
    """The repository the config belongs to; config paths stay inside it."""
    config_path: Path
    dataset_path: Path
    cases: list[TestCase]
    comment_template: UserTemplate | None = None
    summary_template: UserTemplate | None = None
    cache_path: Path | None = None
    """The judge cache, when the config keeps one."""
    baseline: Baseline | None = None
    """With :func:`load_gate_inputs`: the baseline read with the bar."""
    baseline_file: str = ""
    notices: tuple[str, ...] = ()
    """What the reading of the inputs found worth saying (proposed settings, a refused cache)."""
    dataset_info: DatasetInfo | None = None
    """How the dataset was read: its format, its shape of fields, its number of cases."""

    @property
    def files(self) -> tuple[Path, ...]:
        """Files these inputs were read from, which no result may overwrite."""
        return (self.config_path, self.dataset_path)


def local_root(config_path: Path) -> Path:
    """The repository a local config belongs to: git's top folder, else the config's folder."""
    folder = config_path.resolve().parent
    return git_toplevel(folder) or folder


def local_cache_path(config: GateConfig, config_path: Path) -> Path | None:
    """The judge cache a local config names, or None when the config keeps none.

    Raises:
        ConfigError: the path leaves the repository.
        RepositoryError: it is, or passes through, a symbolic link, or is not a regular file.
    """
    if not config.judge.cache:
        return None
    root = local_root(config_path)
    folder = str(Path(repo_relative(root, config_path, what="--config")).parent)
    path = repo_path(
        config.judge.cache_path, folder="" if folder == "." else folder, what="judge.cache_path"
    )
    WorkTree(root).check(path, what="judge.cache_path")
    return root / path


def repo_relative(root: Path, path: Path, *, what: str) -> str:
    """``path`` (as given on the command line) as a path from the repository's root.

    Raises:
        ConfigError: it is outside the repository.
    """
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError as exc:
        raise ConfigError(
            f"{what} {path}: must be inside the repository {root}, where the gate reads it"
        ) from exc


def load_inputs(config_path: Path, dataset: Path | None, *, keep_cases: bool = True) -> Inputs:
    """Load and validate the config and the dataset it names (or ``dataset``), from disk.

    Paths in the config are repository paths (relative to the config, inside the repository,
    never through a symbolic link); ``dataset``, given on the command line, is taken as it is.
    With ``keep_cases=False`` the dataset is only checked, as a stream: ``cases`` stays empty and
    ``dataset_info`` counts them.
    """
    root = local_root(config_path)
    work = WorkTree(root)
    bar = read_bar(
        trusted=work,
        work=work,
        config_file=repo_relative(root, config_path, what="--config"),
        with_baseline=False,
        config_name=str(config_path),
    )
    return _inputs(
        bar,
        work=work,
        config_path=config_path,
        dataset=dataset,
        refuse_tracked=False,
        keep_cases=keep_cases,
    )


def load_gate_inputs(
    bar: Bar,
    *,
    work: WorkTree,
    config_path: Path,
    dataset: str | Path | None,
) -> Inputs:
    """The inputs of a gate run: the bar as read, and the change's dataset.

    The judge cache must not be a file the change's tree tracks (a forged cache could pass a
    regression); such a cache is not used, and a notice says so.
    """
    return _inputs(bar, work=work, config_path=config_path, dataset=dataset, refuse_tracked=True)


def _inputs(
    bar: Bar,
    *,
    work: WorkTree,
    config_path: Path,
    dataset: str | Path | None,
    refuse_tracked: bool,
    keep_cases: bool = True,
) -> Inputs:
    config = bar.config
    notices = list(bar.notices)
    if isinstance(dataset, Path):
        dataset_path = dataset
    else:
        raw = dataset or config.dataset
        if raw is None:
            raise ConfigError(
                f"{bar.config_file}: dataset: no dataset given; set 'dataset' in the config or "
                "pass --dataset"
            )
        what = "dataset" if dataset else f"{bar.config_file}: dataset"
        relative = repo_path(raw, folder="" if dataset else bar.config_folder, what=what)
        work.check(relative, what=what)
        dataset_path = work.local(relative)
    comment = _template(bar, config.templates.comment, "templates.comment")
    summary = _template(bar, config.templates.summary, "templates.summary")
    check_template(comment)
    check_template(summary, summary=True)
    cache_path = None
    if config.judge.cache:
        cache_file = bar.path(config.judge.cache_path, what="judge.cache_path")
        work.check(cache_file, what="judge.cache_path")
        if refuse_tracked and is_tracked(work.root, cache_file):
            notices.append(
                f"The judge cache {cache_file} is tracked by this change's tree, so it is not "
                "used: cached verdicts must come from the gate's own runs, not from a commit."
            )
        else:
            cache_path = work.local(cache_file)
    if keep_cases:
        read = read_dataset(dataset_path, dataset_format=config.dataset_format)
        cases, info = read.cases, read.info
    else:
        cases, info = [], DatasetReader(dataset_path, dataset_format=config.dataset_format).check()
    notices += info.notices
    return Inputs(
        config=config,
        root=work.root,
        config_path=config_path,
        dataset_path=dataset_path,
        cases=cases,
        dataset_info=info,
        comment_template=comment,
        summary_template=summary,
        cache_path=cache_path,
        baseline=bar.baseline,
        baseline_file=bar.baseline_file,
        notices=tuple(notices),
    )


def _template(bar: Bar, name: str | None, what: str) -> UserTemplate | None:
    """A template the config names, read where the bar is read."""
    if not name:
        return None
    return UserTemplate.read(bar.source, bar.path(name, what=what), what=what)


def keep_baseline_evaluators(
    inputs: Inputs, baseline: Baseline | None
) -> tuple[Inputs, tuple[str, ...]]:
    """The inputs with every evaluator the baseline has turned on, and a notice if one was off.

    A change cannot lower its own bar by turning an evaluator off: until it is merged and the
    baseline updated, what the baseline measured is still measured.
    """
    if baseline is None:
        return inputs, ()
    sections = inputs.config.evaluators
    off = sorted(
        name
        for name, options in sections.sections()
        if name in baseline.thresholds and not options.enabled
    )
    if not off:
        return inputs, ()
    turned_on = {name: sections.section(name).model_copy(update={"enabled": True}) for name in off}
    config = inputs.config.model_copy(update={"evaluators": sections.model_copy(update=turned_on)})
    notice = (
        f"This PR turns off {', '.join(off)}; the baseline has "
        f"{'it' if len(off) == 1 else 'them'}, so the gate still judges "
        f"{'it' if len(off) == 1 else 'them'} until the PR is merged and the baseline updated."
    )
    return dataclasses.replace(inputs, config=config), (notice,)


def baseline_judge(
    inputs: Inputs, baseline: Baseline | None
) -> tuple[JudgeConfig, tuple[str, ...]]:
    """The judge that makes this run comparable with ``baseline``, and a notice if it changed."""
    judge, notice = judge_of_baseline(inputs.config.judge, baseline)
    return judge, (notice,) if notice else ()


def run_settings(
    config: JudgeConfig, on_progress: Callable[[Progress], None] | None = None
) -> RunSettings:
    """How a run may use the judge a config describes."""
    return RunSettings(
        concurrency=config.concurrency,
        budget_usd=config.budget_usd,
        on_progress=on_progress,
        repeat=config.repeat,
    )


async def judge_inputs(
    inputs: Inputs,
    *,
    choice: JudgeChoice,
    judge_config: JudgeConfig,
    on_progress: Callable[[Progress], None] | None = None,
) -> RunReport:
    """Judge the inputs' cases with ``choice`` and the configured evaluators.

    ``judge_config`` (the config the judge was opened from) bounds the run: concurrency, budget
    and repeated verifications.
    """
    report = await run_suite(
        inputs.cases,
        judge=choice.judge,
        evaluators=build_evaluators(inputs.config.evaluators),
        settings=run_settings(judge_config, on_progress),
    )
    return report.model_copy(update={"notices": (*choice.all_notices(), *report.notices)})


def empty_report(inputs: Inputs, *, env: Mapping[str, str]) -> RunReport:
    """The report of a run with no case (a shard no case falls in)."""
    infos = {e.name: e.info() for e in build_evaluators(inputs.config.evaluators)}
    return RunReport(
        judge=describe_judge(inputs.config.judge, env=env),
        evaluators=infos,
        summary=RunSummary.of([], infos),
        usage=Usage(),
        cases=(),
    )


@dataclass(frozen=True, kw_only=True)
class GateRun:
    """A finished gate: the run, the decision, what to show and how to exit."""

    report: RunReport
    decision: GateDecision
    comment: str
    summary: str
    exit_code: ExitCode


def run_gate(
    inputs: Inputs,
    *,
    report: RunReport,
    baseline: Baseline | None,
    comment_id: str = "default",
    details_url: str | None = None,
    extra_notices: tuple[str, ...] = (),
) -> GateRun:
    """Compare a finished run with the baseline and render the comment and the summary."""
    decision = compare(report, baseline, rules=GateRules.from_config(inputs.config))
    notices = (*inputs.notices, *extra_notices)
    if notices:
        decision = decision.model_copy(update={"notices": (*decision.notices, *notices)})
    comment = render_comment(
        decision,
        comment_id=comment_id,
        template=inputs.comment_template,
        details_url=details_url,
    )
    summary = render_summary(decision, report=report, template=inputs.summary_template)
    return GateRun(
        report=report,
        decision=decision,
        comment=comment,
        summary=summary,
        exit_code=gate_exit_code(report, decision),
    )

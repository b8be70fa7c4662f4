"""The glue shared by the CLI and the action: load, judge, compare, render.

Each function takes its collaborators as parameters and returns plain models; only the CLI and
the action build real objects and turn results into exit codes and messages.

Two ways in: :func:`load_inputs` reads a config and its dataset from the working tree (``run``,
``validate``); :func:`load_gate_inputs` reads the bar from a trusted source (the base commit) and
only the dataset from the change (``gate`` and the action on a pull request).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from ragaliq._files import open_atomic
from ragaliq.baseline import Baseline
from ragaliq.config import GateConfig, JudgeConfig
from ragaliq.dataset import DatasetCases, DatasetInfo, DatasetReader
from ragaliq.errors import ConfigError
from ragaliq.evaluators import build_evaluators, response_judged_by
from ragaliq.gate import GateDecision
from ragaliq.judges import JudgeChoice
from ragaliq.judges.factory import JudgeOpener, describe_judge
from ragaliq.models import (
    CaseResult,
    Progress,
    ReportHead,
    RunReport,
    RunSummary,
    TestCase,
    Usage,
)
from ragaliq.policy import Budget
from ragaliq.redaction import register_secret
from ragaliq.report.html import write_html_report
from ragaliq.report.markdown import UserTemplate, check_template
from ragaliq.repository import WorkTree, git_toplevel, is_tracked, repo_path
from ragaliq.run_report import DISCARD, ReportWriter, TextSink
from ragaliq.runner import RunSettings, stream_suite
from ragaliq.trust import Bar, read_bar


class Cases(Protocol):
    """A dataset's cases: iterable again and again, and counted (a list, a DatasetCases)."""

    def __iter__(self) -> Iterator[TestCase]: ...

    def __len__(self) -> int: ...


__all__ = [
    "CaseSink",
    "Cases",
    "Inputs",
    "JudgedRun",
    "empty_report",
    "judge_inputs",
    "judge_with",
    "kept_report",
    "load_gate_inputs",
    "load_inputs",
    "load_inputs_from",
    "local_cache_path",
    "local_root",
    "repo_relative",
    "run_settings",
    "write_html",
]


@dataclass(frozen=True, kw_only=True)
class Inputs:
    """A validated config and dataset, ready to judge."""

    config: GateConfig
    root: Path
    """The repository the config belongs to; config paths stay inside it."""
    config_path: Path
    dataset_path: Path
    cases: Cases
    """The dataset's cases: read from the file as they are judged, or a list in memory."""
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
    The dataset is validated whole, then read again case by case as it is judged. With
    ``keep_cases=False`` it is only checked: ``cases`` stays empty and ``dataset_info`` counts
    them.
    """
    root = local_root(config_path)
    return load_inputs_from(
        WorkTree(root),
        config_file=repo_relative(root, config_path, what="--config"),
        config_path=config_path,
        dataset=dataset,
        keep_cases=keep_cases,
        config_name=str(config_path),
    )


def load_inputs_from(
    work: WorkTree,
    *,
    config_file: str,
    config_path: Path,
    dataset: str | Path | None,
    keep_cases: bool = True,
    config_name: str | None = None,
) -> Inputs:
    """:func:`load_inputs` for a config at repository path ``config_file`` of ``work``.

    The config's own API key, if it has one, is registered as a secret to redact: the working
    tree is the trusted source here.
    """
    bar = read_bar(
        trusted=work,
        proposal=work,
        config_file=config_file,
        with_baseline=False,
        config_name=config_name,
    )
    register_secret(_key_of(bar.config))
    return _inputs(
        bar,
        work=work,
        config_path=config_path,
        dataset=dataset,
        refuse_tracked=False,
        keep_cases=keep_cases,
    )


def _key_of(config: GateConfig) -> str | None:
    key = config.judge.api_key
    return None if key is None else key.get_secret_value()


def load_gate_inputs(
    bar: Bar,
    *,
    work: WorkTree,
    config_path: Path,
    dataset: str | Path | None,
) -> Inputs:
    """The inputs of a gate run: the bar as read, and the change's dataset.

    The judge cache must not be a file the change's tree tracks (a forged cache could pass a
    regression); such a cache is not used, and a notice says so. The bar's API key, if its config
    has one, is registered as a secret to redact; a key in the change's own config never is (it
    could blank out any text it equals).
    """
    register_secret(_key_of(bar.config))
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
        tracked = is_tracked(work.root, cache_file) if refuse_tracked else False
        if tracked is None and git_toplevel(work.root) is None:
            notices.append(
                f"{work.root} is not in a git repository, so the judge cache {cache_file} is not "
                "used: git cannot show that it came from the gate's own runs."
            )
        elif tracked is None:
            notices.append(
                f"git cannot say whether this change's tree tracks the judge cache {cache_file}, "
                "so it is not used: cached verdicts must come from the gate's own runs."
            )
        elif tracked:
            notices.append(
                f"The judge cache {cache_file} is tracked by this change's tree, so it is not "
                "used: cached verdicts must come from the gate's own runs, not from a commit."
            )
        else:
            cache_path = work.local(cache_file)
    cases: Cases
    judged_by = response_judged_by(config.evaluators)
    if keep_cases:
        cases = DatasetCases.read(
            dataset_path, dataset_format=config.dataset_format, response_judged_by=judged_by
        )
        info = cases.info
    else:
        reader = DatasetReader(
            dataset_path, dataset_format=config.dataset_format, response_judged_by=judged_by
        )
        cases, info = [], reader.check()
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


def run_settings(
    config: JudgeConfig,
    on_progress: Callable[[Progress], None] | None = None,
    budget: Budget | None = None,
) -> RunSettings:
    """How a run may use the judge a config describes, within a gate's ``budget`` if any."""
    most_usd = [b for b in (config.budget_usd, budget.run_usd if budget else None) if b]
    return RunSettings(
        concurrency=config.requests_in_flight,  # many more when they wait as batches
        budget_usd=min(most_usd) if most_usd else None,
        budget_tokens=budget.run_tokens if budget else None,
        on_progress=on_progress,
        repeat=config.repeat,
        processes=min(config.concurrency, os.cpu_count() or 1),
    )


class CaseSink(Protocol):
    """Takes a run's cases one at a time (a report writer, the comparison, a digest)."""

    def add(self, case: CaseResult) -> None:
        """Take one case."""
        ...


@dataclass(frozen=True, kw_only=True)
class JudgedRun:
    """A finished run: its report without the cases, and the first cases that failed to judge."""

    head: ReportHead
    errored: tuple[CaseResult, ...] = ()
    """Up to five cases that could not be judged, for the terminal."""


class _Errored:
    def __init__(self) -> None:
        self.cases: list[CaseResult] = []

    def add(self, case: CaseResult) -> None:
        if case.status == "error" and len(self.cases) < 5:
            self.cases.append(case)


async def judge_inputs(
    inputs: Inputs,
    *,
    choice: JudgeChoice,
    judge_config: JudgeConfig,
    report_path: Path | None = None,
    sinks: Sequence[CaseSink] = (),
    on_progress: Callable[[Progress], None] | None = None,
    shard: str | None = None,
    budget: Budget | None = None,
) -> JudgedRun:
    """Judge the inputs' cases with ``choice`` as they are read, writing the report as it goes.

    ``judge_config`` (the config the judge was opened from) bounds the run: concurrency, budget
    and repeated verifications; a gate's ``budget`` bounds it further. Each case goes to the
    report at ``report_path`` (written atomically: the old file stays until the run has
    finished) and to every one of ``sinks``; no case is held longer than that.

    Raises:
        JudgeUnavailableError: the judge cannot be used at all.
        OutputError: the report cannot be written.
    """
    evaluators = build_evaluators(inputs.config.evaluators)
    infos = {e.name: e.info() for e in evaluators}
    errored = _Errored()
    with _report_out(report_path) as out:
        writer = ReportWriter(out, judge=choice.judge.info, evaluators=infos, shard=shard)
        consumers: tuple[CaseSink, ...] = (writer, errored, *sinks)

        def on_case(case: CaseResult) -> None:
            for consumer in consumers:
                consumer.add(case)

        end = await stream_suite(
            inputs.cases,
            judge=choice.judge,
            evaluators=evaluators,
            on_case=on_case,
            settings=run_settings(judge_config, on_progress, budget),
            total=len(inputs.cases),
        )
        head = writer.finish(
            usage=end.usage, notices=choice.all_notices(), stopped_early=end.stopped_early
        )
    return JudgedRun(head=head, errored=tuple(errored.cases))


async def judge_with(
    inputs: Inputs,
    judge_config: JudgeConfig,
    *,
    open_judge: JudgeOpener,
    env: Mapping[str, str],
    report_path: Path | None,
    sinks: Sequence[CaseSink] = (),
    on_progress: Callable[[Progress], None] | None = None,
    shard: str | None = None,
) -> JudgedRun:
    """Open the judge ``judge_config`` describes, judge the inputs with it, close it.

    See :func:`judge_inputs` for the rest.
    """
    async with open_judge(judge_config, env=env, cache_path=inputs.cache_path) as choice:
        return await judge_inputs(
            inputs,
            choice=choice,
            judge_config=judge_config,
            report_path=report_path,
            sinks=sinks,
            on_progress=on_progress,
            shard=shard,
        )


@contextmanager
def _report_out(path: Path | None) -> Iterator[TextSink]:
    if path is None:
        yield DISCARD
        return
    with open_atomic(path) as out:
        yield out


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


@contextmanager
def kept_report(path: Path | None, *, needed: bool) -> Iterator[Path | None]:
    """Where a run writes its report: ``path``, or a temporary file when none is asked for.

    The temporary file (removed at the end) is used only when the report is ``needed`` after the
    run, by the HTML report.
    """
    if path is not None or not needed:
        yield path
        return
    with tempfile.TemporaryDirectory(prefix="ragaliq-") as folder:
        yield Path(folder) / "report.json"


def write_html(
    path: Path,
    *,
    head: ReportHead,
    cases: Iterable[CaseResult],
    decision: GateDecision | None = None,
    dataset: Cases | None = None,
    title: str = "RagaliQ Gate report",
) -> None:
    """Write the HTML report atomically, case by case; ``dataset`` shows the responses.

    Raises:
        OutputError: the file cannot be written.
        TemplateError: the built-in template failed to render.
    """
    lookup = None
    if isinstance(dataset, DatasetCases):
        lookup = dataset.by_id()
    elif dataset is not None:
        lookup = {case.id: case for case in dataset}.get
    with open_atomic(path) as out:
        write_html_report(
            out, head=head, cases=cases, decision=decision, dataset=lookup, title=title
        )

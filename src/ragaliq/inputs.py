"""The inputs of a run: a validated config, its dataset, templates, cache and baseline.

Two ways in: :func:`load_inputs` reads a config and its dataset from the working tree (``run``,
``validate``); :func:`load_gate_inputs` reads the bar from a trusted source (the base commit) and
only the dataset from the change (``gate`` and the action on a pull request).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from ragaliq.baseline import Baseline
from ragaliq.config import GateConfig
from ragaliq.dataset import DatasetCases, DatasetInfo, DatasetReader
from ragaliq.errors import ConfigError
from ragaliq.evaluators import build_evaluators, response_judged_by
from ragaliq.evaluators.questions import FACTS
from ragaliq.models import NOT_SCORED, TestCase
from ragaliq.redaction import register_secret
from ragaliq.report.markdown import UserTemplate, check_template
from ragaliq.repository import ConfigLocation, WorkTree, git_toplevel, is_tracked, repo_path
from ragaliq.trust import Bar, MissingConfig, read_bar

__all__ = [
    "Cases",
    "Inputs",
    "load_gate_inputs",
    "load_inputs",
    "load_inputs_from",
    "local_cache_path",
]


class Cases(Protocol):
    """A dataset's cases: iterable again and again, and counted (a list, a DatasetCases)."""

    def __iter__(self) -> Iterator[TestCase]: ...

    def __len__(self) -> int: ...


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


def local_cache_path(config: GateConfig, config_path: Path) -> Path | None:
    """The judge cache a local config names, or None when the config keeps none.

    Raises:
        ConfigError: the path leaves the repository.
        RepositoryError: it is, or passes through, a symbolic link, or is not a regular file.
    """
    if not config.judge.cache:
        return None
    return ConfigLocation.of(config_path).local(config.judge.cache_path, what="judge.cache_path")


def load_inputs(
    config_path: Path,
    dataset: Path | None,
    *,
    keep_cases: bool = True,
    missing_config: MissingConfig = "as-read",
) -> Inputs:
    """Load and validate the config and the dataset it names (or ``dataset``), from disk.

    Paths in the config are repository paths (relative to the config, inside the repository,
    never through a symbolic link); ``dataset``, given on the command line, is taken as it is.
    The dataset is validated whole, then read again case by case as it is judged. With
    ``keep_cases=False`` it is only checked: ``cases`` stays empty and ``dataset_info`` counts
    them. ``missing_config`` says what a missing config means (:func:`~ragaliq.trust.read_bar`).
    """
    location = ConfigLocation.of(config_path)
    return load_inputs_from(
        WorkTree(location.root),
        config_file=location.file,
        config_path=config_path,
        dataset=dataset,
        keep_cases=keep_cases,
        config_name=str(config_path),
        missing_config=missing_config,
    )


def load_inputs_from(
    work: WorkTree,
    *,
    config_file: str,
    config_path: Path,
    dataset: str | Path | None,
    keep_cases: bool = True,
    config_name: str | None = None,
    missing_config: MissingConfig = "as-read",
    dataset_option: str = "--dataset",
    config_option: str = "--config",
) -> Inputs:
    """:func:`load_inputs` for a config at repository path ``config_file`` of ``work``.

    The config's own API key, if it has one, is registered as a secret to redact: the working
    tree is the trusted source here. ``dataset_option`` and ``config_option`` are how the user
    names the dataset and the config where they run (``--dataset``, or the action's ``dataset``
    input), for the message when one is missing.
    """
    bar = read_bar(
        trusted=work,
        proposal=work,
        config_file=config_file,
        with_baseline=False,
        config_name=config_name,
        missing_config=missing_config,
        config_option=config_option,
    )
    register_secret(_key_of(bar.config))
    return _inputs(
        bar,
        work=work,
        config_path=config_path,
        dataset=dataset,
        refuse_tracked=False,
        keep_cases=keep_cases,
        dataset_option=dataset_option,
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
    dataset_option: str = "--dataset",
) -> Inputs:
    """The inputs of a gate run: the bar as read, and the change's dataset.

    The judge cache must not be a file the change's tree tracks (a forged cache could pass a
    regression); such a cache is not used, and a notice says so. The bar's API key, if its config
    has one, is registered as a secret to redact; a key in the change's own config never is (it
    could blank out any text it equals).
    """
    register_secret(_key_of(bar.config))
    return _inputs(
        bar,
        work=work,
        config_path=config_path,
        dataset=dataset,
        refuse_tracked=True,
        dataset_option=dataset_option,
    )


def _inputs(
    bar: Bar,
    *,
    work: WorkTree,
    config_path: Path,
    dataset: str | Path | None,
    refuse_tracked: bool,
    keep_cases: bool = True,
    dataset_option: str = "--dataset",
) -> Inputs:
    config = bar.config
    notices = list(bar.notices)
    if isinstance(dataset, Path):
        dataset_path = dataset
    else:
        raw = dataset or config.dataset
        if raw is None:
            raise ConfigError(
                f"{bar.config_file}: dataset: no dataset given; set {dataset_option}, or "
                "'dataset' in the config"
            )
        what = "dataset" if dataset else f"{bar.config_file}: dataset"
        relative = repo_path(raw, folder="" if dataset else bar.config_folder, what=what)
        work.check(relative, what=what)
        dataset_path = work.local(relative)
    comment = _template(bar, config.templates.comment, "templates.comment")
    summary = _template(bar, config.templates.summary, "templates.summary")
    check_template(comment)
    check_template(summary, summary=True)
    cache_path = _judge_cache(bar, work=work, refuse_tracked=refuse_tracked, notices=notices)
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
    notices += _nothing_to_score(config, info)
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


def _nothing_to_score(config: GateConfig, info: DatasetInfo) -> list[str]:
    """A notice for each enabled evaluator of needed facts when no case names any."""
    if not info.cases or info.with_facts:
        return []
    return [
        f"{evaluator.name} has nothing to score: no case names expected_facts or an "
        f"expected_answer, so every case is skipped for it and the run fails ({NOT_SCORED}); "
        f"add them to the dataset, or turn {evaluator.name} off (enabled: false)."
        for evaluator in build_evaluators(config.evaluators)
        if evaluator.asks(FACTS)
    ]


def _judge_cache(
    bar: Bar, *, work: WorkTree, refuse_tracked: bool, notices: list[str]
) -> Path | None:
    """The judge cache the bar's config keeps, unless its verdicts may not be the gate's own."""
    config = bar.config
    if config.judge.cache:
        cache_file = bar.path(config.judge.cache_path, what="judge.cache_path")
        work.check(cache_file, what="judge.cache_path")
        # Outside a git repository no commit can carry the cache: a workspace with nothing
        # checked out (a workflow_run gate) holds only what the gate's own job put there, and
        # its entries are signed with the judge's key either way.
        in_git = git_toplevel(work.root) is not None
        tracked = is_tracked(work.root, cache_file) if refuse_tracked and in_git else False
        if tracked is None:
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
            return work.local(cache_file)
    return None


def _template(bar: Bar, name: str | None, what: str) -> UserTemplate | None:
    """A template the config names, read where the bar is read."""
    if not name:
        return None
    return UserTemplate.read(bar.source, bar.path(name, what=what), what=what)

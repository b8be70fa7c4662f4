"""The trust boundary of a gate run: what defines the bar, where it is read from, and its ratchets.

Every rule that keeps a change from lowering its bar lives here: its own config may tighten the
base commit's at once and loosens nothing until merged (:func:`tighten`); the evaluators the
baseline measured stay on (:func:`keep_baseline_evaluators`); the thresholds and the policy the
baseline recorded are a floor (:func:`hold_to_baseline`). The comparison applies the bar it is
given and ratchets nothing itself.

A pull request is untrusted; its base commit is trusted. Everything that decides whether a change
passes (the config: judge, endpoint, cache, evaluators and their options, thresholds, policy,
templates; and the baseline) is read from the **base commit**, through git or the GitHub API,
never from the pull request's checkout. Only the dataset comes from the pull request.

The pull request's own config is read to say what it *proposes*. It may **tighten** the bar at
once (a higher threshold, a smaller ``max_drop``, one more evaluator, a stricter policy); every
other change it makes is listed as applying once it is merged (:func:`tighten`).

Where there is no base commit (a push to the default branch, a local run outside git), the
working tree is the trusted source.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ragaliq.baseline import MAX_BASELINE_BYTES, Baseline, parse_baseline
from ragaliq.config import (
    BaselinesConfig,
    GateConfig,
    JudgeConfig,
    defaults_notice,
    missing_config_fix,
    parse_config,
)
from ragaliq.errors import BaselineError, ConfigError, RepositoryError
from ragaliq.judges.providers import PROVIDER_OF_RECORD
from ragaliq.policy import HIGHER, GateRules
from ragaliq.repository import (
    MAX_TEXT_BYTES,
    ConfigPaths,
    FileSource,
    GitCommit,
    WorkTree,
    git_default_base,
    git_resolve,
)
from ragaliq.store.found import BaselineFinder
from ragaliq.store.kinds import kind_of
from ragaliq.tightening import tighten

__all__ = [
    "MAX_BASELINE_BYTES",
    "Bar",
    "Floor",
    "MissingConfig",
    "base_source",
    "hold_to_baseline",
    "judge_of_baseline",
    "keep_baseline_evaluators",
    "read_bar",
    "read_text",
]


@dataclass(frozen=True, kw_only=True)
class Bar:
    """What a gate run measures a change against, all of it from the trusted source."""

    config: GateConfig
    """The config in force: the trusted one, tightened where the change tightens it."""
    config_file: str
    """The config's repository path."""
    baseline: Baseline | None
    """None when the baseline is known to be absent: the first run applies thresholds only."""
    baseline_file: str
    notices: tuple[str, ...]
    """What the change proposes or tightens, and where the bar was read from."""
    source: FileSource
    """Where the bar was read from."""
    first_run: bool = False
    """The base has no config yet (the change that adds the gate): no bar protects it."""

    @property
    def paths(self) -> ConfigPaths:
        """The one resolver of the paths the config names."""
        return ConfigPaths(self.config_file)

    @property
    def config_folder(self) -> str:
        """The repository path of the config's folder (``""`` for the root)."""
        return self.paths.folder

    def path(self, raw: str, *, what: str) -> str:
        """A path from the config, as a repository path (relative to the config's folder)."""
        return self.paths.path(raw, what=what)


def read_text(
    source: FileSource, path: str, *, what: str, limit: int = MAX_TEXT_BYTES
) -> str | None:
    """A text file from ``source``, or None when it is known to be absent.

    Raises:
        RepositoryError: it cannot be read for certain, or is not a regular file within ``limit``.
        ConfigError: it is not UTF-8 text.
    """
    data = source.read(path, limit=limit, what=what)
    if data is None:
        return None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"{what}: {path} at {source.description} is not UTF-8 text; re-save it as UTF-8"
        ) from exc


MissingConfig = Literal["error", "defaults", "as-read"]
"""What a missing config means (:func:`read_bar`)."""


def _config_not_found(name: str, option: str = "--config") -> ConfigError:
    other = (
        f"pass {option} with the right path"
        if option.startswith("--")
        else f"set {option} to the right path"
    )
    return ConfigError(f"{name}: not found; {missing_config_fix(other)}")


def read_bar(
    *,
    trusted: FileSource,
    proposal: FileSource | None,
    config_file: str,
    baseline_file: str | None = None,
    with_baseline: bool = True,
    config_name: str | None = None,
    missing_config: MissingConfig = "as-read",
    base: str | None = None,
    finder: BaselineFinder | None = None,
    config_option: str = "--config",
) -> Bar:
    """Read the bar from ``trusted`` and what the change proposes from ``proposal``.

    Where there is a base (``trusted`` is not ``proposal``) and its config exists, the base has a
    bar, and a baseline of that base is required: one that is missing, unreadable or not shown to
    come from the baseline workflow stops the gate, never a run on thresholds alone. Only where
    the base has no config at all is there a first run: the built-in defaults, tightened by the
    change's config, with the change's dataset path (never its judge, endpoint or templates).

    Args:
        trusted: The base commit (or the working tree, where there is no base).
        proposal: The change's files (its checkout, or its head commit), read only to list what
            it proposes and to tighten the bar; ``trusted`` itself where there is no base; None
            when the change's files are not at hand.
        config_file: The config's repository path.
        baseline_file: A baseline named explicitly (an input or an option), which must exist;
            otherwise the one the trusted config's ``baselines.store`` keeps for the base.
        with_baseline: Whether to read the baseline at all (``run`` does not need it).
        config_name: How to name the config in messages (the path the user gave).
        missing_config: What a missing config means. ``error`` (a config the user named): an
            error when it is in neither ``trusted`` nor ``proposal``; ``defaults`` (the default
            file, not written yet): the built-in defaults, with a notice; ``as-read`` (the
            action): an error where there is no base, else the defaults, with a notice.
        base: How messages name the base: ``main@1a2b3c4`` (the trusted source's description
            by default).
        finder: Reads the baseline of the base from the data branch (``store: branch``); None
            where that store cannot be read.
        config_option: How the user names the config where they run (``--config``, or the
            action's ``config`` input), for the message when there is none.

    Raises:
        ConfigError: a config does not validate, or names a path outside the repository.
        BaselineError: the base has a bar and no usable baseline; an explicitly named baseline
            does not exist; the baseline is corrupt.
        RepositoryError: a file cannot be read for certain (never taken as absent).
    """
    notices: list[str] = []
    same_source = trusted is proposal or trusted == proposal
    proposed, proposal = _read_proposal(proposal, config_file, config_name, same_source, notices)
    present = True
    if same_source:
        if proposed is None and missing_config == "defaults":
            notices.append(defaults_notice(config_name or config_file))
            proposed = GateConfig()
        if proposed is None:
            raise _config_not_found(config_name or config_file, config_option)
        config = trusted_config = proposed
    else:
        trusted_config, present = _read_trusted_config(trusted, config_file)
        if missing_config == "error" and not present and proposed is None:
            raise _config_not_found(config_name or config_file, config_option)
        config, changes = tighten(trusted_config, proposed)
        notices += changes
        if not present:
            config = _first_run(config, proposed)
            notices.append(_no_bar_yet(base or trusted.description, config_file))
        elif proposal is not None and proposed is None:
            notices.append(
                f"This change deletes {config_file}; the gate keeps using the base commit's."
            )
    path = baseline_file or ConfigPaths(config_file).path(trusted_config.baseline, what="baseline")
    baseline = None
    if with_baseline and present:
        baseline = _base_baseline(
            trusted,
            None if same_source else proposal,
            path,
            settings=trusted_config.baselines,
            explicit=baseline_file is not None,
            required=not same_source,
            base=base or trusted.description,
            finder=finder,
            notices=notices,
        )
        if baseline is not None and baseline.commit is None and isinstance(trusted, GitCommit):
            # Recorded by hand, it names no commit: it is the one committed at the base.
            baseline = baseline.model_copy(update={"commit": trusted.sha})
    return Bar(
        config=config,
        config_file=config_file,
        baseline=baseline,
        baseline_file=path,
        notices=tuple(notices),
        source=trusted,
        first_run=not present,
    )


def _read_proposal(
    proposal: FileSource | None,
    config_file: str,
    config_name: str | None,
    same_source: bool,
    notices: list[str],
) -> tuple[GateConfig | None, FileSource | None]:
    """The change's own config (None when it has none), and its source (None once unreadable).

    Unreadable from a change that is not the trusted source, it only loses what it proposes.
    """
    if proposal is None:
        return None, None
    try:
        text = read_text(proposal, config_file, what="config")
    except RepositoryError as exc:
        if same_source:
            raise
        notices.append(
            f"This change's own {config_file} could not be read ({exc}), so what it proposes "
            "is not known; the gate uses the base commit's."
        )
        return None, None
    if text is None:
        return None, proposal
    name = config_name or config_file
    return parse_config(text, name=name if same_source else f"{name} (this change)"), proposal


def _read_trusted_config(trusted: FileSource, config_file: str) -> tuple[GateConfig, bool]:
    """The config at the trusted source, and whether it is there (else the built-in defaults)."""
    text = read_text(trusted, config_file, what="config")
    if text is None:
        return GateConfig(), False
    return parse_config(text, name=f"{config_file} at {trusted.description}"), True


def _first_run(config: GateConfig, proposed: GateConfig | None) -> GateConfig:
    """The bar of a first run: the defaults, tightened, with the change's own dataset path.

    The dataset's path and format name what to judge, not how: nothing of the change's judge,
    endpoint, templates or baseline store is taken.
    """
    if proposed is None:
        return config
    return config.model_copy(
        update={"dataset": proposed.dataset, "dataset_format": proposed.dataset_format}
    )


def _no_bar_yet(base: str, config_file: str) -> str:
    return (
        f"No bar protects {base} yet: {config_file} is not there, so this first run judges with "
        "the built-in defaults (tightened where this change tightens them), never with this "
        "change's judge, endpoint or templates. Merge the set-up, let the baseline workflow "
        "record the base branch's baseline, then require this status."
    )


def _base_baseline(
    trusted: FileSource,
    proposal: FileSource | None,
    path: str,
    *,
    settings: BaselinesConfig,
    explicit: bool,
    required: bool,
    base: str,
    finder: BaselineFinder | None,
    notices: list[str],
) -> Baseline | None:
    """The baseline of the base: from the store its config names, or the file named.

    Raises:
        BaselineError: ``required`` and there is none, or it cannot be used.
    """
    if kind_of(settings).kept_apart and not explicit:
        if finder is None:
            if not required:
                return None
            raise BaselineError(
                f"no baseline for {base}: its config keeps baselines on the branch "
                f"{settings.branch}, which cannot be read here"
            )
        found = finder.find(settings)
        if found is None:
            if not required:
                return None
            searched = (
                f" nor for its {settings.ancestors} nearest first-parent ancestors"
                if settings.ancestors
                else ""
            )
            fix = finder.hint or (
                f"re-run the baseline workflow ({settings.workflow}) on that branch's latest "
                "commit, and see docs/baselines.md"
            )
            raise BaselineError(f"no baseline for {base} in {settings.branch}{searched}; {fix}")
        notices.append(f"The baseline: {found.description}.")
        return found.baseline
    baseline = _read_baseline(trusted, proposal, path, must_exist=explicit, notices=notices)
    if baseline is None and required:
        raise BaselineError(
            f"no baseline for {base}: {path} is not in that commit, so no bar can be applied; "
            "record it on the base branch (its baseline workflow, or `ragaliq baseline record` "
            "and commit the file), or keep baselines on a data branch (docs/baselines.md)"
        )
    return baseline


def _read_baseline(
    trusted: FileSource,
    proposal: FileSource | None,
    path: str,
    *,
    must_exist: bool,
    notices: list[str],
) -> Baseline | None:
    """The baseline at the trusted source, and a notice when the change edits it.

    None when it is absent; an explicitly named baseline must exist.
    """
    text = read_text(trusted, path, what="baseline", limit=MAX_BASELINE_BYTES)
    if text is None:
        if must_exist:
            raise BaselineError(
                f"{path}: not found at {trusted.description}; check the path (a typo?), or leave "
                "it out to use the config's baseline"
            )
        return None
    baseline = parse_baseline(text, source=f"{path} at {trusted.description}")
    if proposal is not None:
        try:
            edited = read_text(proposal, path, what="baseline", limit=MAX_BASELINE_BYTES)
        except RepositoryError as exc:
            edited = f"unreadable: {exc}"
        if edited is not None and edited != text:
            notices.append(
                f"This change edits {path}; the gate compares with the version on the base "
                "branch, and the edit takes effect once merged."
            )
    return baseline


def judge_of_baseline(
    judge: JudgeConfig, baseline: Baseline | None
) -> tuple[JudgeConfig, str | None]:
    """The judge to use against ``baseline``: the provider and model that recorded it.

    A comparison is only fair between runs judged alike, so a run compared with a baseline is
    judged by the baseline's judge whatever the config now says; the endpoint stays the trusted
    config's (a base URL is never taken from a file the key would then be sent to).
    """
    if baseline is None:
        return judge, None
    recorded = baseline.provenance
    provider = PROVIDER_OF_RECORD.get(recorded.judge_provider, recorded.judge_provider)
    if provider not in PROVIDER_OF_RECORD.values():
        return judge, None
    update: dict[str, Any] = {"provider": provider}
    if judge.provider == "auto" and provider == "claude":
        update = {}  # Claude when there is a key; without one, the run says it is not comparable
    if provider != "offline":
        update["model"] = recorded.judge_model
    chosen = judge.model_copy(update=update)
    if chosen == judge:
        return chosen, None
    shown = "the offline judge" if provider == "offline" else f"{provider}/{recorded.judge_model}"
    return chosen, (
        f"The baseline was judged by {shown}, so this run is too, and the scores compare; the "
        "config's judge applies once the baseline is recorded with it on the base branch."
    )


def base_source(root: Path, ref: str) -> FileSource:
    """Where a local gate reads the bar: ``ref`` in git, ``auto`` or ``none``.

    ``auto`` is the merge base of HEAD with the default branch, when git knows one, and the
    working tree otherwise (outside git, or before the first commit); ``none`` is the working
    tree.

    Raises:
        ConfigError: ``ref`` is not a commit git knows.
    """
    work = WorkTree(root)
    if ref == "none":
        return work
    if ref == "auto":
        sha = git_default_base(root)
        return work if sha is None else GitCommit(root, sha, label=f"the base commit {sha[:12]}")
    sha = git_resolve(root, ref)
    if sha is None:
        raise ConfigError(
            f"--base {ref}: not a commit in the repository {root}; give a commit, branch or tag, "
            "or 'none' to read everything from the working tree"
        )
    return GitCommit(root, sha, label=f"{ref} ({sha[:12]})")


@dataclass(frozen=True, kw_only=True)
class Floor:
    """The bar a run is held to against its baseline: never below what the baseline recorded."""

    thresholds: dict[str, float]
    """Each evaluator's threshold: the run's, or the baseline's where that is higher."""
    rules: GateRules
    """The run's rules, no looser than the policy the baseline recorded."""
    notices: tuple[str, ...] = ()
    """What a change tried to lower, and is held to anyway."""


def hold_to_baseline(
    thresholds: Mapping[str, float], rules: GateRules, baseline: Baseline | None
) -> Floor:
    """The thresholds and rules in force against ``baseline``: a change cannot lower its bar.

    A threshold below the baseline's, or a policy looser than the one it recorded, is raised to
    the baseline's until the change is merged and the baseline updated; a notice says so.
    """
    if baseline is None:
        return Floor(thresholds=dict(thresholds), rules=rules)
    notices: list[str] = []
    held = dict(thresholds)
    edited = []
    for name, threshold in thresholds.items():
        recorded = baseline.thresholds.get(name)
        if recorded is not None and recorded != threshold:
            edited.append(f"{name} {recorded:g} → {threshold:g}")
            held[name] = HIGHER.stricter(threshold, recorded)
    if edited:
        notices.append(
            "This PR changes thresholds (" + "; ".join(edited) + "); until it is merged and the "
            "baseline updated, the stricter of the two applies."
        )
    if baseline.policy is not None:
        rules, loosened = rules.at_least(baseline.policy)
        if loosened:
            notices.append(
                "This PR loosens the gate (" + "; ".join(loosened) + "); until it is merged "
                "and the baseline updated, the stricter setting applies."
            )
    return Floor(thresholds=held, rules=rules, notices=tuple(notices))


def keep_baseline_evaluators(
    config: GateConfig, baseline: Baseline | None
) -> tuple[GateConfig, tuple[str, ...]]:
    """The config with every evaluator the baseline has turned on, and a notice if one was off.

    A change cannot lower its own bar by turning an evaluator off: until it is merged and the
    baseline updated, what the baseline measured is still measured.
    """
    if baseline is None:
        return config, ()
    sections = config.evaluators
    off = sorted(
        name
        for name, options in sections.sections()
        if name in baseline.thresholds and not options.enabled
    )
    if not off:
        return config, ()
    turned_on = {name: sections.section(name).model_copy(update={"enabled": True}) for name in off}
    pronoun = "it" if len(off) == 1 else "them"
    notice = (
        f"This PR turns off {', '.join(off)}; the baseline has {pronoun}, so the gate still "
        f"judges {pronoun} until the PR is merged and the baseline updated."
    )
    return config.model_copy(update={"evaluators": sections.model_copy(update=turned_on)}), (
        notice,
    )

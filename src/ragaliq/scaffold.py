"""``ragaliq init``: the files a repository needs to start gating on RAG quality.

* ``ragaliq.yaml``: the config, every section with its main keys at their defaults and the optional
  ones commented out; the judge is the offline one, whatever the environment holds, so that a
  pull request, a laptop and the baseline on main judge alike until the team adds an API key
  and switches to Claude (:func:`judge_note` says so, and names the secrets to add);
* ``rag_outputs.jsonl``: a one-case example dataset in the format the gate reads;
* ``.github/workflows/ragaliq.yml``: the pull request workflow in two trust zones: a ``produce``
  job that runs the pull request's pipeline with no secrets and hands over the dataset as an
  artifact, then a ``gate`` job on a fresh runner at the base commit;
* ``.github/workflows/ragaliq-forks.yml``: the gate for pull requests from forks, on
  ``workflow_run``, with the repository's secrets and no checkout at all;
* ``.github/workflows/ragaliq-baseline.yml``: the workflow that records the baseline on main;
* ``.github/workflows/ragaliq-follow.yml``: when a baseline lands, gates again the pull requests
  that were waiting on it;
* ``.ragaliq/.gitignore``: keeps local results out of git (baselines recorded on this machine,
  the judge cache, reports, the comment): main's baselines live on the data branch.

Nothing is overwritten unless asked: :func:`write_scaffold` refuses when any of the files exists.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path, PurePosixPath
from string import Template

import yaml

from ragaliq._files import write_atomic
from ragaliq.baseline import DEFAULT_BASELINE_PATH
from ragaliq.config import (
    DEFAULT_BASELINE_BRANCH,
    DEFAULT_BASELINE_WORKFLOW,
    DEFAULT_CLAUDE_MODEL,
    DEFAULT_CONFIG_FILE,
)
from ragaliq.errors import ConfigError, OutputError
from ragaliq.evaluators import EVALUATORS
from ragaliq.evaluators.base import EvaluatorOptions

__all__ = [
    "ACTION",
    "ACTION_REF",
    "API_KEY_SECRET",
    "BASELINE_WORKFLOW_FILE",
    "DATASET_FILE",
    "FOLLOW_WORKFLOW_FILE",
    "FORKS_WORKFLOW_FILE",
    "GITIGNORE_FILE",
    "WORKFLOW_FILE",
    "WORKFLOW_FILES",
    "Release",
    "ScaffoldFile",
    "followed_workflows",
    "judge_note",
    "pin_release",
    "scaffold_files",
    "this_release",
    "write_scaffold",
]

DATASET_FILE = "rag_outputs.jsonl"
WORKFLOW_FILE = ".github/workflows/ragaliq.yml"
FORKS_WORKFLOW_FILE = ".github/workflows/ragaliq-forks.yml"
BASELINE_WORKFLOW_FILE = ".github/workflows/ragaliq-baseline.yml"
FOLLOW_WORKFLOW_FILE = ".github/workflows/ragaliq-follow.yml"
WORKFLOW_FILES = (WORKFLOW_FILE, FORKS_WORKFLOW_FILE, BASELINE_WORKFLOW_FILE, FOLLOW_WORKFLOW_FILE)
"""The workflows ``init`` writes, each the file of that name in ``ragaliq/workflows`` (the same
files as the repository's ``examples/workflows/``, linted there)."""
GITIGNORE_FILE = ".ragaliq/.gitignore"
MAX_WORKFLOW_BYTES = 1024 * 1024
"""The most of a workflow file read to check what the forks workflow follows."""
_GITIGNORE = """\
# RagaliQ Gate's folder: local results only. Main's baselines are kept on the data branch
# ragaliq-baselines (`baselines` in ragaliq.yaml); the baselines `ragaliq baseline record`
# writes on this machine, the judge cache, run reports, decisions, rendered comments and HTML
# reports stay here, out of git. Write yours here too, e.g. `ragaliq run -o
# .ragaliq/report.json`. (With `baselines: {store: file}`, add `!baseline.json` to commit it.)
*
!.gitignore
"""
API_KEY_SECRET = "ANTHROPIC_API_KEY"
"""The secret (and environment variable) the workflows give the gate Claude's key under."""
ACTION = "ragaliq/ragaliq-gate"
ACTION_REF = f"{ACTION}@main"
"""The action as the workflow templates use it, and as a build that is no release writes them:
the repository's main branch, whose action.yml builds the image from the Dockerfile."""
_PACKAGE_FROM_MAIN = f'"ragaliq-gate @ git+https://github.com/{ACTION}@main"'


@dataclass(frozen=True, kw_only=True)
class Release:
    """A release of RagaliQ Gate, as ``ragaliq init`` pins it (see ``ragaliq._release``)."""

    tag: str
    commit: str
    image: str

    @property
    def version(self) -> str:
        return self.tag.removeprefix("v")


def this_release() -> Release | None:
    """The release this copy was built as, or None for a build that is no release."""
    from ragaliq import _release

    if not (_release.TAG and _release.COMMIT):
        return None
    return Release(tag=_release.TAG, commit=_release.COMMIT, image=_release.IMAGE)


def pin_release(workflow: str, release: Release | None) -> str:
    """A workflow template pinned to ``release``: the action by commit, the package by version.

    The action's tag goes in a comment beside its commit; no release leaves the template as is.
    """
    if release is None:
        return workflow
    return workflow.replace(
        f"uses: {ACTION_REF}", f"uses: {ACTION}@{release.commit} # {release.tag}"
    ).replace(_PACKAGE_FROM_MAIN, f'"ragaliq-gate=={release.version}"')


@dataclass(frozen=True, kw_only=True)
class ScaffoldFile:
    """One file ``ragaliq init`` writes, and its text."""

    path: Path
    text: str


_CONFIG = Template("""\
# RagaliQ Gate config, written by `ragaliq init`. The keys below are at their default values;
# the commented-out ones are optional settings, off by default. Every key is optional.
#
# Check this file and the dataset with `ragaliq validate`. For completion and checking in your
# editor, write the JSON Schema with `ragaliq schema > ragaliq.schema.json` and point your editor's
# YAML support at that file.

# The RAG outputs to judge, relative to this file: JSONL with one case per line (id, query,
# context, response). The example case shows the format; in CI the workflow's first step should
# write this file from your RAG pipeline.
dataset: $dataset
# dataset_format: auto  # or ragaliq, ragas, deepeval (their field names), csv; auto detects them

$baselines_note
baseline: $baseline
baselines:
  store: $store  # or file: the baseline file above, committed on main
  branch: $branch  # the data branch; never one that pull requests merge into
  workflow: $workflow  # only a push run of this workflow file records a baseline
  keep: 500  # baselines kept, newest first
  ancestors: 20  # while main's newest baseline is being recorded, gates use an ancestor's

judge:
  # The judge that decides the verdicts. init writes offline, the built-in heuristic judge: no
  # API key, no cost, and the same verdicts on pull requests, on main (the baseline) and on your
  # laptop. It says SUPPORTED only where the context states every word of a claim, and leaves the
  # claims it cannot check out of the scores (the comment lists them). To judge with Claude, or
  # with the cascade (the offline judge settles what it grounds, Claude the rest), add your
  # Anthropic API key as the repository secret ANTHROPIC_API_KEY and as the Dependabot secret of
  # the same name (Dependabot's pull requests see only those), switch provider, and let main
  # record the baseline again. auto uses Claude when ANTHROPIC_API_KEY is set and the offline judge
  # otherwise, so a run without the key (a laptop, a fork's pull request) would judge differently.
  provider: offline
  model: $model  # the Claude model; the offline judge ignores it
  # Keep the API key in the ANTHROPIC_API_KEY environment variable (a repository secret in CI),
  # never in this file.
  # base_url: https://llm-gateway.example.com  # an Anthropic-compatible endpoint
  timeout_s: 120  # seconds before a request is abandoned and retried
  max_retries: 4  # retries of rate limits, server errors and timeouts, with backoff
  concurrency: 8  # requests in flight at once
  max_tokens: 4096  # output token limit of one reply
  claims_per_call: 25  # claims verified in one request
  cache: true  # keep judge results in a local SQLite file; unchanged cases cost nothing
  cache_path: .ragaliq/cache.sqlite  # relative to this file; the workflow caches it
  # budget_usd: 5.0  # stop scheduling cases before the spend would pass this (default: no limit)
  # pricing:  # overrides of the built-in price table, in US dollars per million tokens
  #   my-model: {input: 3.0, output: 15.0}

evaluators:
$evaluators

gate:
  max_drop: 0.05  # the largest drop of a score from the baseline before the gate fails
  # Fail on any newly hallucinated claim, whatever the scores: with a small suite one changed
  # claim moves a mean less than the suite can tell from noise, but a made-up figure or name is
  # still caught. Set false to let the scores alone decide.
  fail_on_new_hallucinations: true
  # Fail on any claim of a new or changed case that the offline judge could not check (a word
  # its evidence does not state, such as an invented detail): those claims are left out of the
  # scores, so a pull request that only adds such details passes on the scores alone. A pull
  # request may switch this on, never off. With Claude or the cascade every claim is checked.
  # fail_on_unchecked_claims: true
  # Fail when a change stops retrieving, within the retrieval metrics' k, a chunk the labels
  # (relevant_chunks or relevant_sources) grade relevant and the baseline found; the failure
  # lists each lost chunk. Needs labels and a retrieval metric on (hit_rate, recall_at_k, mrr,
  # ndcg). A pull request may switch this on, never off.
  # fail_on_lost_chunks: true
  # Fail on a claim newly credited to chunks that do not back it, or to a chunk that was not
  # retrieved at all; the failure lists each claim. Needs citation_accuracy on. A pull request
  # may switch this on, never off.
  # fail_on_miscited_claims: true
  # Claude and the cascade ask once more about each claim that would fail the gate (newly
  # hallucinated) before deciding, one call per such case; a claim held against the answer by
  # one ask only is listed as unstable and does not fail the gate. A pull request may switch
  # this off (one verdict then fails the gate), never on.
  # confirm_new_hallucinations: false
  # count_unstable: true  # count unstable claims as newly hallucinated
  on_error: fail  # or ignore; whether cases the judge could not judge fail the gate
  # What a pull request's gate does when the judge needs an API key and has none: report it not
  # judged (fail; never a green check), or judge with the offline judge (offline). The workflows
  # init writes give the gate the key, forks included; the offline judge needs none.
  on_missing_key: fail

# Your own Jinja templates for the PR comment and the job summary, relative to this file; each may
# extend the built-in one ({% extends "comment.md.j2" %}) and override its blocks.
# templates:
#   comment: .github/ragaliq/comment.md.j2
#   summary: .github/ragaliq/summary.md.j2
""")

_EXAMPLE_CASE = {
    "id": "password-reset",
    "query": "How do I reset my password?",
    "context": [
        "Resetting your password. On the sign-in page, click Forgot password and enter the email "
        "address of your account. We email you a reset link that expires after 30 minutes.",
        "Passwords must be at least 12 characters long and cannot reuse any of your last "
        "5 passwords. Administrators can require a password change every 90 days.",
    ],
    "response": "On the sign-in page, click Forgot password and enter the email address of your "
    "account. We email you a reset link that expires after 30 minutes. Passwords must be at least "
    "12 characters long and cannot reuse any of your last 5 passwords.",
    "tags": ["example"],
}

_COMMON_OPTIONS = frozenset(EvaluatorOptions.model_fields)


def _evaluator_sections() -> str:
    """Each registered evaluator's section of the config, from its own ``Options``.

    An evaluator that is on by default is written on, with its threshold; one that is off is
    written commented out. Its own options follow, commented, at their defaults, each with its
    docstring, so a new evaluator shows up in ``init`` without an edit here.
    """
    lines: list[str] = []
    for evaluator in EVALUATORS:
        options = evaluator.Options
        doc = options.__doc__ if options is not EvaluatorOptions else evaluator.__doc__
        first = (doc or "").strip().splitlines()[0] if doc else ""
        about = (first.partition(": ")[2] or first).rstrip(".")
        on = options.model_fields["enabled"].default is True
        block = [
            f"{evaluator.name}:" + (f"  # {about}" if about else ""),
            "  enabled: true",
            f"  threshold: {evaluator.default_threshold:g}  # the lowest mean score that passes",
            "  # max_drop: 0.05  # the largest drop from the baseline tolerated (gate.max_drop)",
        ]
        for name, field in options.model_fields.items():
            if name in _COMMON_OPTIONS:
                continue
            value = json.dumps(field.get_default(call_default_factory=True))
            said = (field.description or "").strip().splitlines()
            block.append(f"  # {name}: {value}" + (f"  # {said[0]}" if said else ""))
        lines += [("  " if on else "  # ") + line for line in block]
    return "\n".join(lines)


def judge_note(env: Mapping[str, str]) -> str:
    """Which judge ``init`` wrote into the config, why, and how to judge with Claude instead.

    The judge is the offline one whatever the environment holds: a key on this machine is not a
    key the gate in CI has, and a baseline judged by one judge does not compare with runs by
    another.
    """
    key = (
        f" {API_KEY_SECRET} is set here, but init does not switch to Claude for that: the gate "
        "in CI has only the keys you give it."
        if env.get(API_KEY_SECRET, "").strip()
        else ""
    )
    return (
        "judge: offline (judge.provider: offline), the built-in heuristic judge: it needs no API "
        "key and no network, costs nothing, and judges pull requests, the baseline on main and "
        f"your laptop alike.{key} To judge with Claude, add your Anthropic API key as the "
        f"repository secret {API_KEY_SECRET} (Settings > Secrets and variables > Actions) and "
        f"as the Dependabot secret {API_KEY_SECRET} (Settings > Secrets and variables > "
        "Dependabot; Dependabot's pull requests see only those), set judge.provider to claude "
        "(or cascade), and let main record the baseline again"
    )


_GITHUB_BASELINES = """\
# Where the baselines pull requests are compared with are kept. The baseline workflow
# (ragaliq-baseline.yml) records one for each push to main and keeps it on the data branch below,
# never on main, so main can be protected; a gate uses one only after checking through GitHub's
# API that a push run of that workflow on main recorded it. `ragaliq baseline record` writes
# .ragaliq/baseline.json (the file below) and keeps a copy for `ragaliq gate` on this machine."""
_GITLAB_BASELINES = """\
# Where the baselines merge requests are compared with are kept. The record job (ragaliq-record in
# .gitlab-ci.yml) records one for each push to the default branch and keeps it among its
# artifacts, which never expire; a gate uses one only after checking through GitLab's API that a
# push pipeline of the default branch, with no pipeline variables, recorded it at that commit.
# `ragaliq baseline record` writes .ragaliq/baseline.json (the file below) for this machine."""
GITLAB_CI_FILE = ".gitlab-ci.yml"
GITLAB_RECORD_JOB = "ragaliq-record"
IMAGE_PLACEHOLDER = "RAGALIQ_IMAGE"
UNPINNED_IMAGE = "ghcr.io/ragaliq/ragaliq-gate@sha256:<the digest of the release you use>"
"""What ``init --ci gitlab`` writes for the image when it is not given one: it must be pinned."""


def scaffold_files(
    root: Path,
    *,
    ci: str = "github",
    image: str | None = None,
    release: Release | None = None,
) -> list[ScaffoldFile]:
    """The files ``ragaliq init`` writes under ``root``: config, dataset, CI files, .gitignore.

    ``ci`` is ``github`` (the four workflows) or ``gitlab`` (``.gitlab-ci.yml``, its jobs' image
    ``image``, a reference by digest, by default ``release``'s). The workflows use ``release``
    pinned by its commit, or the action's main branch for no release.
    """
    if image is None and release is not None and release.image:
        image = release.image
    gitlab = ci == "gitlab"
    config = _CONFIG.substitute(
        dataset=DATASET_FILE,
        baseline=DEFAULT_BASELINE_PATH,
        branch=DEFAULT_BASELINE_BRANCH,
        workflow=GITLAB_RECORD_JOB if gitlab else DEFAULT_BASELINE_WORKFLOW,
        store="artifacts" if gitlab else "branch",
        baselines_note=_GITLAB_BASELINES if gitlab else _GITHUB_BASELINES,
        model=DEFAULT_CLAUDE_MODEL,
        evaluators=_evaluator_sections(),
    )
    dataset = json.dumps(_EXAMPLE_CASE, ensure_ascii=False) + "\n"
    workflows = resources.files("ragaliq") / "workflows"
    if gitlab:
        pipeline = (workflows / "gitlab-ci.yml").read_text(encoding="utf-8")
        ci_files = [
            ScaffoldFile(
                path=root / GITLAB_CI_FILE,
                text=pipeline.replace(IMAGE_PLACEHOLDER, image or UNPINNED_IMAGE),
            )
        ]
    else:
        ci_files = [
            ScaffoldFile(
                path=root / name,
                text=pin_release(
                    (workflows / PurePosixPath(name).name).read_text(encoding="utf-8"), release
                ),
            )
            for name in WORKFLOW_FILES
        ]
    return [
        ScaffoldFile(path=root / DEFAULT_CONFIG_FILE, text=config),
        ScaffoldFile(path=root / DATASET_FILE, text=dataset),
        *ci_files,
        ScaffoldFile(path=root / GITIGNORE_FILE, text=_GITIGNORE),
    ]


def followed_workflows(root: Path) -> list[str]:
    """A warning for each workflow ``ragaliq-forks.yml`` follows that no workflow file is.

    The files are those of the repository at ``root``. GitHub starts a ``workflow_run``
    workflow only for the workflows it names, by ``name:`` (or by path, for a workflow without
    one): a renamed ``ragaliq.yml`` leaves pull requests from forks ungated, and nothing fails
    to say so.
    """
    folder = root / ".github" / "workflows"
    forks = folder / PurePosixPath(FORKS_WORKFLOW_FILE).name
    followed = _workflow_run_of(forks)
    if not followed:
        return []
    names: set[str] = set()
    for path in sorted([*folder.glob("*.yml"), *folder.glob("*.yaml")]):
        names.add(f".github/workflows/{path.name}")
        data = _read_workflow(path)
        if isinstance(data, dict) and isinstance(data.get("name"), str):
            names.add(data["name"])
    return [
        f"{FORKS_WORKFLOW_FILE} follows the workflow {name!r}, which no workflow in "
        ".github/workflows is named: pull requests from forks would never be gated. Name "
        f"{WORKFLOW_FILE}'s workflow {name!r} (its `name:`), or list its name under "
        "`on.workflow_run.workflows` in the forks workflow"
        for name in followed
        if name not in names
    ]


def _workflow_run_of(path: Path) -> list[str]:
    data = _read_workflow(path)
    if not isinstance(data, dict):
        return []
    on = data.get("on", data.get(True))  # YAML 1.1 reads the key `on` as true
    run = on.get("workflow_run") if isinstance(on, dict) else None
    workflows = run.get("workflows") if isinstance(run, dict) else None
    return [w for w in workflows if isinstance(w, str)] if isinstance(workflows, list) else []


def _read_workflow(path: Path) -> object:
    try:
        with path.open(encoding="utf-8") as handle:
            return yaml.safe_load(handle.read(MAX_WORKFLOW_BYTES))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return None


def write_scaffold(
    root: Path,
    *,
    force: bool = False,
    ci: str = "github",
    image: str | None = None,
    release: Release | None = None,
) -> list[Path]:
    """Write the scaffold files under ``root``, each atomically, and return their paths.

    Raises:
        ConfigError: a file already exists and ``force`` is false (nothing is written then), a
            path is taken by a folder, or a file cannot be written.
    """
    files = scaffold_files(root, ci=ci, image=image, release=release)
    folders = [f.path for f in files if f.path.is_dir()]
    if folders:
        raise ConfigError(
            f"{', '.join(map(str, folders))}: a folder is in the way; move it and run init again"
        )
    existing = [f.path for f in files if f.path.exists()]
    if existing and not force:
        raise ConfigError(
            f"{', '.join(map(str, existing))}: already "
            f"{'exists' if len(existing) == 1 else 'exist'}; nothing was written "
            "(use --force to overwrite)"
        )
    written: list[Path] = []
    for file in files:
        try:
            write_atomic(file.path, file.text)
        except OutputError as exc:
            if not written:
                raise
            raise OutputError(f"{exc}; already written: {', '.join(map(str, written))}") from exc
        written.append(file.path)
    return written

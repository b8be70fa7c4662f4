"""A player of GitLab CI's pipeline rules: which jobs a pipeline gets and what reaches each.

Given a ``.gitlab-ci.yml`` (parsed, or read with :func:`load_config`, which follows ``extends``,
``!reference`` and local ``include``) and a :class:`PipelineContext` (the pipeline's source, its
ref, the merge request, the project it runs in with its variables, the pipeline variables a
user set), :func:`plan_pipeline` decides, as GitLab does when it creates a pipeline:

* whether the pipeline is created at all (``workflow: rules``; pipeline variables from a user
  below the project's minimum role),
* which jobs it gets, each with its ``when`` (``rules:`` with ``if:`` expressions over the
  predefined variables; a job without ``rules`` stays out of merge request pipelines),
* the environment of each job: the predefined variables of its source, the YAML variables, the
  project's (group's, instance's) variables that reach it (a protected variable only on a
  protected ref, an environment-scoped one only in a job deploying to a matching environment),
  and the pipeline variables over all of them.

:func:`run_job` then runs a job's ``before_script`` and ``script`` with exactly that
environment in a folder (bash, ``set -eo pipefail``, as the runner's bash shell does), and its
``after_script`` in a separate shell, capturing the log (masked variables shown ``[MASKED]``)
and the exit code.

Each rule cites the GitLab documentation page it follows. Not played: ``rules:changes``,
``rules:exists``, ``only``/``except``, ``parallel:matrix`` and includes other than local files
(each is a :class:`CiConfigError` saying so), protected environments, ``dotenv`` reports, and
anything a job's outcome decides (``on_failure``, ``needs`` order): the caller plays the jobs in
order and decides.
"""

from __future__ import annotations

import fnmatch
import hashlib
import os
import re
import secrets
import shlex
import signal
import subprocess
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml

__all__ = [
    "SOURCES",
    "CiConfigError",
    "CiProject",
    "CiVariable",
    "JobResult",
    "MergeRequestInfo",
    "Pipeline",
    "PipelineContext",
    "PlannedJob",
    "evaluate",
    "load_config",
    "plan_pipeline",
    "run_job",
]

SOURCES = frozenset(
    {"push", "merge_request_event", "schedule", "web", "api", "trigger", "pipeline", "chat"}
)
"""Pipeline sources a context may name (docs.gitlab.com/ci/jobs/job_rules/
#ci_pipeline_source-predefined-variable)."""

_ROLE_LEVELS = {"developer": 30, "maintainer": 40, "owner": 50, "no_one_allowed": 10**6}
_DEFAULT_STAGES = ("build", "test", "deploy")
_RESERVED = frozenset(
    {
        "default",
        "include",
        "stages",
        "variables",
        "workflow",
        "image",
        "services",
        "cache",
        "before_script",
        "after_script",
        "types",
        "spec",
    }
)
_ZERO_SHA = "0" * 40
_VARIABLE_REF = re.compile(r"\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)")
_MAX_EXTENDS_DEPTH = 11


@dataclass(frozen=True, kw_only=True)
class CiVariable:
    """A CI/CD variable of a project, group or instance, as its settings hold it."""

    key: str
    value: str
    protected: bool = False
    masked: bool = False
    environment_scope: str = "*"
    raw: bool = False
    """Not expanded (``$`` kept as it is)."""
    file: bool = False
    """A file-type variable: the job gets a path to a file holding the value."""


@dataclass(frozen=True, kw_only=True)
class CiProject:
    """The project a pipeline runs in, with the settings that decide what its jobs get."""

    id: int
    path: str
    default_branch: str = "main"
    protected_branches: tuple[str, ...] | None = None
    """Names or wildcards; ``None`` protects only the default branch, as a new project has."""
    protected_tags: tuple[str, ...] = ()
    variables: tuple[CiVariable, ...] = ()
    group_variables: tuple[CiVariable, ...] = ()
    instance_variables: tuple[CiVariable, ...] = ()
    pipeline_variables_minimum_role: str = "developer"
    """``developer``, ``maintainer``, ``owner`` or ``no_one_allowed``."""
    protected_mr_pipelines: bool = False
    """"Allow merge request pipelines to access protected variables and runners"."""

    def is_protected(self, ref: str, *, tag: bool = False) -> bool:
        patterns = (
            self.protected_tags if tag else (self.protected_branches or (self.default_branch,))
        )
        return any(fnmatch.fnmatchcase(ref, p) for p in patterns)


@dataclass(frozen=True, kw_only=True)
class MergeRequestInfo:
    """The merge request a ``merge_request_event`` pipeline is for."""

    iid: int
    id: int = 0
    title: str = "A change"
    target_project: CiProject
    source_project: CiProject
    source_branch: str
    target_branch: str
    source_sha: str
    """The head of the source branch."""
    target_sha: str
    """The tip of the target branch."""
    diff_base_sha: str
    """The merge base of the diff."""


@dataclass(frozen=True, kw_only=True)
class PipelineContext:
    """What a pipeline is created from."""

    source: str
    project: CiProject
    """The project the pipeline runs in (a fork's own pipeline runs in the fork)."""
    ref: str = ""
    """The branch or tag (ignored for a merge request pipeline: its source branch)."""
    tag: bool = False
    sha: str = ""
    """The commit built (for a merge request pipeline, computed from the merge request)."""
    merge_request: MergeRequestInfo | None = None
    merge_commit_sha: str | None = None
    """Set for a merged results pipeline: the merge commit GitLab made."""
    pipeline_variables: Mapping[str, str] = field(default_factory=dict)
    """Variables a user set on the pipeline (run, API, trigger, schedule)."""
    user: str = "someone"
    user_id: int = 1
    user_access_level: int = 30
    server_url: str = "https://gitlab.example.com"
    pipeline_id: int = 1000
    pipeline_iid: int = 1
    first_job_id: int = 5000
    commit_message: str = "A commit"


@dataclass(frozen=True, kw_only=True)
class PlannedJob:
    """A job the pipeline got, with the environment it runs with."""

    name: str
    stage: str
    when: str
    allow_failure: bool
    environment: str | None
    before_script: tuple[str, ...]
    script: tuple[str, ...]
    after_script: tuple[str, ...]
    variables: Mapping[str, str]
    """Every variable the job's shell gets, by name."""
    file_variables: frozenset[str]
    masked: frozenset[str]
    """Values the job log shows as ``[MASKED]``."""
    artifacts: Mapping[str, Any]
    needs: tuple[str, ...]


@dataclass(frozen=True, kw_only=True)
class Pipeline:
    """A pipeline as GitLab would create it, or the reason it would not."""

    created: bool
    refusal: str = ""
    jobs: tuple[PlannedJob, ...] = ()

    def job(self, name: str) -> PlannedJob:
        for job in self.jobs:
            if job.name == name:
                return job
        raise KeyError(f"no job {name!r} in the pipeline; it has {[j.name for j in self.jobs]}")

    @property
    def names(self) -> list[str]:
        return [job.name for job in self.jobs]


@dataclass(frozen=True, kw_only=True)
class JobResult:
    """What a job's run left: its exit code, its log and the environment it ran with."""

    name: str
    exit_code: int
    log: str
    environment: Mapping[str, str]

    @property
    def passed(self) -> bool:
        return self.exit_code == 0


class CiConfigError(ValueError):
    """A ``.gitlab-ci.yml`` GitLab would refuse, or a keyword the player does not play."""


# ---------------------------------------------------------------------- rules:if expressions

_TOKEN = re.compile(
    r"""\s*(?:
        (?P<paren>[()])
      | (?P<logic>&&|\|\|)
      | (?P<op>==|!=|=~|!~)
      | \$\{(?P<braced>[A-Za-z_][A-Za-z0-9_]*)\}
      | \$(?P<var>[A-Za-z_][A-Za-z0-9_]*)
      | "(?P<dq>[^"]*)"
      | '(?P<sq>[^']*)'
      | /(?P<regex>(?:\\.|[^/\\])+)/(?P<flags>[imsx]*)
      | (?P<null>null)\b
    )""",
    re.VERBOSE,
)
_FLAGS = {"i": re.IGNORECASE, "m": re.DOTALL, "s": re.DOTALL, "x": re.VERBOSE}


@dataclass(frozen=True)
class _Regex:
    pattern: str
    flags: str

    def compiled(self, where: str) -> re.Pattern[str]:
        if len(self.pattern) == 1:
            # docs.gitlab.com/ci/jobs/job_rules/#compare-a-variable-to-a-regular-expression
            raise CiConfigError(f"{where}: invalid expression syntax (a one-character regex)")
        flags = 0
        for flag in self.flags:
            flags |= _FLAGS[flag]
        try:
            return re.compile(self.pattern.replace("\\/", "/"), flags)
        except re.error as exc:
            raise CiConfigError(
                f"{where}: invalid regular expression /{self.pattern}/: {exc}"
            ) from exc


def _tokens(text: str, where: str) -> list[tuple[str, Any]]:
    found: list[tuple[str, Any]] = []
    position = 0
    while position < len(text):
        if text[position:].strip() == "":
            break
        match = _TOKEN.match(text, position)
        if match is None or match.end() == position or match.lastgroup is None:
            raise CiConfigError(f"{where}: invalid expression syntax at {text[position:]!r}")
        kind = match.lastgroup
        if kind in ("braced", "var"):
            found.append(("var", match.group(kind)))
        elif kind in ("dq", "sq"):
            found.append(("str", match.group(kind)))
        elif kind in ("regex", "flags"):
            found.append(("regex", _Regex(match.group("regex"), match.group("flags"))))
        elif kind == "null":
            found.append(("null", None))
        else:
            found.append((kind, match.group(kind)))
        position = match.end()
    return found


class _Expression:
    """A recursive-descent reading of GitLab's CI/CD variable expressions
    (docs.gitlab.com/ci/jobs/job_rules/#cicd-variable-expressions): ``==``, ``!=``, ``=~``,
    ``!~``, ``&&`` before ``||``, parentheses first; a bare variable is true when defined and
    not empty; an undefined variable is ``null``, which differs from ``""``."""

    def __init__(self, text: str, values: Mapping[str, str], where: str) -> None:
        self.tokens = _tokens(text, where)
        self.values = values
        self.where = where
        self.index = 0

    def parse(self) -> bool:
        if not self.tokens:
            raise CiConfigError(f"{self.where}: an empty expression")
        result = self._or()
        if self.index != len(self.tokens):
            raise CiConfigError(
                f"{self.where}: invalid expression syntax near token {self.index + 1}"
            )
        return result

    def _peek(self) -> tuple[str, Any] | None:
        return self.tokens[self.index] if self.index < len(self.tokens) else None

    def _take(self) -> tuple[str, Any]:
        token = self._peek()
        if token is None:
            raise CiConfigError(f"{self.where}: the expression ends too early")
        self.index += 1
        return token

    def _or(self) -> bool:
        result = self._and()
        while self._peek() == ("logic", "||"):
            self._take()
            right = self._and()
            result = result or right
        return result

    def _and(self) -> bool:
        result = self._primary()
        while self._peek() == ("logic", "&&"):
            self._take()
            right = self._primary()
            result = result and right
        return result

    def _primary(self) -> bool:
        if self._peek() == ("paren", "("):
            self._take()
            result = self._or()
            if self._take() != ("paren", ")"):
                raise CiConfigError(f"{self.where}: a parenthesis is not closed")
            return result
        left = self._operand()
        token = self._peek()
        if token is None or token[0] != "op":
            if isinstance(left, _Regex):
                raise CiConfigError(f"{self.where}: a regular expression alone is not a condition")
            return bool(left)
        operator = self._take()[1]
        right = self._operand()
        return self._compare(left, operator, right)

    def _operand(self) -> str | _Regex | None:
        kind, value = self._take()
        if kind == "var":
            return self.values.get(value)
        if kind in ("str", "regex"):
            return value  # type: ignore[no-any-return]
        if kind == "null":
            return None
        raise CiConfigError(f"{self.where}: invalid expression syntax near {value!r}")

    def _compare(
        self, left: str | _Regex | None, operator: str, right: str | _Regex | None
    ) -> bool:
        if isinstance(left, _Regex):
            raise CiConfigError(f"{self.where}: a regular expression must be on the right side")
        if operator in ("==", "!="):
            if isinstance(right, _Regex):
                raise CiConfigError(f"{self.where}: compare with a regular expression by =~")
            return (left == right) == (operator == "==")
        if isinstance(right, str):
            # A variable holding /pattern/ is a regular expression; any other string is matched
            # as GitLab does, left within right (job_rules: "Unexpected behavior ... =~").
            literal = re.fullmatch(r"/(.+)/([imsx]*)", right)
            right = _Regex(literal.group(1), literal.group(2)) if literal else right
        if left is None or right is None:
            found = False
        elif isinstance(right, _Regex):
            found = right.compiled(self.where).search(left) is not None
        else:
            found = left in right
        return found == (operator == "=~")


def evaluate(expression: str, values: Mapping[str, str], *, where: str = "rules:if") -> bool:
    """Whether ``expression`` (a ``rules:if``) is true with ``values`` defined."""
    return _Expression(expression, values, where).parse()


# ---------------------------------------------------------------------- reading the YAML


class _Reference(list[Any]):
    """A ``!reference [job, key]`` tag, resolved after loading."""


class _Loader(yaml.SafeLoader):
    pass


def _construct_reference(loader: yaml.SafeLoader, node: yaml.Node) -> _Reference:
    assert isinstance(node, yaml.SequenceNode)
    return _Reference(loader.construct_sequence(node))


_Loader.add_constructor("!reference", _construct_reference)


def load_config(source: str | Path, *, root: Path | None = None) -> dict[str, Any]:
    """Read a ``.gitlab-ci.yml`` (a path, or its text with local includes under ``root``).

    Local ``include`` files are merged under the including file, ``!reference`` tags and
    ``extends`` are resolved (docs.gitlab.com/ci/yaml/yaml_optimization/).
    """
    if isinstance(source, Path):
        text, root = source.read_text(encoding="utf-8"), root or source.parent
    else:
        text = source
    config = _parse(text, root)
    return _resolve_extends(_resolve_references(config, config))


def _parse(text: str, root: Path | None, depth: int = 0) -> dict[str, Any]:
    loaded = yaml.load(text, Loader=_Loader)
    if not isinstance(loaded, dict):
        raise CiConfigError("the CI configuration must be a mapping of jobs and keywords")
    includes = loaded.pop("include", None)
    merged: dict[str, Any] = {}
    for local in _local_includes(includes):
        if root is None or depth > 10:
            raise CiConfigError(f"include {local!r}: no folder to read it from (pass root=)")
        merged = _deep_merge(
            merged, _parse((root / local.lstrip("/")).read_text(), root, depth + 1)
        )
    return _deep_merge(merged, loaded)


def _local_includes(includes: Any) -> list[str]:
    if includes is None:
        return []
    entries = includes if isinstance(includes, list) else [includes]
    found = []
    for entry in entries:
        if isinstance(entry, str) and not entry.startswith(("http://", "https://")):
            found.append(entry)
        elif isinstance(entry, dict) and set(entry) == {"local"}:
            found.append(str(entry["local"]))
        else:
            raise CiConfigError(f"include {entry!r}: only local files are played")
    return found


def _deep_merge(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """Hashes merged key by key, anything else replaced (docs.gitlab.com/ci/yaml/#extends)."""
    merged = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def _resolve_references(value: Any, config: Mapping[str, Any], depth: int = 0) -> Any:
    if depth > 10:
        raise CiConfigError("!reference nested more than 10 levels")
    if isinstance(value, _Reference):
        target: Any = config
        for key in value:
            if not isinstance(target, dict) or key not in target:
                raise CiConfigError(f"!reference {list(value)}: no such key")
            target = target[key]
        return _resolve_references(target, config, depth + 1)
    if isinstance(value, dict):
        return {k: _resolve_references(v, config, depth) for k, v in value.items()}
    if isinstance(value, list):
        out: list[Any] = []
        for item in value:
            resolved = _resolve_references(item, config, depth)
            # A referenced list inside a list is spliced in, as GitLab flattens scripts.
            out.extend(
                resolved
                if isinstance(item, _Reference) and isinstance(resolved, list)
                else [resolved]
            )
        return out
    return value


def _resolve_extends(config: dict[str, Any]) -> dict[str, Any]:
    def expand(name: str, seen: tuple[str, ...]) -> dict[str, Any]:
        if len(seen) > _MAX_EXTENDS_DEPTH:
            raise CiConfigError(f"{name}: extends nested more than {_MAX_EXTENDS_DEPTH} levels")
        job = config.get(name)
        if not isinstance(job, dict):
            raise CiConfigError(f"{seen[-1] if seen else name}: extends unknown job {name!r}")
        parents = job.get("extends") or []
        merged: dict[str, Any] = {}
        for parent in [parents] if isinstance(parents, str) else parents:
            if parent in seen:
                raise CiConfigError(f"{name}: circular extends through {parent!r}")
            merged = _deep_merge(merged, expand(parent, (*seen, name)))
        merged = _deep_merge(merged, {k: v for k, v in job.items() if k != "extends"})
        return merged

    return {
        name: expand(name, ()) if isinstance(value, dict) and "extends" in value else value
        for name, value in config.items()
    }


# ---------------------------------------------------------------------- variables


def _slug(text: str, limit: int = 63) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower())[:limit].strip("-")


def _yaml_variables(raw: Any, where: str) -> dict[str, tuple[str, bool]]:
    """Variables of a ``variables:`` keyword: name to (value, expand)."""
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise CiConfigError(f"{where}: variables must be a mapping")
    found: dict[str, tuple[str, bool]] = {}
    for key, value in raw.items():
        if isinstance(value, dict):
            expand = value.get("expand", True) is not False
            value = value.get("value", "")
        else:
            expand = True
        if isinstance(value, bool):
            value = "true" if value else "false"
        found[str(key)] = ("" if value is None else str(value), expand)
    return found


def _scope_rank(scope: str, environment: str | None) -> int | None:
    """How specifically ``scope`` names the job's environment, or None when it does not
    (docs.gitlab.com/ci/environments/#limit-the-environment-scope-of-a-cicd-variable):
    ``*`` reaches every job; any other scope only a job whose environment it matches, an exact
    name before a wildcard."""
    if scope == "*":
        return 0
    if environment is None or not fnmatch.fnmatchcase(environment, scope):
        return None
    return 2 if "*" not in scope else 1


def _settings_variables(
    variables: Iterable[CiVariable], *, protected_ref: bool, environment: str | None
) -> dict[str, CiVariable]:
    """The variables of one level (project, group, instance) that reach a job: protected ones
    only on a protected ref (docs.gitlab.com/ci/variables/#protect-a-cicd-variable), scoped
    ones only in a matching environment, the most specific scope winning."""
    chosen: dict[str, tuple[int, CiVariable]] = {}
    for variable in variables:
        if variable.protected and not protected_ref:
            continue
        rank = _scope_rank(variable.environment_scope, environment)
        if rank is None:
            continue
        if variable.key not in chosen or rank > chosen[variable.key][0]:
            chosen[variable.key] = (rank, variable)
    return {key: variable for key, (_, variable) in chosen.items()}


def _protected_ref(ctx: PipelineContext) -> bool:
    """Whether the pipeline runs for a protected ref (``CI_COMMIT_REF_PROTECTED``).

    A merge request pipeline is not protected, unless the project lets merge request pipelines
    reach protected variables and both branches are protected in the same project, never a
    fork's (docs.gitlab.com/ci/pipelines/merge_request_pipelines/
    #control-access-to-protected-variables-and-runners).
    """
    mr = ctx.merge_request
    if mr is None:
        return ctx.project.is_protected(ctx.ref, tag=ctx.tag)
    same_project = mr.source_project.id == mr.target_project.id == ctx.project.id
    return (
        ctx.project.protected_mr_pipelines
        and same_project
        and mr.target_project.is_protected(mr.target_branch)
        and mr.source_project.is_protected(mr.source_branch)
    )


def _predefined(ctx: PipelineContext) -> dict[str, str]:
    """The predefined variables known when the pipeline is created, per source
    (docs.gitlab.com/ci/variables/predefined_variables/)."""
    server = urlsplit(ctx.server_url)
    project = ctx.project
    mr = ctx.merge_request
    ref = mr.source_branch if mr is not None else ctx.ref
    sha = ctx.sha
    if mr is not None:
        # Detached: the source branch's head; merged results: the merge commit GitLab made
        # (docs.gitlab.com/ci/pipelines/merged_results_pipelines/).
        sha = ctx.merge_commit_sha or mr.source_sha
    values = {
        "CI": "true",
        "GITLAB_CI": "true",
        "CI_SERVER_URL": ctx.server_url,
        "CI_SERVER_HOST": server.hostname or "",
        "CI_SERVER_PORT": str(server.port or (443 if server.scheme == "https" else 80)),
        "CI_SERVER_PROTOCOL": server.scheme,
        "CI_API_V4_URL": f"{ctx.server_url}/api/v4",
        "CI_PROJECT_ID": str(project.id),
        "CI_PROJECT_PATH": project.path,
        "CI_PROJECT_NAME": project.path.rpartition("/")[2],
        "CI_PROJECT_NAMESPACE": project.path.rpartition("/")[0],
        "CI_PROJECT_URL": f"{ctx.server_url}/{project.path}",
        "CI_DEFAULT_BRANCH": project.default_branch,
        "CI_CONFIG_PATH": ".gitlab-ci.yml",
        "CI_PIPELINE_SOURCE": ctx.source,
        "CI_PIPELINE_IID": str(ctx.pipeline_iid),
        "CI_COMMIT_SHA": sha,
        "CI_COMMIT_SHORT_SHA": sha[:8],
        "CI_COMMIT_REF_NAME": ref,
        "CI_COMMIT_REF_SLUG": _slug(ref),
        "CI_COMMIT_REF_PROTECTED": "true" if _protected_ref(ctx) else "false",
        "CI_COMMIT_BEFORE_SHA": _ZERO_SHA,
        "CI_COMMIT_MESSAGE": ctx.commit_message,
        "CI_COMMIT_TITLE": ctx.commit_message.splitlines()[0] if ctx.commit_message else "",
        "GITLAB_USER_LOGIN": ctx.user,
        "GITLAB_USER_ID": str(ctx.user_id),
        "CI_NODE_TOTAL": "1",
    }
    if ctx.source == "trigger":
        values["CI_PIPELINE_TRIGGERED"] = "true"
    # CI_COMMIT_BRANCH: branch pipelines only, not merge request or tag pipelines.
    if mr is None and ctx.tag:
        values["CI_COMMIT_TAG"] = ctx.ref
    elif mr is None:
        values["CI_COMMIT_BRANCH"] = ctx.ref
    if mr is not None:
        merged = ctx.merge_commit_sha is not None
        target, source = mr.target_project, mr.source_project
        values.update(
            {
                "CI_MERGE_REQUEST_ID": str(mr.id or mr.iid),
                "CI_MERGE_REQUEST_IID": str(mr.iid),
                "CI_MERGE_REQUEST_TITLE": mr.title,
                "CI_MERGE_REQUEST_EVENT_TYPE": "merged_result" if merged else "detached",
                "CI_MERGE_REQUEST_PROJECT_ID": str(target.id),
                "CI_MERGE_REQUEST_PROJECT_PATH": target.path,
                "CI_MERGE_REQUEST_PROJECT_URL": f"{ctx.server_url}/{target.path}",
                "CI_MERGE_REQUEST_REF_PATH": f"refs/merge-requests/{mr.iid}/head",
                "CI_MERGE_REQUEST_SOURCE_BRANCH_NAME": mr.source_branch,
                "CI_MERGE_REQUEST_SOURCE_BRANCH_PROTECTED": _bool(
                    source.is_protected(mr.source_branch)
                ),
                "CI_MERGE_REQUEST_SOURCE_PROJECT_ID": str(source.id),
                "CI_MERGE_REQUEST_SOURCE_PROJECT_PATH": source.path,
                "CI_MERGE_REQUEST_SOURCE_PROJECT_URL": f"{ctx.server_url}/{source.path}",
                "CI_MERGE_REQUEST_TARGET_BRANCH_NAME": mr.target_branch,
                "CI_MERGE_REQUEST_TARGET_BRANCH_PROTECTED": _bool(
                    target.is_protected(mr.target_branch)
                ),
                "CI_MERGE_REQUEST_DIFF_BASE_SHA": mr.diff_base_sha,
                # Empty in a detached merge request pipeline, set in a merged results one.
                "CI_MERGE_REQUEST_SOURCE_BRANCH_SHA": mr.source_sha if merged else "",
                "CI_MERGE_REQUEST_TARGET_BRANCH_SHA": mr.target_sha if merged else "",
            }
        )
    return values


def _bool(value: bool) -> str:
    return "true" if value else "false"


def _expand(values: Mapping[str, str], raw: frozenset[str]) -> dict[str, str]:
    """``$NAME`` and ``${NAME}`` replaced by the variable's value, ``$$`` by ``$``, except in
    raw variables (docs.gitlab.com/ci/variables/#prevent-cicd-variable-expansion)."""
    done: dict[str, str] = {}

    def value_of(key: str, stack: tuple[str, ...]) -> str:
        if key in done:
            return done[key]
        text = values[key]
        if key in raw or key in stack:
            return text

        def replace_ref(match: re.Match[str]) -> str:
            if match.group(0) == "$$":
                return "$"
            name = match.group(1) or match.group(2)
            return value_of(name, (*stack, key)) if name in values else ""

        done[key] = _VARIABLE_REF.sub(replace_ref, text)
        return done[key]

    return {key: value_of(key, ()) for key in values}


# ---------------------------------------------------------------------- planning


def _rule_context(
    ctx: PipelineContext, predefined: Mapping[str, str], yaml_vars: Mapping[str, str]
) -> dict[str, str]:
    """What ``rules:if`` reads: predefined, YAML, settings variables not scoped to an
    environment (docs.gitlab.com/ci/environments/: scoped variables "might not be defined" when
    rules are evaluated) and pipeline variables, in precedence order."""
    protected = _protected_ref(ctx)
    values = {**predefined, **yaml_vars}
    for level in (
        ctx.project.instance_variables,
        ctx.project.group_variables,
        ctx.project.variables,
    ):
        for key, variable in _settings_variables(
            level, protected_ref=protected, environment=None
        ).items():
            values[key] = variable.value
    values.update(ctx.pipeline_variables)
    return values


def _match_rules(rules: Any, values: Mapping[str, str], where: str) -> dict[str, Any] | None:
    """The first rule that matches, or None (docs.gitlab.com/ci/jobs/job_rules/: "Rules are
    evaluated in order until the first match")."""
    if not isinstance(rules, list):
        raise CiConfigError(f"{where}: rules must be a list")
    for index, rule in enumerate(rules):
        if not isinstance(rule, dict):
            raise CiConfigError(f"{where}: rules[{index}] must be a mapping")
        for keyword in ("changes", "exists"):
            if keyword in rule:
                raise CiConfigError(f"{where}: rules[{index}]: rules:{keyword} is not played")
        condition = rule.get("if")
        if condition is None or evaluate(str(condition), values, where=f"{where}: rules[{index}]"):
            return rule
    return None


def _workflow(config: Mapping[str, Any], values: Mapping[str, str]) -> tuple[bool, dict[str, str]]:
    """Whether ``workflow: rules`` let the pipeline be created, and the variables the matching
    rule adds (docs.gitlab.com/ci/yaml/#workflowrules: no rule true, no pipeline; ``when`` is
    ``always`` or ``never``)."""
    workflow = config.get("workflow") or {}
    if "rules" not in workflow:
        return True, {}
    rule = _match_rules(workflow["rules"], values, "workflow")
    if rule is None or rule.get("when", "always") == "never":
        return False, {}
    variables = _yaml_variables(rule.get("variables"), "workflow:rules:variables")
    return True, {k: v for k, (v, _) in variables.items()}


def _stages(config: Mapping[str, Any]) -> list[str]:
    declared = config.get("stages") or list(_DEFAULT_STAGES)
    return [".pre", *[str(s) for s in declared if s not in (".pre", ".post")], ".post"]


def _job_when(
    job: Mapping[str, Any], values: Mapping[str, str], name: str, mr: bool
) -> tuple[str, dict[str, Any]]:
    """The job's ``when`` in this pipeline (``never``: left out), and the matching rule."""
    for keyword in ("only", "except"):
        if keyword in job:
            raise CiConfigError(f"{name}: {keyword} is not played; use rules")
    if "rules" not in job:
        # Jobs with no rules default to "except: merge_requests"
        # (docs.gitlab.com/ci/jobs/job_rules/#avoid-duplicate-pipelines).
        return ("never" if mr else str(job.get("when", "on_success"))), {}
    rule = _match_rules(job["rules"], values, name)
    if rule is None:
        return "never", {}
    return str(rule.get("when", job.get("when", "on_success"))), rule


def _script(value: Any, name: str, keyword: str) -> tuple[str, ...]:
    if value is None:
        return ()
    lines = [value] if isinstance(value, str) else value
    if not isinstance(lines, list):
        raise CiConfigError(f"{name}: {keyword} must be a string or a list of strings")
    flat: list[str] = []
    for line in lines:
        for item in line if isinstance(line, list) else [line]:
            if not isinstance(item, str | int | float) or isinstance(item, bool):
                # A line such as `- echo "a: b"` is a mapping to YAML, as GitLab refuses it.
                raise CiConfigError(
                    f"{name}: {keyword} config should be a string or a nested array of strings"
                )
            flat.append(str(item))
    return tuple(flat)


def plan_pipeline(config: Mapping[str, Any], ctx: PipelineContext) -> Pipeline:
    """The pipeline GitLab would create from ``config`` in ``ctx``."""
    if ctx.source not in SOURCES:
        raise CiConfigError(f"unknown pipeline source {ctx.source!r}; one of {sorted(SOURCES)}")
    if (ctx.source == "merge_request_event") != (ctx.merge_request is not None):
        raise CiConfigError("a merge_request_event pipeline, and only one, has a merge request")
    minimum = _ROLE_LEVELS.get(ctx.project.pipeline_variables_minimum_role)
    if minimum is None:
        raise CiConfigError(f"unknown role {ctx.project.pipeline_variables_minimum_role!r}")
    if ctx.pipeline_variables and ctx.user_access_level < minimum:
        # docs.gitlab.com/ci/variables/#restrict-pipeline-variables
        return Pipeline(created=False, refusal="Insufficient permissions to set pipeline variables")
    predefined = _predefined(ctx)
    global_vars = _yaml_variables(config.get("variables"), "variables")
    values = _rule_context(ctx, predefined, {k: v for k, (v, _) in global_vars.items()})
    created, workflow_vars = _workflow(config, values)
    if not created:
        return Pipeline(created=False, refusal="workflow:rules matched no rule, or when: never")
    global_vars.update({k: (v, True) for k, v in workflow_vars.items()})
    stages = _stages(config)
    defaults = config.get("default") or {}
    jobs: list[PlannedJob] = []
    for name, body in config.items():
        if name in _RESERVED or str(name).startswith(".") or not isinstance(body, dict):
            continue
        if "trigger" in body:
            raise CiConfigError(f"{name}: trigger jobs are not played")
        jobs.extend(
            _plan_job(
                str(name),
                body,
                ctx=ctx,
                predefined=predefined,
                global_vars=global_vars,
                defaults=defaults,
                stages=stages,
                first_id=ctx.first_job_id + len(jobs),
            )
        )
    jobs.sort(key=lambda job: stages.index(job.stage))
    return Pipeline(created=True, jobs=tuple(jobs))


def _plan_job(
    name: str,
    body: Mapping[str, Any],
    *,
    ctx: PipelineContext,
    predefined: Mapping[str, str],
    global_vars: Mapping[str, tuple[str, bool]],
    defaults: Mapping[str, Any],
    stages: Sequence[str],
    first_id: int,
) -> list[PlannedJob]:
    job_vars = _yaml_variables(body.get("variables"), f"{name}: variables")
    # A job's "variables: {}" drops the default variables
    # (docs.gitlab.com/ci/variables/#skip-default-variables-in-a-single-job), as does
    # "inherit: variables: false"; a list keeps only those named.
    inherit = (body.get("inherit") or {}).get("variables", body.get("variables") != {})
    inherited = (
        global_vars
        if inherit is True
        else {k: v for k, v in global_vars.items() if isinstance(inherit, list) and k in inherit}
    )
    yaml_vars = {**inherited, **job_vars}
    values = _rule_context(
        ctx, {**predefined, "CI_JOB_NAME": name}, {k: v for k, (v, _) in yaml_vars.items()}
    )
    stage = str(body.get("stage", "test"))
    if stage not in stages:
        raise CiConfigError(
            f"{name}: chosen stage {stage!r} does not exist; stages: {list(stages)}"
        )
    when, rule = _job_when(body, values, name, ctx.merge_request is not None)
    if when == "never":
        return []
    yaml_vars.update(_yaml_variables(rule.get("variables"), f"{name}: rules:variables"))
    count = body.get("parallel", 1)
    if not isinstance(count, int) or count < 1:
        raise CiConfigError(f"{name}: only a numeric parallel is played")
    planned = []
    for index in range(1, count + 1):
        job_name = name if count == 1 else f"{name} {index}/{count}"
        extra = {} if count == 1 else {"CI_NODE_INDEX": str(index), "CI_NODE_TOTAL": str(count)}
        planned.append(
            _job_environment(
                job_name,
                body,
                ctx=ctx,
                predefined={**predefined, **extra},
                yaml_vars=yaml_vars,
                defaults=defaults,
                stage=stage,
                when=when,
                job_id=first_id + index - 1,
            )
        )
    return planned


def _environment_name(body: Mapping[str, Any], values: Mapping[str, str], name: str) -> str | None:
    raw = body.get("environment")
    if raw is None:
        return None
    env = raw.get("name") if isinstance(raw, dict) else raw
    if not isinstance(env, str) or not env:
        raise CiConfigError(f"{name}: environment needs a name")
    return _expand({**values, "__ENV__": env}, frozenset())["__ENV__"]


def _job_environment(
    name: str,
    body: Mapping[str, Any],
    *,
    ctx: PipelineContext,
    predefined: Mapping[str, str],
    yaml_vars: Mapping[str, tuple[str, bool]],
    defaults: Mapping[str, Any],
    stage: str,
    when: str,
    job_id: int,
) -> PlannedJob:
    """The job's variables in GitLab's order of precedence, lowest first: predefined, YAML
    default then job variables, instance, group, project, pipeline variables
    (docs.gitlab.com/ci/variables/#cicd-variable-precedence)."""
    protected = _protected_ref(ctx)
    job_token = "glcbt-" + secrets.token_hex(10)
    base = {
        **predefined,
        "CI_JOB_NAME": name,
        "CI_JOB_NAME_SLUG": _slug(name),
        "CI_JOB_STAGE": stage,
        "CI_JOB_ID": str(job_id),
        "CI_JOB_URL": f"{ctx.server_url}/{ctx.project.path}/-/jobs/{job_id}",
        "CI_JOB_TOKEN": job_token,
        "CI_PIPELINE_ID": str(ctx.pipeline_id),
        "CI_PIPELINE_URL": f"{ctx.server_url}/{ctx.project.path}/-/pipelines/{ctx.pipeline_id}",
        "CI_SERVER": "yes",
    }
    if when == "manual":
        base["CI_JOB_MANUAL"] = "true"
    plain = {**base, **{k: v for k, (v, _) in yaml_vars.items()}}
    environment = _environment_name(body, plain, name)
    if environment is not None:
        base.update(
            {
                "CI_ENVIRONMENT_NAME": environment,
                "CI_ENVIRONMENT_SLUG": _slug(environment, 24),
                "CI_ENVIRONMENT_ACTION": str((body.get("environment") or {}).get("action", "start"))
                if isinstance(body.get("environment"), dict)
                else "start",
            }
        )
    values: dict[str, str] = dict(base)
    raw = {k for k, (_, expand) in yaml_vars.items() if not expand}
    values.update({k: v for k, (v, _) in yaml_vars.items()})
    masked: set[str] = {job_token}
    files: set[str] = set()
    for level in (
        ctx.project.instance_variables,
        ctx.project.group_variables,
        ctx.project.variables,
    ):
        for key, variable in _settings_variables(
            level, protected_ref=protected, environment=environment
        ).items():
            values[key] = variable.value
            raw.discard(key)
            if variable.raw:
                raw.add(key)
            files.discard(key)
            if variable.file:
                files.add(key)
            if variable.masked and len(variable.value) >= 8:
                masked.add(variable.value)
    for key, value in ctx.pipeline_variables.items():
        values[key] = value
        raw.discard(key)
        files.discard(key)
    expanded = _expand(values, frozenset(raw | files))
    return PlannedJob(
        name=name,
        stage=stage,
        when=when,
        allow_failure=bool(body.get("allow_failure", False)),
        environment=environment,
        before_script=_script(
            body.get("before_script", defaults.get("before_script")), name, "before_script"
        ),
        script=_script(body.get("script"), name, "script"),
        after_script=_script(
            body.get("after_script", defaults.get("after_script")), name, "after_script"
        ),
        variables=expanded,
        file_variables=frozenset(files),
        masked=frozenset(masked),
        artifacts=dict(body.get("artifacts") or defaults.get("artifacts") or {}),
        needs=tuple(
            str(n if isinstance(n, str) else n.get("job")) for n in body.get("needs") or []
        ),
    )


# ---------------------------------------------------------------------- running


def _base_environment() -> dict[str, str]:
    """What the runner's own process lends a job's shell: a PATH, a home, a locale."""
    keep = ("PATH", "HOME", "LANG", "TMPDIR")
    env = {key: os.environ[key] for key in keep if key in os.environ}
    env.setdefault("PATH", "/usr/local/bin:/usr/bin:/bin")
    env.setdefault("LANG", "C.UTF-8")
    return env


def _shell_script(lines: Sequence[str]) -> str:
    """The lines as the runner's bash shell runs them: ``set -eo pipefail`` (gitlab-runner
    issue 25394), each line echoed as ``$ line`` before it runs."""
    body = ["set -eo pipefail"]
    for line in lines:
        body.append(f"printf '%s\\n' {shlex.quote('$ ' + line)}")
        body.append(line)
    return "\n".join(body) + "\n"


def _run_shell(
    script: str, env: Mapping[str, str], folder: Path, timeout: float
) -> tuple[int, str]:
    with subprocess.Popen(
        ["bash", "--noprofile", "--norc", "-c", script],
        cwd=folder,
        env=dict(env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    ) as process:
        try:
            output, _ = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            output, _ = process.communicate()
            return 124, output.decode(
                errors="replace"
            ) + f"\nERROR: Job timed out after {timeout}s\n"
        return process.returncode, output.decode(errors="replace")


def run_job(
    job: PlannedJob,
    folder: Path,
    *,
    timeout: float = 120.0,
    base_env: Mapping[str, str] | None = None,
) -> JobResult:
    """Run ``job``'s scripts in ``folder`` with its environment; the result.

    ``before_script`` and ``script`` run in one shell, ``after_script`` in another whose
    failure does not fail the job (docs.gitlab.com/ci/variables/#exporting-variables,
    docs.gitlab.com/ci/yaml/#after_script). File-type variables are written to files outside
    ``folder``. ``base_env`` is what the runner's process lends (a minimal PATH, HOME and
    locale when not given); nothing else of the calling process reaches the job.
    """
    folder = Path(folder)
    with tempfile.TemporaryDirectory(prefix="ci-files-") as files_dir:
        env = dict(_base_environment() if base_env is None else base_env)
        env.update(job.variables)
        env.update({"CI_PROJECT_DIR": str(folder), "CI_BUILDS_DIR": str(folder.parent)})
        for key in sorted(job.file_variables):
            path = Path(files_dir) / hashlib.sha256(key.encode()).hexdigest()[:16]
            path.write_text(job.variables[key], encoding="utf-8")
            env[key] = str(path)
        code, log = _run_shell(
            _shell_script([*job.before_script, *job.script]), env, folder, timeout
        )
        if job.after_script:
            after_env = {**env, "CI_JOB_STATUS": "success" if code == 0 else "failed"}
            _, after_log = _run_shell(_shell_script(job.after_script), after_env, folder, timeout)
            log += after_log
    for value in sorted(job.masked, key=len, reverse=True):
        log = log.replace(value, "[MASKED]")
    return JobResult(name=job.name, exit_code=code, log=log, environment=env)

"""Plays the jobs of the workflows ``ragaliq init`` writes, step by step, as a runner would.

Each job gets a fresh runner folder; each step is played from the workflow file itself (its
``with:``, ``if:`` and ``${{ }}`` expressions), so a test fails when a workflow stops working:

- ``actions/checkout``: a clone of the repository at ``with.ref`` (else the event's commit);
- ``run:``: the pull request's pipeline, played by a Python function of the test (it may do
  anything in its runner folder, and save caches in its run's scope as code holding the runner's
  token can), or the step's own shell when it is the placeholder; the step that installs RagaliQ
  Gate for the pipeline (already installed here); the review job's one step, which must run no
  code of the pull request (nothing is checked out there);
- ``actions/upload-artifact``: the file zipped and uploaded to the fake GitHub for this run;
- ``actions/cache/restore`` and ``save``: caches kept by scope as GitHub keeps them, and restored
  from the run's own ref, then the pull request's base branch, then the default branch, by key
  prefix; an entry is an archive whose names may be absolute (``/github/workspace/...``, the
  runner's workspace; ``/github/workflow/event.json``, the event file the action reads), and
  restoring unpacks it where it says;
- ``ragaliq/ragaliq-gate``: ``python -I -m ragaliq action`` with the step's ``with:`` as inputs
  over ``action.yml``'s defaults (an input ``action.yml`` does not declare fails the test).

Every job played is recorded on the fake GitHub as a run of its workflow file, started by the
event it is played for (on the branch a push was to), so that a gate can list the runs of a head
commit, and check the run a baseline names, as GitHub lists them.

Anything else (another action, an expression this player does not know) fails the test.
"""

from __future__ import annotations

import io
import re
import subprocess
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from tests.e2e.workspace import KEY, REPO, TOKEN, Action, git

ROOT = Path(__file__).resolve().parents[2]
WORKFLOWS = ROOT / "src" / "ragaliq" / "workflows"
_EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}", re.DOTALL)
Pipeline = Callable[[Path], None]


def load_workflow(name: str) -> dict[str, Any]:
    """A workflow ``ragaliq init`` writes, parsed (``on`` stays ``on``)."""
    text = (WORKFLOWS / name).read_text(encoding="utf-8")
    workflow = yaml.safe_load(text)
    workflow["on"] = workflow.pop(True)
    workflow["file"] = name
    return workflow


def action_defaults() -> dict[str, str]:
    """Every input ``action.yml`` declares, with its default."""
    inputs = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))["inputs"]
    return {name: str(spec.get("default", "")) for name, spec in inputs.items()}


@dataclass
class JobResult:
    """What one played job did."""

    ran: bool
    code: int = 0
    log: str = ""
    outputs: dict[str, str] = field(default_factory=dict)
    summary: str = ""
    runner: Path | None = None
    log_all: str = ""
    """The logs of every action step of the job (``log`` is the last one's)."""


@dataclass(frozen=True)
class CacheEntry:
    """One saved cache: the scope (ref) it was saved in, its key, and its archive's files."""

    scope: str
    key: str
    files: dict[str, bytes]


DEFAULT_BRANCH = "main"


def cache_scope(event_name: str, event: dict[str, Any]) -> str:
    """The ref whose scope a run's caches are saved in, as GitHub scopes them."""
    if event_name in ("pull_request", "pull_request_review"):
        return f"refs/pull/{event['pull_request']['number']}/merge"
    if event_name == "push":
        return str(event["ref"])
    return f"refs/heads/{DEFAULT_BRANCH}"  # workflow_run and the like run on the default branch


def restore_scopes(event_name: str, event: dict[str, Any]) -> list[str]:
    """The scopes a run may restore from, in GitHub's order: its own, the base, the default."""
    scopes = [cache_scope(event_name, event)]
    if "pull_request" in event:
        scopes.append(f"refs/heads/{event['pull_request']['base']['ref']}")
    scopes.append(f"refs/heads/{DEFAULT_BRANCH}")
    return list(dict.fromkeys(scopes))


@dataclass
class Player:
    """Plays workflow jobs against an :class:`Action` (the repository and the fakes)."""

    action: Action
    caches: list[CacheEntry] = field(default_factory=list)
    """Saved caches, oldest first, as actions/cache keeps them."""
    restored: list[tuple[str, str]] = field(default_factory=list)
    """``(job, key)`` of every cache restored."""
    uploaded: dict[tuple[int, str], bytes] = field(default_factory=dict)
    """The file of every artifact uploaded, by ``(run id, artifact name)``."""
    secrets: dict[str, str] = field(default_factory=lambda: {"ANTHROPIC_API_KEY": KEY})
    token: str = TOKEN
    """The job's GITHUB_TOKEN."""

    def save_cache(self, scope: str, key: str, files: dict[str, bytes]) -> None:
        """Save a cache as the runner's token can from any step (the pull request's code too)."""
        self.caches.append(CacheEntry(scope=scope, key=key, files=files))

    def play(
        self,
        workflow: dict[str, Any],
        job_name: str,
        *,
        event: dict[str, Any],
        event_name: str,
        run_id: int,
        pipeline: Pipeline | None = None,
        needs: dict[str, JobResult] | None = None,
    ) -> JobResult:
        """Play one job; ``pipeline`` stands in for the "Generate RAG outputs" step."""
        job = workflow["jobs"][job_name]
        context = {
            "github": {
                "event": event,
                "event_name": event_name,
                "repository": REPO,
                "run_id": str(run_id),
                "token": self.token,
                "ref": event.get("ref", ""),
            },
            "secrets": self.secrets,
            "runner": {"os": "Linux"},
            "env": dict(workflow.get("env") or {}),
            "steps": {},
            "needs": {
                k: {"result": "success" if v.code == 0 else "failure"}
                for k, v in (needs or {}).items()
            },
        }
        if "if" in job and not truthy(evaluate_condition(str(job["if"]), context)):
            return JobResult(ran=False)
        self.action.github.add_run(
            REPO,
            run_id,
            workflow=workflow["file"],
            event=event_name,
            head_sha=_event_commit(event),
            head_branch=_event_branch(event),
            head_repo=_event_repository(event),
        )
        self.action.runs += 1
        runner = self.action.tmp / f"runner{self.action.runs}-{job_name}"
        runner.mkdir()
        result = JobResult(ran=True, runner=runner)
        context["job"] = job_name
        for step in job["steps"]:
            if "if" in step and not truthy(evaluate_condition(str(step["if"]), context)):
                continue
            self._step(step, context, runner, result, pipeline=pipeline, run_id=run_id)
        return result

    def _step(
        self,
        step: dict[str, Any],
        context: dict[str, Any],
        runner: Path,
        result: JobResult,
        *,
        pipeline: Pipeline | None,
        run_id: int,
    ) -> None:
        with_ = {k: substitute(str(v), context) for k, v in (step.get("with") or {}).items()}
        uses = str(step.get("uses", ""))
        outputs: dict[str, str] = {}
        if "run" in step and step.get("name") == "Hand over the review":
            assert not any(runner.iterdir()), "the review job must run with nothing checked out"
            assert "${{" not in step["run"], "the review job's step must read no event text"
            subprocess.run(["bash", "-c", step["run"]], cwd=runner, check=True)
        elif "run" in step and step.get("name") == "Install RagaliQ Gate for the pipeline":
            assert "secrets." not in str(step), "the install step must see no secret"
            assert "ragaliq-gate @ git+https://github.com/ragaliq/ragaliq-gate" in step["run"]
        elif "run" in step:
            assert step.get("name") == "Generate RAG outputs", f"unknown run step {step}"
            assert "secrets." not in str(step), "the pipeline step must see no secret"
            if pipeline is not None:
                pipeline(runner)
            else:
                subprocess.run(["bash", "-c", step["run"]], cwd=runner, check=True)
        elif uses.startswith("actions/checkout@"):
            event = context["github"]["event"]
            ref = with_.get("ref") or _event_commit(event)
            subprocess.run(
                ["git", "clone", "-q", "--no-checkout", str(self.action.workspace), str(runner)],
                check=True,
                capture_output=True,
            )
            git(runner, "checkout", "-q", "--detach", ref)
        elif uses.startswith("actions/upload-artifact@"):
            self._upload(with_, context, runner, run_id)
        elif uses.startswith("actions/cache/restore@"):
            outputs = self._restore(with_, context, runner)
        elif uses.startswith("actions/cache/save@"):
            files = {
                file.relative_to(runner).as_posix(): file.read_bytes()
                for file in runner.glob(with_["path"])
                if file.is_file()
            }
            github = context["github"]
            self.save_cache(cache_scope(github["event_name"], github["event"]), with_["key"], files)
        elif uses.startswith("ragaliq/ragaliq-gate@"):
            defaults = action_defaults()
            unknown = set(with_) - set(defaults)
            assert not unknown, f"inputs action.yml does not declare: {unknown}"
            inputs = {**defaults, **with_}
            if inputs["github-token"] == "${{ github.token }}":
                inputs["github-token"] = TOKEN
            inputs["anthropic-base-url"] = self.action.anthropic.base_url
            if inputs["github-token"] == TOKEN:
                inputs["github-token"] = self.token
            event = context["github"]["event"]
            result.code, result.log, result.outputs, result.summary = self.action.invoke(
                workspace=runner,
                event=event,
                event_name=context["github"]["event_name"],
                run_id=run_id,
                inputs={f"INPUT_{k.upper()}": v for k, v in inputs.items()},
                sha=_event_commit(event) if "after" in event else None,
                ref_name=_event_branch(event) if "after" in event else "",
                event_path=self._event_file(runner),
            )
            outputs = result.outputs
            result.log_all += result.log
        else:
            raise AssertionError(f"the player does not know the step {step}")
        if "id" in step:
            context["steps"][step["id"]] = {"outputs": outputs}

    def _upload(
        self, with_: dict[str, str], context: dict[str, Any], runner: Path, run_id: int
    ) -> None:
        path = runner / with_["path"]
        if not path.is_file():
            assert with_.get("if-no-files-found") == "ignore", f"no file to upload: {path}"
            return
        self.uploaded[(run_id, with_["name"])] = path.read_bytes()
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w") as archive:
            archive.write(path, path.name)
        head = _event_commit(context["github"]["event"])
        self.action.github.add_artifact(
            REPO, run_id, with_["name"], buffer.getvalue(), head_sha=head
        )

    def _restore(
        self, with_: dict[str, str], context: dict[str, Any], runner: Path
    ) -> dict[str, str]:
        github = context["github"]
        keys = [with_["key"], *with_.get("restore-keys", "").split()]
        scopes = restore_scopes(github["event_name"], github["event"])
        found = next(
            (
                entry
                for prefix in keys
                for scope in scopes
                for entry in reversed(self.caches)
                if entry.scope == scope and entry.key.startswith(prefix)
            ),
            None,
        )
        if found is not None:
            self.restored.append((context["job"], found.key))
            for name, data in found.files.items():
                target = self._unpacked_at(name, runner)
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
        return {"cache-primary-key": with_["key"], "cache-hit": str(found is not None).lower()}

    def _event_file(self, runner: Path) -> Path:
        """Where the runner keeps the job's event file (``/github/workflow/event.json``)."""
        return runner.parent / f"{runner.name}-github" / "workflow" / "event.json"

    def _unpacked_at(self, name: str, runner: Path) -> Path:
        """Where an archive's entry lands: a relative name in the workspace, an absolute one
        where it says (the runner's ``/github/workspace`` and ``/github/workflow``)."""
        if not name.startswith("/"):
            return runner / name
        if name.startswith("/github/workspace/"):
            return runner / name.removeprefix("/github/workspace/")
        assert name.startswith("/github/"), f"the player keeps no runner folder for {name}"
        return runner.parent / f"{runner.name}-github" / name.removeprefix("/github/")


def _event_commit(event: dict[str, Any]) -> str:
    if "pull_request" in event:
        return str(event["pull_request"]["head"]["sha"])
    if "after" in event:  # a push
        return str(event["after"])
    return str(event["workflow_run"]["head_sha"])


def _event_repository(event: dict[str, Any]) -> str:
    if "pull_request" in event:
        return str((event["pull_request"]["head"].get("repo") or {}).get("full_name") or REPO)
    return REPO


def _event_branch(event: dict[str, Any]) -> str:
    if "pull_request" in event:
        return str(event["pull_request"]["head"]["ref"])
    if "after" in event:
        return str(event["ref"]).removeprefix("refs/heads/")
    return DEFAULT_BRANCH  # workflow_run


def substitute(text: str, context: dict[str, Any]) -> str:
    """``text`` with every ``${{ expr }}`` replaced by its value."""
    return _EXPRESSION.sub(lambda m: _show(evaluate(m.group(1), context)), text)


def evaluate_condition(text: str, context: dict[str, Any]) -> Any:
    """An ``if:``: an expression, with or without ``${{ }}``."""
    inner = _EXPRESSION.fullmatch(text.strip())
    return evaluate(inner.group(1) if inner else text, context)


_TOKENS = re.compile(r"\s*(\|\||&&|==|!=|!|\(|\)|,|'[^']*'|[\w.-]+)")


def evaluate(expr: str, context: dict[str, Any]) -> Any:
    """The expression forms the workflows use: ``||``, ``&&``, ``!``, ``==``, ``!=``,
    parentheses, ``contains()``, ``cancelled()``, quoted strings, ``null`` and context paths."""
    tokens, at = [], 0
    while at < len(expr.rstrip()):
        match = _TOKENS.match(expr, at)
        assert match is not None and match.end() > at, f"the player cannot read {expr!r}"
        tokens.append(match.group(1))
        at = match.end()
    value, rest = _or(tokens, context)
    assert not rest, f"the player cannot read {expr!r}"
    return value


def _or(tokens: list[str], context: dict[str, Any]) -> tuple[Any, list[str]]:
    left, tokens = _and(tokens, context)
    while tokens[:1] == ["||"]:
        right, tokens = _and(tokens[1:], context)
        left = left if truthy(left) else right
    return left, tokens


def _and(tokens: list[str], context: dict[str, Any]) -> tuple[Any, list[str]]:
    left, tokens = _compare(tokens, context)
    while tokens[:1] == ["&&"]:
        right, tokens = _compare(tokens[1:], context)
        left = right if truthy(left) else left
    return left, tokens


def _compare(tokens: list[str], context: dict[str, Any]) -> tuple[Any, list[str]]:
    left, tokens = _unary(tokens, context)
    if tokens[:1] in (["=="], ["!="]):
        operator = tokens[0]
        right, tokens = _unary(tokens[1:], context)
        return (left == right) if operator == "==" else (left != right), tokens
    return left, tokens


def _unary(tokens: list[str], context: dict[str, Any]) -> tuple[Any, list[str]]:
    head, *rest = tokens
    if head == "!":
        value, rest = _unary(rest, context)
        return not truthy(value), rest
    if head == "(":
        value, rest = _or(rest, context)
        assert rest[:1] == [")"]
        return value, rest[1:]
    if head == "cancelled" and rest[:2] == ["(", ")"]:
        return False, rest[2:]
    if head == "contains" and rest[:1] == ["("]:
        haystack, rest = _or(rest[1:], context)
        assert rest[:1] == [","]
        needle, rest = _or(rest[1:], context)
        assert rest[:1] == [")"]
        return str(needle).lower() in str(haystack or "").lower(), rest[1:]
    if head.startswith("'"):
        return head[1:-1], rest
    if head == "null":
        return None, rest
    value: Any = context
    for part in head.split("."):
        assert re.fullmatch(r"[\w-]+", part), f"the player does not know {head!r}"
        value = value.get(part) if isinstance(value, dict) else None
    return value, rest


def truthy(value: Any) -> bool:
    return value not in (None, False, "", 0)


def _show(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"  # as GitHub writes a boolean into text
    return "" if value is None else str(value)

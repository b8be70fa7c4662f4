"""The action's settings, read from the environment a Docker action gets."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ragaliq.config import DEFAULT_CONFIG_FILE
from ragaliq.errors import ConfigError
from ragaliq.github.client import DEFAULT_API_URL

__all__ = ["HTML_REPORT_PATH", "ActionSettings", "PullRequest", "WorkflowRun", "read_input"]

HTML_REPORT_PATH = ".ragaliq/report.html"
"""Where the action writes the HTML report unless its input ``html-report`` names another path
(or ``off``): beside the JSON report, for the workflow to upload as an artifact."""


def read_input(env: Mapping[str, str], name: str, default: str = "") -> str:
    """An action input: ``INPUT_<NAME>`` upper-cased with hyphens kept, stripped."""
    return env.get(f"INPUT_{name.upper()}", default).strip() or default


def read_flag(env: Mapping[str, str], name: str, default: bool) -> bool:
    """A ``true``/``false`` input.

    Raises:
        ConfigError: the input is neither.
    """
    raw = read_input(env, name, "true" if default else "false").lower()
    if raw not in ("true", "false"):
        raise ConfigError(f"input {name}: must be 'true' or 'false' (got {raw!r})")
    return raw == "true"


@dataclass(frozen=True, kw_only=True)
class PullRequest:
    """The pull request an event is about."""

    number: int
    base_sha: str
    head_sha: str
    base_repo: str
    head_repo: str
    author: str = ""
    """The login of the pull request's author."""
    base_ref: str = ""
    """The branch the pull request is to be merged into (``main``): the bar is that branch's."""

    @property
    def base(self) -> str:
        """The base as the status and messages name it: ``main@1a2b3c4``."""
        return f"{self.base_ref or 'base'}@{self.base_sha[:7]}"


@dataclass(frozen=True, kw_only=True)
class WorkflowRun:
    """The run a ``workflow_run`` event reports on: the untrusted zone's run of a pull request.

    Everything here comes from GitHub's event, never from the run's artifacts.
    """

    id: int
    event: str
    """The event that started the run (``pull_request`` for the zone that produced a PR's data)."""
    conclusion: str
    head_sha: str
    head_branch: str
    head_owner: str
    head_repo: str
    pull_numbers: tuple[int, ...] = ()
    """The pull requests GitHub lists on the run (none for a fork's)."""


@dataclass(frozen=True, kw_only=True)
class ActionSettings:
    """Everything the action reads from ``INPUT_*`` and ``GITHUB_*``."""

    config: str
    dataset: str
    baseline: str
    mode: Literal["gate", "update-baseline", "store-baseline"]
    anthropic_api_key: str
    anthropic_base_url: str
    """An Anthropic-compatible endpoint chosen by the workflow; empty for the config's."""
    github_token: str
    comment: Literal["upsert", "off"]
    comment_id: str
    html_report: str
    """Where to write the HTML report, relative to the workspace; empty for none (``off``)."""
    artifact: str
    """The name of the artifact holding the dataset, downloaded from the run that produced it;
    empty to read the dataset from the workspace."""
    trust_pr_code: bool
    """The team runs the gate in the job that ran the pull request's code, and says so."""
    commit_status: bool
    """Whether the result is also set as a commit status on the pull request's head."""
    workspace: Path
    repository: str
    api_url: str
    event_name: str
    sha: str
    ref_name: str
    """The branch (or tag) the run is for: ``main`` on a push to main."""
    pull_request: PullRequest | None
    workflow_run: WorkflowRun | None
    output_file: Path | None
    summary_file: Path | None
    server_url: str
    run_id: str

    def __repr__(self) -> str:
        return f"ActionSettings(mode={self.mode!r}, repository={self.repository!r})"

    @property
    def run_url(self) -> str | None:
        """The URL of this workflow run, when known."""
        if self.repository and self.run_id:
            return f"{self.server_url}/{self.repository}/actions/runs/{self.run_id}"
        return None

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> ActionSettings:
        """Parse the environment.

        Raises:
            ConfigError: an input has a value outside its choices, or the event file is unreadable.
        """
        mode = read_input(env, "mode", "gate")
        if mode not in ("gate", "update-baseline", "store-baseline"):
            raise ConfigError(
                f"input mode: must be 'gate', 'update-baseline' or 'store-baseline' (got {mode!r})"
            )
        comment = read_input(env, "comment", "upsert")
        if comment not in ("upsert", "off"):
            raise ConfigError(f"input comment: must be 'upsert' or 'off' (got {comment!r})")
        workspace = Path(env.get("GITHUB_WORKSPACE") or ".")
        event_name = env.get("GITHUB_EVENT_NAME", "")
        event = _event(env.get("GITHUB_EVENT_PATH"))
        return cls(
            config=read_input(env, "config", DEFAULT_CONFIG_FILE),
            dataset=read_input(env, "dataset"),
            baseline=read_input(env, "baseline"),
            mode=mode,  # type: ignore[arg-type]
            anthropic_api_key=read_input(env, "anthropic-api-key"),
            anthropic_base_url=read_input(env, "anthropic-base-url"),
            github_token=read_input(env, "github-token") or env.get("GITHUB_TOKEN", ""),
            comment=comment,  # type: ignore[arg-type]
            comment_id=read_input(env, "comment-id", "default"),
            html_report=_html_report(read_input(env, "html-report", HTML_REPORT_PATH)),
            artifact=read_input(env, "artifact"),
            trust_pr_code=read_flag(env, "trust-pr-code", False),
            commit_status=read_flag(env, "commit-status", True),
            workspace=workspace,
            repository=env.get("GITHUB_REPOSITORY", ""),
            api_url=env.get("GITHUB_API_URL") or DEFAULT_API_URL,
            event_name=event_name,
            sha=env.get("GITHUB_SHA", ""),
            ref_name=env.get("GITHUB_REF_NAME", ""),
            pull_request=_pull_request(event),
            workflow_run=_workflow_run(event) if event_name == "workflow_run" else None,
            output_file=Path(env["GITHUB_OUTPUT"]) if env.get("GITHUB_OUTPUT") else None,
            summary_file=(
                Path(env["GITHUB_STEP_SUMMARY"]) if env.get("GITHUB_STEP_SUMMARY") else None
            ),
            server_url=env.get("GITHUB_SERVER_URL") or "https://github.com",
            run_id=env.get("GITHUB_RUN_ID", ""),
        )


def _html_report(raw: str) -> str:
    """The input ``html-report``: a path, or ``off`` (any case) for no HTML report."""
    return "" if raw.lower() == "off" else raw


def _event(event_path: str | None) -> dict[str, Any]:
    if not event_path:
        return {}
    try:
        event: Any = json.loads(Path(event_path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"GITHUB_EVENT_PATH {event_path}: cannot be read ({exc})") from exc
    return event if isinstance(event, dict) else {}


def _pull_request(event: dict[str, Any]) -> PullRequest | None:
    pr = event.get("pull_request")
    if not isinstance(pr, dict):
        return None
    try:
        return PullRequest(
            number=int(pr["number"]),
            base_sha=str(pr["base"]["sha"]),
            head_sha=str(pr["head"]["sha"]),
            base_repo=str(pr["base"]["repo"]["full_name"]),
            head_repo=str((pr["head"].get("repo") or {}).get("full_name", "")),
            author=str((pr.get("user") or {}).get("login", "")),
            base_ref=str(pr["base"].get("ref") or ""),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise ConfigError("GITHUB_EVENT_PATH: not a pull_request event") from exc


def _workflow_run(event: dict[str, Any]) -> WorkflowRun:
    run = event.get("workflow_run")
    try:
        assert isinstance(run, dict)
        head_repo = run.get("head_repository") or {}
        return WorkflowRun(
            id=int(run["id"]),
            event=str(run.get("event") or ""),
            conclusion=str(run.get("conclusion") or ""),
            head_sha=str(run["head_sha"]),
            head_branch=str(run.get("head_branch") or ""),
            head_owner=str((head_repo.get("owner") or {}).get("login", "")),
            head_repo=str(head_repo.get("full_name", "")),
            pull_numbers=tuple(int(p["number"]) for p in run.get("pull_requests") or ()),
        )
    except (AssertionError, KeyError, TypeError, ValueError) as exc:
        raise ConfigError("GITHUB_EVENT_PATH: not a workflow_run event") from exc

"""Where the action runs: its inputs and its event, read from the environment a Docker action gets.

The event's names become the core's (:class:`~ragaliq.forge.JobEvent`): a ``pull_request`` is a
change's own run, a ``pull_request_review`` a review, a ``workflow_run`` a run that follows
another (a pull request's run, or a baseline run), a ``push`` a push.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragaliq.config import DEFAULT_CONFIG_FILE
from ragaliq.errors import ConfigError
from ragaliq.forge import DEFAULT_FOLLOW_LIMIT, Change, FollowedRun, JobEvent, JobSettings
from ragaliq.github.client import DEFAULT_API_URL, GitHubApi

__all__ = ["HTML_REPORT_PATH", "MAX_FOLLOW_LIMIT", "GitHubJob", "read_input"]

HTML_REPORT_PATH = ".ragaliq/report.html"
"""Where the action writes the HTML report unless its input ``html-report`` names another path
(or ``off``): beside the JSON report, for the workflow to upload as an artifact."""

_RUN_KINDS = {"pull_request": "change", "pull_request_review": "review", "push": "push"}
"""GitHub's events of a followed run, in the core's words."""

MAX_FOLLOW_LIMIT = 100
"""The most the follower gates in one run: one page of open pull requests."""


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
class GitHubJob:
    """A job of GitHub Actions, read from the environment a Docker action gets.

    The core's part (:class:`~ragaliq.forge.JobSettings`: the inputs, the workspace, the
    event's change or run) and GitHub's own: where its API is, the token, the runner's files.
    """

    settings: JobSettings
    api: GitHubApi
    """The repository's API, with the ``github-token`` input (or ``GITHUB_TOKEN``)."""
    server_url: str
    output_file: Path | None
    summary_file: Path | None
    event_name: str

    def __repr__(self) -> str:
        return f"GitHubJob({self.settings!r})"

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> GitHubJob:
        """Parse the environment.

        Raises:
            ConfigError: an input has a value outside its choices, or the event file is unreadable.
        """
        mode = read_input(env, "mode", "gate")
        if mode not in ("gate", "update-baseline", "store-baseline", "follow"):
            raise ConfigError(
                "input mode: must be 'gate', 'update-baseline', 'store-baseline' or 'follow' "
                f"(got {mode!r})"
            )
        limit = read_input(env, "follow-limit", str(DEFAULT_FOLLOW_LIMIT))
        if not limit.isdigit() or not 1 <= int(limit) <= MAX_FOLLOW_LIMIT:
            raise ConfigError(
                f"input follow-limit: must be a whole number from 1 to {MAX_FOLLOW_LIMIT} "
                f"(got {limit!r})"
            )
        comment = read_input(env, "comment", "upsert")
        if comment not in ("upsert", "off"):
            raise ConfigError(f"input comment: must be 'upsert' or 'off' (got {comment!r})")
        workspace = Path(env.get("GITHUB_WORKSPACE") or ".")
        event_name = env.get("GITHUB_EVENT_NAME", "")
        event = _event(env.get("GITHUB_EVENT_PATH"))
        repository = env.get("GITHUB_REPOSITORY", "")
        server_url = env.get("GITHUB_SERVER_URL") or "https://github.com"
        run_id = env.get("GITHUB_RUN_ID", "")
        settings = JobSettings(
            mode=mode,  # type: ignore[arg-type]
            config=read_input(env, "config", DEFAULT_CONFIG_FILE),
            dataset=read_input(env, "dataset"),
            baseline=read_input(env, "baseline"),
            anthropic_api_key=read_input(env, "anthropic-api-key"),
            anthropic_base_url=read_input(env, "anthropic-base-url"),
            comment=comment,  # type: ignore[arg-type]
            comment_id=read_input(env, "comment-id", "default"),
            html_report=_report_file(read_input(env, "html-report", HTML_REPORT_PATH)),
            junit_report=_report_file(read_input(env, "junit-report")),
            metrics_report=_report_file(read_input(env, "metrics-report")),
            markdown_report=_report_file(read_input(env, "markdown-report")),
            artifact=read_input(env, "artifact"),
            trust_pr_code=read_flag(env, "trust-pr-code", False),
            commit_status=read_flag(env, "commit-status", True),
            change_workflow=read_input(env, "pull-request-workflow", "ragaliq.yml"),
            follow_limit=int(limit),
            workspace=workspace,
            repository=repository,
            run_id=run_id,
            run_url=f"{server_url}/{repository}/actions/runs/{run_id}"
            if repository and run_id
            else None,
            sha=env.get("GITHUB_SHA", ""),
            ref_name=env.get("GITHUB_REF_NAME", ""),
            event=_job_event(event_name, event),
        )
        return cls(
            settings=settings,
            api=GitHubApi(
                token=read_input(env, "github-token") or env.get("GITHUB_TOKEN", ""),
                repository=repository,
                api_url=env.get("GITHUB_API_URL") or DEFAULT_API_URL,
            ),
            server_url=server_url,
            output_file=Path(env["GITHUB_OUTPUT"]) if env.get("GITHUB_OUTPUT") else None,
            summary_file=(
                Path(env["GITHUB_STEP_SUMMARY"]) if env.get("GITHUB_STEP_SUMMARY") else None
            ),
            event_name=event_name,
        )


def _report_file(raw: str) -> str:
    """An input naming a report's file (``html-report``, ``junit-report`` ...).

    A path, or ``off`` (any case) or nothing for no such file.
    """
    return "" if raw.lower() == "off" else raw


def _job_event(event_name: str, event: dict[str, Any]) -> JobEvent:
    """The event, in the core's words."""
    change = _pull_request(event)
    if event_name == "workflow_run":
        return JobEvent(kind="followed", change=change, followed_run=_workflow_run(event))
    if event_name == "pull_request_review":
        return JobEvent(kind="review", change=change)
    if event_name == "push":
        return JobEvent(kind="push")
    if change is not None:
        return JobEvent(kind="change", change=change)
    return JobEvent(kind="other")


def _event(event_path: str | None) -> dict[str, Any]:
    if not event_path:
        return {}
    try:
        event: Any = json.loads(Path(event_path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"GITHUB_EVENT_PATH {event_path}: cannot be read ({exc})") from exc
    return event if isinstance(event, dict) else {}


def _pull_request(event: dict[str, Any]) -> Change | None:
    pr = event.get("pull_request")
    if not isinstance(pr, dict):
        return None
    try:
        return Change(
            number=int(pr["number"]),
            base_sha=str(pr["base"]["sha"]),
            head_sha=str(pr["head"]["sha"]),
            base_repo=str(pr["base"]["repo"]["full_name"]),
            head_repo=str((pr["head"].get("repo") or {}).get("full_name", "")),
            author=str((pr.get("user") or {}).get("login", "")),
            base_ref=str(pr["base"].get("ref") or ""),
            head_ref=str(pr["head"].get("ref") or ""),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise ConfigError("GITHUB_EVENT_PATH: not a pull_request event") from exc


def _workflow_run(event: dict[str, Any]) -> FollowedRun:
    run = event.get("workflow_run")
    try:
        assert isinstance(run, dict)
        head_repo = run.get("head_repository") or {}
        started_by = str(run.get("event") or "")
        return FollowedRun(
            id=int(run["id"]),
            kind=_RUN_KINDS.get(started_by, started_by),
            conclusion=str(run.get("conclusion") or ""),
            head_sha=str(run["head_sha"]),
            head_branch=str(run.get("head_branch") or ""),
            head_owner=str((head_repo.get("owner") or {}).get("login", "")),
            head_repo=str(head_repo.get("full_name", "")),
            change_numbers=tuple(int(p["number"]) for p in run.get("pull_requests") or ()),
        )
    except (AssertionError, KeyError, TypeError, ValueError) as exc:
        raise ConfigError("GITHUB_EVENT_PATH: not a workflow_run event") from exc

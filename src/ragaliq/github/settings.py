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

__all__ = ["ActionSettings", "PullRequest", "read_input"]


def read_input(env: Mapping[str, str], name: str, default: str = "") -> str:
    """An action input: ``INPUT_<NAME>`` upper-cased with hyphens kept, stripped."""
    return env.get(f"INPUT_{name.upper()}", default).strip() or default


@dataclass(frozen=True, kw_only=True)
class PullRequest:
    """The pull request an event is about."""

    number: int
    base_sha: str
    head_sha: str
    base_repo: str
    head_repo: str

    @property
    def from_fork(self) -> bool:
        """Whether the PR comes from another repository (a fork: read-only token, no secrets)."""
        return self.head_repo != self.base_repo


@dataclass(frozen=True, kw_only=True)
class ActionSettings:
    """Everything the action reads from ``INPUT_*`` and ``GITHUB_*``."""

    config: str
    dataset: str
    baseline: str
    mode: Literal["gate", "update-baseline"]
    anthropic_api_key: str
    anthropic_base_url: str
    """An Anthropic-compatible endpoint chosen by the workflow; empty for the config's."""
    github_token: str
    comment: Literal["upsert", "off"]
    comment_id: str
    html_report: str
    workspace: Path
    repository: str
    api_url: str
    event_name: str
    sha: str
    pull_request: PullRequest | None
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
        if mode not in ("gate", "update-baseline"):
            raise ConfigError(f"input mode: must be 'gate' or 'update-baseline' (got {mode!r})")
        comment = read_input(env, "comment", "upsert")
        if comment not in ("upsert", "off"):
            raise ConfigError(f"input comment: must be 'upsert' or 'off' (got {comment!r})")
        workspace = Path(env.get("GITHUB_WORKSPACE") or ".")
        event_name = env.get("GITHUB_EVENT_NAME", "")
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
            html_report=read_input(env, "html-report"),
            workspace=workspace,
            repository=env.get("GITHUB_REPOSITORY", ""),
            api_url=env.get("GITHUB_API_URL") or DEFAULT_API_URL,
            event_name=event_name,
            sha=env.get("GITHUB_SHA", ""),
            pull_request=_pull_request(env.get("GITHUB_EVENT_PATH")),
            output_file=Path(env["GITHUB_OUTPUT"]) if env.get("GITHUB_OUTPUT") else None,
            summary_file=(
                Path(env["GITHUB_STEP_SUMMARY"]) if env.get("GITHUB_STEP_SUMMARY") else None
            ),
            server_url=env.get("GITHUB_SERVER_URL") or "https://github.com",
            run_id=env.get("GITHUB_RUN_ID", ""),
        )


def _pull_request(event_path: str | None) -> PullRequest | None:
    if not event_path:
        return None
    try:
        event: Any = json.loads(Path(event_path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"GITHUB_EVENT_PATH {event_path}: cannot be read ({exc})") from exc
    pr = event.get("pull_request") if isinstance(event, dict) else None
    if not isinstance(pr, dict):
        return None
    try:
        return PullRequest(
            number=int(pr["number"]),
            base_sha=str(pr["base"]["sha"]),
            head_sha=str(pr["head"]["sha"]),
            base_repo=str(pr["base"]["repo"]["full_name"]),
            head_repo=str((pr["head"].get("repo") or {}).get("full_name", "")),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise ConfigError(f"GITHUB_EVENT_PATH {event_path}: not a pull_request event") from exc

"""Where a GitLab job of the gate runs: its options and GitLab's predefined CI variables.

The job's options come from its own ``script:`` line (``python -m ragaliq gitlab sweep --config
ragaliq.yaml``), never from variables: a pipeline variable overrides any variable a job defines,
and anyone allowed to run a pipeline may set one. The secrets come from the job's environment:
``ANTHROPIC_API_KEY`` and ``RAGALIQ_GITLAB_TOKEN`` (a project access token with the ``api``
scope), protected and scoped to the environment only the gate's and the record's jobs use.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ragaliq.errors import ConfigError
from ragaliq.forge import JobEvent, JobSettings, Mode
from ragaliq.gitlab.client import GitLabApi

__all__ = ["KEY_VARIABLE", "TOKEN_VARIABLE", "GitLabJob", "GitLabOptions"]

TOKEN_VARIABLE = "RAGALIQ_GITLAB_TOKEN"
KEY_VARIABLE = "ANTHROPIC_API_KEY"


@dataclass(frozen=True, kw_only=True)
class GitLabOptions:
    """The options of the job's own ``script:`` line."""

    mode: Mode
    config: str = "ragaliq.yaml"
    dataset: str = "rag_outputs.jsonl"
    produce_job: str = "ragaliq-produce"
    """The merge request pipeline's job that hands over the dataset among its artifacts."""
    limit: int = 10
    comment_id: str = "default"
    html_report: str = ".ragaliq/report.html"
    junit_report: str = ".ragaliq/junit.xml"
    metrics_report: str = ".ragaliq/metrics.txt"
    markdown_report: str = ""


@dataclass(frozen=True, kw_only=True)
class GitLabJob:
    """A job of GitLab CI, as the core and GitLab's adapter need it."""

    settings: JobSettings
    api: GitLabApi
    web_url: str
    pipeline_id: int

    def __repr__(self) -> str:
        return f"GitLabJob({self.settings!r})"

    @classmethod
    def from_env(cls, env: Mapping[str, str], options: GitLabOptions) -> GitLabJob:
        """The job from GitLab's predefined variables and its own options.

        Raises:
            ConfigError: a predefined variable is missing: this is not a GitLab CI job.
        """
        needed = ("CI_SERVER_URL", "CI_PROJECT_ID", "CI_PIPELINE_ID")
        missing = [v for v in needed if not env.get(v)]
        if missing:
            raise ConfigError(
                f"{', '.join(missing)} not set: `ragaliq gitlab` runs in a GitLab CI job, which "
                "GitLab gives these variables"
            )
        branch = env.get("CI_COMMIT_BRANCH", "")
        default = env.get("CI_DEFAULT_BRANCH", "")
        protected = env.get("CI_COMMIT_REF_PROTECTED", "") == "true"
        source = env.get("CI_PIPELINE_SOURCE", "")
        on_default = bool(branch) and branch == default and protected
        settings = JobSettings(
            mode=options.mode,
            config=options.config,
            dataset=options.dataset,
            baseline="",
            anthropic_api_key=env.get(KEY_VARIABLE, ""),
            anthropic_base_url="",
            comment="upsert",
            comment_id=options.comment_id,
            html_report=options.html_report,
            junit_report=options.junit_report,
            metrics_report=options.metrics_report,
            markdown_report=options.markdown_report,
            artifact=options.produce_job,
            trust_pr_code=False,
            commit_status=True,
            change_workflow=options.produce_job,
            follow_limit=options.limit,
            workspace=Path(env.get("CI_PROJECT_DIR") or "."),
            repository=env.get("CI_PROJECT_PATH", ""),
            run_id=env.get("CI_PIPELINE_ID", ""),
            run_url=env.get("CI_JOB_URL") or env.get("CI_PIPELINE_URL") or None,
            sha=env.get("CI_COMMIT_SHA", ""),
            ref_name=branch or default,
            event=JobEvent(
                kind="push" if source == "push" else "other",
                trusted_branch=on_default and source in ("push", "schedule", "web", "api"),
            ),
        )
        return cls(
            settings=settings,
            api=GitLabApi(
                url=env["CI_SERVER_URL"],
                token=env.get(TOKEN_VARIABLE, ""),
                project=env["CI_PROJECT_ID"],
            ),
            web_url=env.get("CI_PROJECT_URL", ""),
            pipeline_id=int(env["CI_PIPELINE_ID"]),
        )

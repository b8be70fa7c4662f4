"""The GitLab entry: ``python -m ragaliq gitlab <mode>`` builds GitLab's adapter and runs the job.

Its options come from the job's own ``script:`` line; everything it does is the core's
(:func:`ragaliq.ci.job.run_job`), the same as on GitHub.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import traceback
from collections.abc import Sequence

from ragaliq._files import make_folders
from ragaliq.action.main import ISSUES_URL
from ragaliq.ci.job import run_job
from ragaliq.ci.publication import Publication
from ragaliq.environment import harden_action_environment
from ragaliq.errors import RagaliqError
from ragaliq.exits import ExitCode, stopped_exit
from ragaliq.gitlab.event import KEY_VARIABLE, TOKEN_VARIABLE, GitLabJob, GitLabOptions
from ragaliq.gitlab.host import GitLabHost
from ragaliq.gitlab.log import GitLabLog
from ragaliq.gitlab.settings_check import pipeline_variables_warning
from ragaliq.judges.factory import open_judge
from ragaliq.redaction import register_env_secrets

__all__ = ["main"]

MODES = ("sweep", "update-baseline", "store-baseline")


def parse(argv: Sequence[str]) -> GitLabOptions:
    """The job's options (``python -m ragaliq gitlab sweep --config ragaliq.yaml``)."""
    parser = argparse.ArgumentParser(prog="ragaliq gitlab", description=__doc__)
    parser.add_argument("mode", choices=MODES)
    parser.add_argument("--config", default="ragaliq.yaml")
    parser.add_argument("--dataset", default="rag_outputs.jsonl")
    parser.add_argument("--produce-job", default="ragaliq-produce")
    parser.add_argument("--limit", type=int, default=10)
    parser.add_argument("--comment-id", default="default")
    parser.add_argument("--html-report", default=".ragaliq/report.html")
    parser.add_argument("--junit-report", default=".ragaliq/junit.xml")
    parser.add_argument("--metrics-report", default=".ragaliq/metrics.txt")
    parser.add_argument("--markdown-report", default="")
    args = parser.parse_args(list(argv))
    return GitLabOptions(
        mode=args.mode,
        config=args.config,
        dataset=args.dataset,
        produce_job=args.produce_job,
        limit=args.limit,
        comment_id=args.comment_id,
        html_report=_off(args.html_report),
        junit_report=_off(args.junit_report),
        metrics_report=_off(args.metrics_report),
        markdown_report=_off(args.markdown_report),
    )


def _off(raw: str) -> str:
    """A report's option: a path, or ``off`` (any case) for no such file."""
    return "" if raw.lower() == "off" else raw


def _warn_on_pipeline_variables(host: GitLabHost, log: GitLabLog) -> None:
    """Warn while more than maintainers may set pipeline variables (the gate refuses any)."""
    try:
        role = host.pipeline_variables_role()
    except RagaliqError as exc:
        log.warning(f"who may set pipeline variables could not be read: {exc}")
        return
    said = pipeline_variables_warning(role)
    if said:
        log.warning(said, title="RagaliQ Gate")


def main(argv: Sequence[str]) -> int:
    """Run one GitLab job of the gate from ``os.environ``; never raises."""
    options = parse(argv)
    hardening = harden_action_environment(os.environ, mode=options.mode)
    env = dict(os.environ)
    register_env_secrets(env, names=(KEY_VARIABLE, TOKEN_VARIABLE))
    log = GitLabLog(folder=None)
    result = Publication(settings=None, workflow=log, host=None)
    try:
        job = GitLabJob.from_env(env, options)
        folder = job.settings.workspace / ".ragaliq"
        make_folders(folder)
        log = GitLabLog(folder=folder)
        host = GitLabHost(
            api=job.api,
            log=log,
            web_url=job.web_url,
            run_url=job.settings.run_url,
            pipeline_id=job.pipeline_id,
        )
        result = Publication(settings=job.settings, workflow=log, host=host)
        if options.mode == "sweep":
            _warn_on_pipeline_variables(host, log)
        return asyncio.run(
            run_job(
                settings=job.settings,
                env=env,
                result=result,
                host=host,
                open_judge=open_judge,
                hardening=hardening,
            )
        )
    except RagaliqError as exc:
        log.error(str(exc), title="RagaliQ Gate")
        result.could_not_judge(str(exc))
        return ExitCode.UNJUDGED
    except KeyboardInterrupt as stop:
        code, said = stopped_exit(stop)
        log.error(said, title="RagaliQ Gate")
        return code
    except Exception as exc:  # the edge: report anything unexpected as one clear error
        log.log(traceback.format_exc())
        log.error(
            f"unexpected {type(exc).__name__}: {exc}. This is a bug in RagaliQ Gate; please "
            f"report it with this log at {ISSUES_URL}",
            title="RagaliQ Gate",
        )
        return ExitCode.UNJUDGED

"""The GitHub Action's entry: ``main()`` builds GitHub's adapter and runs the gate's job.

Everything the job does is the core's (:func:`ragaliq.ci.job.run_job`), the same on every host;
here, the environment a Docker action gets becomes the job's settings and GitHub's host
(:mod:`ragaliq.github`), and every error becomes an ``::error::`` line and an exit code.
"""

from __future__ import annotations

import asyncio
import os
import traceback

from ragaliq._files import own_files_like
from ragaliq.ci.job import run_job
from ragaliq.ci.publication import Publication
from ragaliq.environment import Hardening, harden_action_environment
from ragaliq.errors import RagaliqError
from ragaliq.exits import ExitCode, stopped_exit
from ragaliq.github.commands import Workflow
from ragaliq.github.event import GitHubJob
from ragaliq.github.host import GitHubHost
from ragaliq.judges.factory import open_judge
from ragaliq.redaction import register_env_secrets, register_secret

__all__ = ["ISSUES_URL", "main"]

ISSUES_URL = "https://github.com/ragaliq/ragaliq-gate/issues"


def main(hardening: Hardening | None = None) -> int:
    """Run the action from ``os.environ``; never raises.

    ``hardening`` is what ``python -m ragaliq action`` already did to the environment before
    anything else was imported; without it the environment is made safe here.
    """
    if hardening is None:
        hardening = harden_action_environment(os.environ)
    env = dict(os.environ)
    register_env_secrets(
        env, names=("INPUT_ANTHROPIC-API-KEY", "INPUT_GITHUB-TOKEN", "INPUT_CACHE-SECRET")
    )
    workflow = Workflow(output_file=None, summary_file=None)
    result = Publication(settings=None, workflow=workflow, host=None)
    try:
        job = GitHubJob.from_env(env)
        settings = job.settings
        own_files_like(settings.workspace)  # root in the container writes the runner's files
        workflow = Workflow(output_file=job.output_file, summary_file=job.summary_file)
        if job.api.token:
            register_secret(job.api.token)
            workflow.mask(job.api.token)
        host = GitHubHost(
            api=job.api,
            server_url=job.server_url,
            workspace=settings.workspace,
            log=workflow,
            run_url=settings.run_url,
        )
        result = Publication(settings=settings, workflow=workflow, host=host)
        return asyncio.run(
            run_job(
                settings=settings,
                env=env,
                result=result,
                host=host,
                open_judge=open_judge,
                hardening=hardening,
            )
        )
    except RagaliqError as exc:
        workflow.error(str(exc), title="RagaliQ Gate")
        result.could_not_judge(str(exc))
        return ExitCode.UNJUDGED
    except KeyboardInterrupt as stop:  # Ctrl-C, or a cancelled job's SIGTERM
        code, said = stopped_exit(stop)
        workflow.error(said, title="RagaliQ Gate")
        result.could_not_judge(said.split(":", 1)[0])
        return code
    except Exception as exc:  # the edge: report anything unexpected as one clear error
        workflow.log(traceback.format_exc())
        workflow.error(
            f"unexpected {type(exc).__name__}: {exc}. This is a bug in RagaliQ Gate; please "
            f"report it with this log at {ISSUES_URL}",
            title="RagaliQ Gate",
        )
        result.could_not_judge(f"unexpected {type(exc).__name__}")
        return ExitCode.UNJUDGED

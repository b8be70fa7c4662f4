"""Plays the ``.gitlab-ci.yml`` that ``ragaliq init --ci gitlab`` writes, job by job, as GitLab
and its runner would, against the fake GitLab API.

For each pipeline: the player of GitLab's rules (:mod:`tests.fakes.gitlab_ci`) decides which jobs
it gets and the environment of each (protected variables only on protected refs, environment-
scoped ones only in jobs of that environment, pipeline variables over all); the pipeline and
each job are recorded on the fake GitLab as GitLab would list them; each job's script runs in a
fresh folder (a checkout of the commit, or nothing with ``GIT_STRATEGY: none``) with exactly
that environment, and the paths its ``artifacts:`` name are kept as the job's artifacts. Why not
gitlab-ci-local: it models no protected variables, environments or pipeline sources, which are
the point here; the player is tested rule by rule on its own (``test_gitlab_ci_player.py``).
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.e2e.workspace import cases, regress
from tests.fakes.gitlab_ci import (
    CiVariable,
    JobResult,
    PipelineContext,
    load_config,
    plan_pipeline,
    run_job,
)
from tests.fakes.gitlab_server import DEVELOPER, MAINTAINER, REPORTER, FakeGitLab

PROJECT = "acme/rag-app"
FORK = "mallory/rag-app"
KEY = "sk-ant-api03-gitlab-e2e-secret"
IMAGE = "ghcr.io/ragaliq/ragaliq-gate@sha256:" + "a" * 64
CONFIG = """\
dataset: rag_outputs.jsonl
judge: {provider: offline}
evaluators:
  faithfulness: {threshold: 0.5}
  hallucination: {threshold: 0.5}
  relevance: {enabled: false}
gate:
  max_drop: 0.02
  fail_on_new_hallucinations: true
baselines: {store: artifacts, workflow: ragaliq-record}
"""


def git(root: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def jsonl(rows: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(r) + "\n" for r in rows)


@dataclass
class Played:
    """A pipeline played: its id, and each job's result and artifacts."""

    id: int
    jobs: dict[str, JobResult] = field(default_factory=dict)
    job_ids: dict[str, int] = field(default_factory=dict)
    folders: dict[str, Path] = field(default_factory=dict)


@dataclass
class GitLabProject:
    """A project adopting the gate on the fake GitLab, and the pipelines its events start."""

    tmp: Path
    fake: FakeGitLab
    config: str = CONFIG
    """Main's ``ragaliq.yaml``: by default the offline judge's."""
    repo: Path = field(init=False)
    project_id: int = field(init=False)
    runs: int = 0

    def __post_init__(self) -> None:
        self.repo = self.tmp / "repo"
        self.repo.mkdir()
        git(self.repo, "init", "-q", "-b", "main")
        git(self.repo, "config", "user.email", "ci@example.com")
        git(self.repo, "config", "user.name", "CI")
        subprocess.run(
            [
                sys.executable,
                "-m",
                "ragaliq",
                "init",
                "--ci",
                "gitlab",
                "--dir",
                str(self.repo),
                "--image",
                IMAGE,
            ],
            check=True,
            capture_output=True,
        )
        (self.repo / "ragaliq.yaml").write_text(self.config, encoding="utf-8")
        (self.repo / "rag_outputs.jsonl").write_text(jsonl(cases()), encoding="utf-8")
        self.project_id = self.fake.add_project(PROJECT, gate_access=DEVELOPER)
        self.fake.mirror_git(PROJECT, str(self.repo))
        self.fake.protect_branch(PROJECT, "main")
        for key, value in (("ANTHROPIC_API_KEY", KEY), ("RAGALIQ_GITLAB_TOKEN", self.fake.token)):
            self.fake.add_variable(
                PROJECT,
                CiVariable(
                    key=key, value=value, protected=True, masked=True, environment_scope="ragaliq"
                ),
            )
        self.fake.add_variable(PROJECT, CiVariable(key="PUBLIC_NOTE", value="hello"))
        self.fake.set_project(PROJECT, ci_pipeline_variables_minimum_override_role="maintainer")
        for user, level in (("dev", DEVELOPER), ("lead", MAINTAINER), ("reader", REPORTER)):
            self.fake.add_user(user)
            self.fake.add_member(PROJECT, user, level)

    # ---------------------------------------------------------------- the repository

    def commit_main(self, rows: list[dict[str, Any]] | None = None, **files: str) -> str:
        subprocess.run(["git", "-C", str(self.repo), "checkout", "-q", "main"], check=False)
        if rows is not None:
            (self.repo / "rag_outputs.jsonl").write_text(jsonl(rows), encoding="utf-8")
        for name, text in files.items():
            (self.repo / name).write_text(text, encoding="utf-8")
        git(self.repo, "add", "-A")
        git(self.repo, "commit", "-q", "--allow-empty", "-m", "main")
        sha = git(self.repo, "rev-parse", "HEAD")
        self.fake.set_branch(PROJECT, "main", sha)
        return sha

    def branch(
        self,
        name: str,
        rows: list[dict[str, Any]] | None = None,
        *,
        regressed: bool = False,
        **files: str,
    ) -> str:
        base = git(self.repo, "rev-parse", "main")
        git(self.repo, "checkout", "-q", "-B", name, base)
        chosen = rows if rows is not None else (regress(cases()) if regressed else cases())
        (self.repo / "rag_outputs.jsonl").write_text(jsonl(chosen), encoding="utf-8")
        for path, text in files.items():
            (self.repo / path).write_text(text, encoding="utf-8")
        (self.repo / "NOTES.md").write_text(f"{name}\n", encoding="utf-8")
        git(self.repo, "add", "-A")
        git(self.repo, "commit", "-q", "-m", name)
        head = git(self.repo, "rev-parse", "HEAD")
        git(self.repo, "checkout", "-q", "main")
        return head

    def open_merge_request(
        self, name: str, *, author: str = "dev", fork: bool = False, **kw: Any
    ) -> tuple[int, str]:
        head = self.branch(name, **kw)
        source = None
        if fork:
            source = self.fake.add_project(FORK, forked_from=PROJECT, gate_access=None)
            self.fake.mirror_git(FORK, str(self.repo))
        iid = self.fake.add_merge_request(
            PROJECT, source_branch=name, head_sha=head, author=author, source_project=source
        )
        return iid, head

    # ---------------------------------------------------------------- pipelines

    def play(
        self,
        *,
        source: str,
        sha: str,
        ref: str = "main",
        iid: int | None = None,
        variables: dict[str, str] | None = None,
        user_level: int = MAINTAINER,
        env: dict[str, str] | None = None,
        pipeline: int | None = None,
        project: str = PROJECT,
    ) -> Played:
        """The pipeline GitLab creates for this event, every job played in stage order.

        ``pipeline``: one created earlier (still ``running``) whose jobs run now. ``project``:
        the project it runs in (a fork's own merge request pipeline runs in the fork).
        """
        config = load_config(self.config_at(sha))
        mr = self.fake.ci_merge_request(PROJECT, iid) if iid is not None else None
        pipeline_ref = f"refs/merge-requests/{iid}/head" if iid is not None else ref
        pid = pipeline or self.fake.add_pipeline(
            project,
            ref=pipeline_ref,
            sha=sha,
            source=source,
            status="running",
            variables=variables,
        )
        ctx = PipelineContext(
            source=source,
            project=self.fake.ci_project(project),
            ref=ref,
            sha=sha,
            merge_request=mr,
            pipeline_variables=variables or {},
            user_access_level=user_level,
            server_url=self.fake.url,
            pipeline_id=pid,
        )
        planned = plan_pipeline(config, ctx)
        assert planned.created, planned.refusal
        played = Played(id=pid)
        ok = True
        for job in planned.jobs:
            self.runs += 1
            folder = self.tmp / f"job{self.runs}-{job.name}"
            if job.variables.get("GIT_STRATEGY") == "none":
                folder.mkdir()
            else:
                subprocess.run(
                    ["git", "clone", "-q", "--no-checkout", str(self.repo), str(folder)],
                    check=True,
                    capture_output=True,
                )
                git(folder, "checkout", "-q", "--detach", sha)
            base = {
                "PATH": f"{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin",
                "HOME": str(self.tmp),
                "LANG": "C.UTF-8",
                **(env or {}),
            }
            overrides = {"CI_SERVER_URL": self.fake.url, "CI_PIPELINE_ID": str(pid)}
            job = dataclasses_replace(job, {**job.variables, **overrides})
            result = run_job(job, folder, base_env=base, timeout=600)
            played.jobs[job.name] = result
            played.folders[job.name] = folder
            played.job_ids[job.name] = self.fake.add_job(
                pid,
                job.name,
                stage=job.stage,
                status="success" if result.passed else "failed",
                artifacts=self._artifacts(job.artifacts, folder),
                environment=job.environment,
            )
            ok = ok and result.passed
        self.fake.set_pipeline(pid, status="success" if ok else "failed")
        return played

    def config_at(self, sha: str) -> str:
        return subprocess.run(
            ["git", "-C", str(self.repo), "show", f"{sha}:.gitlab-ci.yml"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout

    def _artifacts(self, spec: Any, folder: Path) -> bytes | None:
        paths = (spec or {}).get("paths") or []
        reports = (spec or {}).get("reports") or {}
        paths = [*paths, *(path for path in reports.values() if isinstance(path, str))]
        files = {}
        for path in paths:
            found = folder / path
            if found.is_file():
                files[path] = found.read_bytes()
        if not files:
            return None
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w") as archive:
            for name, data in files.items():
                archive.writestr(name, data)
        return buffer.getvalue()

    def record(self, sha: str, *, pipeline: int | None = None) -> Played:
        return self.play(source="push", sha=sha, pipeline=pipeline)

    def recording(self, sha: str) -> int:
        """The push pipeline of ``sha`` created and still running: its record job not yet run."""
        return self.fake.add_pipeline(PROJECT, ref="main", sha=sha, source="push", status="running")

    def produce(self, iid: int, head: str) -> Played:
        return self.play(
            source="merge_request_event", sha=head, ref="", iid=iid, user_level=DEVELOPER
        )

    def fork_pipeline(self, iid: int, head: str) -> Played:
        """The merge request's pipeline run in the fork itself, by its author."""
        return self.play(
            source="merge_request_event",
            sha=head,
            ref="",
            iid=iid,
            user_level=MAINTAINER,
            project=FORK,
        )

    def gate(self, **kw: Any) -> Played:
        main = git(self.repo, "rev-parse", "main")
        return self.play(source="schedule", sha=main, **kw)


def dataclasses_replace(job: Any, variables: dict[str, str]) -> Any:
    import dataclasses

    return dataclasses.replace(job, variables=variables)

"""Two worlds for the gate's rules: the in-memory host, and GitHub's adapter over the fake GitHub.

A :class:`World` is a repository (a local git repository on disk, ``main`` its base branch) and
its host, with the moves a team and its workflows make (commit main, record its baseline, open a
change and hand over its outputs, review it) and the gate's core run in the test's own process
against the host (:func:`ragaliq.ci.job.run_job`). The rules in ``test_gate_rules.py`` are
written once against this and run on both worlds: what the port promises, both adapters keep.
"""

from __future__ import annotations

import asyncio
import dataclasses
import io
import json
import subprocess
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragaliq.ci.job import run_job
from ragaliq.ci.publication import Publication
from ragaliq.environment import Hardening
from ragaliq.forge import (
    Change,
    FollowedRun,
    Host,
    JobEvent,
    JobSettings,
    RunRecord,
    baseline_artifact,
    status_context,
)
from ragaliq.judges.factory import open_judge
from ragaliq.store.layout import baseline_digest
from tests.e2e.workspace import cases, regress
from tests.fakes.github_server import FakeGitHub
from tests.fakes.memory_host import MemoryHost, MemoryLog

REPO = "acme/rag-bot"
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
baselines: {store: branch}
"""
MAIN = status_context("default", "main")


def git(root: Path, *args: str, check: bool = True) -> str:
    done = subprocess.run(
        ["git", "-C", str(root), *args], capture_output=True, text=True, check=check
    )
    return done.stdout.strip()


def jsonl(rows: list[dict[str, Any]]) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in rows).encode()


def zipped(name: str, data: bytes) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr(name, data)
    return buffer.getvalue()


@dataclass
class Job:
    """What one job of the gate did."""

    code: int
    log: MemoryLog

    @property
    def text(self) -> str:
        return self.log.text


@dataclass
class World:
    """A repository, its host, and the moves a team and its workflows make on it."""

    tmp: Path
    repo: Path
    host: Host
    runs: int = 7000
    changes: dict[int, Change] = field(default_factory=dict)

    # ---------------------------------------------------------------- what hosts differ in

    def register_run(self, run_id: int, sha: str, *, phase: str = "waiting") -> None:
        raise NotImplementedError

    def finish_run(self, run_id: int, sha: str, digest: str, data: bytes) -> None:
        raise NotImplementedError

    def register_change(self, change: Change) -> None:
        raise NotImplementedError

    def hand_over(self, change: Change, run_id: int, data: bytes) -> None:
        raise NotImplementedError

    def review(self, change: Change, *, author: str, body: str) -> None:
        raise NotImplementedError

    def grant(self, login: str, access: str) -> None:
        raise NotImplementedError

    def statuses(self, sha: str, context: str = MAIN) -> list[tuple[str, str]]:
        raise NotImplementedError

    def comments(self, number: int) -> list[str]:
        raise NotImplementedError

    # ---------------------------------------------------------------- the same on every host

    def next_run(self) -> int:
        self.runs += 1
        return self.runs

    def commit_main(self, rows: list[dict[str, Any]] | None = None, **files: str) -> str:
        git(self.repo, "checkout", "-q", "main", check=False)  # none before the first commit
        (self.repo / "rag_outputs.jsonl").write_bytes(jsonl(rows or cases()))
        for name, text in files.items():
            (self.repo / name).write_text(text, encoding="utf-8")
        git(self.repo, "add", "-A")
        git(self.repo, "commit", "-q", "--allow-empty", "-m", "main")
        return git(self.repo, "rev-parse", "HEAD")

    def record(self, sha: str, run_id: int | None = None) -> Job:
        """The baseline workflow's run for the push of ``sha``: record, show, keep; succeeded."""
        run_id = run_id or self.start_record(sha)
        workspace = self.checkout(sha)
        job = self.run(self.settings("update-baseline", workspace, run_id=run_id, sha=sha))
        assert job.code == 0, job.text
        data = (workspace / ".ragaliq" / "baseline.json").read_bytes()
        digest = baseline_digest(data)
        self.finish_run(run_id, sha, digest, data)
        kept = self.run(self.settings("store-baseline", workspace, run_id=run_id, sha=sha))
        assert kept.code == 0, kept.text
        return job

    def start_record(self, sha: str) -> int:
        run_id = self.next_run()
        self.register_run(run_id, sha)
        return run_id

    def open_change(
        self,
        number: int,
        rows: list[dict[str, Any]] | None = None,
        *,
        regressed: bool = False,
        base_ref: str = "main",
        author: str = "someone",
        **files: str,
    ) -> Change:
        """A branch off main's tip with these outputs, opened as change ``number``; its own run
        hands the outputs over."""
        base = git(self.repo, "rev-parse", "main")
        git(self.repo, "checkout", "-q", "-B", f"feature-{number}", base)
        data = jsonl(rows or (regress(cases()) if regressed else cases()))
        (self.repo / "rag_outputs.jsonl").write_bytes(data)
        for name, text in files.items():
            (self.repo / name).write_text(text, encoding="utf-8")
        (self.repo / "NOTES.md").write_text(f"change {number}\n", encoding="utf-8")
        git(self.repo, "add", "-A")
        git(self.repo, "commit", "-q", "-m", f"change {number}")
        head = git(self.repo, "rev-parse", "HEAD")
        git(self.repo, "checkout", "-q", "main")
        change = Change(
            number=number,
            base_sha=base,
            head_sha=head,
            base_repo=REPO,
            head_repo=REPO,
            author=author,
            base_ref=base_ref,
            head_ref=f"feature-{number}",
        )
        self.changes[number] = change
        self.register_change(change)
        self.last_run = self.next_run()
        self.hand_over(change, self.last_run, data)
        return change

    def gate(self, change: Change, **overrides: Any) -> Job:
        """The gate's job on the change's own run (``pull_request``), on a fresh empty runner."""
        workspace = self.tmp / f"gate-{self.next_run()}"
        workspace.mkdir()
        values: dict[str, Any] = {
            "run_id": self.last_run,
            "event": JobEvent(kind="change", change=change),
            "artifact": "ragaliq-dataset",
            **overrides,
        }
        settings = self.settings("gate", workspace, **values)
        return self.run(settings)

    def follow(self, sha: str, run_id: int) -> Job:
        """The follower's job after the baseline run of ``sha`` ended."""
        workspace = self.tmp / f"follow-{self.next_run()}"
        workspace.mkdir()
        run = FollowedRun(
            id=run_id, kind="push", conclusion="success", head_sha=sha, head_branch="main"
        )
        return self.run(
            self.settings(
                "follow",
                workspace,
                run_id=self.next_run(),
                event=JobEvent(kind="followed", followed_run=run),
                artifact="ragaliq-dataset",
            )
        )

    def checkout(self, sha: str) -> Path:
        workspace = self.tmp / f"checkout-{self.next_run()}"
        subprocess.run(
            ["git", "clone", "-q", "--no-checkout", str(self.repo), str(workspace)],
            check=True,
            capture_output=True,
        )
        git(workspace, "checkout", "-q", "--detach", sha)
        return workspace

    def settings(self, mode: str, workspace: Path, **overrides: Any) -> JobSettings:
        values: dict[str, Any] = {
            "mode": mode,
            "config": "ragaliq.yaml",
            "dataset": "rag_outputs.jsonl",
            "baseline": "",
            "anthropic_api_key": "",
            "anthropic_base_url": "",
            "comment": "upsert",
            "comment_id": "default",
            "html_report": "",
            "artifact": "",
            "trust_pr_code": False,
            "commit_status": True,
            "change_workflow": "ragaliq.yml",
            "follow_limit": 10,
            "workspace": workspace,
            "repository": REPO,
            "run_id": "0",
            "run_url": None,
            "sha": "",
            "ref_name": "main",
            "event": JobEvent(kind="push" if mode != "gate" else "other"),
        }
        values.update(overrides)
        values["run_id"] = str(values["run_id"])
        return JobSettings(**values)

    def run(self, settings: JobSettings) -> Job:
        log = MemoryLog()
        host = self.host_for(log)
        result = Publication(settings=settings, workflow=log, host=host)
        code = asyncio.run(
            run_job(
                settings=settings,
                env={},
                result=result,
                host=host,
                open_judge=open_judge,
                hardening=Hardening(gate=settings.mode == "gate"),
            )
        )
        return Job(code=int(code), log=log)

    def host_for(self, log: MemoryLog) -> Host:
        """The host as this job sees it (its own lines go to the job's log)."""
        return self.host


@dataclass
class MemoryWorld(World):
    """The in-memory host."""

    host: MemoryHost = field(default=None)  # type: ignore[assignment]

    def register_run(self, run_id: int, sha: str, *, phase: str = "waiting") -> None:
        self.host.record_run(
            "main",
            sha,
            RunRecord(id=run_id, phase=phase, said=phase),  # type: ignore[arg-type]
        )

    def finish_run(self, run_id: int, sha: str, digest: str, data: bytes) -> None:
        self.host.artifacts.setdefault(run_id, set()).add(baseline_artifact(digest))
        self.host.recorded[(run_id, digest)] = data
        runs = self.host.baseline_runs_at[("main", sha)]
        runs[:] = [r for r in runs if r.id != run_id]
        runs.append(RunRecord(id=run_id, phase="succeeded", said="succeeded", baselines=(digest,)))

    def register_change(self, change: Change) -> None:
        self.host.changes[change.number] = change

    def hand_over(self, change: Change, run_id: int, data: bytes) -> None:
        self.host.hand_over(change.head_sha, run_id, data)

    def review(self, change: Change, *, author: str, body: str) -> None:
        from ragaliq.forge import ReviewRecord

        self.host.review_records.setdefault(change.number, []).append(
            ReviewRecord(
                author=author,
                by_person=True,
                body=body,
                commit=change.head_sha,
                submitted_at=self.host.tick(),
            )
        )

    def grant(self, login: str, access: str) -> None:
        self.host.access[login] = access  # type: ignore[assignment]

    def statuses(self, sha: str, context: str = MAIN) -> list[tuple[str, str]]:
        return self.host.statuses(sha, context)

    def comments(self, number: int) -> list[str]:
        return list(self.host.comments.get(number, []))


@dataclass
class GitHubWorld(World):
    """GitHub's adapter, over real HTTP to the fake GitHub."""

    fake: FakeGitHub = field(default=None)  # type: ignore[assignment]
    log_box: list[MemoryLog] = field(default_factory=list)

    def register_run(self, run_id: int, sha: str, *, phase: str = "waiting") -> None:
        self.fake.add_run(
            REPO,
            run_id,
            workflow="ragaliq-baseline.yml",
            event="push",
            head_sha=sha,
            head_branch="main",
            status="queued",
            conclusion=None,
        )

    def finish_run(self, run_id: int, sha: str, digest: str, data: bytes) -> None:
        self.fake.add_artifact(
            REPO, run_id, baseline_artifact(digest), zipped("baseline.json", data), head_sha=sha
        )
        self.fake.set_run(REPO, run_id, status="completed", conclusion="success")

    def register_change(self, change: Change) -> None:
        self.fake.mirror_git(REPO, str(self.repo))
        self.fake.add_pull(
            REPO,
            change.number,
            head_sha=change.head_sha,
            base_sha=change.base_sha,
            base_ref=change.base_ref,
            head_ref=change.head_ref,
            user=change.author,
        )

    def hand_over(self, change: Change, run_id: int, data: bytes) -> None:
        self.fake.add_run(REPO, run_id, head_sha=change.head_sha, head_branch=change.head_ref)
        self.fake.add_artifact(
            REPO,
            run_id,
            "ragaliq-dataset",
            zipped("rag_outputs.jsonl", data),
            head_sha=change.head_sha,
        )

    def review(self, change: Change, *, author: str, body: str) -> None:
        self.fake.add_review(REPO, change.number, user=author, body=body, commit_id=change.head_sha)

    def grant(self, login: str, access: str) -> None:
        self.fake.set_permission(REPO, login, access)

    def statuses(self, sha: str, context: str = MAIN) -> list[tuple[str, str]]:
        return [(s.state, s.description) for s in self.fake.statuses(REPO, sha, context=context)]

    def comments(self, number: int) -> list[str]:
        return [c.body for c in self.fake.comments(REPO, number)]

    def host_for(self, log: MemoryLog) -> Host:
        return dataclasses.replace(self.host, log=log)  # type: ignore[type-var]

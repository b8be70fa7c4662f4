"""A repository set up as a team adopts the gate, for playing every workflow ``ragaliq init``
writes: main protected, baselines kept on the data branch, the fake GitHub serving the
repository's history and the data branch through its API.

The repository is the workspace's git repository (its history mirrored by the fake GitHub);
main is protected on the fake, so a workflow that tried to push to it would be refused.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from tests.e2e.workflows import JobResult, Player, load_workflow
from tests.e2e.workspace import (
    CONFIG,
    MAIN,
    REPO,
    RUN_ID,
    Action,
    cases,
    git,
    pr_event,
    regress,
    write_dataset,
)

STORE_CONFIG = CONFIG + "baselines: {store: branch}\n"
"""The harness's config, keeping baselines on the data branch as ``ragaliq init`` writes."""
FORK = "someone/rag-bot"


@dataclass
class Repository:
    """The repository, its fakes and a player, set up as the adoption guide says."""

    action: Action
    player: Player
    run_id: int = RUN_ID + 1000
    baseline_runs: dict[str, int] = field(default_factory=dict)
    """The baseline run recorded for each commit of main."""

    @classmethod
    def adopted(cls, action: Action, *, config: str = STORE_CONFIG) -> Repository:
        """Main has the config and its dataset, main is protected, nothing recorded yet."""
        (action.workspace / "ragaliq.yaml").write_text(config, encoding="utf-8")
        action.github.mirror_git(REPO, str(action.workspace))
        action.github.protect_branch(REPO, "main")
        return cls(action=action, player=Player(action))

    def next_run(self) -> int:
        self.run_id += 1
        return self.run_id

    def push_main(self, message: str = "main: the RAG outputs") -> tuple[str, JobResult]:
        """Commit main and play ragaliq-baseline.yml's job on that push."""
        sha = self.commit_main(message)
        return sha, self.record(sha)

    def commit_main(
        self, message: str = "main: the RAG outputs", *, rows: list[dict] | None = None
    ) -> str:
        """Commit main (with ``rows`` as its outputs, else as they are), playing nothing."""
        if rows is not None:
            write_dataset(self.action.workspace, rows)
        return self.action.commit(message)

    def start_baseline(self, sha: str) -> int:
        """The push of ``sha`` started its baseline run, which is queued: nothing recorded yet."""
        run_id = self.next_run()
        self.action.github.add_run(
            REPO,
            run_id,
            workflow="ragaliq-baseline.yml",
            event="push",
            head_sha=sha,
            head_branch="main",
            status="queued",
            conclusion=None,
        )
        self.baseline_runs[sha] = run_id
        return run_id

    def record(self, sha: str, run_id: int | None = None, pipeline: Any = None) -> JobResult:
        """Play ragaliq-baseline.yml's job for the push of ``sha`` (in run ``run_id``, already
        started, or a new one), and end the run as the job ended; ``pipeline`` stands in for
        its "Generate RAG outputs" step."""
        run_id = run_id or self.next_run()
        parent = git(self.action.workspace, "rev-parse", f"{sha}^") if self._has_parent(sha) else ""
        event = {"ref": "refs/heads/main", "before": parent or "0" * 40, "after": sha}
        job = self.player.play(
            load_workflow("ragaliq-baseline.yml"),
            "baseline",
            event=event,
            event_name="push",
            run_id=run_id,
            pipeline=pipeline,
        )
        self.action.github.set_run(
            REPO, run_id, status="completed", conclusion="success" if job.code == 0 else "failure"
        )
        self.baseline_runs[sha] = run_id
        return job

    def _has_parent(self, sha: str) -> bool:
        return bool(git(self.action.workspace, "rev-list", "--parents", "-n", "1", sha).split()[1:])

    def follow(self, sha: str, *, conclusion: str = "success") -> JobResult:
        """Play ragaliq-follow.yml's job after the baseline run of ``sha`` ended."""
        workflow_run = {
            "id": self.baseline_runs.get(sha, 0),
            "event": "push",
            "conclusion": conclusion,
            "head_sha": sha,
            "head_branch": "main",
            "head_repository": {"full_name": REPO, "owner": {"login": REPO.split("/")[0]}},
            "pull_requests": [],
        }
        return self.player.play(
            load_workflow("ragaliq-follow.yml"),
            "follow",
            event={"action": "completed", "workflow_run": workflow_run},
            event_name="workflow_run",
            run_id=self.next_run(),
        )

    def open_pull(
        self,
        number: int,
        *,
        regressed: bool,
        head_repo: str = REPO,
        base_ref: str = "main",
        head_ref: str = "feature",
        rows: list[dict] | None = None,
        files: dict[str, str] | None = None,
    ) -> dict[str, Any]:
        """A branch off main's tip with the change, opened as pull request ``number``."""
        workspace = self.action.workspace
        base = git(workspace, "rev-parse", "HEAD")
        write_dataset(workspace, rows or (regress(cases()) if regressed else cases()))
        for path, text in (files or {}).items():
            (workspace / path).write_text(text, encoding="utf-8")
        (workspace / "NOTES.md").write_text(f"change {number}\n", encoding="utf-8")
        head = self.action.commit(f"feature {number}")
        git(workspace, "reset", "-q", "--hard", base)  # main stays at the base
        self.action.github.add_pull(
            REPO,
            number,
            base_sha=base,
            head_sha=head,
            head_repo=head_repo,
            base_ref=base_ref,
            head_ref=head_ref,
        )
        event = pr_event(number, base, head, head_repo, base_ref=base_ref)
        event["pull_request"]["head"]["ref"] = head_ref
        event["action"] = "opened"
        return event

    def push_to_pull(
        self,
        event: dict[str, Any],
        *,
        message: str = "another push",
        rows: list[dict] | None = None,
    ) -> dict[str, Any]:
        """A new commit on the pull request's branch (with ``rows`` as its outputs, else the
        same), and the ``synchronize`` event GitHub sends for it."""
        workspace = self.action.workspace
        pr = event["pull_request"]
        base = git(workspace, "rev-parse", "HEAD")
        git(workspace, "checkout", "-q", "--detach", pr["head"]["sha"])
        if rows is not None:
            write_dataset(workspace, rows)
        (workspace / "NOTES.md").write_text(f"{message}\n", encoding="utf-8")
        head = self.action.commit(message)
        git(workspace, "checkout", "-q", "main")
        assert git(workspace, "rev-parse", "HEAD") == base
        self.action.github.push_to_pull(
            REPO, pr["number"], head_sha=head, base_sha=pr["base"]["sha"]
        )
        pushed = json.loads(json.dumps(event))
        pushed["action"] = "synchronize"
        pushed["pull_request"]["head"]["sha"] = head
        return pushed

    def play_pull_request(self, event: dict[str, Any], pipeline: Any = None) -> dict[str, Any]:
        """ragaliq.yml's jobs on a pull_request event, in order."""
        workflow = load_workflow("ragaliq.yml")
        run_id = self.next_run()
        played: dict[str, JobResult] = {}
        for job in ("produce", "review", "gate"):
            played[job] = self.player.play(
                workflow,
                job,
                event=event,
                event_name="pull_request",
                run_id=run_id,
                pipeline=pipeline,
                needs={k: v for k, v in played.items() if v.ran},
            )
        played["run_id"] = run_id  # type: ignore[assignment]
        return played

    def play_fork_gate(self, event: dict[str, Any], produced: int, **run: Any) -> JobResult:
        """ragaliq-forks.yml's job after the pull request's run ``produced`` completed."""
        pr = event["pull_request"]
        owner = pr["head"]["repo"]["full_name"].split("/")[0]
        workflow_run = {
            "id": produced,
            "event": "pull_request",
            "conclusion": "success",
            "head_sha": pr["head"]["sha"],
            "head_branch": pr["head"]["ref"],
            "head_repository": {
                "full_name": pr["head"]["repo"]["full_name"],
                "owner": {"login": owner},
            },
            "pull_requests": [],
            **run,
        }
        return self.player.play(
            load_workflow("ragaliq-forks.yml"),
            "gate",
            event={"action": "completed", "workflow_run": workflow_run},
            event_name="workflow_run",
            run_id=self.next_run(),
        )

    def main_status(self, head: str, base_ref: str = "main") -> list[tuple[str, str]]:
        """``(state, description)`` of the status main's protection requires, oldest first."""
        context = MAIN if base_ref == "main" else f"RagaliQ Gate ({base_ref})"
        return [
            (s.state, s.description)
            for s in self.action.github.statuses(REPO, head, context=context)
        ]

    def writes_to_main(self) -> list[str]:
        """Every request that tried to change main on the fake GitHub."""
        return [
            f"{r.method} {r.path}"
            for r in self.action.github.requests
            if r.method in ("POST", "PATCH", "PUT", "DELETE")
            and (
                r.path.endswith("/git/refs/heads/main")
                or (isinstance(r.body, dict) and r.body.get("ref") == "refs/heads/main")
                or (isinstance(r.body, dict) and r.body.get("branch") == "main")
            )
        ]

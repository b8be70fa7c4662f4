"""An in-memory host: the whole port (:class:`ragaliq.forge.Host`) answered from plain data.

A second, complete adapter beside GitHub's, for the rules whose point is not the wire: the gate's
core runs in the test's own process against it, so a rule costs no HTTP server and no subprocess.
Its size is the measure of what a host costs the core: this one file (and the job's log below).

The repository's files come from a local git repository (commits, parents and what changed, as
a host serves them); everything else (changes, runs, uploads, reviews, access, statuses,
comments, artifacts) is data a test sets, and reads back.
"""

from __future__ import annotations

import io
import subprocess
import zipfile
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

from ragaliq.config import BaselinesConfig
from ragaliq.errors import ArtifactError, BaselineError, CommentForbiddenError, ConfigError
from ragaliq.forge import (
    Access,
    BaselineRuns,
    Change,
    CommentResult,
    FollowedRun,
    HandOver,
    HostProfile,
    ReviewRecord,
    RunRecord,
    StatusRecord,
    StatusState,
    Upload,
    answers_artifact,
)
from ragaliq.repository import FileSource, GitCommit
from ragaliq.store.backends import FolderBackend
from ragaliq.store.layout import BaselineStore

__all__ = ["MemoryHost", "MemoryLog", "Posted"]


class MemoryLog:
    """The job's log, outputs and summary, kept in memory."""

    def __init__(self) -> None:
        self.stream = io.StringIO()
        self.lines: list[str] = []
        self.outputs: dict[str, str] = {}
        self.summary = ""
        self.masked: list[str] = []

    def notice(self, message: str, *, title: str = "") -> None:
        self.lines.append(f"notice {title}: {message}")

    def warning(self, message: str, *, title: str = "") -> None:
        self.lines.append(f"warning {title}: {message}")

    def error(self, message: str, *, title: str = "") -> None:
        self.lines.append(f"error {title}: {message}")

    def mask(self, secret: str) -> None:
        self.masked.append(secret)

    def log(self, message: str) -> None:
        self.lines.append(message)

    def set_output(self, name: str, value: str) -> None:
        self.outputs[name] = value

    def write_summary(self, markdown: str) -> None:
        self.summary += markdown

    @property
    def text(self) -> str:
        return "\n".join([*self.lines, self.stream.getvalue()])


@dataclass(frozen=True)
class Posted:
    """A status the host was given."""

    sha: str
    context: str
    state: str
    description: str
    at: datetime


@dataclass
class _Status:
    host: MemoryHost
    sha: str
    context: str

    def set(self, state: StatusState, description: str) -> bool:
        self.host.posted.append(
            Posted(self.sha, self.context, state, description, self.host.tick())
        )
        return True


@dataclass
class _Comment:
    host: MemoryHost
    number: int

    def upsert(self, *, body: str, marker: str) -> CommentResult:
        if self.host.comments_forbidden:
            raise CommentForbiddenError("the token may not comment here.")
        bodies = self.host.comments.setdefault(self.number, [])
        for i, old in enumerate(bodies):
            if old.split("\n", 1)[0] == marker:
                if old == body:
                    return CommentResult(action="unchanged", url=f"memory://{self.number}/{i}")
                bodies[i] = body
                return CommentResult(action="updated", url=f"memory://{self.number}/{i}")
        bodies.append(body)
        return CommentResult(action="created", url=f"memory://{self.number}/{len(bodies) - 1}")


@dataclass
class _Runs:
    host: MemoryHost
    branch: str
    workflow: str
    trusted: FileSource

    def newest_run(self, commit: str) -> RunRecord | None:
        runs = self.host.baseline_runs_at.get((self.branch, commit), [])
        return max(runs, key=lambda run: run.id) if runs else None

    def first_parent(self, commit: str) -> str | None:
        parents = self.host.git("rev-list", "--parents", "-n", "1", commit).split()[1:]
        return parents[0] if parents else None

    def run_due(self, since: str, commit: str) -> str | None:
        changed = self.host.git("diff", "--name-only", since, commit).split()
        due = [path for path in changed if not path.startswith(self.host.paths_ignored)]
        return f"{len(due)} paths it watches changed since {since[:7]}" if due else None

    def recorded_baseline(self, run: RunRecord, digest: str) -> bytes:
        try:
            return self.host.recorded[(run.id, digest)]
        except KeyError:
            raise BaselineError(f"run {run.id} kept no baseline {digest[:12]}") from None

    def recorded_answers(self, run: RunRecord) -> bytes | None:
        return self.host.recorded_answers.get(run.id)


@dataclass
class MemoryHost:
    """A repository and its host, in memory; the git repository at ``repository`` serves files."""

    repository: Path
    store_root: Path
    name: str = "the in-memory host"
    profile: HostProfile = field(default_factory=lambda: HostProfile(teams_hint="none here"))
    changes: dict[int, Change] = field(default_factory=dict)
    """The open changes, as the host has them now."""
    baseline_runs_at: dict[tuple[str, str], list[RunRecord]] = field(default_factory=dict)
    """``(branch, commit)`` → the baseline workflow's push runs there."""
    recorded: dict[tuple[int, str], bytes] = field(default_factory=dict)
    recorded_answers: dict[int, bytes] = field(default_factory=dict)
    artifacts: dict[int, set[str]] = field(default_factory=dict)
    """Run → the names of the artifacts it uploaded."""
    handed: dict[str, list[tuple[Upload, str, bytes]]] = field(default_factory=dict)
    """Head commit → the datasets its change's runs handed over (with the artifact's name),
    oldest first."""
    review_records: dict[int, list[ReviewRecord]] = field(default_factory=dict)
    access: dict[str, Access] = field(default_factory=dict)
    teams: dict[str, set[str]] = field(default_factory=dict)
    posted: list[Posted] = field(default_factory=list)
    comments: dict[int, list[str]] = field(default_factory=dict)
    comments_forbidden: bool = False
    answer_uploads: dict[int, list[bytes]] = field(default_factory=dict)
    approved: dict[int, str] = field(default_factory=dict)
    """Change → the head the gate approved."""
    pipeline_variables: list[str] = field(default_factory=list)
    """Variables this job got from whoever started it."""
    paths_ignored: tuple[str, ...] = ()
    """Paths the baseline workflow's triggers ignore (a run is due for any other change)."""
    clock: datetime = field(default_factory=lambda: datetime.now(UTC) - timedelta(minutes=30))
    unpacked: Path | None = None

    def tick(self) -> datetime:
        self.clock += timedelta(seconds=1)
        return self.clock

    def git(self, *args: str) -> str:
        done = subprocess.run(
            ["git", "-C", str(self.repository), *args], capture_output=True, text=True, check=False
        )
        return done.stdout.strip() if done.returncode == 0 else ""

    # ------------------------------------------------------------------ the port

    def files_at(self, sha: str, label: str) -> FileSource:
        return GitCommit(self.repository, sha, label=label)

    def check_change(self, change: Change) -> Change:
        now = self.changes.get(change.number)
        if now is None:
            raise ConfigError(f"pull request #{change.number} is not open any more")
        if now.head_sha != change.head_sha:
            raise ConfigError(f"pull request #{change.number} has been pushed to since")
        if change.base_ref and now.base_ref != change.base_ref:
            raise ConfigError(f"pull request #{change.number} was re-targeted")
        return Change(
            number=now.number,
            base_sha=change.base_sha,
            head_sha=change.head_sha,
            base_repo=now.base_repo,
            head_repo=now.head_repo,
            author=now.author,
            base_ref=now.base_ref,
            head_ref=now.head_ref,
        )

    def changes_of_run(self, run: FollowedRun) -> tuple[Change, ...]:
        return tuple(c for _, c in sorted(self.changes.items()) if c.head_sha == run.head_sha)

    def open_changes(self, base_ref: str) -> tuple[Change, ...]:
        return tuple(
            c for _, c in sorted(self.changes.items(), reverse=True) if c.base_ref == base_ref
        )

    def handed_over(
        self, run_id: int, artifact: str, file_name: str, head_sha: str | None
    ) -> HandOver:
        for head, uploads in self.handed.items():
            for upload, name, data in uploads:
                if upload.run_id != run_id or name != artifact:
                    continue
                if head_sha and head != head_sha:
                    raise ArtifactError(f"run {run_id} was made for {head[:12]}")
                folder = self.unpacked or Path(self.store_root).parent
                path = folder / f"handed-{run_id}.jsonl"
                path.write_bytes(data)
                return HandOver(
                    path=path,
                    artifact=artifact,
                    run_id=run_id,
                    sha256="0" * 64,
                    size=len(data),
                    handed_over=upload.created_at,
                )
        raise ArtifactError(f"artifact {artifact!r} of run {run_id}: not found")

    def uploads(self, source: int | str, change: Change, artifact: str) -> tuple[Upload, ...]:
        return tuple(u for u, name, _ in self.handed.get(change.head_sha, ()) if name == artifact)

    def reviews(self, change: Change) -> tuple[tuple[ReviewRecord, ...], tuple[str, ...]]:
        return tuple(self.review_records.get(change.number, ())), ()

    def access_of(self, login: str) -> Access | None:
        return self.access.get(login)

    def member_of(self, team: str, login: str) -> bool | str:
        members = self.teams.get(team)
        return "its members cannot be read" if members is None else login in members

    def baseline_runs(self, branch: str, workflow: str, trusted: FileSource) -> BaselineRuns:
        return _Runs(self, branch, workflow, trusted)

    def baseline_store(self, config: BaselinesConfig) -> BaselineStore:
        return BaselineStore(FolderBackend(self.store_root / config.branch), keep=config.keep)

    def uploaded(self, run_id: int, name: str) -> bool:
        return name in self.artifacts.get(run_id, set())

    def answer_files(self, change: Change) -> tuple[list[tuple[str, bytes]], list[str]]:
        name = answers_artifact(change.number)
        files = [
            (f"{name} #{i}", data)
            for i, data in enumerate(self.answer_uploads.get(change.number, []))
        ]
        return files, []

    def status(self, sha: str, context: str) -> _Status:
        return _Status(self, sha, context)

    def latest_status(self, sha: str, context: str) -> StatusRecord | None:
        for post in reversed(self.posted):
            if post.sha == sha and post.context == context:
                return StatusRecord(
                    state=post.state, description=post.description, created_at=post.at
                )
        return None

    def comment(self, change: Change) -> _Comment:
        return _Comment(self, change.number)

    def approve(self, change: Change, approved: bool) -> str | None:
        if approved:
            self.approved[change.number] = change.head_sha
            return f"approved #{change.number}"
        return None if self.approved.pop(change.number, None) is None else "approval withdrawn"

    def foreign_inputs(self) -> tuple[str, ...]:
        return tuple(self.pipeline_variables)

    # ------------------------------------------------------------------ for tests

    def statuses(self, sha: str, context: str) -> list[tuple[str, str]]:
        return [
            (p.state, p.description) for p in self.posted if p.sha == sha and p.context == context
        ]

    def hand_over(
        self, head_sha: str, run_id: int, data: bytes, artifact: str = "ragaliq-dataset"
    ) -> None:
        """The change's own run ``run_id`` handed over ``data`` as its dataset."""
        self.handed.setdefault(head_sha, []).append(
            (Upload(run_id=run_id, created_at=self.tick()), artifact, data)
        )

    def record_run(self, branch: str, commit: str, run: RunRecord) -> None:
        self.baseline_runs_at.setdefault((branch, commit), []).append(run)


def zipped(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return buffer.getvalue()

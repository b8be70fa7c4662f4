"""GitLab as a host of the gate: the port (:class:`~ragaliq.forge.Host`) filled from its REST API.

Each answer is a fact read through python-gitlab (:class:`~ragaliq.gitlab.client.GitLabApi`);
nothing here decides. GitLab's words become the core's: a merge request is a change, a note with
``/ragaliq accept <ids> <head sha>`` a review (an edited note does not stand), a member's access
level an access, a pipeline a run, a job's artifacts the hand-over. A commit status is the gate's
only when the gate's own account posted it: any Developer can post one of the same name.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import gitlab
from gitlab.exceptions import GitlabError

from ragaliq._times import read_time
from ragaliq.config import BaselinesConfig
from ragaliq.errors import (
    ArtifactError,
    CommentForbiddenError,
    ConfigError,
    PublishError,
    RepositoryError,
)
from ragaliq.forge import (
    Access,
    BaselineRuns,
    Change,
    CommentBoard,
    CommentResult,
    FollowedRun,
    HandOver,
    HostProfile,
    JobLog,
    ReviewRecord,
    StatusBoard,
    StatusRecord,
    StatusState,
    Upload,
)
from ragaliq.gitlab.client import GitLabApi
from ragaliq.gitlab.files import FilesAtCommit, read_job_file
from ragaliq.gitlab.runs import GitLabBaselineRuns
from ragaliq.repository import FileSource
from ragaliq.store.backends import FolderBackend
from ragaliq.store.layout import BaselineStore

__all__ = ["ACCESS", "PROFILE", "GitLabHost", "merge_request_ref"]

ACCESS: dict[int, Access] = {
    10: "read",
    15: "read",
    20: "read",
    30: "write",
    40: "maintain",
    50: "admin",
}
"""GitLab's access levels (Guest, Planner, Reporter, Developer, Maintainer, Owner)."""
PROFILE = HostProfile(
    comment=1_000_000,
    summary=1_048_576,
    summary_name="the gate job's log",
    teams_hint="the gate's token may not read that group's members; give it read_api on the group",
    accept_hint=(
        "A member with the Developer role or above, not the author, accepts a claim the gate "
        "got wrong with a note that says <code>/ragaliq accept &lt;id&gt; &lt;head "
        "commit&gt;</code> (or <code>all</code> in place of the ids), naming this head commit "
        "in full; an edited note counts as never written, and a new push needs a new note."
    ),
)
"""GitLab's limits: a note of 1,000,000 characters."""
_STATES = {"pending": "pending", "success": "success", "failure": "failed", "error": "failed"}
_MAX_DATASET = 2 * 1024**3


def merge_request_ref(number: int) -> str:
    """The ref of merge request ``number``'s own detached pipelines: its head, as pushed."""
    return f"refs/merge-requests/{number}/head"


def _own_pipeline(pipeline: dict[str, Any], *, ref: str, sha: str) -> bool:
    """Whether a listed pipeline is the merge request's own, at its head.

    Whatever the list was asked for, the pipeline's own record must say so.
    """
    return (
        pipeline.get("ref") == ref
        and pipeline.get("sha") == sha
        and pipeline.get("source") == "merge_request_event"
    )


@dataclass(frozen=True, kw_only=True)
class _Status:
    host: GitLabHost
    sha: str
    context: str

    def set(self, state: StatusState, description: str) -> bool:
        api = self.host.api
        body = {
            "state": _STATES[state],
            "name": self.context,
            "description": " ".join(description.split())[:255],
        }
        if self.host.run_url:
            body["target_url"] = self.host.run_url

        def ask(client: gitlab.Gitlab) -> bool:
            try:
                client.http_post(f"{api.project_path}/statuses/{self.sha}", post_data=body)
            except GitlabError as exc:
                if exc.response_code == 400 and state == "pending":
                    return True  # already pending: GitLab refuses the same state twice
                raise
            return True

        try:
            return api.ask(ask, doing=f"setting the status of {self.sha[:12]}", error=PublishError)
        except PublishError as exc:
            self.host.log.notice(f"the commit status was not set: {exc}", title="No commit status")
            return False


@dataclass(frozen=True, kw_only=True)
class _Note:
    host: GitLabHost
    number: int

    def upsert(self, *, body: str, marker: str) -> CommentResult:
        api, me = self.host.api, self.host.me()
        path = f"{api.project_path}/merge_requests/{self.number}/notes"

        def ask(client: gitlab.Gitlab) -> CommentResult:
            notes = client.http_list(path, query_data={"sort": "asc"}, iterator=True)
            for note in notes:
                ours = (note.get("author") or {}).get("username") == me
                if ours and str(note.get("body") or "").split("\n", 1)[0] == marker:
                    if note.get("body") == body:
                        return CommentResult(action="unchanged", url=self._url(note))
                    edited = client.http_put(f"{path}/{note['id']}", post_data={"body": body})
                    return CommentResult(action="updated", url=self._url(edited))
            made = client.http_post(path, post_data={"body": body})
            return CommentResult(action="created", url=self._url(made))

        try:
            return api.ask(ask, doing=f"the note on !{self.number}", error=PublishError)
        except PublishError as exc:
            if "403" in str(exc) or "401" in str(exc):
                raise CommentForbiddenError(str(exc)) from exc
            raise

    def _url(self, note: Any) -> str:
        base = self.host.web_url or self.host.api.url
        return f"{base}/-/merge_requests/{self.number}#note_{(note or {}).get('id', '')}"


@dataclass(kw_only=True)
class GitLabHost:
    """The project on GitLab behind one job."""

    api: GitLabApi
    log: JobLog
    web_url: str = ""
    """The project's page (``CI_PROJECT_URL``)."""
    run_url: str | None = None
    pipeline_id: int = 0
    """This job's pipeline, whose variables are checked."""
    _me: str | None = field(default=None, init=False)

    @property
    def name(self) -> str:
        return "GitLab"

    @property
    def profile(self) -> HostProfile:
        return PROFILE

    def me(self) -> str:
        """The gate's own account: the token's user."""
        if self._me is None:
            found: Any = self.api.ask(
                lambda client: client.http_get("/user"),
                doing="reading the token's user",
                error=RepositoryError,
            )
            self._me = str((found or {}).get("username") or "")
        return self._me

    def files_at(self, sha: str, label: str) -> FileSource:
        return FilesAtCommit(api=self.api, sha=sha, label=label)

    def _change(self, mr: dict[str, Any]) -> Change:
        refs = mr.get("diff_refs") or {}
        project = str(self.api.project)
        fork = mr.get("source_project_id") != mr.get("target_project_id")
        return Change(
            number=int(mr["iid"]),
            base_sha=str(refs.get("base_sha") or ""),
            head_sha=str(mr.get("sha") or refs.get("head_sha") or ""),
            base_repo=project,
            head_repo=f"{project} fork {mr.get('source_project_id')}" if fork else project,
            author=str((mr.get("author") or {}).get("username") or ""),
            base_ref=str(mr.get("target_branch") or ""),
            head_ref=str(mr.get("source_branch") or ""),
        )

    def check_change(self, change: Change) -> Change:
        mr = self.api.ask(
            lambda client: self.api.get(client, f"/merge_requests/{change.number}"),
            doing=f"reading !{change.number}",
            error=RepositoryError,
        )
        if mr.get("state") != "opened":
            raise ConfigError(f"merge request !{change.number} is not open any more")
        now = self._change(mr)
        if now.head_sha != change.head_sha:
            raise ConfigError(f"merge request !{change.number} has been pushed to since")
        return now

    def changes_of_run(self, run: FollowedRun) -> tuple[Change, ...]:
        return ()  # GitLab's gate finds the merge requests itself

    def open_changes(self, base_ref: str) -> tuple[Change, ...]:
        found = self.api.ask(
            lambda client: self.api.all(
                client,
                "/merge_requests",
                most=100,
                state="opened",
                target_branch=base_ref,
                order_by="updated_at",
                sort="desc",
            ),
            doing=f"listing the open merge requests into {base_ref}",
            error=RepositoryError,
        )
        return tuple(self._change(mr) for mr in found if mr.get("target_branch") == base_ref)

    def uploads(self, source: int | str, change: Change, artifact: str) -> tuple[Upload, ...]:
        head_sha, ref = change.head_sha, merge_request_ref(change.number)

        def ask(client: gitlab.Gitlab) -> tuple[Upload, ...]:
            pipelines = self.api.all(
                client,
                "/pipelines",
                most=50,
                ref=ref,
                sha=head_sha,
                source="merge_request_event",
            )
            out = []
            for pipeline in pipelines:
                if not _own_pipeline(pipeline, ref=ref, sha=head_sha):
                    continue  # another merge request's, or this one's at another head
                for job in self.api.all(client, f"/pipelines/{pipeline['id']}/jobs", most=200):
                    done = read_time(job.get("finished_at"))
                    if job.get("name") == artifact and job.get("status") == "success" and done:
                        out.append(Upload(run_id=int(job["id"]), created_at=done))
            return tuple(sorted(out, key=lambda u: (u.created_at, u.run_id)))

        return self.api.ask(ask, doing=f"the produce jobs of {head_sha[:12]}", error=ArtifactError)

    def handed_over(
        self, run_id: int, artifact: str, file_name: str, head_sha: str | None
    ) -> HandOver:
        def ask(client: gitlab.Gitlab) -> tuple[dict[str, Any], bytes | None]:
            job = self.api.get(client, f"/jobs/{run_id}")
            return job, read_job_file(self.api, client, run_id, file_name, _MAX_DATASET)

        where = f"job {run_id} ({artifact})"
        job, data = self.api.ask(ask, doing=f"reading {where}", error=ArtifactError)
        made_for = str((job.get("commit") or {}).get("id") or "")
        source = str((job.get("pipeline") or {}).get("source") or "")
        if job.get("name") != artifact or job.get("status") != "success":
            raise ArtifactError(f"{where}: not a successful {artifact} job")
        if head_sha and made_for != head_sha:
            raise ArtifactError(f"{where}: ran at {made_for[:12]}, not the head {head_sha[:12]}")
        if source != "merge_request_event":
            raise ArtifactError(
                f"{where}: ran in a {source or 'unknown'} pipeline, not the merge request's"
            )
        if data is None:
            raise ArtifactError(f"{where}: keeps no {file_name} among its artifacts")
        folder = Path(tempfile.mkdtemp(prefix="ragaliq-dataset-"))
        path = folder / Path(file_name).name
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        return HandOver(
            path=path,
            artifact=artifact,
            run_id=run_id,
            sha256=hashlib.sha256(data).hexdigest(),
            size=len(data),
            handed_over=read_time(job.get("finished_at")),
        )

    def reviews(self, change: Change) -> tuple[tuple[ReviewRecord, ...], tuple[str, ...]]:
        path = f"/merge_requests/{change.number}/notes"
        notes = self.api.ask(
            lambda client: self.api.all(client, path, most=5000, sort="asc"),
            doing=f"reading the notes of !{change.number}",
            error=RepositoryError,
        )
        out = []
        for note in notes:
            body = str(note.get("body") or "")
            if note.get("system") or "/ragaliq" not in body.lower():
                continue
            author = note.get("author") or {}
            edited = note.get("updated_at") and note.get("updated_at") != note.get("created_at")
            out.append(
                ReviewRecord(
                    author=str(author.get("username") or ""),
                    by_person=not author.get("bot", False),
                    body=body,
                    commit=None,
                    standing="edited since it was written" if edited else "",
                    url=f"{self.web_url}/-/merge_requests/{change.number}#note_{note.get('id')}",
                    submitted_at=read_time(note.get("created_at")),
                )
            )
        return tuple(out), ()

    def _user_id(self, client: gitlab.Gitlab, login: str) -> int | None:
        users = list(client.http_list("/users", query_data={"username": login}, get_all=False))
        return int(users[0]["id"]) if users else None

    def access_of(self, login: str) -> Access | None:
        def ask(client: gitlab.Gitlab) -> Access | None:
            user = self._user_id(client, login)
            if user is None:
                return None
            try:
                member = self.api.get(client, f"/members/all/{user}")
            except GitlabError as exc:
                if exc.response_code == 404:
                    return "none"
                raise
            return ACCESS.get(int(member.get("access_level") or 0), "none")

        return self.api.ask(ask, doing=f"reading {login}'s access", error=RepositoryError)

    def member_of(self, team: str, login: str) -> bool | str:
        def ask(client: gitlab.Gitlab) -> bool | str:
            user = self._user_id(client, login)
            if user is None:
                return False
            try:
                client.http_get(f"/groups/{quote(team, safe='')}/members/all/{user}")
            except GitlabError as exc:
                return False if exc.response_code == 404 else f"GitLab answered {exc.response_code}"
            return True

        return self.api.ask(ask, doing=f"reading the group {team}", error=RepositoryError)

    def baseline_runs(self, branch: str, workflow: str, trusted: FileSource) -> BaselineRuns:
        return GitLabBaselineRuns(
            api=self.api,
            branch=branch,
            workflow=workflow,
            trusted=trusted,
            download=lambda client, job, path, limit: read_job_file(
                self.api, client, job, path, limit
            ),
        )

    def baseline_store(self, config: BaselinesConfig) -> BaselineStore:
        # The record job keeps each baseline as its own artifact (never expiring): the run
        # records are the store, and the gate reads a baseline from its run.
        empty = Path(tempfile.mkdtemp(prefix="ragaliq-no-store-")) / "none"
        return BaselineStore(FolderBackend(empty), keep=config.keep)

    def uploaded(self, run_id: int, name: str) -> bool:
        return True  # the record job keeps the baseline among its own artifacts

    def answer_files(self, change: Change) -> tuple[list[tuple[str, bytes]], list[str]]:
        return [], []  # a merge request's earlier gates keep none: only the baseline's are read

    def status(self, sha: str, context: str) -> StatusBoard:
        return _Status(host=self, sha=sha, context=context)

    def latest_status(self, sha: str, context: str) -> StatusRecord | None:
        me = self.me()
        path = f"/repository/commits/{sha}/statuses"
        found = self.api.ask(
            lambda client: self.api.all(client, path, most=100, name=context, all="true"),
            doing=f"reading the statuses of {sha[:12]}",
            error=RepositoryError,
        )
        ours = [s for s in found if (s.get("author") or {}).get("username") == me]
        if not ours:
            return None
        newest = max(ours, key=lambda s: int(s.get("id") or 0))
        state = str(newest.get("status") or "")
        description = str(newest.get("description") or "")
        if state == "failed" and ": not judged" in description:
            state = "error"
        elif state in ("running", "created"):
            state = "pending"
        elif state == "failed":
            state = "failure"
        return StatusRecord(
            state=state,
            description=description,
            created_at=read_time(newest.get("created_at")),
            creator=me,
        )

    def comment(self, change: Change) -> CommentBoard:
        return _Note(host=self, number=change.number)

    def approve(self, change: Change, approved: bool) -> str | None:
        path = f"{self.api.project_path}/merge_requests/{change.number}"

        def ask(client: gitlab.Gitlab) -> str | None:
            try:
                if approved:
                    client.http_post(f"{path}/approve", post_data={"sha": change.head_sha})
                    return f"approved !{change.number} at {change.head_sha[:12]}"
                client.http_post(f"{path}/unapprove")
                return f"withdrew the approval of !{change.number}"
            except GitlabError as exc:
                if exc.response_code in (401, 404) and not approved:
                    return None  # not approved: nothing to withdraw
                if exc.response_code == 401 and approved:
                    return None  # approved already
                raise

        try:
            return self.api.ask(ask, doing=f"approving !{change.number}", error=PublishError)
        except PublishError as exc:
            return f"the approval could not be set: {exc}"

    def pipeline_variables_role(self) -> str:
        """Who may set pipeline variables in the project (``developer``, ``maintainer``, ...)."""
        found: Any = self.api.ask(
            lambda client: self.api.get(client, ""),
            doing="reading the project's settings",
            error=RepositoryError,
        )
        return str((found or {}).get("ci_pipeline_variables_minimum_override_role") or "")

    def foreign_inputs(self) -> tuple[str, ...]:
        if not self.pipeline_id:
            return ()
        path = f"/pipelines/{self.pipeline_id}/variables"
        found = self.api.ask(
            lambda client: self.api.all(client, path, most=100),
            doing=f"reading the variables of pipeline {self.pipeline_id}",
            error=RepositoryError,
        )
        return tuple(sorted(str(v.get("key") or "") for v in found))

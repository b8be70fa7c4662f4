"""A stateful fake of the GitLab REST API v4 served over real HTTP on 127.0.0.1.

The fake runs a stdlib :class:`http.server.ThreadingHTTPServer` in a daemon thread on an
ephemeral port, so the real python-gitlab client (or a subprocess given ``CI_API_V4_URL``) can be
driven end to end::

    with FakeGitLab() as fake:
        fake.add_project("acme/rag-app")
        fake.add_merge_request("acme/rag-app", source_branch="feature", head_sha=HEAD)
        gl = gitlab.Gitlab(fake.url, private_token=fake.token)
        ...

Every route lives under ``/api/v4``. A project is addressed by its numeric id or its URL-encoded
path (``acme%2Frag-app``); a file path in the Files API is URL-encoded too, an artifact path is
not. Tokens come as ``PRIVATE-TOKEN``, ``Authorization: Bearer`` or, for a job's
``CI_JOB_TOKEN``, ``JOB-TOKEN``. Supported endpoints:

* ``GET /user``, ``GET /users/:id``, ``GET /users?username=``
* ``GET /projects/:id`` (with ``default_branch``, ``forked_from_project``,
  ``ci_pipeline_variables_minimum_override_role``, ``keep_latest_artifact``, ...)
* ``GET /projects/:id/merge_requests`` (``state``, ``target_branch``, ``source_branch``,
  ``order_by=created_at|updated_at``, ``sort``) and ``GET .../merge_requests/:iid`` (``sha``,
  ``diff_refs``, ``source_project_id``, ``target_project_id``, ``head_pipeline``)
* ``GET .../merge_requests/:iid/pipelines`` (newest first; a pipeline on
  ``refs/merge-requests/:iid/head`` or ``/merge`` belongs to it) and
  ``GET .../repository/commits/:sha/merge_requests``
* ``GET|POST .../merge_requests/:iid/notes`` (listed newest first unless ``sort=asc``) and
  ``GET|PUT .../notes/:note_id``; only a note's author may edit it (403 otherwise)
* ``POST /projects/:id/statuses/:sha`` (Developer role; a pending or running status moved to the
  same state again is refused with 400, as GitLab refuses the transition; a status on a commit
  without a pipeline creates an ``external`` pipeline for it) and
  ``GET .../repository/commits/:sha/statuses`` (the latest of each name unless ``all=true``;
  ``name``, ``ref`` filters), each status with the ``author`` whose token posted it
* ``POST .../merge_requests/:iid/approve`` (optional ``sha``: 409 when it is not the head; 401
  for the author, or a user who already approved), ``POST .../unapprove`` (404 when not
  approved) and ``GET .../approvals`` (``approved_by``); a push to the merge request drops its
  approvals
* ``GET /projects/:id/members/all`` (``query``) and ``GET .../members/all/:user_id`` (404 for
  a non-member), with ``access_level`` 10/20/30/40/50
* ``GET /projects/:id/pipelines`` (``ref``, ``sha``, ``source``, ``status``, ``username``,
  ``order_by=id|updated_at``, ``sort``), ``GET .../pipelines/:pid`` (with ``user``, ``source``,
  ``tag``) and ``GET .../pipelines/:pid/variables``
* ``GET /projects/:id/pipeline_schedules``, ``GET .../pipeline_schedules/:sid`` (with
  ``variables``, ``owner``, ``last_pipeline``) and ``GET .../pipeline_schedules/:sid/pipelines``
* ``GET /projects/:id/pipelines/:pid/jobs`` (``scope``), ``GET /projects/:id/jobs/:job_id``,
  ``GET .../jobs/:job_id/artifacts`` (the zip), ``GET .../jobs/:job_id/artifacts/*path``,
  ``GET .../jobs/artifacts/:ref/download?job=`` and ``GET .../jobs/artifacts/:ref/raw/*path?job=``
  (the latest successful pipeline of that ref); expired artifacts answer 404 unless the project
  keeps the latest successful pipeline's artifacts of a ref (``keep_latest_artifact``, on by
  default, as on GitLab)
* ``GET /projects/:id/environments`` (``name``, ``search``) and ``GET .../environments/:env_id``
* ``GET /projects/:id/variables`` (Maintainer role)
* ``GET .../repository/files/:path/raw?ref=`` and ``GET .../repository/files/:path?ref=``
  (404 ``File Not Found`` when absent), ``GET .../repository/commits/:sha`` (``parent_ids``),
  ``GET .../repository/compare?from=&to=&straight=`` (``diffs`` with ``old_path``/``new_path``),
  ``GET .../repository/branches`` and ``GET .../repository/branches/:branch`` (``protected``),
  ``GET /projects/:id/protected_branches``
* ``POST /projects/:id/repository/commits`` (``branch``, ``start_branch``, ``start_sha``,
  ``force``, ``actions`` create/update/delete/move with ``encoding`` text or base64 and
  ``last_commit_id``): a protected branch refuses a push from below its push level with 403,
  and a commit started from a ``start_sha`` the branch has moved past is refused with 400, as
  Gitaly refuses a ref update that is not a fast-forward (:meth:`FakeGitLab.race_next_commit`
  lands another writer's commit first)

A ``CI_JOB_TOKEN`` (:meth:`FakeGitLab.job_token`) is accepted, while its job runs, only on the
endpoints GitLab lists for job tokens (docs.gitlab.com/ci/jobs/ci_job_token/#job-token-access):
reading merge requests and their notes, commits, branches, raw files, environments and job
artifacts; anything else (posting a note, a status, an approval) answers 401 as to no token.
:meth:`FakeGitLab.ci_project` and :meth:`FakeGitLab.ci_merge_request` hand the pipeline player
(tests/fakes/gitlab_ci.py) the project and merge request as set up here, so a played pipeline's
jobs get what this GitLab would give them. Lists are paginated as GitLab does (``page``,
``per_page`` up to 100, ``X-Page``, ``X-Per-Page``, ``X-Next-Page``, ``X-Prev-Page``,
``X-Total``, ``X-Total-Pages`` and ``Link``). Errors are shaped as GitLab's
(``{"message": "404 Project Not Found"}``); :meth:`FakeGitLab.fail` answers any
status on demand, a 429 with ``Retry-After``. Anything else answers 404 ``{"error": "404 Not
Found"}``.
"""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import fnmatch
import hashlib
import io
import json
import re
import subprocess
import sys
import threading
import zipfile
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, quote, unquote, urlencode, urlsplit

from tests.fakes.gitlab_ci import CiProject, CiVariable, MergeRequestInfo

__all__ = [
    "DEVELOPER",
    "GUEST",
    "MAINTAINER",
    "OWNER",
    "PIPELINE_SOURCES",
    "REPORTER",
    "FakeGitLab",
    "Note",
    "RecordedRequest",
    "Status",
]

GUEST, REPORTER, DEVELOPER, MAINTAINER, OWNER = 10, 20, 30, 40, 50
PIPELINE_SOURCES = frozenset(
    {
        "push",
        "merge_request_event",
        "schedule",
        "web",
        "trigger",
        "api",
        "pipeline",
        "parent_pipeline",
        "external",
        "chat",
        "webide",
    }
)
_STATUS_STATES = ("pending", "running", "success", "failed", "canceled", "skipped")
_API = "/api/v4"
_EPOCH = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=30)
"""The fake's clock starts half an hour before the tests and moves a second per event."""
_DEFAULT_PER_PAGE = 20
_MAX_PER_PAGE = 100
_ZERO_SHA = "0" * 40
_SEG = r"[^/]+"
_PROJECT = rf"/projects/(?P<project>{_SEG})"
_MR = rf"{_PROJECT}/merge_requests/(?P<iid>\d+)"
_DEFAULT_MESSAGES = {
    400: "400 Bad request",
    401: "401 Unauthorized",
    403: "403 Forbidden",
    404: "404 Not Found",
    405: "405 Method Not Allowed",
    409: "409 Conflict",
    422: "422 Unprocessable Entity",
}


@dataclass(kw_only=True)
class RecordedRequest:
    """One request received by the fake, recorded before authentication and injected failures.

    ``path`` is the path below ``/api/v4`` as sent (still URL-encoded, so a project path reads
    ``/projects/acme%2Frag-app``); ``raw_path`` is the request target exactly as sent. Header
    names are lower-cased; ``body`` is the decoded JSON or form body, or ``None`` when empty.
    """

    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: Any
    raw_path: str = ""


@dataclass(kw_only=True)
class Note:
    """A merge request note as the fake stores it."""

    id: int
    body: str
    author: str
    created_at: str
    updated_at: str
    system: bool = False


@dataclass(kw_only=True)
class Status:
    """A commit status as the fake stores it, with the user whose token posted it."""

    id: int
    sha: str
    name: str
    state: str
    ref: str | None
    description: str | None
    target_url: str | None
    author: str
    pipeline_id: int
    created_at: str


@dataclass(kw_only=True)
class _User:
    id: int
    username: str
    name: str
    bot: bool
    tokens: set[str] = field(default_factory=set)


@dataclass(kw_only=True)
class _Commit:
    sha: str
    parents: list[str]
    files: dict[str, bytes]
    message: str
    author: str
    created_at: str


@dataclass(kw_only=True)
class _Project:
    id: int
    path: str
    default_branch: str
    visibility: str
    forked_from: int | None
    settings: dict[str, Any]
    members: dict[int, int] = field(default_factory=dict)
    protected: dict[str, int] = field(default_factory=dict)
    """Protected branch name or wildcard to the lowest access level allowed to push."""
    variables: list[CiVariable] = field(default_factory=list)
    commits: dict[str, _Commit] = field(default_factory=dict)
    branches: dict[str, str] = field(default_factory=dict)
    mirror: str | None = None
    created_at: str = ""


@dataclass(kw_only=True)
class _MergeRequest:
    id: int
    iid: int
    project_id: int
    source_project_id: int
    source_branch: str
    target_branch: str
    sha: str
    base_sha: str
    start_sha: str
    author: int
    title: str
    description: str
    state: str
    draft: bool
    created_at: str
    updated_at: str
    notes: list[Note] = field(default_factory=list)
    approvals: list[tuple[int, str]] = field(default_factory=list)
    """Who approved, at which head."""


@dataclass(kw_only=True)
class _Pipeline:
    id: int
    iid: int
    project_id: int
    ref: str
    sha: str
    source: str
    status: str
    user: int
    variables: list[dict[str, Any]]
    tag: bool
    created_at: str
    updated_at: str
    before_sha: str = _ZERO_SHA
    schedule_id: int | None = None
    merge_request_iid: int | None = None


@dataclass(kw_only=True)
class _Job:
    id: int
    pipeline_id: int
    name: str
    stage: str
    status: str
    artifacts: bytes | None
    expire_at: str | None
    expired: bool
    environment: str | None
    created_at: str
    token: str


@dataclass(kw_only=True)
class _Schedule:
    id: int
    project_id: int
    description: str
    ref: str
    cron: str
    owner: int
    active: bool
    variables: dict[str, str]
    created_at: str


@dataclass(kw_only=True)
class _Environment:
    id: int
    project_id: int
    name: str
    tier: str
    external_url: str | None
    created_at: str


@dataclass(kw_only=True)
class _Failure:
    method: str
    pattern: re.Pattern[str]
    status: int
    remaining: int
    body: Any
    headers: dict[str, str]


@dataclass
class _Response:
    status: int
    payload: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    raw: bytes | None = None
    """A body sent as it is (an archive, a raw file), instead of ``payload`` as JSON."""
    content_type: str = "application/json"


class _HttpError(Exception):
    def __init__(self, status: int, message: str | None = None, *, key: str = "message") -> None:
        text = message or _DEFAULT_MESSAGES.get(status, f"{status}")
        super().__init__(text)
        self.status = status
        self.payload = {key: text}


def _not_found(what: str = "") -> _HttpError:
    return _HttpError(404, f"404 {what} Not Found" if what else "404 Not Found")


def _forbidden(reason: str = "") -> _HttpError:
    return _HttpError(403, f"403 Forbidden - {reason}" if reason else "403 Forbidden")


def _sha_of(*parts: str) -> str:
    return hashlib.sha1("\0".join(parts).encode(), usedforsecurity=False).hexdigest()


def _zip(files: Mapping[str, bytes | str]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            archive.writestr(name, data.encode() if isinstance(data, str) else data)
    return buffer.getvalue()


_Handler = Callable[["_Context"], _Response]


@dataclass(frozen=True, kw_only=True)
class _Route:
    method: str
    pattern: re.Pattern[str]
    handler: _Handler
    job_token: bool = False
    """Whether a ``CI_JOB_TOKEN`` may call it (docs.gitlab.com/ci/jobs/ci_job_token/)."""


@dataclass(kw_only=True)
class _Context:
    method: str
    path: str
    query: dict[str, list[str]]
    body: Any
    params: dict[str, str]
    user: _User
    job: _Job | None

    def first(self, name: str) -> str | None:
        values = self.query.get(name)
        return values[0] if values else None

    def field(self, name: str) -> Any:
        if isinstance(self.body, dict) and name in self.body:
            return self.body[name]
        return self.first(name)

    def param(self, name: str) -> str:
        return unquote(self.params[name])


class FakeGitLab:
    """Stateful in-process fake of the parts of the GitLab REST API v4 a gate uses."""

    def __init__(self, *, token: str = "glpat-gate", username: str = "ragaliq-gate-bot") -> None:
        """Configure the fake; call :meth:`start` (or use ``with``) to serve it.

        ``token`` belongs to ``username``, a bot user (as a project access token's user is),
        made a Developer of every project added unless :meth:`add_project` says otherwise.
        """
        self.token = token
        self.username = username
        self.requests: list[RecordedRequest] = []
        self.errors: list[BaseException] = []
        self._lock = threading.RLock()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._origin: str | None = None
        self._clock = 0
        self._ids: dict[str, int] = {}
        self._users: dict[int, _User] = {}
        self._projects: dict[int, _Project] = {}
        self._mrs: dict[tuple[int, int], _MergeRequest] = {}
        self._statuses: list[tuple[int, Status]] = []
        self._pipelines: dict[int, _Pipeline] = {}
        self._jobs: dict[int, _Job] = {}
        self._schedules: dict[int, _Schedule] = {}
        self._environments: dict[int, _Environment] = {}
        self._races: list[tuple[int, str, dict[str, bytes | None]]] = []
        self._failures: list[_Failure] = []
        self.add_user(username, token=token, bot=True)
        self._routes = self._build_routes()

    def _build_routes(self) -> list[_Route]:
        get, post, put = "GET", "POST", "PUT"
        table: list[tuple[str, str, _Handler, bool]] = [
            (get, "/user", self._get_current_user, False),
            (get, r"/users/(?P<user_id>\d+)", self._get_user, False),
            (get, "/users", self._list_users, False),
            (get, _PROJECT, self._get_project, False),
            (get, rf"{_PROJECT}/merge_requests", self._list_mrs, True),
            (get, _MR, self._get_mr, True),
            (get, rf"{_MR}/notes", self._list_notes, True),
            (post, rf"{_MR}/notes", self._create_note, False),
            (get, rf"{_MR}/notes/(?P<note>\d+)", self._get_note, True),
            (put, rf"{_MR}/notes/(?P<note>\d+)", self._edit_note, False),
            (post, rf"{_MR}/approve", self._approve, False),
            (post, rf"{_MR}/unapprove", self._unapprove, False),
            (get, rf"{_MR}/approvals", self._get_approvals, False),
            (get, rf"{_MR}/pipelines", self._mr_pipelines, False),
            (post, rf"{_PROJECT}/statuses/(?P<sha>{_SEG})", self._create_status, False),
            (
                get,
                rf"{_PROJECT}/repository/commits/(?P<sha>{_SEG})/statuses",
                self._list_statuses,
                False,
            ),
            (get, rf"{_PROJECT}/members/all", self._list_members, False),
            (get, rf"{_PROJECT}/members/all/(?P<user_id>\d+)", self._get_member, False),
            (get, rf"{_PROJECT}/pipelines", self._list_pipelines, False),
            (get, rf"{_PROJECT}/pipelines/(?P<pid>\d+)", self._get_pipeline, False),
            (get, rf"{_PROJECT}/pipelines/(?P<pid>\d+)/variables", self._pipeline_vars, False),
            (get, rf"{_PROJECT}/pipelines/(?P<pid>\d+)/jobs", self._list_jobs, False),
            (get, rf"{_PROJECT}/pipeline_schedules", self._list_schedules, False),
            (get, rf"{_PROJECT}/pipeline_schedules/(?P<sid>\d+)", self._get_schedule, False),
            (
                get,
                rf"{_PROJECT}/pipeline_schedules/(?P<sid>\d+)/pipelines",
                self._schedule_pipelines,
                False,
            ),
            (get, rf"{_PROJECT}/jobs/(?P<job>\d+)", self._get_job, False),
            (get, rf"{_PROJECT}/jobs/(?P<job>\d+)/artifacts", self._job_artifacts, True),
            (get, rf"{_PROJECT}/jobs/(?P<job>\d+)/artifacts/(?P<path>.+)", self._job_file, True),
            (
                get,
                rf"{_PROJECT}/jobs/artifacts/(?P<ref>.+)/download",
                self._ref_artifacts,
                True,
            ),
            (
                get,
                rf"{_PROJECT}/jobs/artifacts/(?P<ref>.+?)/raw/(?P<path>.+)",
                self._ref_artifact_file,
                True,
            ),
            (get, rf"{_PROJECT}/environments", self._list_environments, True),
            (get, rf"{_PROJECT}/environments/(?P<env>\d+)", self._get_environment, True),
            (get, rf"{_PROJECT}/variables", self._list_variables, False),
            (
                get,
                rf"{_PROJECT}/repository/files/(?P<path>{_SEG})/raw",
                self._raw_file,
                True,
            ),
            (get, rf"{_PROJECT}/repository/files/(?P<path>{_SEG})", self._get_file, False),
            (get, rf"{_PROJECT}/repository/commits/(?P<sha>{_SEG})", self._get_commit, True),
            (
                get,
                rf"{_PROJECT}/repository/commits/(?P<sha>{_SEG})/merge_requests",
                self._commit_mrs,
                True,
            ),
            (post, rf"{_PROJECT}/repository/commits", self._create_commit, False),
            (get, rf"{_PROJECT}/repository/compare", self._compare, False),
            (get, rf"{_PROJECT}/repository/branches", self._list_branches, True),
            (
                get,
                rf"{_PROJECT}/repository/branches/(?P<branch>{_SEG})",
                self._get_branch,
                True,
            ),
            (get, rf"{_PROJECT}/protected_branches", self._list_protected, False),
        ]
        return [
            _Route(method=m, pattern=re.compile(p), handler=h, job_token=j) for m, p, h, j in table
        ]

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> FakeGitLab:
        """Bind an ephemeral port on 127.0.0.1 and serve in a daemon thread."""
        if self._server is not None:
            return self
        server = _Server(("127.0.0.1", 0), _RequestHandler)
        server.fake = self
        host, port = server.server_address[:2]
        self._origin = f"http://{host!s}:{port}"
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=f"FakeGitLab:{port}",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Shut the server down and close its socket (idempotent)."""
        server, thread = self._server, self._thread
        self._server = None
        self._thread = None
        if server is None:
            return
        server.shutdown()
        server.server_close()
        if thread is not None:
            thread.join(timeout=5)

    def __enter__(self) -> FakeGitLab:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        """The server URL to give ``gitlab.Gitlab(url)`` (``CI_SERVER_URL``)."""
        if self._origin is None or self._server is None:
            raise RuntimeError("FakeGitLab is not running; call start() first")
        return self._origin

    @property
    def api_url(self) -> str:
        """The API root (``CI_API_V4_URL``)."""
        return self.url + _API

    def env(self) -> dict[str, str]:
        """Environment variables pointing a subprocess at this fake."""
        return {"CI_SERVER_URL": self.url, "CI_API_V4_URL": self.api_url}

    # ------------------------------------------------------------------ seeding: users, projects

    def add_user(self, username: str, *, token: str | None = None, bot: bool = False) -> int:
        """Register ``username`` (once) and, when given, a token of theirs; the user's id."""
        with self._lock:
            user = self._user_named(username)
            if user is None:
                user = _User(id=self._next("user", 100), username=username, name=username, bot=bot)
                self._users[user.id] = user
            if token:
                user.tokens.add(token)
            return user.id

    def add_project(
        self,
        path: str,
        *,
        default_branch: str = "main",
        visibility: str = "private",
        forked_from: str | int | None = None,
        gate_access: int | None = DEVELOPER,
        **settings: Any,
    ) -> int:
        """Create project ``group/name``; its id.

        ``gate_access`` is the role of the fake's own token user in it (``None``: not a member).
        ``settings`` override the project's settings as the Projects API shows them:
        ``ci_pipeline_variables_minimum_override_role`` (``developer``),
        ``keep_latest_artifact`` (True), ``merge_requests_author_approval`` (False),
        ``reset_approvals_on_push`` (True), ``only_allow_merge_if_pipeline_succeeds`` (False),
        ``ci_allow_fork_pipelines_to_run_in_parent_project`` (True).
        """
        with self._lock:
            project = _Project(
                id=self._next("project", 1000),
                path=path,
                default_branch=default_branch,
                visibility=visibility,
                forked_from=None if forked_from is None else self._project(forked_from).id,
                settings={
                    "ci_pipeline_variables_minimum_override_role": "developer",
                    "keep_latest_artifact": True,
                    "merge_requests_author_approval": False,
                    "reset_approvals_on_push": True,
                    "only_allow_merge_if_pipeline_succeeds": False,
                    "ci_allow_fork_pipelines_to_run_in_parent_project": True,
                    **settings,
                },
                created_at=self._tick(),
            )
            self._projects[project.id] = project
            if gate_access is not None:
                project.members[self._user(self.username).id] = gate_access
            return project.id

    def set_project(self, project: str | int, **settings: Any) -> None:
        """Change settings of ``project`` (see :meth:`add_project`)."""
        with self._lock:
            self._project(project).settings.update(settings)

    def add_member(self, project: str | int, username: str, access_level: int) -> int:
        """Make ``username`` (created when new) a member of ``project``; the user's id."""
        with self._lock:
            user_id = self.add_user(username)
            self._project(project).members[user_id] = access_level
            return user_id

    def remove_member(self, project: str | int, username: str) -> None:
        """Take ``username`` out of ``project``."""
        with self._lock:
            self._project(project).members.pop(self._user(username).id, None)

    def protect_branch(
        self, project: str | int, name: str, *, push_access_level: int = MAINTAINER
    ) -> None:
        """Protect branch ``name`` (or a wildcard such as ``release/*``) of ``project``."""
        with self._lock:
            self._project(project).protected[name] = push_access_level

    def add_variable(self, project: str | int, variable: CiVariable) -> None:
        """Add a CI/CD variable to ``project``'s settings (served by the Variables API)."""
        with self._lock:
            self._project(project).variables.append(variable)

    def variables(self, project: str | int) -> list[CiVariable]:
        """``project``'s CI/CD variables, as the pipeline player takes them."""
        with self._lock:
            return list(self._project(project).variables)

    def ci_project(self, project: str | int) -> CiProject:
        """``project`` as the pipeline player takes it: its protected branches, its variables
        and who may set pipeline variables, as set up on the fake."""
        with self._lock:
            proj = self._project(project)
            return CiProject(
                id=proj.id,
                path=proj.path,
                default_branch=proj.default_branch,
                protected_branches=tuple(proj.protected),
                variables=tuple(proj.variables),
                pipeline_variables_minimum_role=proj.settings[
                    "ci_pipeline_variables_minimum_override_role"
                ],
            )

    def ci_merge_request(self, project: str | int, iid: int) -> MergeRequestInfo:
        """Merge request ``iid`` as a merge request pipeline of the player sees it."""
        with self._lock:
            mr = self._mr(self._project(project), iid)
            target = self._projects[mr.project_id]
            return MergeRequestInfo(
                iid=mr.iid,
                id=mr.id,
                title=mr.title,
                target_project=self.ci_project(target.id),
                source_project=self.ci_project(mr.source_project_id),
                source_branch=mr.source_branch,
                target_branch=mr.target_branch,
                source_sha=mr.sha,
                target_sha=target.branches.get(mr.target_branch, mr.start_sha),
                diff_base_sha=mr.base_sha,
            )

    # ------------------------------------------------------------------ seeding: repository

    def add_commit(
        self,
        project: str | int,
        files: Mapping[str, bytes | str | None] | None = None,
        *,
        parents: Iterable[str] | None = None,
        branch: str | None = None,
        message: str = "a commit",
        author: str = "someone",
        sha: str | None = None,
    ) -> str:
        """A commit of ``project``: its first parent's files with ``files`` written over them
        (``None`` deletes one); its id.

        ``parents`` default to ``branch``'s tip when that branch exists; ``branch`` is moved to
        (or created at) the new commit, protected or not, as a push by someone allowed would.
        """
        with self._lock:
            proj = self._project(project)
            if parents is None:
                tip = proj.branches.get(branch) if branch else None
                parents = [tip] if tip else []
            parent_list = list(parents)
            tree = dict(self._tree(proj, parent_list[0])) if parent_list else {}
            for path, data in (files or {}).items():
                if data is None:
                    tree.pop(path, None)
                else:
                    tree[path] = data.encode() if isinstance(data, str) else bytes(data)
            commit_sha = sha or _sha_of(
                str(proj.id), *parent_list, message, *sorted(tree), str(self._clock)
            )
            proj.commits[commit_sha] = _Commit(
                sha=commit_sha,
                parents=parent_list,
                files=tree,
                message=message,
                author=author,
                created_at=self._tick(),
            )
            if branch:
                proj.branches[branch] = commit_sha
            return commit_sha

    def set_branch(self, project: str | int, branch: str, sha: str) -> None:
        """Point ``branch`` at ``sha``."""
        with self._lock:
            self._project(project).branches[branch] = sha

    def mirror_git(self, project: str | int, path: str) -> None:
        """Serve the commits of the local git repository at ``path`` as ``project``'s too
        (files, parents, compare) and its branches where the fake has none of that name."""
        with self._lock:
            self._project(project).mirror = path

    def branch_files(self, project: str | int, branch: str) -> dict[str, bytes]:
        """The files on ``branch`` (a data branch written through the Commits API)."""
        with self._lock:
            proj = self._project(project)
            sha = proj.branches.get(branch)
            return {} if sha is None else dict(self._tree(proj, sha))

    def race_next_commit(
        self, project: str | int, branch: str, files: Mapping[str, bytes | str | None]
    ) -> None:
        """Land another writer's commit of ``files`` on ``branch`` just before the next
        ``POST .../repository/commits`` to that branch is handled."""
        with self._lock:
            encoded = {k: v.encode() if isinstance(v, str) else v for k, v in files.items()}
            self._races.append((self._project(project).id, branch, encoded))

    # ------------------------------------------------------------------ seeding: merge requests

    def add_merge_request(
        self,
        project: str | int,
        iid: int | None = None,
        *,
        source_branch: str = "feature",
        target_branch: str | None = None,
        head_sha: str,
        base_sha: str | None = None,
        start_sha: str | None = None,
        author: str = "someone",
        source_project: str | int | None = None,
        title: str = "A change",
        description: str = "",
        draft: bool = False,
    ) -> int:
        """Open a merge request (from ``source_project``, a fork, when given); its iid.

        ``base_sha`` is the merge base GitLab shows in ``diff_refs`` (the target branch's tip
        when not given) and ``start_sha`` the target's tip when the diff was made.
        """
        with self._lock:
            proj = self._project(project)
            target = target_branch or proj.default_branch
            base = base_sha or proj.branches.get(target) or _ZERO_SHA
            number = iid or 1 + max((i for p, i in self._mrs if p == proj.id), default=0)
            now = self._tick()
            self.add_user(author)
            self._mrs[(proj.id, number)] = _MergeRequest(
                id=self._next("mr", 500),
                iid=number,
                project_id=proj.id,
                source_project_id=(
                    proj.id if source_project is None else self._project(source_project).id
                ),
                source_branch=source_branch,
                target_branch=target,
                sha=head_sha,
                base_sha=base,
                start_sha=start_sha or base,
                author=self._user(author).id,
                title=title,
                description=description,
                state="opened",
                draft=draft,
                created_at=now,
                updated_at=now,
            )
            return number

    def push_to_merge_request(
        self,
        project: str | int,
        iid: int,
        *,
        head_sha: str,
        base_sha: str | None = None,
        start_sha: str | None = None,
    ) -> None:
        """The merge request after a push: a new head (approvals dropped when the project
        resets them on push), and the diff's base and start when given."""
        with self._lock:
            mr = self._mr(self._project(project), iid)
            mr.sha = head_sha
            mr.base_sha = base_sha or mr.base_sha
            mr.start_sha = start_sha or base_sha or mr.start_sha
            mr.updated_at = self._tick()
            if self._projects[mr.project_id].settings.get("reset_approvals_on_push"):
                mr.approvals.clear()

    def retarget_merge_request(
        self, project: str | int, iid: int, *, target_branch: str, base_sha: str
    ) -> None:
        """Change the target branch of merge request ``iid``, as its author can at any time."""
        with self._lock:
            mr = self._mr(self._project(project), iid)
            mr.target_branch, mr.base_sha, mr.start_sha = target_branch, base_sha, base_sha
            mr.updated_at = self._tick()

    def set_merge_request_state(self, project: str | int, iid: int, state: str) -> None:
        """Move merge request ``iid`` to ``opened``, ``closed``, ``merged`` or ``locked``."""
        with self._lock:
            mr = self._mr(self._project(project), iid)
            mr.state, mr.updated_at = state, self._tick()

    def merge_request(self, project: str | int, iid: int) -> dict[str, Any]:
        """Merge request ``iid`` as ``GET .../merge_requests/:iid`` shows it now."""
        with self._lock:
            return self._mr_json(self._mr(self._project(project), iid), single=True)

    def add_note(
        self,
        project: str | int,
        iid: int,
        body: str,
        *,
        author: str = "someone",
        system: bool = False,
    ) -> Note:
        """A note on merge request ``iid`` written by ``author`` (a system note if asked)."""
        with self._lock:
            self.add_user(author)
            note = self._store_note(self._mr(self._project(project), iid), body, author, system)
            return dataclasses.replace(note)

    def edit_note(self, project: str | int, iid: int, note_id: int, body: str) -> None:
        """Rewrite note ``note_id`` as its author can at any time (``updated_at`` moves)."""
        with self._lock:
            note = self._find_note(self._mr(self._project(project), iid), note_id)
            note.body, note.updated_at = body, self._tick()

    def notes(self, project: str | int, iid: int) -> list[Note]:
        """Copies of the notes on merge request ``iid``, oldest first."""
        with self._lock:
            return [dataclasses.replace(n) for n in self._mr(self._project(project), iid).notes]

    def approve(self, project: str | int, iid: int, username: str) -> None:
        """``username`` approves merge request ``iid`` at its head."""
        with self._lock:
            mr = self._mr(self._project(project), iid)
            mr.approvals.append((self.add_user(username), mr.sha))

    def approvals(self, project: str | int, iid: int) -> list[tuple[str, str]]:
        """Who approved merge request ``iid``, and at which head, in order."""
        with self._lock:
            mr = self._mr(self._project(project), iid)
            return [(self._users[u].username, sha) for u, sha in mr.approvals]

    # ------------------------------------------------------------------ seeding: statuses

    def add_status(
        self,
        project: str | int,
        sha: str,
        *,
        name: str,
        state: str,
        author: str,
        ref: str | None = None,
        description: str | None = None,
        target_url: str | None = None,
    ) -> Status:
        """A commit status posted by ``author`` (any Developer can post one of any name)."""
        with self._lock:
            proj = self._project(project)
            self.add_user(author)
            return dataclasses.replace(
                self._store_status(proj, sha, name, state, ref, description, target_url, author)
            )

    def statuses(self, project: str | int, sha: str, *, name: str | None = None) -> list[Status]:
        """Every status posted on ``sha`` (of one ``name`` when given), oldest first."""
        with self._lock:
            pid = self._project(project).id
            return [
                dataclasses.replace(s)
                for p, s in self._statuses
                if p == pid and s.sha == sha and name in (None, s.name)
            ]

    # ------------------------------------------------------------------ seeding: pipelines, jobs

    def add_pipeline(
        self,
        project: str | int,
        *,
        ref: str,
        sha: str,
        source: str = "push",
        status: str = "success",
        user: str | None = None,
        variables: Mapping[str, str] | None = None,
        tag: bool = False,
        schedule_id: int | None = None,
        merge_request_iid: int | None = None,
    ) -> int:
        """A pipeline of ``project`` started by ``user`` (the fake's own user when not given)
        from ``source`` with pipeline ``variables``; its id.

        A merge request pipeline's ``ref`` is ``refs/merge-requests/<iid>/head`` (or ``/merge``
        for a merged results pipeline), as GitLab names them.
        """
        if source not in PIPELINE_SOURCES:
            raise ValueError(
                f"unknown pipeline source {source!r}; one of {sorted(PIPELINE_SOURCES)}"
            )
        with self._lock:
            proj = self._project(project)
            now = self._tick()
            named = re.fullmatch(r"refs/merge-requests/(\d+)/(?:head|merge|train)", ref)
            if merge_request_iid is None and named is not None:
                merge_request_iid = int(named.group(1))
            pipeline = _Pipeline(
                id=self._next("pipeline", 9000),
                iid=1 + sum(1 for p in self._pipelines.values() if p.project_id == proj.id),
                project_id=proj.id,
                ref=ref,
                sha=sha,
                source=source,
                status=status,
                user=self.add_user(user or self.username),
                variables=[
                    {"variable_type": "env_var", "key": k, "value": v, "raw": False}
                    for k, v in (variables or {}).items()
                ],
                tag=tag,
                created_at=now,
                updated_at=now,
                schedule_id=schedule_id,
                merge_request_iid=merge_request_iid,
            )
            self._pipelines[pipeline.id] = pipeline
            return pipeline.id

    def set_pipeline(self, pipeline_id: int, *, status: str) -> None:
        """Move pipeline ``pipeline_id`` on (``created``, ``running``, ``success``, ``failed``,
        ``canceled``, ...)."""
        with self._lock:
            pipeline = self._pipelines[pipeline_id]
            pipeline.status, pipeline.updated_at = status, self._tick()

    def pipeline(self, pipeline_id: int) -> dict[str, Any]:
        """Pipeline ``pipeline_id`` as ``GET .../pipelines/:id`` shows it."""
        with self._lock:
            return self._pipeline_json(self._pipelines[pipeline_id], single=True)

    def add_job(
        self,
        pipeline_id: int,
        name: str,
        *,
        stage: str = "test",
        status: str = "success",
        artifacts: bytes | Mapping[str, bytes | str] | None = None,
        expire_in: timedelta | None = None,
        expired: bool = False,
        environment: str | None = None,
    ) -> int:
        """Job ``name`` of pipeline ``pipeline_id``; its id.

        ``artifacts`` is the archive (zip bytes) or the files to zip; ``expire_in`` sets
        ``artifacts_expire_at``; ``expired`` makes GitLab's expiry have removed them already.
        """
        with self._lock:
            pipeline = self._pipelines[pipeline_id]
            archive = artifacts if isinstance(artifacts, bytes | None) else _zip(artifacts)
            job = _Job(
                id=self._next("job", 20000),
                pipeline_id=pipeline.id,
                name=name,
                stage=stage,
                status=status,
                artifacts=archive,
                expire_at=None if expire_in is None else self._stamp(self._clock, expire_in),
                expired=expired,
                environment=environment,
                created_at=self._tick(),
                token="",
            )
            job.token = f"glcbt-{_sha_of('job', str(job.id))[:20]}"
            self._jobs[job.id] = job
            if environment and not any(
                e.project_id == pipeline.project_id and e.name == environment
                for e in self._environments.values()
            ):
                self.add_environment(pipeline.project_id, environment)
            return job.id

    def set_job(
        self, job_id: int, *, status: str | None = None, expired: bool | None = None
    ) -> None:
        """Move job ``job_id`` on, or expire (or restore) its artifacts."""
        with self._lock:
            job = self._jobs[job_id]
            job.status = status or job.status
            job.expired = job.expired if expired is None else expired

    def job_token(self, job_id: int) -> str:
        """The ``CI_JOB_TOKEN`` of job ``job_id``; accepted only while the job is running."""
        with self._lock:
            return self._jobs[job_id].token

    def add_schedule(
        self,
        project: str | int,
        *,
        ref: str,
        cron: str = "*/5 * * * *",
        owner: str | None = None,
        description: str = "gate",
        active: bool = True,
        variables: Mapping[str, str] | None = None,
    ) -> int:
        """A pipeline schedule of ``project`` owned by ``owner``; its id."""
        with self._lock:
            proj = self._project(project)
            schedule = _Schedule(
                id=self._next("schedule", 300),
                project_id=proj.id,
                description=description,
                ref=ref,
                cron=cron,
                owner=self.add_user(owner or self.username),
                active=active,
                variables=dict(variables or {}),
                created_at=self._tick(),
            )
            self._schedules[schedule.id] = schedule
            return schedule.id

    def add_environment(
        self,
        project: str | int,
        name: str,
        *,
        tier: str = "other",
        external_url: str | None = None,
    ) -> int:
        """Environment ``name`` of ``project``; its id."""
        with self._lock:
            env = _Environment(
                id=self._next("environment", 70),
                project_id=self._project(project).id,
                name=name,
                tier=tier,
                external_url=external_url,
                created_at=self._tick(),
            )
            self._environments[env.id] = env
            return env.id

    # ------------------------------------------------------------------ failures and requests

    def fail(
        self,
        method: str,
        path_regex: str,
        status: int,
        *,
        times: int = 1,
        body: Any = None,
        retry_after: int | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        """Answer the next ``times`` matching requests with ``status``.

        ``method`` is case-insensitive (``"*"`` matches any); ``path_regex`` is searched in the
        path below ``/api/v4`` as sent (still URL-encoded). A 429 answers ``Retry later`` as
        plain text, as GitLab's rate limiter does; ``retry_after`` sets ``Retry-After``. Rules
        are consumed in the order they were added, after authentication and before routing.
        """
        if times < 1:
            raise ValueError("times must be >= 1")
        extra = dict(headers or {})
        if retry_after is not None:
            extra["Retry-After"] = str(retry_after)
        with self._lock:
            self._failures.append(
                _Failure(
                    method=method.upper(),
                    pattern=re.compile(path_regex),
                    status=status,
                    remaining=times,
                    body=body,
                    headers=extra,
                )
            )

    def requests_matching(
        self, method: str | None = None, path_regex: str | None = None
    ) -> list[RecordedRequest]:
        """Recorded requests filtered by method and ``re.search`` on the path below /api/v4."""
        with self._lock:
            snapshot = list(self.requests)
        return [
            r
            for r in snapshot
            if (method is None or r.method == method.upper())
            and (path_regex is None or re.search(path_regex, r.path))
        ]

    # ------------------------------------------------------------------ lookups

    def _next(self, kind: str, start: int) -> int:
        self._ids[kind] = self._ids.get(kind, start - 1) + 1
        return self._ids[kind]

    def _tick(self) -> str:
        self._clock += 1
        return self._stamp(self._clock)

    @staticmethod
    def _stamp(clock: int, later: timedelta = timedelta()) -> str:
        moment = _EPOCH + timedelta(seconds=clock) + later
        return moment.strftime("%Y-%m-%dT%H:%M:%S.000Z")

    def _user_named(self, username: str) -> _User | None:
        return next((u for u in self._users.values() if u.username == username), None)

    def _user(self, username: str) -> _User:
        user = self._user_named(username)
        if user is None:
            raise KeyError(f"no user {username!r}; add_user() first")
        return user

    def _project(self, ref: str | int) -> _Project:
        if isinstance(ref, int) or str(ref).isdigit():
            project = self._projects.get(int(ref))
        else:
            project = next((p for p in self._projects.values() if p.path == ref), None)
        if project is None:
            raise KeyError(f"no project {ref!r}; add_project() first")
        return project

    def _mr(self, project: _Project, iid: int) -> _MergeRequest:
        mr = self._mrs.get((project.id, iid))
        if mr is None:
            raise _not_found()
        return mr

    def _tree(self, project: _Project, sha: str) -> dict[str, bytes]:
        commit = self._commit(project, sha)
        if commit is None:
            raise KeyError(f"no commit {sha!r} in {project.path}")
        return commit.files

    def _commit(self, project: _Project, ref: str) -> _Commit | None:
        """The commit a branch name or a commit id names: the fake's own, else the mirror's."""
        sha = project.branches.get(ref, ref)
        own = project.commits.get(sha)
        if own is not None:
            return own
        if project.mirror is None:
            return None
        return self._mirrored_commit(project, sha)

    def _git(self, project: _Project, *args: str) -> bytes | None:
        assert project.mirror is not None
        done = subprocess.run(
            ["git", "-C", project.mirror, *args], capture_output=True, check=False
        )
        return done.stdout if done.returncode == 0 else None

    def _mirrored_commit(self, project: _Project, ref: str) -> _Commit | None:
        if ref.startswith("-"):
            return None
        resolved = self._git(project, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
        if resolved is None:
            return None
        sha = resolved.decode().strip()
        raw = self._git(project, "cat-file", "commit", sha) or b""
        header, _, message = raw.partition(b"\n\n")
        parents = [
            line.split()[1].decode() for line in header.splitlines() if line.startswith(b"parent ")
        ]
        listing = self._git(project, "ls-tree", "-r", "-z", sha) or b""
        files: dict[str, bytes] = {}
        for entry in filter(None, listing.split(b"\0")):
            meta, _, path = entry.partition(b"\t")
            if meta.split()[1] == b"blob":
                files[path.decode()] = (
                    self._git(project, "cat-file", "blob", meta.split()[2].decode()) or b""
                )
        return _Commit(
            sha=sha,
            parents=parents,
            files=files,
            message=message.decode(errors="replace"),
            author="someone",
            created_at=self._stamp(0),
        )

    def _is_protected(self, project: _Project, branch: str) -> int | None:
        """The push level of ``branch`` when protected."""
        for pattern, level in project.protected.items():
            if fnmatch.fnmatchcase(branch, pattern):
                return level
        return None

    def _access(self, project: _Project, user: _User) -> int:
        return project.members.get(user.id, 0)

    def _require(self, ctx: _Context, project: _Project, level: int) -> None:
        access = self._access(project, ctx.user)
        if access == 0 and project.visibility != "public":
            raise _not_found("Project")
        if access < level and not (project.visibility == "public" and level <= GUEST):
            raise _forbidden()

    def _ctx_project(self, ctx: _Context, level: int = GUEST) -> _Project:
        try:
            project = self._project(ctx.param("project"))
        except KeyError:
            raise _not_found("Project") from None
        # A job token reaches its own project's resources (and those whose allowlist holds it,
        # which the fake does not model) with the pipeline user's role.
        if ctx.job is not None and self._pipelines[ctx.job.pipeline_id].project_id != project.id:
            raise _not_found("Project")
        self._require(ctx, project, level)
        return project

    # ------------------------------------------------------------------ JSON shapes

    def _user_json(self, user_id: int) -> dict[str, Any]:
        user = self._users[user_id]
        return {
            "id": user.id,
            "username": user.username,
            "name": user.name,
            "state": "active",
            "locked": False,
            "avatar_url": None,
            "web_url": f"{self.url}/{user.username}",
            "bot": user.bot,
        }

    def _project_json(self, project: _Project) -> dict[str, Any]:
        group, _, name = project.path.rpartition("/")
        data: dict[str, Any] = {
            "id": project.id,
            "name": name,
            "path": name,
            "path_with_namespace": project.path,
            "name_with_namespace": project.path.replace("/", " / "),
            "namespace": {"id": 1 + project.id % 97, "path": group, "full_path": group},
            "default_branch": project.default_branch,
            "visibility": project.visibility,
            "web_url": f"{self.url}/{project.path}",
            "created_at": project.created_at,
            "restrict_user_defined_variables": project.settings[
                "ci_pipeline_variables_minimum_override_role"
            ]
            != "developer",
            **project.settings,
        }
        if project.forked_from is not None:
            data["forked_from_project"] = self._project_ref_json(
                self._projects[project.forked_from]
            )
        return data

    def _project_ref_json(self, project: _Project) -> dict[str, Any]:
        return {
            "id": project.id,
            "path_with_namespace": project.path,
            "web_url": f"{self.url}/{project.path}",
        }

    def _mr_json(self, mr: _MergeRequest, *, single: bool = False) -> dict[str, Any]:
        project = self._projects[mr.project_id]
        data: dict[str, Any] = {
            "id": mr.id,
            "iid": mr.iid,
            "project_id": mr.project_id,
            "title": mr.title,
            "description": mr.description,
            "state": mr.state,
            "created_at": mr.created_at,
            "updated_at": mr.updated_at,
            "merged_at": mr.updated_at if mr.state == "merged" else None,
            "closed_at": mr.updated_at if mr.state == "closed" else None,
            "target_branch": mr.target_branch,
            "source_branch": mr.source_branch,
            "author": self._user_json(mr.author),
            "assignees": [],
            "reviewers": [],
            "source_project_id": mr.source_project_id,
            "target_project_id": mr.project_id,
            "labels": [],
            "draft": mr.draft,
            "work_in_progress": mr.draft,
            "merge_status": "can_be_merged",
            "detailed_merge_status": "mergeable",
            "sha": mr.sha,
            "merge_commit_sha": None,
            "squash_commit_sha": None,
            "user_notes_count": sum(1 for n in mr.notes if not n.system),
            "references": {"short": f"!{mr.iid}", "full": f"{project.path}!{mr.iid}"},
            "web_url": f"{self.url}/{project.path}/-/merge_requests/{mr.iid}",
        }
        if single:
            head = self._head_pipeline(mr)
            data["diff_refs"] = {
                "base_sha": mr.base_sha,
                "head_sha": mr.sha,
                "start_sha": mr.start_sha,
            }
            data["head_pipeline"] = None if head is None else self._pipeline_json(head)
            data["pipeline"] = None if head is None else self._pipeline_json(head)
        return data

    def _head_pipeline(self, mr: _MergeRequest) -> _Pipeline | None:
        found = [
            p
            for p in self._pipelines.values()
            if p.sha == mr.sha and p.project_id in {mr.project_id, mr.source_project_id}
        ]
        return max(found, key=lambda p: p.id, default=None)

    def _note_json(self, mr: _MergeRequest, note: Note) -> dict[str, Any]:
        author = self._user(note.author)
        return {
            "id": note.id,
            "type": None,
            "body": note.body,
            "attachment": None,
            "author": self._user_json(author.id),
            "created_at": note.created_at,
            "updated_at": note.updated_at,
            "system": note.system,
            "noteable_id": mr.id,
            "noteable_type": "MergeRequest",
            "noteable_iid": mr.iid,
            "project_id": mr.project_id,
            "resolvable": False,
            "confidential": False,
            "internal": False,
        }

    def _status_json(self, status: Status) -> dict[str, Any]:
        return {
            "id": status.id,
            "sha": status.sha,
            "ref": status.ref,
            "status": status.state,
            "name": status.name,
            "target_url": status.target_url,
            "description": status.description,
            "created_at": status.created_at,
            "started_at": None,
            "finished_at": status.created_at
            if status.state not in ("pending", "running")
            else None,
            "allow_failure": False,
            "coverage": None,
            "pipeline_id": status.pipeline_id,
            "author": self._user_json(self._user(status.author).id),
        }

    def _pipeline_json(self, pipeline: _Pipeline, *, single: bool = False) -> dict[str, Any]:
        project = self._projects[pipeline.project_id]
        data: dict[str, Any] = {
            "id": pipeline.id,
            "iid": pipeline.iid,
            "project_id": pipeline.project_id,
            "sha": pipeline.sha,
            "ref": pipeline.ref,
            "status": pipeline.status,
            "source": pipeline.source,
            "created_at": pipeline.created_at,
            "updated_at": pipeline.updated_at,
            "web_url": f"{self.url}/{project.path}/-/pipelines/{pipeline.id}",
        }
        if single:
            data.update(
                {
                    "before_sha": pipeline.before_sha,
                    "tag": pipeline.tag,
                    "yaml_errors": None,
                    "user": self._user_json(pipeline.user),
                    "started_at": pipeline.created_at,
                    "finished_at": pipeline.updated_at,
                    "committed_at": None,
                    "duration": None,
                    "queued_duration": None,
                    "coverage": None,
                    "detailed_status": {"group": pipeline.status, "text": pipeline.status},
                }
            )
        return data

    def _job_json(self, job: _Job) -> dict[str, Any]:
        pipeline = self._pipelines[job.pipeline_id]
        project = self._projects[pipeline.project_id]
        available = self._artifacts_of(job) is not None
        data: dict[str, Any] = {
            "id": job.id,
            "status": job.status,
            "stage": job.stage,
            "name": job.name,
            "ref": pipeline.ref,
            "tag": pipeline.tag,
            "allow_failure": False,
            "created_at": job.created_at,
            "started_at": job.created_at,
            "finished_at": job.created_at
            if job.status not in ("created", "pending", "running")
            else None,
            "user": self._user_json(pipeline.user),
            "commit": {"id": pipeline.sha, "short_id": pipeline.sha[:8]},
            "pipeline": {
                "id": pipeline.id,
                "project_id": pipeline.project_id,
                "ref": pipeline.ref,
                "sha": pipeline.sha,
                "status": pipeline.status,
                "source": pipeline.source,
            },
            "web_url": f"{self.url}/{project.path}/-/jobs/{job.id}",
            "artifacts": (
                [
                    {
                        "file_type": "archive",
                        "size": len(job.artifacts or b""),
                        "filename": "artifacts.zip",
                        "file_format": "zip",
                    }
                ]
                if available
                else []
            ),
            "artifacts_expire_at": job.expire_at,
        }
        if available:
            data["artifacts_file"] = {
                "filename": "artifacts.zip",
                "size": len(job.artifacts or b""),
            }
        if job.environment:
            data["environment"] = {"name": job.environment}
        return data

    # ------------------------------------------------------------------ pagination

    def _page(self, ctx: _Context, items: list[Any]) -> _Response:
        try:
            page = max(1, int(ctx.first("page") or 1))
            per_page = min(_MAX_PER_PAGE, max(1, int(ctx.first("per_page") or _DEFAULT_PER_PAGE)))
        except ValueError:
            raise _HttpError(400, "400 Bad request - page is invalid", key="error") from None
        total = len(items)
        pages = max(1, -(-total // per_page))
        chunk = items[(page - 1) * per_page : page * per_page]

        def link(target: int) -> str:
            query = {k: v[-1] for k, v in ctx.query.items()}
            query.update(page=str(target), per_page=str(per_page))
            return f"<{self.api_url}{ctx.path}?{urlencode(query)}>"

        links = []
        if page > 1:
            links.append(f'{link(page - 1)}; rel="prev"')
        if page < pages:
            links.append(f'{link(page + 1)}; rel="next"')
        links += [f'{link(1)}; rel="first"', f'{link(pages)}; rel="last"']
        headers = {
            "X-Page": str(page),
            "X-Per-Page": str(per_page),
            "X-Next-Page": str(page + 1) if page < pages else "",
            "X-Prev-Page": str(page - 1) if page > 1 else "",
            "X-Total": str(total),
            "X-Total-Pages": str(pages),
            "Link": ", ".join(links),
        }
        return _Response(200, chunk, headers)

    @staticmethod
    def _sorted(
        ctx: _Context, items: list[Any], keys: Mapping[str, Callable[[Any], Any]]
    ) -> list[Any]:
        order_by = ctx.first("order_by") or next(iter(keys))
        if order_by not in keys:
            raise _HttpError(400, "order_by does not have a valid value", key="error")
        sort = ctx.first("sort") or "desc"
        if sort not in ("asc", "desc"):
            raise _HttpError(400, "sort does not have a valid value", key="error")
        return sorted(items, key=keys[order_by], reverse=sort == "desc")

    # ------------------------------------------------------------------ handlers: users, projects

    def _get_current_user(self, ctx: _Context) -> _Response:
        if ctx.job is not None:
            raise _HttpError(401)
        return _Response(200, self._user_json(ctx.user.id))

    def _get_user(self, ctx: _Context) -> _Response:
        user_id = int(ctx.params["user_id"])
        if user_id not in self._users:
            raise _not_found("User")
        return _Response(200, self._user_json(user_id))

    def _list_users(self, ctx: _Context) -> _Response:
        username = ctx.first("username")
        found = [
            self._user_json(u.id)
            for u in self._users.values()
            if username is None or u.username.lower() == username.lower()
        ]
        return self._page(ctx, found)

    def _get_project(self, ctx: _Context) -> _Response:
        project = self._ctx_project(ctx)
        data = self._project_json(project)
        data["permissions"] = {
            "project_access": (
                {"access_level": self._access(project, ctx.user)}
                if self._access(project, ctx.user)
                else None
            ),
            "group_access": None,
        }
        return _Response(200, data)

    # ------------------------------------------------------------------ handlers: merge requests

    def _list_mrs(self, ctx: _Context) -> _Response:
        project = self._ctx_project(ctx)
        state = ctx.first("state") or "all"
        if state not in ("opened", "closed", "locked", "merged", "all"):
            raise _HttpError(400, "state does not have a valid value", key="error")
        found = [
            mr
            for (pid, _), mr in self._mrs.items()
            if pid == project.id
            and state in ("all", mr.state)
            and ctx.first("target_branch") in (None, mr.target_branch)
            and ctx.first("source_branch") in (None, mr.source_branch)
        ]
        ordered = self._sorted(
            ctx, found, {"created_at": lambda m: m.id, "updated_at": lambda m: (m.updated_at, m.id)}
        )
        return self._page(ctx, [self._mr_json(mr) for mr in ordered])

    def _get_mr(self, ctx: _Context) -> _Response:
        project = self._ctx_project(ctx)
        return _Response(200, self._mr_json(self._mr(project, int(ctx.params["iid"])), single=True))

    def _list_notes(self, ctx: _Context) -> _Response:
        project = self._ctx_project(ctx)
        mr = self._mr(project, int(ctx.params["iid"]))
        ordered = self._sorted(
            ctx,
            mr.notes,
            {"created_at": lambda n: n.id, "updated_at": lambda n: (n.updated_at, n.id)},
        )
        return self._page(ctx, [self._note_json(mr, n) for n in ordered])

    def _find_note(self, mr: _MergeRequest, note_id: int) -> Note:
        note = next((n for n in mr.notes if n.id == note_id), None)
        if note is None:
            raise _not_found("Note")
        return note

    def _store_note(self, mr: _MergeRequest, body: str, author: str, system: bool) -> Note:
        now = self._tick()
        note = Note(
            id=self._next("note", 5000),
            body=body,
            author=author,
            created_at=now,
            updated_at=now,
            system=system,
        )
        mr.notes.append(note)
        return note

    def _get_note(self, ctx: _Context) -> _Response:
        project = self._ctx_project(ctx)
        mr = self._mr(project, int(ctx.params["iid"]))
        return _Response(200, self._note_json(mr, self._find_note(mr, int(ctx.params["note"]))))

    def _create_note(self, ctx: _Context) -> _Response:
        project = self._ctx_project(ctx)
        mr = self._mr(project, int(ctx.params["iid"]))
        body = ctx.field("body")
        if not isinstance(body, str) or not body:
            raise _HttpError(400, "body is missing", key="error")
        if len(body) > 1_000_000:
            raise _HttpError(400, 'Note {:note=>["is too long (maximum is 1000000 characters)"]}')
        return _Response(
            201, self._note_json(mr, self._store_note(mr, body, ctx.user.username, False))
        )

    def _edit_note(self, ctx: _Context) -> _Response:
        project = self._ctx_project(ctx)
        mr = self._mr(project, int(ctx.params["iid"]))
        note = self._find_note(mr, int(ctx.params["note"]))
        if note.author != ctx.user.username:
            raise _forbidden()
        body = ctx.field("body")
        if not isinstance(body, str) or not body:
            raise _HttpError(400, "body is missing", key="error")
        note.body, note.updated_at = body, self._tick()
        return _Response(200, self._note_json(mr, note))

    # ------------------------------------------------------------------ handlers: approvals

    def _approvals_json(self, mr: _MergeRequest) -> dict[str, Any]:
        return {
            "id": mr.id,
            "iid": mr.iid,
            "project_id": mr.project_id,
            "title": mr.title,
            "state": mr.state,
            "merge_status": "can_be_merged",
            "approved": bool(mr.approvals),
            "approvals_required": 0,
            "approvals_left": 0,
            "user_has_approved": False,
            "user_can_approve": True,
            "approved_by": [{"user": self._user_json(u)} for u, _ in mr.approvals],
        }

    def _approve(self, ctx: _Context) -> _Response:
        project = self._ctx_project(ctx, DEVELOPER)
        mr = self._mr(project, int(ctx.params["iid"]))
        sha = ctx.field("sha")
        if sha and sha != mr.sha:
            raise _HttpError(409, f"SHA does not match HEAD of source branch: {mr.sha}")
        author_may = project.settings.get("merge_requests_author_approval")
        if any(u == ctx.user.id for u, _ in mr.approvals) or (
            mr.author == ctx.user.id and not author_may
        ):
            raise _HttpError(401)
        mr.approvals.append((ctx.user.id, mr.sha))
        return _Response(201, self._approvals_json(mr))

    def _unapprove(self, ctx: _Context) -> _Response:
        project = self._ctx_project(ctx, DEVELOPER)
        mr = self._mr(project, int(ctx.params["iid"]))
        kept = [(u, sha) for u, sha in mr.approvals if u != ctx.user.id]
        if len(kept) == len(mr.approvals):
            raise _not_found()
        mr.approvals = kept
        return _Response(201, self._approvals_json(mr))

    def _get_approvals(self, ctx: _Context) -> _Response:
        project = self._ctx_project(ctx)
        mr = self._mr(project, int(ctx.params["iid"]))
        data = self._approvals_json(mr)
        data["user_has_approved"] = any(u == ctx.user.id for u, _ in mr.approvals)
        return _Response(200, data)

    def _mr_pipelines(self, ctx: _Context) -> _Response:
        project = self._ctx_project(ctx, REPORTER)
        mr = self._mr(project, int(ctx.params["iid"]))
        found = [
            self._pipeline_json(p)
            for p in sorted(self._pipelines.values(), key=lambda p: -p.id)
            if p.merge_request_iid == mr.iid
            and p.project_id in {mr.project_id, mr.source_project_id}
        ]
        return self._page(ctx, found)

    def _commit_mrs(self, ctx: _Context) -> _Response:
        project = self._ctx_project(ctx, REPORTER)
        sha = ctx.param("sha")
        found = [
            self._mr_json(mr)
            for (pid, _), mr in sorted(self._mrs.items())
            if pid == project.id and mr.sha == sha
        ]
        return self._page(ctx, found)

    # ------------------------------------------------------------------ handlers: statuses

    def _store_status(
        self,
        project: _Project,
        sha: str,
        name: str,
        state: str,
        ref: str | None,
        description: str | None,
        target_url: str | None,
        author: str,
        pipeline_id: int | None = None,
    ) -> Status:
        if pipeline_id is None:
            candidates = [
                p
                for p in self._pipelines.values()
                if p.project_id == project.id and p.sha == sha and ref in (None, p.ref)
            ]
            latest = max(candidates, key=lambda p: p.id, default=None)
            pipeline_id = (
                latest.id
                if latest is not None
                else self.add_pipeline(
                    project.id,
                    ref=ref or project.default_branch,
                    sha=sha,
                    source="external",
                    status=state,
                    user=author,
                )
            )
        status = Status(
            id=self._next("status", 40000),
            sha=sha,
            name=name,
            state=state,
            ref=ref,
            description=description,
            target_url=target_url,
            author=author,
            pipeline_id=pipeline_id,
            created_at=self._tick(),
        )
        self._statuses.append((project.id, status))
        return status

    def _create_status(self, ctx: _Context) -> _Response:
        project = self._ctx_project(ctx, DEVELOPER)
        sha = ctx.param("sha")
        state = ctx.field("state")
        if state not in _STATUS_STATES:
            raise _HttpError(400, "state does not have a valid value", key="error")
        if self._commit(project, sha) is None and not any(
            p.sha == sha for p in self._pipelines.values() if p.project_id == project.id
        ):
            raise _not_found("Commit")
        name = str(ctx.field("name") or ctx.field("context") or "default")
        ref = ctx.field("ref")
        previous = [
            s for p, s in self._statuses if p == project.id and s.sha == sha and s.name == name
        ]
        if previous and previous[-1].state == state and state in ("pending", "running"):
            event = "enqueue" if state == "pending" else "run"
            raise _HttpError(400, f"Cannot transition status via :{event} from :{state}")
        pipeline_id = ctx.field("pipeline_id")
        status = self._store_status(
            project,
            sha,
            name,
            state,
            ref,
            ctx.field("description"),
            ctx.field("target_url"),
            ctx.user.username,
            int(pipeline_id) if pipeline_id else None,
        )
        return _Response(201, self._status_json(status))

    def _list_statuses(self, ctx: _Context) -> _Response:
        project = self._ctx_project(ctx, REPORTER)
        sha = ctx.param("sha")
        found = [
            s
            for p, s in self._statuses
            if p == project.id
            and s.sha == sha
            and ctx.first("name") in (None, s.name)
            and ctx.first("ref") in (None, s.ref)
        ]
        if (ctx.first("all") or "false").lower() != "true":
            latest: dict[str, Status] = {}
            for status in found:
                latest[status.name] = status
            found = sorted(latest.values(), key=lambda s: s.id)
        return self._page(ctx, [self._status_json(s) for s in found])

    # ------------------------------------------------------------------ handlers: members

    def _member_json(self, project: _Project, user_id: int) -> dict[str, Any]:
        return {
            **self._user_json(user_id),
            "access_level": project.members[user_id],
            "expires_at": None,
            "membership_state": "active",
        }

    def _list_members(self, ctx: _Context) -> _Response:
        project = self._ctx_project(ctx)
        query = (ctx.first("query") or "").lower()
        found = [
            self._member_json(project, user_id)
            for user_id in sorted(project.members)
            if query in self._users[user_id].username.lower()
        ]
        return self._page(ctx, found)

    def _get_member(self, ctx: _Context) -> _Response:
        project = self._ctx_project(ctx)
        user_id = int(ctx.params["user_id"])
        if user_id not in project.members:
            raise _not_found()
        return _Response(200, self._member_json(project, user_id))

    # ------------------------------------------------------------------ handlers: pipelines, jobs

    def _pipeline_of(self, project: _Project, ctx: _Context) -> _Pipeline:
        pipeline = self._pipelines.get(int(ctx.params["pid"]))
        if pipeline is None or pipeline.project_id != project.id:
            raise _not_found()
        return pipeline

    def _list_pipelines(self, ctx: _Context) -> _Response:
        project = self._ctx_project(ctx, REPORTER)
        username = ctx.first("username")
        found = [
            p
            for p in self._pipelines.values()
            if p.project_id == project.id
            and ctx.first("ref") in (None, p.ref)
            and ctx.first("sha") in (None, p.sha)
            and ctx.first("source") in (None, p.source)
            and ctx.first("status") in (None, p.status)
            and username in (None, self._users[p.user].username)
        ]
        ordered = self._sorted(
            ctx, found, {"id": lambda p: p.id, "updated_at": lambda p: (p.updated_at, p.id)}
        )
        return self._page(ctx, [self._pipeline_json(p) for p in ordered])

    def _get_pipeline(self, ctx: _Context) -> _Response:
        project = self._ctx_project(ctx, REPORTER)
        return _Response(200, self._pipeline_json(self._pipeline_of(project, ctx), single=True))

    def _pipeline_vars(self, ctx: _Context) -> _Response:
        project = self._ctx_project(ctx, DEVELOPER)
        return _Response(200, list(self._pipeline_of(project, ctx).variables))

    def _list_jobs(self, ctx: _Context) -> _Response:
        project = self._ctx_project(ctx, REPORTER)
        pipeline = self._pipeline_of(project, ctx)
        scopes = ctx.query.get("scope[]") or ctx.query.get("scope") or []
        found = [
            self._job_json(j)
            for j in sorted(self._jobs.values(), key=lambda j: -j.id)
            if j.pipeline_id == pipeline.id and (not scopes or j.status in scopes)
        ]
        return self._page(ctx, found)

    def _job_of(self, project: _Project, ctx: _Context) -> _Job:
        job = self._jobs.get(int(ctx.params["job"]))
        if job is None or self._pipelines[job.pipeline_id].project_id != project.id:
            raise _not_found()
        return job

    def _get_job(self, ctx: _Context) -> _Response:
        project = self._ctx_project(ctx, REPORTER)
        return _Response(200, self._job_json(self._job_of(project, ctx)))

    def _artifacts_of(self, job: _Job) -> bytes | None:
        """The job's archive while GitLab still has it: unexpired, or kept as the latest
        successful pipeline's of its ref when the project keeps those."""
        if job.artifacts is None:
            return None
        if not job.expired:
            return job.artifacts
        pipeline = self._pipelines[job.pipeline_id]
        if not self._projects[pipeline.project_id].settings.get("keep_latest_artifact"):
            return None
        latest = self._latest_successful(pipeline.project_id, pipeline.ref)
        return job.artifacts if latest is not None and latest.id == pipeline.id else None

    def _latest_successful(self, project_id: int, ref: str) -> _Pipeline | None:
        found = [
            p
            for p in self._pipelines.values()
            if p.project_id == project_id and p.ref == ref and p.status == "success"
        ]
        return max(found, key=lambda p: p.id, default=None)

    def _archive(self, job: _Job) -> bytes:
        archive = self._artifacts_of(job)
        if archive is None:
            raise _not_found()
        return archive

    @staticmethod
    def _member(archive: bytes, path: str) -> bytes:
        try:
            with zipfile.ZipFile(io.BytesIO(archive)) as opened:
                return opened.read(path)
        except (KeyError, zipfile.BadZipFile):
            raise _not_found() from None

    def _job_artifacts(self, ctx: _Context) -> _Response:
        project = self._ctx_project(ctx, REPORTER)
        return _zip_response(self._archive(self._job_of(project, ctx)))

    def _job_file(self, ctx: _Context) -> _Response:
        project = self._ctx_project(ctx, REPORTER)
        archive = self._archive(self._job_of(project, ctx))
        return _raw_response(self._member(archive, ctx.param("path")))

    def _ref_job(self, ctx: _Context) -> _Job:
        project = self._ctx_project(ctx, REPORTER)
        name = ctx.first("job")
        if not name:
            raise _HttpError(400, "job is missing", key="error")
        pipeline = self._latest_successful(project.id, ctx.param("ref"))
        job = None
        if pipeline is not None:
            job = max(
                (
                    j
                    for j in self._jobs.values()
                    if j.pipeline_id == pipeline.id and j.name == name and j.status == "success"
                ),
                key=lambda j: j.id,
                default=None,
            )
        if job is None:
            raise _not_found()
        return job

    def _ref_artifacts(self, ctx: _Context) -> _Response:
        return _zip_response(self._archive(self._ref_job(ctx)))

    def _ref_artifact_file(self, ctx: _Context) -> _Response:
        archive = self._archive(self._ref_job(ctx))
        return _raw_response(self._member(archive, ctx.param("path")))

    # ------------------------------------------------------------------ handlers: schedules

    def _schedule_json(self, schedule: _Schedule, *, single: bool = False) -> dict[str, Any]:
        data: dict[str, Any] = {
            "id": schedule.id,
            "description": schedule.description,
            "ref": schedule.ref,
            "cron": schedule.cron,
            "cron_timezone": "UTC",
            "next_run_at": self._stamp(self._clock, timedelta(minutes=5)),
            "active": schedule.active,
            "created_at": schedule.created_at,
            "updated_at": schedule.created_at,
            "owner": self._user_json(schedule.owner),
        }
        if single:
            runs = [p for p in self._pipelines.values() if p.schedule_id == schedule.id]
            last = max(runs, key=lambda p: p.id, default=None)
            data["last_pipeline"] = None if last is None else self._pipeline_json(last)
            data["variables"] = [
                {"key": k, "value": v, "variable_type": "env_var", "raw": False}
                for k, v in schedule.variables.items()
            ]
        return data

    def _schedule_of(self, project: _Project, ctx: _Context) -> _Schedule:
        schedule = self._schedules.get(int(ctx.params["sid"]))
        if schedule is None or schedule.project_id != project.id:
            raise _not_found("Pipeline Schedule")
        return schedule

    def _list_schedules(self, ctx: _Context) -> _Response:
        project = self._ctx_project(ctx, DEVELOPER)
        found = [s for s in self._schedules.values() if s.project_id == project.id]
        return self._page(ctx, [self._schedule_json(s) for s in found])

    def _get_schedule(self, ctx: _Context) -> _Response:
        project = self._ctx_project(ctx, DEVELOPER)
        return _Response(200, self._schedule_json(self._schedule_of(project, ctx), single=True))

    def _schedule_pipelines(self, ctx: _Context) -> _Response:
        project = self._ctx_project(ctx, DEVELOPER)
        schedule = self._schedule_of(project, ctx)
        runs = [p for p in self._pipelines.values() if p.schedule_id == schedule.id]
        return self._page(ctx, [self._pipeline_json(p) for p in sorted(runs, key=lambda p: p.id)])

    # ------------------------------------------------------------------ handlers: environments

    def _environment_json(self, env: _Environment) -> dict[str, Any]:
        slug = re.sub(r"[^a-z0-9]+", "-", env.name.lower()).strip("-")[:24]
        return {
            "id": env.id,
            "name": env.name,
            "slug": slug,
            "external_url": env.external_url,
            "state": "available",
            "tier": env.tier,
            "created_at": env.created_at,
            "updated_at": env.created_at,
        }

    def _list_environments(self, ctx: _Context) -> _Response:
        project = self._ctx_project(ctx, REPORTER)
        name, search = ctx.first("name"), ctx.first("search")
        found = [
            self._environment_json(e)
            for e in self._environments.values()
            if e.project_id == project.id
            and name in (None, e.name)
            and (search is None or search in e.name)
        ]
        return self._page(ctx, found)

    def _get_environment(self, ctx: _Context) -> _Response:
        project = self._ctx_project(ctx, REPORTER)
        env = self._environments.get(int(ctx.params["env"]))
        if env is None or env.project_id != project.id:
            raise _not_found()
        data = self._environment_json(env)
        data["last_deployment"] = None
        return _Response(200, data)

    def _list_variables(self, ctx: _Context) -> _Response:
        project = self._ctx_project(ctx, MAINTAINER)
        found = [
            {
                "key": v.key,
                "value": v.value,
                "variable_type": "file" if v.file else "env_var",
                "protected": v.protected,
                "masked": v.masked,
                "raw": v.raw,
                "environment_scope": v.environment_scope,
                "description": None,
            }
            for v in project.variables
        ]
        return self._page(ctx, found)

    # ------------------------------------------------------------------ handlers: repository

    def _ref_commit(self, project: _Project, ref: str | None) -> _Commit:
        commit = self._commit(project, ref or project.default_branch)
        if commit is None:
            raise _not_found("Commit")
        return commit

    def _raw_file(self, ctx: _Context) -> _Response:
        project = self._ctx_project(ctx, REPORTER)
        commit = self._ref_commit(project, ctx.first("ref"))
        data = commit.files.get(ctx.param("path"))
        if data is None:
            raise _not_found("File")
        return _raw_response(data, headers={"X-Gitlab-Commit-Id": commit.sha})

    def _get_file(self, ctx: _Context) -> _Response:
        project = self._ctx_project(ctx, REPORTER)
        ref = ctx.first("ref")
        if not ref:
            raise _HttpError(400, "ref is missing", key="error")
        commit = self._ref_commit(project, ref)
        path = ctx.param("path")
        data = commit.files.get(path)
        if data is None:
            raise _not_found("File")
        return _Response(
            200,
            {
                "file_name": path.rpartition("/")[2],
                "file_path": path,
                "size": len(data),
                "encoding": "base64",
                "content": base64.b64encode(data).decode(),
                "content_sha256": hashlib.sha256(data).hexdigest(),
                "ref": ref,
                "blob_id": hashlib.sha1(
                    b"blob %d\0" % len(data) + data, usedforsecurity=False
                ).hexdigest(),
                "commit_id": commit.sha,
                "last_commit_id": self._last_change(project, commit, path),
            },
        )

    def _last_change(self, project: _Project, commit: _Commit, path: str) -> str:
        """The newest first-parent ancestor of ``commit`` that changed ``path``."""
        current = commit
        while current.parents:
            parent = self._commit(project, current.parents[0])
            if parent is None or parent.files.get(path) != current.files.get(path):
                return current.sha
            current = parent
        return current.sha

    def _commit_json(self, project: _Project, commit: _Commit) -> dict[str, Any]:
        title = commit.message.splitlines()[0] if commit.message else ""
        return {
            "id": commit.sha,
            "short_id": commit.sha[:8],
            "title": title,
            "message": commit.message,
            "author_name": commit.author,
            "author_email": f"{commit.author}@example.com",
            "authored_date": commit.created_at,
            "committer_name": commit.author,
            "committer_email": f"{commit.author}@example.com",
            "committed_date": commit.created_at,
            "created_at": commit.created_at,
            "parent_ids": list(commit.parents),
            "web_url": f"{self.url}/{project.path}/-/commit/{commit.sha}",
        }

    def _get_commit(self, ctx: _Context) -> _Response:
        project = self._ctx_project(ctx, REPORTER)
        return _Response(
            200, self._commit_json(project, self._ref_commit(project, ctx.param("sha")))
        )

    def _ancestors(self, project: _Project, sha: str) -> list[str]:
        seen: list[str] = []
        todo = [sha]
        while todo:
            current = todo.pop(0)
            if current in seen:
                continue
            commit = self._commit(project, current)
            if commit is None:
                continue
            seen.append(current)
            todo += commit.parents
        return seen

    def _compare(self, ctx: _Context) -> _Response:
        project = self._ctx_project(ctx, REPORTER)
        start = self._ref_commit(project, ctx.first("from"))
        end = self._ref_commit(project, ctx.first("to"))
        if (ctx.first("straight") or "false").lower() != "true":
            ours = set(self._ancestors(project, start.sha))
            base_sha = next((c for c in self._ancestors(project, end.sha) if c in ours), start.sha)
            start = self._ref_commit(project, base_sha)
        diffs = []
        for path in sorted(set(start.files) | set(end.files)):
            before, after = start.files.get(path), end.files.get(path)
            if before == after:
                continue
            diffs.append(
                {
                    "old_path": path,
                    "new_path": path,
                    "a_mode": "0" if before is None else "100644",
                    "b_mode": "0" if after is None else "100644",
                    "new_file": before is None,
                    "renamed_file": False,
                    "deleted_file": after is None,
                    "diff": "",
                }
            )
        between = [
            c
            for c in self._ancestors(project, end.sha)
            if c not in self._ancestors(project, start.sha)
        ]
        commits = [
            self._commit_json(project, self._ref_commit(project, c)) for c in reversed(between)
        ]
        return _Response(
            200,
            {
                "commit": commits[-1] if commits else None,
                "commits": commits,
                "diffs": diffs,
                "compare_timeout": False,
                "compare_same_ref": start.sha == end.sha,
                "web_url": f"{self.url}/{project.path}/-/compare/{start.sha}...{end.sha}",
            },
        )

    def _branch_json(self, project: _Project, name: str, sha: str, user: _User) -> dict[str, Any]:
        level = self._is_protected(project, name)
        access = self._access(project, user)
        commit = self._commit(project, sha)
        return {
            "name": name,
            "merged": False,
            "protected": level is not None,
            "default": name == project.default_branch,
            "developers_can_push": level is not None and level <= DEVELOPER,
            "developers_can_merge": level is not None and level <= DEVELOPER,
            "can_push": access >= (level or DEVELOPER),
            "web_url": f"{self.url}/{project.path}/-/tree/{quote(name)}",
            "commit": None if commit is None else self._commit_json(project, commit),
        }

    def _branches(self, project: _Project) -> dict[str, str]:
        found = dict(project.branches)
        if project.mirror is not None:
            listing = (
                self._git(
                    project, "for-each-ref", "--format=%(refname:short) %(objectname)", "refs/heads"
                )
                or b""
            )
            for line in listing.decode().splitlines():
                name, _, sha = line.partition(" ")
                found.setdefault(name, sha)
        return found

    def _list_branches(self, ctx: _Context) -> _Response:
        project = self._ctx_project(ctx, REPORTER)
        search = ctx.first("search")
        found = [
            self._branch_json(project, name, sha, ctx.user)
            for name, sha in sorted(self._branches(project).items())
            if search is None or search in name
        ]
        return self._page(ctx, found)

    def _get_branch(self, ctx: _Context) -> _Response:
        project = self._ctx_project(ctx, REPORTER)
        name = ctx.param("branch")
        sha = self._branches(project).get(name)
        if sha is None:
            raise _not_found("Branch")
        return _Response(200, self._branch_json(project, name, sha, ctx.user))

    def _list_protected(self, ctx: _Context) -> _Response:
        project = self._ctx_project(ctx, MAINTAINER)
        names = {40: "Maintainers", 30: "Developers + Maintainers", 0: "No one"}
        found = [
            {
                "id": index + 1,
                "name": name,
                "push_access_levels": [
                    {"access_level": level, "access_level_description": names.get(level, "")}
                ],
                "merge_access_levels": [
                    {"access_level": MAINTAINER, "access_level_description": "Maintainers"}
                ],
                "allow_force_push": False,
            }
            for index, (name, level) in enumerate(project.protected.items())
        ]
        return self._page(ctx, found)

    def _create_commit(self, ctx: _Context) -> _Response:
        project = self._ctx_project(ctx, DEVELOPER)
        branch = ctx.field("branch")
        message = ctx.field("commit_message")
        actions = ctx.field("actions")
        if not isinstance(branch, str) or not branch:
            raise _HttpError(400, "branch is missing", key="error")
        if not isinstance(message, str) or not message:
            raise _HttpError(400, "commit_message is missing", key="error")
        if not isinstance(actions, list) or not actions:
            raise _HttpError(400, "actions is missing", key="error")
        level = self._is_protected(project, branch)
        if self._access(project, ctx.user) < (level if level is not None else DEVELOPER):
            raise _forbidden("You are not allowed to push into this branch")
        for race_project, race_branch, files in list(self._races):
            if race_project == project.id and race_branch == branch:
                self._races.remove((race_project, race_branch, files))
                self.add_commit(project.id, files, branch=branch, message="a concurrent push")
        tip = project.branches.get(branch)
        start_branch, start_sha = ctx.field("start_branch"), ctx.field("start_sha")
        if start_branch and start_branch != branch and tip is not None:
            raise _HttpError(
                400,
                f"A branch called '{branch}' already exists. "
                "Switch to that branch in order to make changes",
            )
        if start_sha:
            parent = self._ref_commit(project, str(start_sha)).sha
        elif tip is not None:
            parent = tip
        elif start_branch:
            parent_commit = self._commit(project, str(start_branch))
            if parent_commit is None:
                raise _HttpError(400, f"Failed to create commit: branch '{start_branch}' not found")
            parent = parent_commit.sha
        else:
            raise _HttpError(400, "You can only create or edit files when you are on a branch")
        force = str(ctx.field("force") or "false").lower() == "true"
        if tip is not None and not force and tip not in self._ancestors(project, parent):
            raise _HttpError(
                400, f"Could not update refs/heads/{branch}. Please refresh and try again."
            )
        files = self._apply_actions(project, parent, actions)
        sha = self.add_commit(
            project.id,
            files,
            parents=[parent],
            message=message,
            author=ctx.user.username,
        )
        project.branches[branch] = sha
        return _Response(201, self._commit_json(project, project.commits[sha]))

    def _apply_actions(
        self, project: _Project, parent: str, actions: list[Any]
    ) -> dict[str, bytes | None]:
        tree = dict(self._ref_commit(project, parent).files)
        changes: dict[str, bytes | None] = {}
        for action in actions:
            if not isinstance(action, dict):
                raise _HttpError(400, "actions is invalid", key="error")
            kind, path = action.get("action"), str(action.get("file_path") or "")
            if kind not in ("create", "update", "delete", "move") or not path:
                raise _HttpError(400, "actions[action] does not have a valid value", key="error")
            last = action.get("last_commit_id")
            if (
                last
                and kind != "create"
                and path in tree
                and self._last_change(project, self._ref_commit(project, parent), path) != last
            ):
                raise _HttpError(400, f"The file has changed since you started editing it: {path}")
            if kind == "create" and path in tree:
                raise _HttpError(400, "A file with this name already exists")
            if kind in ("update", "delete") and path not in tree:
                raise _HttpError(400, "A file with this name doesn't exist")
            content = str(action.get("content") or "")
            data = (
                base64.b64decode(content)
                if action.get("encoding") == "base64"
                else content.encode()
            )
            if kind == "move":
                previous = str(action.get("previous_path") or "")
                if previous not in tree:
                    raise _HttpError(400, "A file with this name doesn't exist")
                data = tree.pop(previous) if action.get("content") is None else data
                changes[previous] = None
            if kind == "delete":
                tree.pop(path, None)
                changes[path] = None
            else:
                tree[path] = data
                changes[path] = data
        return changes

    # ------------------------------------------------------------------ request handling

    def _handle(
        self, method: str, raw_path: str, headers: dict[str, str], raw_body: bytes
    ) -> _Response:
        split = urlsplit(raw_path)
        path = split.path
        query = parse_qs(split.query, keep_blank_values=True)
        body = _decode_body(raw_body, headers.get("content-type", ""))
        inside = path.startswith(_API + "/") or path == _API
        api_path = path[len(_API) :].rstrip("/") or "/" if inside else path
        with self._lock:
            self.requests.append(
                RecordedRequest(
                    method=method,
                    path=api_path,
                    query=query,
                    headers=headers,
                    body=body,
                    raw_path=raw_path,
                )
            )
        if not inside:
            return _Response(404, {"error": "404 Not Found"})
        with self._lock:
            found = self._authenticate(headers)
        if found is None:
            return _Response(401, {"message": "401 Unauthorized"})
        user, job = found
        injected = self._take_failure(method, api_path)
        if injected is not None:
            return injected
        for route in self._routes:
            match = route.pattern.fullmatch(api_path)
            if match is None or route.method != method:
                continue
            if job is not None and not route.job_token:
                return _Response(401, {"message": "401 Unauthorized"})
            ctx = _Context(
                method=method,
                path=api_path,
                query=query,
                body=body,
                params={k: v for k, v in match.groupdict().items() if v is not None},
                user=user,
                job=job,
            )
            try:
                with self._lock:
                    return route.handler(ctx)
            except _HttpError as exc:
                return _Response(exc.status, exc.payload)
        return _Response(404, {"error": "404 Not Found"})

    def _authenticate(self, headers: Mapping[str, str]) -> tuple[_User, _Job | None] | None:
        job_token = headers.get("job-token")
        if job_token:
            job = next((j for j in self._jobs.values() if j.token == job_token), None)
            if job is None or job.status != "running":
                return None
            return self._users[self._pipelines[job.pipeline_id].user], job
        token = headers.get("private-token", "")
        scheme, _, credential = headers.get("authorization", "").partition(" ")
        if not token and scheme.lower() == "bearer":
            token = credential.strip()
        user = next((u for u in self._users.values() if token and token in u.tokens), None)
        return None if user is None else (user, None)

    def _take_failure(self, method: str, path: str) -> _Response | None:
        with self._lock:
            for failure in self._failures:
                if failure.method not in {"*", method} or not failure.pattern.search(path):
                    continue
                failure.remaining -= 1
                if failure.remaining <= 0:
                    self._failures.remove(failure)
                if failure.status == 429 and failure.body is None:
                    return _Response(
                        429,
                        raw=b"Retry later\n",
                        headers=failure.headers,
                        content_type="text/plain",
                    )
                payload = failure.body
                if payload is None:
                    message = _DEFAULT_MESSAGES.get(failure.status)
                    if message is None:
                        try:
                            message = f"{failure.status} {HTTPStatus(failure.status).phrase}"
                        except ValueError:
                            message = str(failure.status)
                    payload = {"message": message}
                return _Response(failure.status, payload, dict(failure.headers))
        return None

    def _record_error(self, exc: BaseException) -> None:
        with self._lock:
            self.errors.append(exc)


def _zip_response(archive: bytes) -> _Response:
    return _Response(
        200,
        raw=archive,
        content_type="application/zip",
        headers={"Content-Disposition": 'attachment; filename="artifacts.zip"'},
    )


def _raw_response(data: bytes, headers: dict[str, str] | None = None) -> _Response:
    return _Response(200, raw=data, content_type="text/plain; charset=utf-8", headers=headers or {})


def _decode_body(raw: bytes, content_type: str) -> Any:
    if not raw:
        return None
    text = raw.decode("utf-8", errors="replace")
    if "application/x-www-form-urlencoded" in content_type:
        return {k: v[-1] for k, v in parse_qs(text, keep_blank_values=True).items()}
    try:
        return json.loads(text)
    except ValueError:
        return text


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    fake: FakeGitLab

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Record unexpected errors on ``fake.errors``; stay silent on client disconnects."""
        exc = sys.exc_info()[1]
        if exc is not None and not isinstance(exc, ConnectionError | TimeoutError):
            self.fake._record_error(exc)


class _RequestHandler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.0"
    server_version = "FakeGitLab/1.0"
    sys_version = ""

    def log_message(self, format: str, *args: Any) -> None:
        """Silence the default stderr access log."""

    def _dispatch(self) -> None:
        fake = self.server.fake
        try:
            length = int(self.headers.get("content-length") or 0)
        except ValueError:
            length = 0
        raw_body = self.rfile.read(length) if length > 0 else b""
        headers = {k.lower(): v for k, v in self.headers.items()}
        try:
            response = fake._handle(self.command, self.path, headers, raw_body)
        except Exception as exc:
            fake._record_error(exc)
            response = _Response(500, {"message": "500 Internal Server Error"})
        self._send(response)

    def _send(self, response: _Response) -> None:
        body = response.raw if response.raw is not None else json.dumps(response.payload).encode()
        headers = {
            "Content-Type": response.content_type,
            "Content-Length": str(len(body)),
            "X-Request-Id": _sha_of(self.path, str(id(response)))[:26],
            "RateLimit-Limit": "2000",
            "RateLimit-Remaining": "1999",
            **response.headers,
        }
        self.send_response(response.status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        if body and self.command != "HEAD":
            with contextlib.suppress(OSError):
                self.wfile.write(body)

    do_GET = _dispatch
    do_POST = _dispatch
    do_PUT = _dispatch
    do_DELETE = _dispatch
    do_HEAD = _dispatch

"""A stateful fake of the GitHub REST API served over real HTTP on 127.0.0.1.

The fake runs a stdlib :class:`http.server.ThreadingHTTPServer` in a daemon thread on an
ephemeral port, so the real PyGithub client (or a subprocess given ``GITHUB_API_URL``) can be
driven end to end::

    with FakeGitHub() as fake:
        fake.add_pull("octo/repo", 7)
        gh = Github(base_url=fake.base_url, auth=Auth.Token(fake.token), retry=None,
                    seconds_between_requests=0, seconds_between_writes=0)
        ...

Supported endpoints (all under ``prefix``, e.g. ``/api/v3`` to mimic GHES):

* ``GET /user`` and ``GET /users/{login}``
* ``GET /repos/{owner}/{repo}`` (every well-formed repository exists)
* ``GET /repos/{owner}/{repo}/pulls/{number}`` and ``GET /repos/{owner}/{repo}/issues/{number}``
* ``GET|POST /repos/{owner}/{repo}/issues/{number}/comments`` (GET paginated with ``Link``)
* ``GET|PATCH|DELETE /repos/{owner}/{repo}/issues/comments/{id}``
* ``GET /repos/{owner}/{repo}/contents/{path}?ref=...`` (files registered per ref; a symbolic
  link to a file answers with the target's content and path, as GitHub does; a file over 1 MB
  comes without its content, which ``GET /repos/{owner}/{repo}/git/blobs/{sha}`` gives)
* ``GET /repos/{owner}/{repo}/commits/{sha}`` (every ref a file was registered at, and
  :meth:`FakeGitHub.add_commit`)
* the Git Data API of a branch the action writes (a data branch): ``GET git/ref/heads/{branch}``,
  ``GET git/commits/{sha}``, ``POST git/blobs``, ``POST git/trees`` (``base_tree``, entries
  with ``sha: null`` delete), ``POST git/commits``, ``POST git/refs`` and ``PATCH
  git/refs/heads/{branch}`` (fast-forward only unless ``force``), and ``PUT contents/{path}``;
  the Contents API serves a branch by name, or any of its commits. A branch given to
  :meth:`FakeGitHub.protect_branch` refuses every write with 422, as GitHub does a push the
  rules refuse. :meth:`FakeGitHub.mirror_git` serves the commits (parents and files) of a local
  git repository, as GitHub serves the repository's history
* ``GET /repos/{owner}/{repo}/pulls`` (``state``, ``base`` and ``head`` = ``owner:branch``
  filters; ``sort=updated`` lists the newest first)
* ``GET /repos/{owner}/{repo}/pulls/{number}/reviews`` (:meth:`FakeGitHub.add_review`; paginated
  with ``Link``), ``GET /repos/{owner}/{repo}/collaborators/{login}/permission``
  (:meth:`FakeGitHub.set_permission`; anyone else is ``read``, and a login set to ``None``, such
  as a deleted account's ``ghost``, is 404) and ``GET /orgs/{org}/teams/{team}/memberships/{login}``
  (:meth:`FakeGitHub.add_team_member`; anyone else is 404, as GitHub answers a non-member, or a
  token that cannot see the team)
* ``POST /repos/{owner}/{repo}/statuses/{sha}`` (:meth:`FakeGitHub.statuses` lists them)
* ``GET /repos/{owner}/{repo}/actions/runs/{id}`` and
  ``GET /repos/{owner}/{repo}/actions/workflows/{id or file name}/runs`` (``event``,
  ``head_sha`` and ``branch`` filters; :meth:`FakeGitHub.add_run`, and every run an artifact was
  uploaded by), each with its ``status``, ``conclusion``, ``run_attempt`` and ``run_started_at``
  (:meth:`FakeGitHub.set_run`, :meth:`FakeGitHub.rerun`; :meth:`FakeGitHub.delete_run` removes
  one with its artifacts)
* ``GET /repos/{owner}/{repo}/compare/{base}...{head}`` (the mirrored repository's changed
  files, at most 300 listed, as GitHub lists them)
* ``GET /repos/{owner}/{repo}/commits/{ref}/statuses`` (newest first)
* ``GET /repos/{owner}/{repo}/actions/artifacts`` (``name`` filter, newest first),
  ``GET /repos/{owner}/{repo}/actions/runs/{id}/artifacts`` (``name`` filter) and
  ``GET /repos/{owner}/{repo}/actions/artifacts/{id}/zip``, which redirects, as GitHub does, to
  a storage URL on another host name (``localhost``) that takes no token
  (:meth:`FakeGitHub.add_artifact`; :attr:`FakeGitHub.storage_requests` records who came)

Anything else answers 404 ``{"message": "Not Found", ...}`` like GitHub.
"""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import hashlib
import json
import math
import re
import subprocess
import sys
import threading
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlencode, urlsplit

__all__ = [
    "DEFAULT_BASE_SHA",
    "DEFAULT_HEAD_SHA",
    "DOCS_URL",
    "HTML_BASE",
    "Comment",
    "FakeGitHub",
    "RecordedRequest",
]

DEFAULT_HEAD_SHA = "a" * 40
DEFAULT_BASE_SHA = "b" * 40
HTML_BASE = "https://github.example"
DOCS_URL = "https://docs.github.com/rest"
_RAW_BASE = "https://raw.github.example"
_EPOCH = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=30)
"""The fake's clock starts half an hour before the tests and moves a second per event: times keep
their order, and a status or a run set during a test is never older than a gate's limits for
waiting (hours)."""
_DEFAULT_PER_PAGE = 30
_MAX_PER_PAGE = 100
_FIRST_COMMENT_ID = 1000
_KNOWN_USER_IDS = {"github-actions[bot]": 41898282}

_SEG = r"[^/]+"
_REPO = rf"/repos/(?P<owner>{_SEG})/(?P<name>{_SEG})"

_DEFAULT_FAILURE_MESSAGES = {
    401: "Bad credentials",
    403: "Resource not accessible by integration",
    404: "Not Found",
    422: "Validation Failed",
}


@dataclass(kw_only=True)
class Comment:
    """An issue/PR conversation comment as stored by the fake."""

    id: int
    body: str
    user_login: str
    created_at: str
    updated_at: str


@dataclass(kw_only=True)
class RecordedRequest:
    """One request received by the fake (recorded before auth checks and failure injection).

    ``path`` is the percent-decoded path with the server prefix stripped (e.g.
    ``/repos/o/r/issues/1/comments``); ``raw_path`` is the request target exactly as sent
    (prefix and query included). Header names are lower-cased. ``body`` is the decoded JSON
    body, the raw text if it is not JSON, or ``None`` when empty.
    """

    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: Any
    raw_path: str = ""


@dataclass(kw_only=True)
class _Pull:
    repo: str
    number: int
    head_sha: str
    base_sha: str
    head_ref: str
    base_ref: str
    head_repo: str
    title: str
    user: str
    created_at: str
    state: str = "open"


@dataclass(kw_only=True)
class _Failure:
    method: str
    pattern: re.Pattern[str]
    status: int
    remaining: int
    body: dict[str, Any] | None
    headers: dict[str, str]


@dataclass(kw_only=True)
class _File:
    content: bytes
    sha: str
    target: str | None = None
    """For a symbolic link: the path it points to."""


_CONTENTS_API_MAX = 1024 * 1024


@dataclass
class _Response:
    status: int
    payload: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    raw: bytes | None = None
    """A body sent as it is (an archive), instead of ``payload`` as JSON."""


@dataclass(kw_only=True)
class _Artifact:
    id: int
    repo: str
    run_id: int
    name: str
    archive: bytes
    head_sha: str
    created_at: str
    expired: bool = False
    listed_size: int | None = None


@dataclass(kw_only=True)
class _Run:
    id: int
    repo: str
    workflow: str
    event: str
    head_sha: str
    created_at: str
    head_branch: str = ""
    status: str = "completed"
    conclusion: str | None = "success"
    attempt: int = 1
    started_at: str = ""
    head_repo: str = ""


@dataclass(kw_only=True)
class _GitCommit:
    tree: dict[str, str]
    """Every file of the commit: path to blob id."""
    parents: list[str]
    message: str = ""


@dataclass(kw_only=True)
class _Review:
    id: int
    user: str
    body: str
    state: str
    commit_id: str
    submitted_at: str
    user_type: str | None = None


@dataclass(kw_only=True)
class Status:
    """A commit status as the fake stored it."""

    sha: str
    state: str
    context: str
    description: str
    target_url: str | None
    creator: str = "github-actions[bot]"
    created_at: str = ""


class _HttpError(Exception):
    def __init__(self, status_code: int, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.status = status_code
        self.payload: dict[str, Any] = {"message": message, "documentation_url": DOCS_URL, **extra}


def _not_found() -> _HttpError:
    return _HttpError(404, "Not Found")


def _repo_key(repo: str) -> str:
    return repo.lower()


def _blob_sha(content: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(content) + content, usedforsecurity=False).hexdigest()


def _user_type(login: str) -> str:
    return "Bot" if login.endswith("[bot]") else "User"


def _user_id(login: str) -> int:
    return _KNOWN_USER_IDS.get(login, 10_000 + zlib.crc32(login.encode()) % 90_000_000)


_Handler = Callable[["_Context"], _Response]


@dataclass(kw_only=True)
class _Context:
    method: str
    path: str
    raw_path: str
    query: dict[str, list[str]]
    body: Any
    params: dict[str, str]

    @property
    def repo(self) -> str:
        return f"{self.params['owner']}/{self.params['name']}"

    def int_param(self, name: str) -> int:
        return int(self.params[name])

    def first(self, name: str) -> str | None:
        values = self.query.get(name)
        return values[0] if values else None

    def body_text(self, name: str = "body") -> str:
        if not isinstance(self.body, dict):
            raise _HttpError(400, "Problems parsing JSON")
        value = self.body.get(name)
        if not isinstance(value, str):
            raise _HttpError(
                422,
                'Invalid request.\n\nNo subschema in "anyOf" matched.',
                status="422",
            )
        return value


class FakeGitHub:
    """Stateful in-process fake of the parts of the GitHub REST API the action uses."""

    def __init__(
        self,
        *,
        token: str = "ghs_test",
        login: str = "github-actions[bot]",
        prefix: str = "",
        user_type: str | None = None,
    ) -> None:
        """Configure the fake; call :meth:`start` (or use ``with``) to serve it."""
        if prefix and not prefix.startswith("/"):
            prefix = "/" + prefix
        self.token = token
        self.login = login
        self.user_type = user_type or _user_type(login)
        self.prefix = prefix.rstrip("/")
        self.requests: list[RecordedRequest] = []
        self.errors: list[BaseException] = []
        self._lock = threading.RLock()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._origin: str | None = None
        self._clock = 0
        self._request_counter = 0
        self._next_comment_id = _FIRST_COMMENT_ID
        self._repo_names: dict[str, str] = {}
        self._pulls: dict[tuple[str, int], _Pull] = {}
        self._issues: set[tuple[str, int]] = set()
        self._comments: dict[int, tuple[str, int, Comment]] = {}
        self._files: dict[tuple[str, str, str], _File] = {}
        self._commits: set[tuple[str, str]] = set()
        self._artifacts: dict[int, _Artifact] = {}
        self._statuses: list[tuple[str, Status]] = []
        self._reviews: dict[tuple[str, int], list[_Review]] = {}
        self._permissions: dict[tuple[str, str], str | None] = {}
        self._runs: dict[tuple[str, int], _Run] = {}
        self._team_members: set[tuple[str, str, str]] = set()
        self._blobs: dict[tuple[str, str], bytes] = {}
        self._trees: dict[tuple[str, str], dict[str, str]] = {}
        self._git_commits: dict[tuple[str, str], _GitCommit] = {}
        self._refs: dict[tuple[str, str], str] = {}
        self._protected: set[tuple[str, str]] = set()
        self._mirrors: dict[str, str] = {}
        self.storage_requests: list[RecordedRequest] = []
        """Downloads from the artifact storage host, with the headers they carried."""
        self._failures: list[_Failure] = []
        self._routes: list[tuple[str, re.Pattern[str], _Handler]] = [
            ("GET", re.compile(r"/user"), self._get_user),
            ("GET", re.compile(rf"/users/(?P<login>{_SEG})"), self._get_named_user),
            ("GET", re.compile(_REPO), self._get_repo),
            ("GET", re.compile(rf"{_REPO}/pulls"), self._list_pulls),
            ("GET", re.compile(rf"{_REPO}/pulls/(?P<number>\d+)"), self._get_pull),
            ("GET", re.compile(rf"{_REPO}/pulls/(?P<number>\d+)/reviews"), self._list_reviews),
            (
                "GET",
                re.compile(rf"{_REPO}/collaborators/(?P<login>{_SEG})/permission"),
                self._get_permission,
            ),
            (
                "GET",
                re.compile(
                    rf"/orgs/(?P<org>{_SEG})/teams/(?P<team>{_SEG})/memberships/(?P<login>{_SEG})"
                ),
                self._get_membership,
            ),
            ("POST", re.compile(rf"{_REPO}/statuses/(?P<sha>{_SEG})"), self._create_status),
            ("GET", re.compile(rf"{_REPO}/actions/runs/(?P<run>\d+)"), self._get_run),
            (
                "GET",
                re.compile(rf"{_REPO}/actions/workflows/(?P<workflow>{_SEG})/runs"),
                self._list_workflow_runs,
            ),
            (
                "GET",
                re.compile(rf"{_REPO}/compare/(?P<base>[^/.]+)\.\.\.(?P<head>[^/.]+)"),
                self._compare,
            ),
            (
                "GET",
                re.compile(rf"{_REPO}/commits/(?P<sha>{_SEG})/statuses"),
                self._list_statuses,
            ),
            (
                "GET",
                re.compile(rf"{_REPO}/actions/runs/(?P<run>\d+)/artifacts"),
                self._list_artifacts,
            ),
            (
                "GET",
                re.compile(rf"{_REPO}/actions/artifacts/(?P<id>\d+)/zip"),
                self._artifact_zip,
            ),
            ("GET", re.compile(rf"{_REPO}/issues/(?P<number>\d+)"), self._get_issue),
            ("GET", re.compile(rf"{_REPO}/issues/(?P<number>\d+)/comments"), self._list_comments),
            ("POST", re.compile(rf"{_REPO}/issues/(?P<number>\d+)/comments"), self._create_comment),
            ("GET", re.compile(rf"{_REPO}/issues/comments/(?P<id>\d+)"), self._get_comment),
            ("PATCH", re.compile(rf"{_REPO}/issues/comments/(?P<id>\d+)"), self._edit_comment),
            ("DELETE", re.compile(rf"{_REPO}/issues/comments/(?P<id>\d+)"), self._delete_comment),
            ("GET", re.compile(rf"{_REPO}/contents(?:/(?P<path>.*))?"), self._get_contents),
            ("GET", re.compile(rf"{_REPO}/commits/(?P<sha>{_SEG})"), self._get_commit),
            ("GET", re.compile(rf"{_REPO}/git/blobs/(?P<sha>{_SEG})"), self._get_blob),
            ("GET", re.compile(rf"{_REPO}/git/ref/heads/(?P<branch>.+)"), self._get_ref),
            ("GET", re.compile(rf"{_REPO}/git/commits/(?P<sha>{_SEG})"), self._get_git_commit),
            ("POST", re.compile(rf"{_REPO}/git/blobs"), self._create_blob),
            ("POST", re.compile(rf"{_REPO}/git/trees"), self._create_tree),
            ("POST", re.compile(rf"{_REPO}/git/commits"), self._create_git_commit),
            ("POST", re.compile(rf"{_REPO}/git/refs"), self._create_ref),
            ("PATCH", re.compile(rf"{_REPO}/git/refs/heads/(?P<branch>.+)"), self._update_ref),
            ("PUT", re.compile(rf"{_REPO}/contents/(?P<path>.+)"), self._put_contents),
            ("GET", re.compile(rf"{_REPO}/actions/artifacts"), self._list_repo_artifacts),
        ]

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> FakeGitHub:
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
            name=f"FakeGitHub:{port}",
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

    def __enter__(self) -> FakeGitHub:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @property
    def origin(self) -> str:
        """``http://127.0.0.1:PORT`` (no prefix); only valid once started."""
        if self._origin is None or self._server is None:
            raise RuntimeError("FakeGitHub is not running; call start() first")
        return self._origin

    @property
    def base_url(self) -> str:
        """The API root to give PyGithub / ``GITHUB_API_URL``: origin + prefix."""
        return self.origin + self.prefix

    def env(self) -> dict[str, str]:
        """Environment variables pointing a subprocess at this fake."""
        return {"GITHUB_API_URL": self.base_url, "GITHUB_TOKEN": self.token}

    # ------------------------------------------------------------------ seeding / inspection

    def add_repo(self, repo: str) -> None:
        """Record the display spelling of ``owner/name`` (every repository exists anyway)."""
        with self._lock:
            self._repo_names.setdefault(_repo_key(repo), repo)

    def add_pull(
        self,
        repo: str,
        number: int,
        *,
        head_sha: str = DEFAULT_HEAD_SHA,
        base_sha: str = DEFAULT_BASE_SHA,
        base_ref: str = "main",
        head_repo: str | None = None,
        head_ref: str = "feature",
        title: str = "Test pull request",
        user: str = "someone",
    ) -> None:
        """Register (or replace) an open pull request; it is also issue ``number``."""
        with self._lock:
            self.add_repo(repo)
            key = (_repo_key(repo), number)
            self._issues.add(key)
            self._pulls[key] = _Pull(
                repo=repo,
                number=number,
                head_sha=head_sha,
                base_sha=base_sha,
                head_ref=head_ref,
                base_ref=base_ref,
                head_repo=head_repo or repo,
                title=title,
                user=user,
                created_at=self._tick(),
            )

    def retarget_pull(self, repo: str, number: int, *, base_ref: str, base_sha: str) -> None:
        """Change the base of pull request ``number``, as its author can at any time."""
        with self._lock:
            pull = self._pulls[(_repo_key(repo), number)]
            pull.base_ref, pull.base_sha = base_ref, base_sha

    def push_to_pull(self, repo: str, number: int, *, head_sha: str, base_sha: str) -> None:
        """Pull request ``number`` as GitHub has it after a push: a new head, the base's tip."""
        with self._lock:
            pull = self._pulls.get((_repo_key(repo), number))
            if pull is not None:
                pull.head_sha, pull.base_sha = head_sha, base_sha

    def reopen_pull(self, repo: str, number: int) -> None:
        """Reopen pull request ``number``."""
        with self._lock:
            self._pulls[(_repo_key(repo), number)].state = "open"

    def close_pull(self, repo: str, number: int) -> None:
        """Close pull request ``number``: it is no longer listed among the open ones."""
        with self._lock:
            self._pulls[(_repo_key(repo), number)].state = "closed"

    def add_comment(self, repo: str, number: int, body: str, *, user: str = "someone") -> Comment:
        """Seed a comment on issue/PR ``number`` (registering the issue if needed)."""
        with self._lock:
            self.add_repo(repo)
            self._issues.add((_repo_key(repo), number))
            return dataclasses.replace(self._store_comment(repo, number, body, user))

    def comments(self, repo: str, number: int) -> list[Comment]:
        """Snapshot (copies) of the comments on ``repo#number`` in creation order."""
        with self._lock:
            return [dataclasses.replace(c) for c in self._comments_of(_repo_key(repo), number)]

    def add_file(
        self,
        repo: str,
        path: str,
        content: bytes | str,
        *,
        ref: str,
        symlink_to: str = "",
        blob_sha: str = "",
    ) -> None:
        """Serve ``content`` at ``GET /repos/{repo}/contents/{path}?ref={ref}``.

        With ``symlink_to``, ``path`` is a symbolic link to that path (``content`` is unused);
        ``blob_sha`` is a blob id to claim instead of the content's own.
        """
        data = content.encode() if isinstance(content, str) else bytes(content)
        with self._lock:
            self.add_repo(repo)
            self._commits.add((_repo_key(repo), ref))
            self._files[(_repo_key(repo), ref, path.strip("/"))] = _File(
                content=data,
                sha=blob_sha or _blob_sha(data),
                target=symlink_to.strip("/") or None,
            )

    def add_commit(self, repo: str, sha: str) -> None:
        """Make ``GET /repos/{repo}/commits/{sha}`` answer (a commit without registered files)."""
        with self._lock:
            self.add_repo(repo)
            self._commits.add((_repo_key(repo), sha))

    def mirror_git(self, repo: str, path: str) -> None:
        """Serve the commits of the local git repository at ``path`` as ``repo``'s history:
        their parents (``git/commits``, ``commits``) and files (the Contents API)."""
        with self._lock:
            self.add_repo(repo)
            self._mirrors[_repo_key(repo)] = path

    def protect_branch(self, repo: str, branch: str) -> None:
        """Refuse every write to ``branch`` (moving it, or a file written on it) with 422."""
        with self._lock:
            self._protected.add((_repo_key(repo), branch))

    def branch_files(self, repo: str, branch: str) -> dict[str, bytes]:
        """The files on ``branch`` of the fake's own git data (a data branch written through
        the API), path to content; empty when there is no such branch."""
        with self._lock:
            tip = self._refs.get((_repo_key(repo), f"heads/{branch}"))
            if tip is None:
                return {}
            tree = self._git_commits[(_repo_key(repo), tip)].tree
            return {path: self._blobs[(_repo_key(repo), sha)] for path, sha in tree.items()}

    def write_branch(
        self, repo: str, branch: str, files: dict[str, bytes | None], *, message: str = "push"
    ) -> str:
        """Push a commit to ``branch`` (created when new) that writes ``files`` (``None``
        deletes), as someone with write access can, protected or not; its id."""
        with self._lock:
            key = _repo_key(repo)
            self.add_repo(repo)
            tip = self._refs.get((key, f"heads/{branch}"))
            tree = dict(self._git_commits[(key, tip)].tree) if tip else {}
            for path, data in files.items():
                if data is None:
                    tree.pop(path, None)
                else:
                    tree[path] = self._store_blob(key, data)
            sha = self._store_commit(key, tree, [tip] if tip else [], message)
            self._refs[(key, f"heads/{branch}")] = sha
            return sha

    def add_artifact(
        self,
        repo: str,
        run_id: int,
        name: str,
        archive: bytes,
        *,
        head_sha: str = DEFAULT_HEAD_SHA,
        expired: bool = False,
        size_in_bytes: int | None = None,
    ) -> int:
        """Upload ``archive`` (a zip) as artifact ``name`` of run ``run_id``; its id.

        ``size_in_bytes`` is the size the listing tells, when it should not be the archive's. A
        run not added before is added as a ``pull_request`` run of ``ragaliq.yml`` at ``head_sha``.
        """
        with self._lock:
            if (_repo_key(repo), run_id) not in self._runs:
                self.add_run(repo, run_id, head_sha=head_sha)
            artifact_id = 9000 + len(self._artifacts)
            self._artifacts[artifact_id] = _Artifact(
                id=artifact_id,
                repo=_repo_key(repo),
                run_id=run_id,
                name=name,
                archive=archive,
                head_sha=head_sha,
                created_at=self._tick(),
                expired=expired,
                listed_size=size_in_bytes,
            )
            return artifact_id

    def add_run(
        self,
        repo: str,
        run_id: int,
        *,
        head_sha: str,
        workflow: str = "ragaliq.yml",
        event: str = "pull_request",
        head_branch: str = "",
        status: str = "completed",
        conclusion: str | None = "success",
        head_repo: str = "",
    ) -> None:
        """Register workflow run ``run_id`` of ``.github/workflows/{workflow}`` (if it is new)."""
        with self._lock:
            self.add_repo(repo)
            if (_repo_key(repo), run_id) in self._runs:
                return
            created = self._tick()
            self._runs[(_repo_key(repo), run_id)] = _Run(
                id=run_id,
                repo=_repo_key(repo),
                workflow=workflow,
                event=event,
                head_sha=head_sha,
                created_at=created,
                head_branch=head_branch,
                status=status,
                conclusion=conclusion,
                started_at=created,
                head_repo=head_repo or repo,
            )

    def set_run(
        self, repo: str, run_id: int, *, status: str, conclusion: str | None = None
    ) -> None:
        """Move run ``run_id`` on: ``queued``, ``in_progress``, or ``completed`` with a
        conclusion (``success``, ``failure``, ``cancelled``, ...)."""
        with self._lock:
            run = self._runs[(_repo_key(repo), run_id)]
            run.status, run.conclusion = status, conclusion

    def rerun(self, repo: str, run_id: int) -> None:
        """Start run ``run_id``'s next attempt, as a re-run does (queued, a new start time)."""
        with self._lock:
            run = self._runs[(_repo_key(repo), run_id)]
            run.attempt += 1
            run.status, run.conclusion, run.started_at = "queued", None, self._tick()

    def delete_run(self, repo: str, run_id: int) -> None:
        """Delete run ``run_id`` and its artifacts, as a person may from the Actions page."""
        with self._lock:
            key = _repo_key(repo)
            self._runs.pop((key, run_id), None)
            for artifact_id, artifact in list(self._artifacts.items()):
                if artifact.repo == key and artifact.run_id == run_id:
                    del self._artifacts[artifact_id]

    def pull(self, repo: str, number: int) -> dict[str, Any]:
        """Pull request ``number`` as the API shows it now."""
        with self._lock:
            return self._pull_json(self._pulls[(_repo_key(repo), number)])

    def artifacts(self, repo: str) -> list[dict[str, Any]]:
        """Every artifact of ``repo`` as the API lists them, newest first."""
        with self._lock:
            return [
                self._artifact_json(a)
                for a in sorted(self._artifacts.values(), key=lambda a: -a.id)
                if a.repo == _repo_key(repo)
            ]

    def runs(self, repo: str, *, workflow: str | None = None) -> list[dict[str, Any]]:
        """The runs of ``repo`` (of one workflow file), as the API shows them, newest first."""
        with self._lock:
            return [
                self._run_json(run)
                for (key, _), run in sorted(self._runs.items(), key=lambda item: -item[1].id)
                if key == _repo_key(repo) and workflow in (None, run.workflow)
            ]

    def add_team_member(self, org: str, team: str, login: str) -> None:
        """Make ``login`` an active member of team ``org/team``."""
        with self._lock:
            self._team_members.add((org.lower(), team.lower(), login.lower()))

    def add_review(
        self,
        repo: str,
        number: int,
        *,
        user: str,
        body: str,
        commit_id: str,
        state: str = "APPROVED",
        user_type: str | None = None,
    ) -> None:
        """Submit a review of pull request ``number`` at ``commit_id``.

        ``user_type`` is the reviewer's account type (``Bot`` for an app), when not the login's.
        """
        with self._lock:
            reviews = self._reviews.setdefault((_repo_key(repo), number), [])
            reviews.append(
                _Review(
                    id=3000 + len(reviews),
                    user=user,
                    body=body,
                    state=state,
                    commit_id=commit_id,
                    submitted_at=self._tick(),
                    user_type=user_type,
                )
            )

    def set_permission(self, repo: str, login: str, permission: str | None) -> None:
        """Give ``login`` a permission on ``repo``: ``admin``, ``maintain``, ``write``, ``read``;
        None for a login the API does not know (404)."""
        with self._lock:
            self._permissions[(_repo_key(repo), login.lower())] = permission

    def statuses(self, repo: str, sha: str, *, context: str | None = None) -> list[Status]:
        """The statuses set on ``sha`` (of one ``context``, when given), oldest first."""
        with self._lock:
            return [
                dataclasses.replace(s)
                for key, s in self._statuses
                if key == _repo_key(repo) and s.sha == sha and context in (None, s.context)
            ]

    def fail(
        self,
        method: str,
        path_regex: str,
        status: int,
        *,
        times: int = 1,
        body: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        """Answer the next ``times`` matching requests with ``status``.

        ``method`` is case-insensitive (``"*"`` matches any); ``path_regex`` is searched
        (``re.search``) in the prefix-stripped, percent-decoded path. Rules are consumed in the
        order they were added; failures apply after the token check and before routing.
        """
        if times < 1:
            raise ValueError("times must be >= 1")
        with self._lock:
            self._failures.append(
                _Failure(
                    method=method.upper(),
                    pattern=re.compile(path_regex),
                    status=status,
                    remaining=times,
                    body=body,
                    headers=dict(headers or {}),
                )
            )

    def requests_matching(
        self, method: str | None = None, path_regex: str | None = None
    ) -> list[RecordedRequest]:
        """Recorded requests filtered by method and ``re.search`` on the stripped path."""
        with self._lock:
            snapshot = list(self.requests)
        return [
            r
            for r in snapshot
            if (method is None or r.method == method.upper())
            and (path_regex is None or re.search(path_regex, r.path))
        ]

    # ------------------------------------------------------------------ request handling

    def _handle(
        self, method: str, raw_path: str, headers: dict[str, str], raw_body: bytes
    ) -> _Response:
        split = urlsplit(raw_path)
        path = unquote(split.path)
        if self.prefix and (path == self.prefix or path.startswith(self.prefix + "/")):
            path = path[len(self.prefix) :] or "/"
        elif self.prefix:
            path = "\0" + path  # outside the prefix: never routable
        if len(path) > 1:
            path = path.rstrip("/")
        query = parse_qs(split.query, keep_blank_values=True)
        body = _decode_body(raw_body)
        with self._lock:
            self.requests.append(
                RecordedRequest(
                    method=method,
                    path=path.lstrip("\0"),
                    query=query,
                    headers=headers,
                    body=body,
                    raw_path=raw_path,
                )
            )
        storage = re.fullmatch(r"/_storage/artifacts/(\d+)", path)
        if storage is not None:
            return self._storage(int(storage.group(1)), method, path, headers)
        if not self._authorized(headers.get("authorization", "")):
            return _Response(401, {"message": "Bad credentials", "documentation_url": DOCS_URL})
        injected = self._take_failure(method, path)
        if injected is not None:
            return injected
        for route_method, pattern, handler in self._routes:
            match = pattern.fullmatch(path)
            if match is None or route_method != method:
                continue
            params = {k: v for k, v in match.groupdict().items() if v is not None}
            ctx = _Context(
                method=method, path=path, raw_path=raw_path, query=query, body=body, params=params
            )
            try:
                with self._lock:
                    return handler(ctx)
            except _HttpError as exc:
                return _Response(exc.status, exc.payload)
        return _Response(404, _not_found().payload)

    def _authorized(self, value: str) -> bool:
        scheme, _, credential = value.strip().partition(" ")
        return scheme.lower() in {"token", "bearer"} and credential.strip() == self.token

    def _take_failure(self, method: str, path: str) -> _Response | None:
        with self._lock:
            for failure in self._failures:
                if failure.method not in {"*", method} or not failure.pattern.search(path):
                    continue
                failure.remaining -= 1
                if failure.remaining <= 0:
                    self._failures.remove(failure)
                payload = failure.body
                if payload is None:
                    message = _DEFAULT_FAILURE_MESSAGES.get(failure.status)
                    if message is None:
                        try:
                            message = HTTPStatus(failure.status).phrase
                        except ValueError:
                            message = "Error"
                    payload = {"message": message, "documentation_url": DOCS_URL}
                return _Response(failure.status, payload, dict(failure.headers))
        return None

    def _next_request_id(self) -> str:
        with self._lock:
            self._request_counter += 1
            return f"FAKE:{self._request_counter:04X}:{self._request_counter * 7919:06X}"

    def _record_error(self, exc: BaseException) -> None:
        with self._lock:
            self.errors.append(exc)

    # ------------------------------------------------------------------ state helpers

    def _tick(self) -> str:
        self._clock += 1
        return (_EPOCH + timedelta(seconds=self._clock)).strftime("%Y-%m-%dT%H:%M:%SZ")

    def _display(self, repo: str) -> str:
        return self._repo_names.get(_repo_key(repo), repo)

    def _store_comment(self, repo: str, number: int, body: str, user: str) -> Comment:
        now = self._tick()
        comment = Comment(
            id=self._next_comment_id, body=body, user_login=user, created_at=now, updated_at=now
        )
        self._next_comment_id += 1
        self._comments[comment.id] = (_repo_key(repo), number, comment)
        return comment

    def _comments_of(self, key: str, number: int) -> list[Comment]:
        found = [c for k, n, c in self._comments.values() if k == key and n == number]
        return sorted(found, key=lambda c: c.id)

    def _find_comment(self, ctx: _Context) -> tuple[int, Comment]:
        entry = self._comments.get(ctx.int_param("id"))
        if entry is None or entry[0] != _repo_key(ctx.repo):
            raise _not_found()
        return entry[1], entry[2]

    def _require_issue(self, ctx: _Context) -> int:
        number = ctx.int_param("number")
        if (_repo_key(ctx.repo), number) not in self._issues:
            raise _not_found()
        return number

    # ------------------------------------------------------------------ JSON builders

    def _api(self, path: str) -> str:
        return f"{self.base_url}{path}"

    def _user_json(self, login: str, user_type: str | None = None) -> dict[str, Any]:
        user_id = _user_id(login)
        return {
            "login": login,
            "id": user_id,
            "node_id": f"U_fake{user_id}",
            "type": user_type or _user_type(login),
            "site_admin": False,
            "url": self._api(f"/users/{login}"),
            "html_url": f"{HTML_BASE}/{login}",
            "avatar_url": f"{HTML_BASE}/avatars/{user_id}",
        }

    def _repo_json(self, repo: str) -> dict[str, Any]:
        repo = self._display(repo)
        owner, name = repo.split("/", 1)
        repo_id = 100_000 + zlib.crc32(_repo_key(repo).encode()) % 900_000_000
        return {
            "id": repo_id,
            "node_id": f"R_fake{repo_id}",
            "name": name,
            "full_name": repo,
            "owner": self._user_json(owner, "Organization"),
            "private": False,
            "fork": False,
            "archived": False,
            "visibility": "public",
            "default_branch": "main",
            "url": self._api(f"/repos/{repo}"),
            "html_url": f"{HTML_BASE}/{repo}",
            "clone_url": f"{HTML_BASE}/{repo}.git",
        }

    def _comment_json(self, repo: str, number: int, comment: Comment) -> dict[str, Any]:
        repo = self._display(repo)
        is_self = comment.user_login == self.login
        return {
            "id": comment.id,
            "node_id": f"IC_fake{comment.id}",
            "url": self._api(f"/repos/{repo}/issues/comments/{comment.id}"),
            "html_url": f"{HTML_BASE}/{repo}/pull/{number}#issuecomment-{comment.id}",
            "issue_url": self._api(f"/repos/{repo}/issues/{number}"),
            "body": comment.body,
            "user": self._user_json(comment.user_login, self.user_type if is_self else None),
            "created_at": comment.created_at,
            "updated_at": comment.updated_at,
            "author_association": "NONE",
            "performed_via_github_app": None,
        }

    def _branch_json(self, repo: str, ref: str, sha: str) -> dict[str, Any]:
        owner = repo.split("/", 1)[0]
        return {
            "label": f"{owner}:{ref}",
            "ref": ref,
            "sha": sha,
            "user": self._user_json(owner, "Organization"),
            "repo": self._repo_json(repo),
        }

    def _pull_json(self, pull: _Pull) -> dict[str, Any]:
        repo = self._display(pull.repo)
        api = self._api(f"/repos/{repo}")
        count = len(self._comments_of(_repo_key(repo), pull.number))
        return {
            "id": 500_000 + pull.number,
            "node_id": f"PR_fake{pull.number}",
            "number": pull.number,
            "state": pull.state,
            "locked": False,
            "draft": False,
            "merged": False,
            "title": pull.title,
            "body": None,
            "user": self._user_json(pull.user),
            "url": f"{api}/pulls/{pull.number}",
            "html_url": f"{HTML_BASE}/{repo}/pull/{pull.number}",
            "issue_url": f"{api}/issues/{pull.number}",
            "comments_url": f"{api}/issues/{pull.number}/comments",
            "diff_url": f"{HTML_BASE}/{repo}/pull/{pull.number}.diff",
            "patch_url": f"{HTML_BASE}/{repo}/pull/{pull.number}.patch",
            "head": self._branch_json(pull.head_repo, pull.head_ref, pull.head_sha),
            "base": self._branch_json(repo, pull.base_ref, pull.base_sha),
            "comments": count,
            "created_at": pull.created_at,
            "updated_at": pull.created_at,
        }

    def _issue_json(self, repo: str, number: int) -> dict[str, Any]:
        repo = self._display(repo)
        api = self._api(f"/repos/{repo}")
        pull = self._pulls.get((_repo_key(repo), number))
        created = pull.created_at if pull else (_EPOCH.strftime("%Y-%m-%dT%H:%M:%SZ"))
        data: dict[str, Any] = {
            "id": 700_000 + number,
            "node_id": f"I_fake{number}",
            "number": number,
            "state": "open",
            "locked": False,
            "title": pull.title if pull else f"Issue {number}",
            "body": None,
            "user": self._user_json(pull.user if pull else "someone"),
            "labels": [],
            "assignees": [],
            "url": f"{api}/issues/{number}",
            "html_url": f"{HTML_BASE}/{repo}/{'pull' if pull else 'issues'}/{number}",
            "comments_url": f"{api}/issues/{number}/comments",
            "repository_url": api,
            "comments": len(self._comments_of(_repo_key(repo), number)),
            "created_at": created,
            "updated_at": created,
        }
        if pull is not None:
            data["pull_request"] = {
                "url": f"{api}/pulls/{number}",
                "html_url": f"{HTML_BASE}/{repo}/pull/{number}",
            }
        return data

    def _content_json(self, repo: str, ref: str, path: str, file: _File | None) -> dict[str, Any]:
        repo = self._display(repo)
        api = self._api(f"/repos/{repo}")
        kind = "file" if file is not None else "dir"
        sha = file.sha if file is not None else _blob_sha(f"tree:{path}".encode())
        self_url = f"{api}/contents/{path}?{urlencode({'ref': ref})}"
        git_url = f"{api}/git/{'blobs' if file is not None else 'trees'}/{sha}"
        html_url = f"{HTML_BASE}/{repo}/{'blob' if file is not None else 'tree'}/{ref}/{path}"
        data: dict[str, Any] = {
            "type": kind,
            "name": path.rsplit("/", 1)[-1],
            "path": path,
            "sha": sha,
            "size": len(file.content) if file is not None else 0,
            "url": self_url,
            "git_url": git_url,
            "html_url": html_url,
            "download_url": f"{_RAW_BASE}/{repo}/{ref}/{path}" if file is not None else None,
            "_links": {"self": self_url, "git": git_url, "html": html_url},
        }
        if file is not None and len(file.content) > _CONTENTS_API_MAX:
            data["encoding"] = "none"
            data["content"] = ""
        elif file is not None:
            data["encoding"] = "base64"
            data["content"] = base64.encodebytes(file.content).decode("ascii")
        return data

    # ------------------------------------------------------------------ route handlers

    def _get_user(self, ctx: _Context) -> _Response:
        return _Response(200, self._user_json(self.login, self.user_type))

    def _get_named_user(self, ctx: _Context) -> _Response:
        login = ctx.params["login"]
        user_type = self.user_type if login == self.login else None
        return _Response(200, self._user_json(login, user_type))

    def _get_repo(self, ctx: _Context) -> _Response:
        return _Response(200, self._repo_json(ctx.repo))

    def _list_pulls(self, ctx: _Context) -> _Response:
        key = _repo_key(ctx.repo)
        state, head = ctx.first("state") or "open", ctx.first("head")
        base = ctx.first("base")
        found = []
        for (repo_key, _), pull in sorted(self._pulls.items()):
            if repo_key != key or state not in (pull.state, "all"):
                continue
            owner = pull.head_repo.split("/", 1)[0]
            if head is not None and head != f"{owner}:{pull.head_ref}":
                continue
            if base is not None and base != pull.base_ref:
                continue
            found.append(self._pull_json(pull))
        if ctx.first("sort") == "updated":  # the fake's pull requests: newest number last pushed
            found.reverse()
        return _Response(200, found)

    def _list_reviews(self, ctx: _Context) -> _Response:
        reviews = self._reviews.get((_repo_key(ctx.repo), ctx.int_param("number")), [])
        per_page = _parse_int(ctx.first("per_page"), _DEFAULT_PER_PAGE)
        per_page = _DEFAULT_PER_PAGE if per_page < 1 else min(per_page, _MAX_PER_PAGE)
        page = max(1, _parse_int(ctx.first("page"), 1))
        chunk = reviews[(page - 1) * per_page : page * per_page]
        link = self._link_header(ctx, page, per_page, len(reviews))
        return _Response(
            200,
            [
                {
                    "id": r.id,
                    "user": self._user_json(r.user, r.user_type),
                    "body": r.body,
                    "state": r.state,
                    "commit_id": r.commit_id,
                    "submitted_at": r.submitted_at,
                    "html_url": f"{HTML_BASE}/{self._display(ctx.repo)}/pull/"
                    f"{ctx.int_param('number')}#pullrequestreview-{r.id}",
                    "author_association": "NONE",
                }
                for r in chunk
            ],
            {"link": link} if link else {},
        )

    def _get_permission(self, ctx: _Context) -> _Response:
        login = ctx.params["login"]
        permission = self._permissions.get((_repo_key(ctx.repo), login.lower()), "read")
        if permission is None:
            raise _not_found()
        return _Response(
            200, {"permission": permission, "role_name": permission, "user": self._user_json(login)}
        )

    def _get_membership(self, ctx: _Context) -> _Response:
        org, team, login = ctx.params["org"], ctx.params["team"], ctx.params["login"]
        if (org.lower(), team.lower(), login.lower()) not in self._team_members:
            raise _not_found()
        return _Response(
            200,
            {
                "state": "active",
                "role": "member",
                "url": self._api(f"/orgs/{org}/teams/{team}/memberships/{login}"),
            },
        )

    def _run_json(self, run: _Run) -> dict[str, Any]:
        repo = self._display(run.repo)
        return {
            "id": run.id,
            "name": run.workflow.removesuffix(".yml"),
            "path": f".github/workflows/{run.workflow}",
            "workflow_id": _workflow_id(run.workflow),
            "event": run.event,
            "head_sha": run.head_sha,
            "head_branch": run.head_branch or None,
            "repository": {"full_name": repo},
            "head_repository": {"full_name": run.head_repo or repo},
            "status": run.status,
            "conclusion": run.conclusion if run.status == "completed" else None,
            "run_attempt": run.attempt,
            "run_started_at": run.started_at,
            "created_at": run.created_at,
            "url": self._api(f"/repos/{repo}/actions/runs/{run.id}"),
            "html_url": f"{HTML_BASE}/{repo}/actions/runs/{run.id}",
        }

    def _get_run(self, ctx: _Context) -> _Response:
        run = self._runs.get((_repo_key(ctx.repo), ctx.int_param("run")))
        if run is None:
            raise _not_found()
        return _Response(200, self._run_json(run))

    def _list_workflow_runs(self, ctx: _Context) -> _Response:
        key, workflow = _repo_key(ctx.repo), ctx.params["workflow"]
        event, head_sha, branch = ctx.first("event"), ctx.first("head_sha"), ctx.first("branch")
        found = [
            self._run_json(r)
            for (repo_key, _), r in sorted(self._runs.items(), key=lambda item: -item[1].id)
            if repo_key == key
            and workflow in (str(_workflow_id(r.workflow)), r.workflow)
            and (event is None or r.event == event)
            and (head_sha is None or r.head_sha == head_sha)
            and (branch is None or r.head_branch == branch)
        ]
        per_page = _parse_int(ctx.first("per_page"), _DEFAULT_PER_PAGE)
        per_page = _DEFAULT_PER_PAGE if per_page < 1 else min(per_page, _MAX_PER_PAGE)
        page = max(1, _parse_int(ctx.first("page"), 1))
        chunk = found[(page - 1) * per_page : page * per_page]
        return _Response(200, {"total_count": len(found), "workflow_runs": chunk})

    def _compare(self, ctx: _Context) -> _Response:
        key = _repo_key(ctx.repo)
        base, head = ctx.params["base"], ctx.params["head"]
        listed = self._mirror(key, "diff", "--name-status", "-M", f"{base}...{head}")
        if listed is None:
            raise _not_found()
        files = []
        for line in listed.decode().splitlines():
            status, *names = line.split("\t")
            entry: dict[str, Any] = {"filename": names[-1], "status": status[:1]}
            if status.startswith("R"):
                entry["previous_filename"] = names[0]
            files.append(entry)
        return _Response(200, {"status": "ahead", "files": files[:300]})

    def _list_statuses(self, ctx: _Context) -> _Response:
        key, sha = _repo_key(ctx.repo), ctx.params["sha"]
        found = [
            {
                **dataclasses.asdict(status),
                "creator": {"login": status.creator},
                "created_at": status.created_at,
            }
            for repo_key, status in reversed(self._statuses)
            if repo_key == key and status.sha == sha
        ]
        per_page = min(_parse_int(ctx.first("per_page"), _DEFAULT_PER_PAGE), _MAX_PER_PAGE)
        return _Response(200, found[:per_page])

    def _create_status(self, ctx: _Context) -> _Response:
        body = ctx.body if isinstance(ctx.body, dict) else {}
        state = body.get("state")
        if state not in ("pending", "success", "failure", "error"):
            raise _HttpError(422, "Validation Failed")
        status = Status(
            sha=ctx.params["sha"],
            state=state,
            context=str(body.get("context") or "default"),
            description=str(body.get("description") or ""),
            target_url=body.get("target_url"),
            creator=self.login,
            created_at=self._tick(),
        )
        self._statuses.append((_repo_key(ctx.repo), status))
        return _Response(201, {"id": len(self._statuses), **dataclasses.asdict(status)})

    def _artifact_json(self, artifact: _Artifact) -> dict[str, Any]:
        run = self._runs.get((artifact.repo, artifact.run_id))
        api = self._api(f"/repos/{self._display(artifact.repo)}/actions/artifacts/{artifact.id}")
        return {
            "id": artifact.id,
            "name": artifact.name,
            "size_in_bytes": artifact.listed_size or len(artifact.archive),
            "expired": artifact.expired,
            "created_at": artifact.created_at,
            "updated_at": artifact.created_at,
            "url": api,
            "archive_download_url": f"{api}/zip",
            "workflow_run": {
                "id": artifact.run_id,
                "head_sha": artifact.head_sha,
                "head_branch": run.head_branch if run is not None else None,
            },
        }

    def _list_artifacts(self, ctx: _Context) -> _Response:
        key, run = _repo_key(ctx.repo), ctx.int_param("run")
        name = ctx.first("name")
        found = [
            self._artifact_json(a)
            for a in self._artifacts.values()
            if a.repo == key and a.run_id == run and (name is None or a.name == name)
        ]
        return _Response(200, {"total_count": len(found), "artifacts": found})

    def _artifact_zip(self, ctx: _Context) -> _Response:
        artifact = self._artifacts.get(ctx.int_param("id"))
        if artifact is None or artifact.repo != _repo_key(ctx.repo):
            raise _not_found()
        port = self.origin.rsplit(":", 1)[1]
        location = f"http://localhost:{port}{self.prefix}/_storage/artifacts/{artifact.id}"
        return _Response(302, None, {"location": location})

    def _storage(
        self, artifact_id: int, method: str, path: str, headers: dict[str, str]
    ) -> _Response:
        self.storage_requests.append(
            RecordedRequest(method=method, path=path, query={}, headers=headers, body=None)
        )
        artifact = self._artifacts.get(artifact_id)
        if artifact is None or method != "GET":
            return _Response(404, raw=b"not found")
        return _Response(200, raw=artifact.archive, headers={"content-type": "application/zip"})

    def _get_pull(self, ctx: _Context) -> _Response:
        pull = self._pulls.get((_repo_key(ctx.repo), ctx.int_param("number")))
        if pull is None:
            raise _not_found()
        return _Response(200, self._pull_json(pull))

    def _get_issue(self, ctx: _Context) -> _Response:
        number = self._require_issue(ctx)
        return _Response(200, self._issue_json(ctx.repo, number))

    def _list_comments(self, ctx: _Context) -> _Response:
        number = self._require_issue(ctx)
        items = self._comments_of(_repo_key(ctx.repo), number)
        since = ctx.first("since")
        if since:
            items = [c for c in items if c.updated_at >= since]
        per_page = _parse_int(ctx.first("per_page"), _DEFAULT_PER_PAGE)
        per_page = _DEFAULT_PER_PAGE if per_page < 1 else min(per_page, _MAX_PER_PAGE)
        page = max(1, _parse_int(ctx.first("page"), 1))
        chunk = items[(page - 1) * per_page : page * per_page]
        headers: dict[str, str] = {}
        link = self._link_header(ctx, page, per_page, len(items))
        if link:
            headers["link"] = link
        payload = [self._comment_json(ctx.repo, number, c) for c in chunk]
        return _Response(200, payload, headers)

    def _link_header(self, ctx: _Context, page: int, per_page: int, total: int) -> str:
        last = max(1, math.ceil(total / per_page))
        if last == 1 and page == 1:
            return ""
        split = urlsplit(ctx.raw_path)
        extra = [
            (k, v)
            for k, values in parse_qs(split.query, keep_blank_values=True).items()
            if k not in {"page", "per_page"}
            for v in values
        ]
        base = f"{self.origin}{split.path}"

        def url(target: int) -> str:
            return f"{base}?{urlencode([*extra, ('per_page', per_page), ('page', target)])}"

        rels: list[tuple[str, int]] = []
        if page > 1:
            rels.append(("prev", min(page - 1, last)))
        if page < last:
            rels += [("next", page + 1), ("last", last)]
        if page > 1:
            rels.append(("first", 1))
        return ", ".join(f'<{url(target)}>; rel="{rel}"' for rel, target in rels)

    def _create_comment(self, ctx: _Context) -> _Response:
        number = self._require_issue(ctx)
        text = ctx.body_text()
        comment = self._store_comment(ctx.repo, number, text, self.login)
        data = self._comment_json(ctx.repo, number, comment)
        return _Response(201, data, {"location": data["url"]})

    def _get_comment(self, ctx: _Context) -> _Response:
        number, comment = self._find_comment(ctx)
        return _Response(200, self._comment_json(ctx.repo, number, comment))

    def _edit_comment(self, ctx: _Context) -> _Response:
        number, comment = self._find_comment(ctx)
        comment.body = ctx.body_text()
        comment.updated_at = self._tick()
        return _Response(200, self._comment_json(ctx.repo, number, comment))

    def _delete_comment(self, ctx: _Context) -> _Response:
        _, comment = self._find_comment(ctx)
        del self._comments[comment.id]
        return _Response(204)

    def _get_contents(self, ctx: _Context) -> _Response:
        key = _repo_key(ctx.repo)
        ref = ctx.first("ref") or "main"
        path = ctx.params.get("path", "").strip("/")
        tree = self._git_tree_at(key, ref)
        if tree is not None:
            return self._contents_of_tree(ctx.repo, ref, path, tree)
        file = self._files.get((key, ref, path))
        if file is None and not any(k == key and r == ref for k, r, _ in self._files):
            mirrored = self._mirrored_file(key, ref, path)
            if mirrored is not None:
                return _Response(200, self._content_json(ctx.repo, ref, path, mirrored))
        if file is not None and file.target is not None:
            path, file = file.target, self._files.get((key, ref, file.target))
            if file is None:
                raise _not_found()
        if file is not None:
            return _Response(200, self._content_json(ctx.repo, ref, path, file))
        prefix = f"{path}/" if path else ""
        children: dict[str, _File | None] = {}
        for repo_key, file_ref, file_path in sorted(self._files):
            if repo_key != key or file_ref != ref or not file_path.startswith(prefix):
                continue
            head, sep, _ = file_path[len(prefix) :].partition("/")
            child = prefix + head
            children[child] = None if sep else self._files[(repo_key, file_ref, file_path)]
        if not children:
            raise _not_found()
        listing = [self._content_json(ctx.repo, ref, p, f) for p, f in children.items()]
        for entry in listing:
            entry.pop("content", None)
            entry.pop("encoding", None)
        return _Response(200, listing)

    def _get_commit(self, ctx: _Context) -> _Response:
        sha = ctx.params["sha"]
        key = _repo_key(ctx.repo)
        if (key, sha) not in self._commits:
            found = self._commit_of(key, sha)
            if found is None:
                raise _not_found()
            return _Response(200, self._git_commit_json(ctx.repo, *found))
        api = self._api(f"/repos/{self._display(ctx.repo)}")
        return _Response(
            200,
            {
                "sha": sha,
                "url": f"{api}/commits/{sha}",
                "html_url": f"{HTML_BASE}/{self._display(ctx.repo)}/commit/{sha}",
                "commit": {"message": "a commit", "tree": {"sha": _blob_sha(sha.encode())}},
                "parents": [],
                "files": [],
            },
        )

    def _get_blob(self, ctx: _Context) -> _Response:
        key = _repo_key(ctx.repo)
        data = self._blobs.get((key, ctx.params["sha"]))
        if data is not None:
            return _Response(
                200,
                {
                    "sha": ctx.params["sha"],
                    "size": len(data),
                    "encoding": "base64",
                    "content": base64.encodebytes(data).decode("ascii"),
                },
            )
        for (repo_key, _, _), file in self._files.items():
            if repo_key == key and file.sha == ctx.params["sha"]:
                return _Response(
                    200,
                    {
                        "sha": file.sha,
                        "size": len(file.content),
                        "encoding": "base64",
                        "content": base64.encodebytes(file.content).decode("ascii"),
                        "url": self._api(f"/repos/{self._display(ctx.repo)}/git/blobs/{file.sha}"),
                    },
                )
        raise _not_found()

    # ------------------------------------------------------------------ git data

    def _store_blob(self, key: str, data: bytes) -> str:
        sha = _blob_sha(data)
        self._blobs[(key, sha)] = data
        return sha

    def _store_commit(
        self, key: str, tree: dict[str, str], parents: list[str], message: str
    ) -> str:
        body = json.dumps([sorted(tree.items()), parents, message, self._tick()]).encode()
        sha = hashlib.sha1(b"commit " + body, usedforsecurity=False).hexdigest()
        self._git_commits[(key, sha)] = _GitCommit(tree=tree, parents=parents, message=message)
        self._commits.add((key, sha))
        return sha

    def _git_tree_at(self, key: str, ref: str) -> dict[str, str] | None:
        """The files of a branch or commit of the fake's own git data; None if not one."""
        sha = self._refs.get((key, f"heads/{ref}"), ref)
        commit = self._git_commits.get((key, sha))
        return None if commit is None else commit.tree

    def _contents_of_tree(self, repo: str, ref: str, path: str, tree: dict[str, str]) -> _Response:
        key = _repo_key(repo)
        if path in tree:
            file = _File(content=self._blobs[(key, tree[path])], sha=tree[path])
            return _Response(200, self._content_json(repo, ref, path, file))
        prefix = f"{path}/" if path else ""
        names = sorted({p[len(prefix) :].split("/", 1)[0] for p in tree if p.startswith(prefix)})
        if not names:
            raise _not_found()
        listing = []
        for name in names:
            child = prefix + name
            file = (
                _File(content=self._blobs[(key, tree[child])], sha=tree[child])
                if child in tree
                else None
            )
            entry = self._content_json(repo, ref, child, file)
            entry.pop("content", None)
            entry.pop("encoding", None)
            listing.append(entry)
        return _Response(200, listing)

    def _mirror(self, key: str, *args: str) -> bytes | None:
        folder = self._mirrors.get(key)
        if folder is None:
            return None
        done = subprocess.run(["git", "-C", folder, *args], capture_output=True, check=False)
        return done.stdout if done.returncode == 0 else None

    def _mirrored_file(self, key: str, ref: str, path: str) -> _File | None:
        if not re.fullmatch(r"[0-9a-f]{40}", ref) or not path:
            return None
        kind = self._mirror(key, "cat-file", "-t", f"{ref}:{path}")
        if kind is None or kind.strip() != b"blob":
            return None
        data = self._mirror(key, "cat-file", "blob", f"{ref}:{path}")
        return None if data is None else _File(content=data, sha=_blob_sha(data))

    def _commit_of(self, key: str, sha: str) -> tuple[str, list[str]] | None:
        """A commit's id and parents: the fake's own git data, else the mirrored repository."""
        own = self._git_commits.get((key, sha))
        if own is not None:
            return sha, own.parents
        if not re.fullmatch(r"[0-9a-f]{40}", sha):
            return None
        raw = self._mirror(key, "cat-file", "-p", f"{sha}^{{commit}}")
        if raw is None:
            return None
        parents = [
            line.split()[1].decode()
            for line in raw.split(b"\n\n", 1)[0].splitlines()
            if line.startswith(b"parent ")
        ]
        return sha, parents

    def _git_commit_json(self, repo: str, sha: str, parents: list[str]) -> dict[str, Any]:
        api = self._api(f"/repos/{self._display(repo)}")
        return {
            "sha": sha,
            "url": f"{api}/git/commits/{sha}",
            "tree": {"sha": _blob_sha(f"tree:{sha}".encode())},
            "parents": [{"sha": p, "url": f"{api}/git/commits/{p}"} for p in parents],
            "commit": {"message": "a commit", "tree": {"sha": _blob_sha(sha.encode())}},
            "files": [],
        }

    def _get_ref(self, ctx: _Context) -> _Response:
        sha = self._refs.get((_repo_key(ctx.repo), f"heads/{ctx.params['branch']}"))
        if sha is None:
            raise _not_found()
        return _Response(
            200,
            {
                "ref": f"refs/heads/{ctx.params['branch']}",
                "object": {"type": "commit", "sha": sha},
            },
        )

    def _get_git_commit(self, ctx: _Context) -> _Response:
        found = self._commit_of(_repo_key(ctx.repo), ctx.params["sha"])
        if found is None:
            raise _not_found()
        data = self._git_commit_json(ctx.repo, *found)
        own = self._git_commits.get((_repo_key(ctx.repo), found[0]))
        if own is not None:
            data["tree"] = {"sha": f"tree-of-{found[0]}"}
            data["message"] = own.message
        return _Response(200, data)

    def _create_blob(self, ctx: _Context) -> _Response:
        body = ctx.body if isinstance(ctx.body, dict) else {}
        if body.get("encoding") != "base64" or not isinstance(body.get("content"), str):
            raise _HttpError(422, "Validation Failed")
        sha = self._store_blob(_repo_key(ctx.repo), base64.b64decode(body["content"]))
        return _Response(201, {"sha": sha, "url": self._api(f"/repos/{ctx.repo}/git/blobs/{sha}")})

    def _create_tree(self, ctx: _Context) -> _Response:
        key = _repo_key(ctx.repo)
        body = ctx.body if isinstance(ctx.body, dict) else {}
        base = str(body.get("base_tree") or "")
        tree: dict[str, str] = {}
        if base:
            owner = base.removeprefix("tree-of-")
            if (key, owner) not in self._git_commits:
                raise _HttpError(422, "base_tree is not a valid tree")
            tree = dict(self._git_commits[(key, owner)].tree)
        for entry in body.get("tree") or []:
            path = str(entry.get("path") or "")
            if entry.get("sha") is None:
                if path not in tree:
                    raise _HttpError(422, f"GitRPC::BadObjectState: {path} is not in the tree")
                del tree[path]
            elif (key, entry["sha"]) not in self._blobs:
                raise _HttpError(422, "tree.sha is not a valid blob")
            else:
                tree[path] = entry["sha"]
        sha = f"tree{len(self._trees)}"
        self._trees[(key, sha)] = tree
        return _Response(201, {"sha": sha})

    def _create_git_commit(self, ctx: _Context) -> _Response:
        key = _repo_key(ctx.repo)
        body = ctx.body if isinstance(ctx.body, dict) else {}
        tree = self._trees.get((key, str(body.get("tree"))))
        parents = [str(p) for p in body.get("parents") or []]
        if tree is None or any((key, p) not in self._git_commits for p in parents):
            raise _HttpError(422, "Validation Failed")
        sha = self._store_commit(key, tree, parents, str(body.get("message") or ""))
        return _Response(201, {"sha": sha})

    def _refuse_protected(self, key: str, branch: str) -> None:
        if (key, branch) in self._protected:
            raise _HttpError(422, f"Protected branch update failed for refs/heads/{branch}.")

    def _create_ref(self, ctx: _Context) -> _Response:
        key = _repo_key(ctx.repo)
        body = ctx.body if isinstance(ctx.body, dict) else {}
        ref, sha = str(body.get("ref") or ""), str(body.get("sha") or "")
        branch = ref.removeprefix("refs/heads/")
        self._refuse_protected(key, branch)
        if (key, f"heads/{branch}") in self._refs:
            raise _HttpError(422, "Reference already exists")
        if (key, sha) not in self._git_commits:
            raise _HttpError(422, "Object does not exist")
        self._refs[(key, f"heads/{branch}")] = sha
        return _Response(201, {"ref": ref, "object": {"type": "commit", "sha": sha}})

    def _is_ancestor(self, key: str, ancestor: str, commit: str) -> bool:
        seen, todo = set(), [commit]
        while todo:
            current = todo.pop()
            if current == ancestor:
                return True
            if current in seen or (key, current) not in self._git_commits:
                continue
            seen.add(current)
            todo += self._git_commits[(key, current)].parents
        return False

    def _update_ref(self, ctx: _Context) -> _Response:
        key, branch = _repo_key(ctx.repo), ctx.params["branch"]
        body = ctx.body if isinstance(ctx.body, dict) else {}
        sha = str(body.get("sha") or "")
        self._refuse_protected(key, branch)
        tip = self._refs.get((key, f"heads/{branch}"))
        if tip is None:
            raise _HttpError(422, "Reference does not exist")
        if (key, sha) not in self._git_commits:
            raise _HttpError(422, "Object does not exist")
        if not body.get("force") and not self._is_ancestor(key, tip, sha):
            raise _HttpError(422, "Update is not a fast forward")
        self._refs[(key, f"heads/{branch}")] = sha
        return _Response(200, {"ref": f"refs/heads/{branch}", "object": {"sha": sha}})

    def _put_contents(self, ctx: _Context) -> _Response:
        key = _repo_key(ctx.repo)
        body = ctx.body if isinstance(ctx.body, dict) else {}
        branch = str(body.get("branch") or "main")
        self._refuse_protected(key, branch)
        data = base64.b64decode(str(body.get("content") or ""))
        sha = self.write_branch(ctx.repo, branch, {ctx.params["path"]: data})
        return _Response(200, {"commit": {"sha": sha}})

    def _list_repo_artifacts(self, ctx: _Context) -> _Response:
        key, name = _repo_key(ctx.repo), ctx.first("name")
        found = [
            self._artifact_json(a)
            for a in sorted(self._artifacts.values(), key=lambda a: -a.id)
            if a.repo == key and (name is None or a.name == name)
        ]
        per_page = min(_parse_int(ctx.first("per_page"), _DEFAULT_PER_PAGE), _MAX_PER_PAGE)
        return _Response(200, {"total_count": len(found), "artifacts": found[:per_page]})


def _workflow_id(workflow: str) -> int:
    """The id the fake gives a workflow file (GitHub's ids are numbers; its file name works too)."""
    return 7000 + zlib.crc32(workflow.encode()) % 1000


def _decode_body(raw: bytes) -> Any:
    if not raw:
        return None
    text = raw.decode("utf-8", errors="replace")
    try:
        return json.loads(text)
    except ValueError:
        return text


def _parse_int(value: str | None, default: int) -> int:
    if value is None:
        return default
    try:
        return int(value)
    except ValueError:
        return default


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    fake: FakeGitHub

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Record unexpected errors on ``fake.errors``; stay silent on client disconnects."""
        exc = sys.exc_info()[1]
        if exc is not None and not isinstance(exc, ConnectionError | TimeoutError):
            self.fake._record_error(exc)


class _RequestHandler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.0"
    server_version = "FakeGitHub/1.0"
    sys_version = ""

    def log_message(self, format: str, *args: Any) -> None:
        """Silence the default stderr access log."""

    def _dispatch(self) -> None:
        fake = self.server.fake
        length = _parse_int(self.headers.get("content-length"), 0)
        raw_body = self.rfile.read(length) if length > 0 else b""
        headers = {k.lower(): v for k, v in self.headers.items()}
        try:
            response = fake._handle(self.command, self.path, headers, raw_body)
        except Exception as exc:
            fake._record_error(exc)
            message = f"FakeGitHub internal error: {exc!r}"
            response = _Response(500, {"message": message, "documentation_url": DOCS_URL})
        self._send(fake, response)

    def _send(self, fake: FakeGitHub, response: _Response) -> None:
        body = b""
        if response.raw is not None:
            body = response.raw
        elif response.status not in (204, 302):
            body = json.dumps(response.payload).encode("utf-8")
        headers = {
            "content-type": "application/json; charset=utf-8",
            "content-length": str(len(body)),
            "x-ratelimit-limit": "5000",
            "x-ratelimit-remaining": "4999",
            "x-ratelimit-used": "1",
            "x-ratelimit-reset": str(int(time.time()) + 3600),
            "x-ratelimit-resource": "core",
            "x-github-request-id": fake._next_request_id(),
            "x-github-media-type": "github.v3; format=json",
        }
        headers.update({k.lower(): v for k, v in response.headers.items()})
        self.send_response(response.status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        if body and self.command != "HEAD":
            with contextlib.suppress(OSError):
                self.wfile.write(body)

    do_GET = _dispatch
    do_POST = _dispatch
    do_PATCH = _dispatch
    do_PUT = _dispatch
    do_DELETE = _dispatch

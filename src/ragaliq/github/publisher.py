"""Publishing the PR comment: one comment per marker, created once and then edited in place.

The comment is found by its hidden marker (its first line) and by its author, so that a quote of
our comment by someone else is never touched. Every request goes through PyGithub with its own
retry switched off; transient failures (5xx, a dropped connection) are retried here a bounded
number of times, and a create is never retried blindly: the comments are listed again first, since
a POST that failed on the way back may have landed.
"""

from __future__ import annotations

import base64
import binascii
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, Protocol, TypeVar
from urllib.parse import urlsplit

from github import (
    Auth,
    Github,
    GithubException,
    RateLimitExceededException,
    UnknownObjectException,
)
from github.ContentFile import ContentFile
from github.Issue import Issue
from github.IssueComment import IssueComment

from ragaliq import __version__
from ragaliq.errors import PublishError

__all__ = [
    "DEFAULT_API_URL",
    "CommentForbiddenError",
    "CommentPublisher",
    "GitHubPublisher",
    "PublishResult",
    "read_file_at",
]

DEFAULT_API_URL = "https://api.github.com"
RETRYABLE_STATUS = frozenset({500, 502, 503, 504})
BACKOFF_BASE_S = 1.0
BACKOFF_CAP_S = 8.0
PER_PAGE = 100
_REPOSITORY = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")
_FORK_HINT = (
    "pull requests from forks get a read-only GITHUB_TOKEN; see the README's guidance on fork PRs"
)

T = TypeVar("T")
_Step = Literal["list", "create", "edit"]


class CommentForbiddenError(PublishError):
    """The token may read the pull request but not write comments on it (a fork PR, typically)."""


@dataclass(frozen=True, kw_only=True)
class PublishResult:
    """What :meth:`CommentPublisher.upsert` did.

    Attributes:
        action: ``created`` for a new comment, ``updated`` for an edit in place, ``unchanged`` when
            the comment already had the body.
        url: The comment's ``html_url``.
        comment_id: The comment's numeric id.
    """

    action: Literal["created", "updated", "unchanged"]
    url: str
    comment_id: int


class CommentPublisher(Protocol):
    """Something that keeps one PR comment per marker up to date."""

    def upsert(self, *, body: str, marker: str) -> PublishResult:
        """Create the comment marked ``marker``, or edit it to ``body`` if it exists."""
        ...


class GitHubPublisher:
    """Publishes the comment on a pull request through the GitHub REST API (or GHES).

    Args:
        token: The token to authenticate with (the action's ``github-token`` input).
        repository: ``owner/name`` of the repository the pull request belongs to.
        pr_number: The pull request's number.
        api_url: The REST API root; ``GITHUB_API_URL`` on GitHub Enterprise Server, e.g.
            ``https://ghe.example/api/v3``.
        max_attempts: Attempts per request, counting the first, when GitHub answers 5xx or the
            connection fails.
        sleep: Waits between attempts; injectable so tests do not wait.
        github: A client to use instead of building one (``token`` and ``api_url`` are then
            unused); :meth:`close` leaves it open.

    Raises:
        PublishError: the token, repository, PR number or API URL cannot be used.
        ValueError: ``max_attempts`` is below 1.
    """

    def __init__(
        self,
        *,
        token: str,
        repository: str,
        pr_number: int,
        api_url: str = DEFAULT_API_URL,
        max_attempts: int = 3,
        sleep: Callable[[float], None] = time.sleep,
        github: Github | None = None,
    ) -> None:
        """Validate the target and build (or adopt) the PyGithub client."""
        if max_attempts < 1:
            raise ValueError(f"max_attempts must be at least 1, got {max_attempts}")
        _check_repository(repository)
        if isinstance(pr_number, bool) or not isinstance(pr_number, int) or pr_number < 1:
            raise PublishError(
                f"the pull request number must be a positive integer, not {pr_number!r}"
            )
        self._repository = repository
        self._pr_number = pr_number
        self._api_url = api_url
        self._max_attempts = max_attempts
        self._sleep = sleep
        self._owns_github = github is None
        self._github = github if github is not None else _build_github(token=token, api_url=api_url)
        self._issue: Issue | None = None
        self._login: str | None = None
        self._login_known = False

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(repository={self._repository!r}, "
            f"pr_number={self._pr_number}, api_url={self._api_url!r})"
        )

    def __enter__(self) -> GitHubPublisher:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the connections of the client this publisher built (not of an injected one)."""
        if self._owns_github:
            self._github.close()

    def upsert(self, *, body: str, marker: str) -> PublishResult:
        """Make our comment marked ``marker`` read ``body``, creating it if there is none.

        Every comment on the pull request is read (all pages); ours is one whose first line is
        ``marker`` and whose author is the token's user (any bot, when the token may not ask who
        it is, as app and Actions tokens may not). If there are several, the newest is edited.

        Args:
            body: The whole comment; its first line must be ``marker``.
            marker: The hidden marker identifying this comment (see ``comment_marker``).

        Returns:
            What was done, with the comment's URL and id.

        Raises:
            CommentForbiddenError: the token cannot write comments (a fork PR's read-only token).
            PublishError: the body lacks its marker, or GitHub refused or kept failing.
            ValueError: ``marker`` is empty or spans several lines.
        """
        if not marker.strip() or _first_line(marker) != marker:
            raise ValueError(f"the marker must be one non-empty line, got {marker!r}")
        if _first_line(body) != marker:
            raise PublishError(
                "the rendered comment lacks its marker: its first line must be exactly "
                f"{marker!r}; if you use a custom comment template, keep the marker line first"
            )
        existing = self._find(marker)
        if existing is None:
            return self._create(body=body, marker=marker)
        return self._settle(existing, body=body, marker=marker, fresh=False)

    def _settle(
        self, comment: IssueComment, *, body: str, marker: str, fresh: bool
    ) -> PublishResult:
        if comment.body == body:
            return _result("created" if fresh else "unchanged", comment)

        def edit() -> bool:
            try:
                comment.edit(body)
            except UnknownObjectException:
                return False
            return True

        if self._run(edit, step="edit"):
            return _result("updated", comment)
        return self._create(body=body, marker=marker)

    def _create(self, *, body: str, marker: str) -> PublishResult:
        issue = self._get_issue()

        def recover() -> PublishResult | None:
            landed = self._find(marker)
            if landed is None:
                return None
            return self._settle(landed, body=body, marker=marker, fresh=True)

        return self._run(
            lambda: _result("created", issue.create_comment(body)), step="create", recover=recover
        )

    def _find(self, marker: str) -> IssueComment | None:
        issue = self._get_issue()
        login = self._our_login()

        def ours(comment: IssueComment) -> bool:
            user = comment.user
            if user is None or _first_line(comment.body or "") != marker:
                return False
            if login is None:  # an app or Actions token: ours are the bots' marker comments
                return user.type == "Bot"
            return user.login.casefold() == login.casefold()

        def scan() -> IssueComment | None:
            newest: IssueComment | None = None
            for comment in issue.get_comments():
                if ours(comment) and (newest is None or comment.id > newest.id):
                    newest = comment
            return newest

        return self._run(scan, step="list")

    def _get_issue(self) -> Issue:
        if self._issue is None:
            self._issue = self._run(
                lambda: self._github.get_repo(self._repository).get_issue(self._pr_number),
                step="list",
            )
        return self._issue

    def _our_login(self) -> str | None:
        """The token's login; None when GitHub will not say, as for app and Actions tokens.

        Only that refusal (403) leaves the login unknown: any other failure stops the publish,
        since guessing wrong would post a second comment instead of editing ours.
        """
        if not self._login_known:
            try:
                self._login = _retrying(
                    lambda: self._github.get_user().login,
                    attempts=self._max_attempts,
                    sleep=self._sleep,
                )
            except GithubException as exc:
                if exc.status != 403:
                    raise self._error(exc, "list") from exc
                self._login = None
            except OSError as exc:
                raise _unreachable(self._api_url, self._max_attempts) from exc
            self._login_known = True
        return self._login

    def _run(
        self,
        operation: Callable[[], T],
        *,
        step: _Step,
        recover: Callable[[], T | None] | None = None,
    ) -> T:
        try:
            return _retrying(
                operation, attempts=self._max_attempts, sleep=self._sleep, recover=recover
            )
        except GithubException as exc:
            raise self._error(exc, step) from exc
        except OSError as exc:
            raise _unreachable(self._api_url, self._max_attempts) from exc

    def _error(self, exc: GithubException, step: _Step) -> PublishError:
        status = exc.status
        detail = _detail(exc)
        where = f"PR #{self._pr_number} in {self._repository}"
        doing = {
            "list": f"reading the comments of {where}",
            "create": f"creating the comment on {where}",
            "edit": f"editing the comment on {where}",
        }[step]
        if status == 401:
            return _bad_token(detail)
        if isinstance(exc, RateLimitExceededException):
            return PublishError(
                f"GitHub's API rate limit was hit while {doing} ({status}: {detail}); "
                "re-run the job once the limit resets"
            )
        if status == 403 and step in ("create", "edit"):
            return CommentForbiddenError(
                f"the token cannot write comments on {where} (403: {detail}); {_FORK_HINT}, and "
                "other workflows need `permissions: pull-requests: write`"
            )
        if status == 403:
            return PublishError(
                f"the token may not read {where} (403: {detail}); give the workflow "
                "`permissions: pull-requests: write` or pass a token with access to the repository"
            )
        if status == 404:
            return PublishError(
                f"PR #{self._pr_number} was not found in {self._repository} (404): check the "
                "repository and the pull request number, and that the token can see the repository"
            )
        if status == 422:
            return PublishError(f"GitHub refused the comment on {where} (422): {detail}")
        if status in RETRYABLE_STATUS:
            return PublishError(
                f"GitHub answered {status} ({detail}) {self._max_attempts} times while {doing}; "
                "it may be having an outage: re-run the job later"
            )
        return PublishError(f"GitHub answered {status} while {doing}: {detail}")


def read_file_at(
    *,
    token: str,
    repository: str,
    path: str,
    ref: str,
    api_url: str = DEFAULT_API_URL,
    github: Github | None = None,
    max_attempts: int = 3,
    sleep: Callable[[float], None] = time.sleep,
) -> str | None:
    """The text of ``path`` at commit (or branch, or tag) ``ref``, through the Contents API.

    Args:
        token: The token to authenticate with.
        repository: ``owner/name``.
        path: The file's path from the repository root.
        ref: A commit SHA, branch or tag.
        api_url: The REST API root (``GITHUB_API_URL``).
        github: A client to use instead of building one (``token`` and ``api_url`` are then
            unused); it is left open.
        max_attempts: Attempts, counting the first, when GitHub answers 5xx or the connection fails.
        sleep: Waits between attempts.

    Returns:
        The file decoded as UTF-8, or ``None`` when the path (or the ref) does not exist.

    Raises:
        PublishError: the token is refused, the path is a directory or too large for the Contents
            API, the file is not UTF-8, or GitHub kept failing.
        ValueError: ``max_attempts`` is below 1.
    """
    if max_attempts < 1:
        raise ValueError(f"max_attempts must be at least 1, got {max_attempts}")
    _check_repository(repository)
    where = f"{path} at {ref} in {repository}"
    client = github if github is not None else _build_github(token=token, api_url=api_url)
    try:
        found = _retrying(
            lambda: client.get_repo(repository).get_contents(path.strip("/"), ref=ref),
            attempts=max_attempts,
            sleep=sleep,
        )
    except UnknownObjectException:
        return None
    except GithubException as exc:
        detail = _detail(exc)
        if exc.status == 401:
            raise _bad_token(detail) from exc
        if exc.status in RETRYABLE_STATUS:
            raise PublishError(
                f"GitHub answered {exc.status} ({detail}) {max_attempts} times while reading "
                f"{where}; re-run the job later"
            ) from exc
        raise PublishError(
            f"GitHub answered {exc.status} while reading {where}: {detail}; check that the token "
            "has `contents: read` permission"
        ) from exc
    except OSError as exc:
        raise _unreachable(api_url, max_attempts) from exc
    finally:
        if github is None:
            client.close()
    return _decode_file(found, where=where)


def _decode_file(found: ContentFile | list[ContentFile], *, where: str) -> str:
    if isinstance(found, list) or found.type != "file":
        raise PublishError(f"{where} is a directory, not a file")
    if found.encoding != "base64":
        raise PublishError(
            f"{where} is too large for the Contents API ({found.size} bytes; the limit is 1 MB)"
        )
    try:
        return base64.b64decode(found.content).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError) as exc:
        raise PublishError(f"{where} is not UTF-8 text") from exc


def _retrying(
    operation: Callable[[], T],
    *,
    attempts: int,
    sleep: Callable[[float], None],
    recover: Callable[[], T | None] | None = None,
) -> T:
    attempt = 1
    while True:
        try:
            return operation()
        except GithubException as exc:
            if attempt >= attempts or exc.status not in RETRYABLE_STATUS:
                raise
        except OSError:
            if attempt >= attempts:
                raise
        sleep(min(BACKOFF_BASE_S * 2 ** (attempt - 1), BACKOFF_CAP_S))
        attempt += 1
        if recover is not None and (recovered := recover()) is not None:
            return recovered


def _build_github(*, token: str, api_url: str) -> Github:
    token = token.strip()
    if not token:
        raise PublishError("no GitHub token was given: set the `github-token` input")
    parts = urlsplit(api_url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise PublishError(
            f"the GitHub API URL {api_url!r} is not an http(s) URL; check GITHUB_API_URL "
            "(on GitHub Enterprise Server it looks like https://ghe.example/api/v3)"
        )
    return Github(
        base_url=api_url.rstrip("/"),
        auth=Auth.Token(token),
        user_agent=f"ragaliq-gate/{__version__}",
        per_page=PER_PAGE,
        retry=None,
        seconds_between_requests=0,
        seconds_between_writes=0,
        lazy=True,
    )


def _check_repository(repository: str) -> None:
    if not _REPOSITORY.match(repository):
        raise PublishError(
            "the repository must be given as owner/name (like GITHUB_REPOSITORY), "
            f"not {repository!r}"
        )


def _first_line(text: str) -> str:
    return text.split("\n", 1)[0].removesuffix("\r")


def _result(
    action: Literal["created", "updated", "unchanged"], comment: IssueComment
) -> PublishResult:
    return PublishResult(action=action, url=comment.html_url, comment_id=comment.id)


def _detail(exc: GithubException) -> str:
    data = exc.data
    if isinstance(data, dict):
        parts = [str(data["message"])] if data.get("message") else []
        for error in data.get("errors") or []:
            if isinstance(error, dict):
                text = error.get("message") or error.get("code")
                if text:
                    parts.append(str(text))
            elif error:
                parts.append(str(error))
        if parts:
            return "; ".join(parts)
    return exc.message or f"HTTP {exc.status}"


def _bad_token(detail: str) -> PublishError:
    return PublishError(
        f"GitHub rejected the token (401: {detail}); check the `github-token` input: it must be "
        "a valid token for this GitHub instance (the default is the job's GITHUB_TOKEN)"
    )


def _unreachable(api_url: str, attempts: int) -> PublishError:
    host = urlsplit(api_url).hostname or api_url
    return PublishError(
        f"could not reach the GitHub API at {host} after {attempts} attempts; check the network "
        "and GITHUB_API_URL"
    )

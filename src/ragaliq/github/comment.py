"""The PR comment: one comment per marker, created once and then edited in place.

The comment is found by its hidden marker (its first line) and by its author, so that a quote of
our comment by someone else is never touched. Transient failures are retried (see
:mod:`ragaliq.github.client`), and a create is never retried blindly: the comments are listed
again first, since a POST that failed on the way back may have landed.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, Protocol, TypeVar

from github import Github, GithubException, RateLimitExceededException, UnknownObjectException
from github.Issue import Issue
from github.IssueComment import IssueComment

from ragaliq.errors import CommentForbiddenError, PublishError
from ragaliq.github.client import (
    DEFAULT_API_URL,
    GitHubApi,
    build_github,
    check_repository,
    describe_failure,
    retrying,
    unreachable,
)

__all__ = [
    "ACTIONS_BOT_LOGIN",
    "CommentPublisher",
    "GitHubPublisher",
    "PublishResult",
]

ACTIONS_BOT_LOGIN = "github-actions[bot]"
"""Who the workflow's GITHUB_TOKEN comments as; that token may not ask ``GET /user``."""
_FORK_HINT = (
    "pull requests from forks get a read-only GITHUB_TOKEN; see the README's guidance on fork PRs"
)

T = TypeVar("T")
_Step = Literal["list", "create", "edit"]


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
        bot_login: Whose comments are ours when the token may not ask who it is (``GET /user``
            answers 403 for the workflow's GITHUB_TOKEN and for app tokens).

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
        bot_login: str = ACTIONS_BOT_LOGIN,
    ) -> None:
        """Validate the target and build (or adopt) the PyGithub client."""
        if max_attempts < 1:
            raise ValueError(f"max_attempts must be at least 1, got {max_attempts}")
        problem = check_repository(repository)
        if problem is not None:
            raise PublishError(problem)
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
        if github is None:
            try:
                github = build_github(token=token, api_url=api_url)
            except ValueError as exc:
                raise PublishError(str(exc)) from exc
        self._github = github
        self._issue: Issue | None = None
        self._login: str | None = None
        self._login_known = False
        self._bot_login = bot_login

    @classmethod
    def on(cls, api: GitHubApi, number: int) -> GitHubPublisher:
        """The publisher of pull request ``number`` on ``api``."""
        return cls(
            token=api.token,
            repository=api.repository,
            pr_number=number,
            api_url=api.api_url,
            max_attempts=api.attempts,
        )

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
        ``marker`` and whose author is the token's user (``bot_login``, when the token may not
        ask who it is, as the Actions token may not). If there are several, the newest is edited.

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
            return user.login.casefold() == (login or self._bot_login).casefold()

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
                self._login = retrying(
                    lambda: self._github.get_user().login,
                    attempts=self._max_attempts,
                    sleep=self._sleep,
                )
            except GithubException as exc:
                if exc.status != 403:
                    raise self._error(exc, "list") from exc
                self._login = None
            except OSError as exc:
                raise PublishError(unreachable(self._api_url, self._max_attempts)) from exc
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
            return retrying(
                operation, attempts=self._max_attempts, sleep=self._sleep, recover=recover
            )
        except GithubException as exc:
            raise self._error(exc, step) from exc
        except OSError as exc:
            raise PublishError(unreachable(self._api_url, self._max_attempts)) from exc

    def _error(self, exc: GithubException, step: _Step) -> PublishError:
        where = f"PR #{self._pr_number} in {self._repository}"
        doing = {
            "list": f"reading the comments of {where}",
            "create": f"creating the comment on {where}",
            "edit": f"editing the comment on {where}",
        }[step]
        writing = step in ("create", "edit")
        message = describe_failure(
            exc,
            doing=doing,
            attempts=self._max_attempts,
            forbidden=(
                f"the token cannot write comments on {where}; {_FORK_HINT}, and other workflows "
                "need `permissions: pull-requests: write`"
                if writing
                else f"the token may not read {where}; give the workflow `permissions: "
                "pull-requests: write` or pass a token with access to the repository"
            ),
            not_found=(
                f"PR #{self._pr_number} was not found in {self._repository}: check the "
                "repository and the pull request number, and that the token can see the "
                "repository"
            ),
        )
        if exc.status == 403 and writing and not isinstance(exc, RateLimitExceededException):
            return CommentForbiddenError(message)
        return PublishError(message)


def _first_line(text: str) -> str:
    return text.split("\n", 1)[0].removesuffix("\r")


def _result(
    action: Literal["created", "updated", "unchanged"], comment: IssueComment
) -> PublishResult:
    return PublishResult(action=action, url=comment.html_url, comment_id=comment.id)

"""The GitHub API client: building it, retrying transient failures, and one failure-to-words map.

Every request goes through PyGithub with its own retry and throttling switched off; transient
failures (5xx, a dropped connection) are retried here a bounded number of times with backoff.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import urlsplit

from github import Auth, Github, GithubException, RateLimitExceededException

from ragaliq._version import __version__
from ragaliq.redaction import excerpt

__all__ = [
    "DEFAULT_API_URL",
    "RETRYABLE_STATUS",
    "Get",
    "GitHubApi",
    "build_github",
    "check_repository",
    "describe_failure",
    "detail",
    "json_getter",
    "retrying",
    "unreachable",
]

DEFAULT_API_URL = "https://api.github.com"
RETRYABLE_STATUS = frozenset({500, 502, 503, 504})
BACKOFF_BASE_S = 1.0
BACKOFF_CAP_S = 8.0
PER_PAGE = 100
_REPOSITORY = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")

T = TypeVar("T")
E = TypeVar("E", bound=Exception)


@dataclass(frozen=True, kw_only=True)
class GitHubApi:
    """Where every module of the adapter asks GitHub, built once from the action's settings.

    The token, the repository, the API's URL, and how many times a request is tried.
    """

    token: str
    repository: str
    """``owner/name``."""
    api_url: str = DEFAULT_API_URL
    attempts: int = 3

    def __repr__(self) -> str:
        return f"GitHubApi(repository={self.repository!r}, api_url={self.api_url!r})"

    def client(self) -> Github:
        """A PyGithub client for this API (see :func:`build_github`).

        Raises:
            ValueError: the token is empty or the URL is not an http(s) URL.
        """
        return build_github(token=self.token, api_url=self.api_url)

    def ask(
        self,
        ask: Callable[[Get], T],
        *,
        doing: str,
        error: type[E],
        forbidden: str = "",
        not_found: str = "",
    ) -> T:
        """``ask(get)`` with a client of its own, closed after; each failure one line with the fix.

        Raises:
            E: the API cannot be asked, or refuses (``error`` with :func:`describe_failure`'s
                words, or :func:`unreachable`'s).
        """
        try:
            github = self.client()
        except ValueError as exc:
            raise error(f"{doing} failed: {exc}") from exc
        try:
            return ask(json_getter(github, attempts=self.attempts))
        except GithubException as exc:
            raise error(
                describe_failure(
                    exc,
                    doing=doing,
                    attempts=self.attempts,
                    forbidden=forbidden,
                    not_found=not_found,
                )
            ) from exc
        except OSError as exc:
            raise error(unreachable(self.api_url, self.attempts)) from exc
        finally:
            github.close()


def build_github(*, token: str, api_url: str) -> Github:
    """A PyGithub client for ``api_url`` with its own retries and throttling off.

    Raises:
        ValueError: the token is empty or the URL is not an http(s) URL; the message says which.
    """
    token = token.strip()
    if not token:
        raise ValueError("no GitHub token was given: set the `github-token` input")
    parts = urlsplit(api_url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(
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


def check_repository(repository: str) -> str | None:
    """Why ``repository`` is not ``owner/name``, or None when it is."""
    if _REPOSITORY.match(repository):
        return None
    return (
        f"the repository must be given as owner/name (like GITHUB_REPOSITORY), not {repository!r}"
    )


def retrying(
    operation: Callable[[], T],
    *,
    attempts: int,
    sleep: Callable[[float], None] = time.sleep,
    recover: Callable[[], T | None] | None = None,
) -> T:
    """Run ``operation``, retrying 5xx answers and dropped connections ``attempts`` times in all.

    ``recover`` runs before each retry and may return the result instead (a create that landed
    although its answer was lost).
    """
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


Get = Callable[..., Any]
"""``get(url, parameters=None)``: the JSON of a GET on the API, retried as :func:`retrying` does."""


def json_getter(github: Github, *, attempts: int) -> Get:
    """A GET of the API's JSON through ``github``, retried ``attempts`` times in all."""

    def get(url: str, parameters: dict[str, Any] | None = None) -> Any:
        _, data = retrying(
            lambda: github.requester.requestJsonAndCheck("GET", url, parameters=parameters),
            attempts=attempts,
        )
        return data

    return get


def detail(exc: GithubException) -> str:
    """GitHub's own words about a failure: its message and any listed errors.

    A short, decoded and redacted excerpt: a proxy in front of the API may answer with a page of
    its own, echoing what it was sent.
    """
    return excerpt(_detail(exc))


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


def describe_failure(
    exc: GithubException,
    *,
    doing: str,
    attempts: int,
    forbidden: str = "",
    not_found: str = "",
) -> str:
    """One line for a failed request, with the fix: the one map from GitHub's answers to words.

    Args:
        exc: The failure.
        doing: What was being done, e.g. ``reading the comments of PR #7 in acme/bot``.
        attempts: How many times it was tried.
        forbidden: What a 403 means here and how to fix it.
        not_found: What a 404 means here and how to fix it.
    """
    status = exc.status
    said = detail(exc)
    if status == 401:
        return (
            f"GitHub rejected the token (401: {said}) while {doing}; check the `github-token` "
            "input: it must be a valid token for this GitHub instance (the default is the job's "
            "GITHUB_TOKEN)"
        )
    if isinstance(exc, RateLimitExceededException):
        return (
            f"GitHub's API rate limit was hit while {doing} ({status}: {said}); re-run the job "
            "once the limit resets"
        )
    if status == 403 and forbidden:
        return f"{forbidden} (403: {said})"
    if status == 404 and not_found:
        return f"{not_found} (404: {said})"
    if status in RETRYABLE_STATUS:
        return (
            f"GitHub answered {status} ({said}) {attempts} times while {doing}; it may be having "
            "an outage: re-run the job later"
        )
    return f"GitHub answered {status} while {doing}: {said}"


def unreachable(api_url: str, attempts: int) -> str:
    """The message for an API that could not be reached at all."""
    host = urlsplit(api_url).hostname or api_url
    return (
        f"could not reach the GitHub API at {host} after {attempts} attempts; check the network "
        "and GITHUB_API_URL"
    )

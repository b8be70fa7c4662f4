"""The GitLab API client of the adapter: python-gitlab, one project, and one failure-to-words map.

Every request goes through python-gitlab, which retries transient failures (5xx, 429 after its
``Retry-After``) a bounded number of times; each module asks through :meth:`GitLabApi.ask`, which
turns any failure into one line with the fix.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import quote, urlsplit

import gitlab
from gitlab.exceptions import GitlabError

from ragaliq._version import __version__
from ragaliq.redaction import excerpt

__all__ = ["GitLabApi", "describe"]

T = TypeVar("T")
E = TypeVar("E", bound=Exception)
_TOKEN = (
    "the gate's token (RAGALIQ_GITLAB_TOKEN: a project access token with the `api` scope and "
    "the Developer role)"
)


@dataclass(frozen=True, kw_only=True)
class GitLabApi:
    """Where every module of the adapter asks GitLab: the server, the token, the project."""

    url: str
    """The server (``https://gitlab.example``), as ``CI_SERVER_URL`` names it."""
    token: str
    project: str
    """The project's numeric id (``CI_PROJECT_ID``) or ``group/name`` path."""
    attempts: int = 3

    def __repr__(self) -> str:
        return f"GitLabApi(url={self.url!r}, project={self.project!r})"

    @property
    def project_path(self) -> str:
        """The project as it goes in a URL: ``/projects/<id or encoded path>``."""
        return f"/projects/{quote(str(self.project), safe='')}"

    def client(self) -> gitlab.Gitlab:
        """A python-gitlab client for this server.

        Raises:
            ValueError: the token is empty or the URL is not an http(s) URL.
        """
        if not self.token.strip():
            raise ValueError(f"no GitLab token was given: set {_TOKEN}")
        parts = urlsplit(self.url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"the GitLab URL {self.url!r} is not an http(s) URL")
        return gitlab.Gitlab(
            self.url.rstrip("/"),
            private_token=self.token,
            retry_transient_errors=True,
            user_agent=f"ragaliq-gate/{__version__}",
            per_page=100,
            timeout=60,
        )

    def ask(self, ask: Callable[[gitlab.Gitlab], T], *, doing: str, error: type[E]) -> T:
        """``ask(client)``, its failures each one line with the fix.

        Raises:
            E: the API cannot be asked, or refuses.
        """
        try:
            client = self.client()
        except ValueError as exc:
            raise error(f"{doing} failed: {exc}") from exc
        try:
            return ask(client)
        except GitlabError as exc:
            raise error(describe(exc, doing=doing)) from exc
        except OSError as exc:
            host = urlsplit(self.url).hostname or self.url
            raise error(
                f"could not reach GitLab at {host} while {doing}; check the network"
            ) from exc
        finally:
            client.session.close()

    def get(self, client: gitlab.Gitlab, path: str, **query: Any) -> Any:
        """The JSON of a GET on the project's ``path`` (``""`` for the project itself)."""
        return client.http_get(self.project_path + path, query_data=query or None)

    def all(self, client: gitlab.Gitlab, path: str, *, most: int = 1000, **query: Any) -> list[Any]:
        """Every item of a paginated list of the project's ``path``, at most ``most``."""
        found = client.http_list(self.project_path + path, query_data=query or None, iterator=True)
        out = []
        for item in found:
            out.append(item)
            if len(out) >= most:
                break
        return out


def describe(exc: GitlabError, *, doing: str) -> str:
    """One line for a failed request, with the fix: the one map from GitLab's answers to words."""
    status = exc.response_code
    said = excerpt(str(exc.error_message or exc) or f"HTTP {status}")
    if status == 401:
        return f"GitLab rejected the token (401: {said}) while {doing}; check {_TOKEN}"
    if status == 403:
        return f"GitLab refused {doing} (403: {said}); give {_TOKEN}"
    if status == 404:
        return (
            f"GitLab answered 404 while {doing} ({said}): it does not exist, or {_TOKEN} may "
            "not see it"
        )
    if status == 429:
        return f"GitLab's rate limit was hit while {doing} (429: {said}); re-run the job later"
    if status is not None and status >= 500:
        return f"GitLab answered {status} ({said}) while {doing}; it may be having an outage"
    return f"GitLab answered {status} while {doing}: {said}"

"""A commit's files through the GitHub API, for a checkout that lacks the commit (a shallow clone).

GitHub answers 404 both for a file that does not exist and for a repository the token cannot
read, so a 404 counts as "absent" only once the commit itself has been read with the same token.
A symbolic link is refused, never followed: GitHub serves the target's content for a link to a
file in the repository, which shows as a path other than the one asked for. Every file's content
is hashed and checked against the blob id GitHub names for it.
"""

from __future__ import annotations

import base64
import binascii
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

from github import Github, GithubException, UnknownObjectException
from github.ContentFile import ContentFile
from github.Repository import Repository

from ragaliq.errors import RepositoryError
from ragaliq.git import blob_id
from ragaliq.github.client import (
    GitHubApi,
    check_repository,
    describe_failure,
    retrying,
    unreachable,
)

__all__ = ["ContentsAtCommit"]

T = TypeVar("T")

_PERMISSION = (
    "give the workflow `permissions: contents: read`, or check out the base commit with "
    "`fetch-depth: 0` so that git can read it"
)


@dataclass
class ContentsAtCommit:
    """The files of ``repository`` at commit ``sha``, read with the Contents and Git Data APIs.

    Args:
        api: Where to ask (the token, the repository, the REST API root, the attempts).
        sha: The commit.
        github: A client to use instead of building one; it is left open.
        sleep: Waits between attempts.
        label: How messages name the commit.
    """

    api: GitHubApi
    sha: str
    github: Github | None = None
    sleep: Callable[[float], None] = time.sleep
    label: str = ""
    """How messages name the commit; ``the base commit <sha>`` by default."""
    _commit_checked: bool = field(default=False, init=False)

    @property
    def description(self) -> str:
        return self.label or f"the base commit {self.sha[:12]}"

    @property
    def repository(self) -> str:
        return self.api.repository

    @property
    def attempts(self) -> int:
        return self.api.attempts

    def read(self, path: str, *, limit: int, what: str) -> bytes | None:
        problem = check_repository(self.repository)
        if problem is not None:
            raise RepositoryError(f"{what}: {problem}")
        client = self.github
        if client is None:
            try:
                client = self.api.client()
            except ValueError as exc:
                raise RepositoryError(
                    f"{what}: the checkout lacks {self.description} and the GitHub API cannot "
                    f"be asked ({exc}); check out with `fetch-depth: 0`"
                ) from exc
        try:
            return self._read(client, path, limit=limit, what=what)
        finally:
            if self.github is None:
                client.close()

    def _read(self, client: Github, path: str, *, limit: int, what: str) -> bytes | None:
        where = f"{path} at {self.description} of {self.repository}"
        repo = client.get_repo(self.repository)
        try:
            found = self._call(lambda: repo.get_contents(path, ref=self.sha), where, what)
        except UnknownObjectException:
            self._check_commit(client, what)
            return None
        if isinstance(found, list) or found.type == "dir":
            raise RepositoryError(f"{what}: {where} is a folder, not a file")
        if found.type != "file" or found.path.strip("/") != path:
            raise RepositoryError(
                f"{what}: {path} is a symbolic link at {self.description}; the gate reads only "
                "regular files, so commit the file itself"
            )
        if found.size > limit:
            raise RepositoryError(f"{what}: {path} is over the size limit of {limit:,} bytes")
        return self._content(repo, found, where, what)

    def _content(self, repo: Repository, found: ContentFile, where: str, what: str) -> bytes:
        encoded = found.content if found.encoding == "base64" else None
        if encoded is None:  # over 1 MB: the Contents API leaves the content out
            blob = self._call(
                lambda: repo.get_git_blob(found.sha),
                where,
                what,
            )
            encoded = blob.content
        try:
            data = base64.b64decode(encoded or "")
        except (binascii.Error, ValueError) as exc:
            raise RepositoryError(
                f"{what}: GitHub sent {where} in a form it cannot decode"
            ) from exc
        if blob_id(data, len(found.sha)) != found.sha:
            raise RepositoryError(f"{what}: GitHub sent {where} with content that is not its blob")
        return data

    def _check_commit(self, client: Github, what: str) -> None:
        """Make sure a 404 means "absent": the token can read the commit itself."""
        if self._commit_checked:
            return
        repo = client.get_repo(self.repository)
        where = f"{self.description} of {self.repository}"
        try:
            self._call(lambda: repo.get_commit(self.sha).raw_data, where, what)
        except UnknownObjectException as exc:
            raise RepositoryError(
                f"{what}: GitHub answers 404 for {where}: the commit does not exist or the token "
                f"may not read the repository; {_PERMISSION}"
            ) from exc
        self._commit_checked = True

    def _call(self, operation: Callable[[], T], where: str, what: str) -> T:
        try:
            return retrying(operation, attempts=self.attempts, sleep=self.sleep)
        except UnknownObjectException:
            raise
        except GithubException as exc:
            message = describe_failure(
                exc,
                doing=f"reading {where}",
                attempts=self.attempts,
                forbidden=f"the token may not read {where}; {_PERMISSION}",
            )
            raise RepositoryError(f"{what}: {message}") from exc
        except OSError as exc:
            raise RepositoryError(
                f"{what}: {unreachable(self.api.api_url, self.attempts)}"
            ) from exc

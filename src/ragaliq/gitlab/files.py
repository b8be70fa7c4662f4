"""Files GitLab keeps: a commit's files through the Repository Files API, and a job's artifacts.

:class:`FilesAtCommit` is a :class:`~ragaliq.repository.FileSource`: a file that is absent is
``None`` only once the commit itself is known to exist, so a token that cannot see the project
is never read as "no config at the base". :func:`read_job_file` reads one file of a job's
artifacts into memory, within a size limit, never onto the runner's disk.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import quote

import gitlab
from gitlab.exceptions import GitlabError

from ragaliq.errors import ArtifactError, RepositoryError
from ragaliq.gitlab.client import GitLabApi

__all__ = ["FilesAtCommit", "read_job_file"]

_CHUNK = 1024 * 1024


@dataclass
class FilesAtCommit:
    """The files of the project at commit ``sha``."""

    api: GitLabApi
    sha: str
    label: str = ""
    _commit_known: bool = field(default=False, init=False)

    @property
    def description(self) -> str:
        return self.label or f"the base commit {self.sha[:12]}"

    def read(self, path: str, *, limit: int, what: str) -> bytes | None:
        api = self.api
        url = f"{api.project_path}/repository/files/{quote(path, safe='')}/raw"

        def ask(client: gitlab.Gitlab) -> bytes | None:
            try:
                response = client.http_get(
                    url, query_data={"ref": self.sha}, streamed=True, raw=True
                )
            except GitlabError as exc:
                if exc.response_code != 404:
                    raise
                self._check_commit(client)
                return None
            return _bounded(
                response, limit, f"{what}: {path} at {self.description}", RepositoryError
            )

        return api.ask(ask, doing=f"reading {path} at {self.description}", error=RepositoryError)

    def _check_commit(self, client: gitlab.Gitlab) -> None:
        """A 404 means "absent" only once the token can read the commit itself."""
        if not self._commit_known:
            self.api.get(client, f"/repository/commits/{self.sha}")
            self._commit_known = True


def read_job_file(
    api: GitLabApi, client: gitlab.Gitlab, job: int, path: str, limit: int
) -> bytes | None:
    """One file of job ``job``'s artifacts, within ``limit`` bytes; None when it has none.

    Raises:
        GitlabError: GitLab answered otherwise than "not found".
        ArtifactError: the file is over the limit.
    """
    url = f"{api.project_path}/jobs/{job}/artifacts/{quote(path)}"
    try:
        response = client.http_get(url, streamed=True, raw=True)
    except GitlabError as exc:
        if exc.response_code == 404:
            return None
        raise
    return _bounded(response, limit, f"{path} of job {job}", ArtifactError)


def _bounded(response: object, limit: int, name: str, error: type[Exception]) -> bytes:
    chunks, size = [], 0
    for chunk in response.iter_content(_CHUNK):  # type: ignore[attr-defined]
        size += len(chunk)
        if size > limit:
            raise error(f"{name}: over the size limit of {limit:,} bytes")
        chunks.append(chunk)
    return b"".join(chunks)

"""The dataset handed over by the untrusted zone: one file out of a workflow artifact.

The job that ran the pull request's pipeline uploads the dataset as an artifact; the gate, on a
fresh runner, downloads it through the REST API from that run (``workflow_run.id``, or this run
for the two jobs of one ``pull_request`` workflow). The artifact is untrusted data:

- its size is bounded before and while it is downloaded, and the dataset's while it is unpacked;
- every entry's name is checked first: an absolute path, a ``..``, a backslash, a symbolic link
  or a name given twice refuses the whole artifact;
- only the dataset is unpacked, into a private folder outside the workspace: nothing else in the
  artifact (a ``ragaliq.yaml``, a baseline, a template, a cache) is ever written or read;
- the token goes to the API only: the download's redirect to storage carries no token.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import os
import stat
import tempfile
import zipfile
import zlib
from collections.abc import Callable
from contextlib import nullcontext
from pathlib import Path, PurePosixPath
from typing import Any, BinaryIO

import requests

from ragaliq._times import read_time
from ragaliq._version import __version__
from ragaliq.errors import ArtifactError
from ragaliq.forge import HandOver
from ragaliq.github.client import (
    PER_PAGE,
    GitHubApi,
    describe_failure,
    json_getter,
    retrying,
)

__all__ = [
    "MAX_ARTIFACT_BYTES",
    "download_dataset",
    "fetch_archive",
    "read_answer_files",
    "read_entries",
    "unpack_dataset",
]

MAX_ARTIFACT_BYTES = 2 * 1024**3
"""The largest artifact downloaded, and the largest dataset unpacked from one."""
_CHUNK = 1024 * 1024


def download_dataset(
    api: GitHubApi,
    *,
    run_id: int,
    artifact: str,
    file_name: str,
    head_sha: str | None,
) -> HandOver:
    """Download artifact ``artifact`` of run ``run_id`` and unpack ``file_name`` from it.

    Args:
        api: Where to ask (the token needs ``actions: read``).
        run_id: The run that uploaded the artifact.
        artifact: The artifact's name.
        file_name: The dataset's file name inside the artifact.
        head_sha: The commit the run must have been for (from the event), when known.

    Raises:
        ArtifactError: the artifact is missing, expired, from another commit, too large, not a
            zip, unsafe, or lacks the file; or the API cannot be reached.
    """
    where = f"artifact {artifact!r} of run {run_id} in {api.repository}"
    listing = _listing(api, run_id, artifact)
    found = _the_artifact(listing, artifact, where, head_sha)
    with tempfile.TemporaryDirectory(prefix="ragaliq-artifact-") as scratch:
        archive = Path(scratch) / "artifact.zip"
        fetch_archive(
            str(found["archive_download_url"]), token=api.token, into=archive, where=where
        )
        unpacked = unpack_dataset(archive, file_name=file_name, artifact=artifact, run_id=run_id)
    return dataclasses.replace(unpacked, handed_over=read_time(found.get("created_at")))


def _listing(api: GitHubApi, run_id: int, artifact: str) -> Any:
    repository, attempts = api.repository, api.attempts
    where = f"artifact {artifact!r} of run {run_id} in {repository}"
    try:
        github = api.client()
    except ValueError as exc:
        raise ArtifactError(f"{where}: cannot be downloaded: {exc}") from exc
    try:
        _, listing = retrying(
            lambda: github.requester.requestJsonAndCheck(
                "GET",
                f"/repos/{repository}/actions/runs/{run_id}/artifacts",
                parameters={"name": artifact, "per_page": 100},
            ),
            attempts=attempts,
        )
    except Exception as exc:  # GithubException or a dropped connection, turned into one line
        raise ArtifactError(_failure(exc, where, attempts)) from exc
    finally:
        github.close()
    return listing


def _the_artifact(listing: Any, name: str, where: str, head_sha: str | None) -> dict[str, Any]:
    artifacts = [
        a
        for a in (listing or {}).get("artifacts") or []
        if isinstance(a, dict) and a.get("name") == name
    ]
    if not artifacts:
        raise ArtifactError(
            f"{where}: not found; the job that runs the pull request's pipeline must upload the "
            "dataset with actions/upload-artifact under this name (see the README's workflows)"
        )
    if len(artifacts) > 1:
        raise ArtifactError(f"{where}: the run has {len(artifacts)} artifacts of this name")
    found = artifacts[0]
    if found.get("expired"):
        raise ArtifactError(f"{where}: has expired; re-run the pull request's workflow")
    if int(found.get("size_in_bytes") or 0) > MAX_ARTIFACT_BYTES:
        raise ArtifactError(f"{where}: is over the size limit of {MAX_ARTIFACT_BYTES:,} bytes")
    made_for = ((found.get("workflow_run") or {}).get("head_sha")) or None
    if head_sha and made_for and made_for != head_sha:
        raise ArtifactError(
            f"{where}: was made for commit {str(made_for)[:12]}, not the pull request's head "
            f"{head_sha[:12]}"
        )
    return found


def fetch_archive(
    url: str, *, token: str, into: Path | BinaryIO, where: str, limit: int = MAX_ARTIFACT_BYTES
) -> None:
    """Stream the archive to ``into`` (a file, or a buffer), stopping at ``limit`` bytes.

    ``requests`` drops the token when the API redirects to another host (the storage).
    """
    headers = {
        "Authorization": f"Bearer {token}",
        "Accept": "application/vnd.github+json",
        "User-Agent": f"ragaliq-gate/{__version__}",
    }
    written = 0
    try:
        with requests.get(url, headers=headers, stream=True, timeout=60) as response:
            if response.status_code != 200:
                raise ArtifactError(
                    f"{where}: GitHub answered {response.status_code} to the download; give the "
                    "workflow `permissions: actions: read`"
                )
            with into.open("wb") if isinstance(into, Path) else nullcontext(into) as out:
                for chunk in response.iter_content(_CHUNK):
                    written += len(chunk)
                    if written > limit:
                        raise ArtifactError(f"{where}: is over the size limit of {limit:,} bytes")
                    out.write(chunk)
    except requests.RequestException as exc:
        raise ArtifactError(f"{where}: the download failed ({type(exc).__name__})") from exc


def read_answer_files(
    api: GitHubApi,
    *,
    artifact: str,
    trusted_run: Callable[[dict[str, Any]], bool],
    runs: int,
    limit: int,
) -> tuple[list[tuple[str, bytes]], list[str]]:
    """The files of the newest ``runs`` artifacts named ``artifact`` whose run is trusted.

    The repository's artifacts of that name are listed (newest first, one page); each one's run
    is read from the API and kept only when ``trusted_run`` says so, before anything of the
    artifact is downloaded. Each is read into memory as data, never unpacked onto the runner,
    and all of them together within ``limit`` bytes.

    Returned: ``(where, content)`` of each file read, and a note for each artifact that could
    not be (answers only ever save calls, so nothing here stops a gate).
    """
    notes: list[str] = []
    repository, attempts = api.repository, api.attempts
    try:
        github = api.client()
    except ValueError as exc:
        return [], [f"earlier judge answers were not read: {exc}"]
    files: list[tuple[str, bytes]] = []
    try:
        get = json_getter(github, attempts=attempts)
        listing = get(
            f"/repos/{repository}/actions/artifacts", {"name": artifact, "per_page": PER_PAGE}
        )
        left, read = limit, 0
        for found in (listing or {}).get("artifacts") or []:
            if read >= runs or left <= 0:
                break
            if not isinstance(found, dict) or found.get("name") != artifact or found.get("expired"):
                continue
            run_id = int((found.get("workflow_run") or {}).get("id") or 0)
            where = f"artifact {artifact} of run {run_id}"
            size = int(found.get("size_in_bytes") or 0)
            if not run_id or not trusted_run(get(f"/repos/{repository}/actions/runs/{run_id}")):
                notes.append(f"{where}: not written by a gate of this pull request; not read")
                continue
            read += 1
            try:
                if size > left:
                    raise ArtifactError(f"{where}: is over what is left of the size limit")
                buffer = io.BytesIO()
                fetch_archive(
                    str(found["archive_download_url"]),
                    token=api.token,
                    into=buffer,
                    where=where,
                    limit=left,
                )
                entries = read_entries(buffer, where=where, limit=left)
            except (ArtifactError, KeyError, ValueError) as exc:
                notes.append(f"earlier judge answers were not read: {exc}")
                continue
            left -= sum(len(data) for _, data in entries)
            files += entries
    except Exception as exc:  # GithubException or a dropped connection: no earlier answers
        return files, [
            *notes,
            f"earlier judge answers were not read: {_failure(exc, artifact, attempts)}",
        ]
    finally:
        github.close()
    return files, notes


def read_entries(buffer: BinaryIO, *, where: str, limit: int) -> list[tuple[str, bytes]]:
    """Every file of a zip in memory, read (never written anywhere), within ``limit`` in all."""
    try:
        with zipfile.ZipFile(buffer) as bundle:
            entries = bundle.infolist()
            _check_entries(entries, where)
            out, total = [], 0
            for entry in entries:
                if entry.is_dir():
                    continue
                total += entry.file_size
                if total > limit:
                    raise ArtifactError(f"{where}: holds more than {limit:,} bytes")
                with bundle.open(entry) as source:
                    data = source.read(limit + 1)
                if len(data) > entry.file_size or len(data) > limit:
                    raise ArtifactError(f"{where}: {entry.filename} holds more than it says")
                out.append((f"{where}: {entry.filename}", data))
            return out
    except (zipfile.BadZipFile, zlib.error) as exc:
        raise ArtifactError(f"{where}: is not a zip archive ({exc})") from exc


def unpack_dataset(
    archive: Path,
    *,
    file_name: str,
    artifact: str,
    run_id: int,
    into: Path | None = None,
    limit: int = MAX_ARTIFACT_BYTES,
) -> HandOver:
    """Unpack ``file_name`` alone from the zip ``archive``, after checking every entry.

    An empty ``file_name`` means the one file the artifact holds. ``into`` is the folder to
    unpack to; by default a new private temporary folder. The file may hold ``limit`` bytes, as
    its entry says and as it is unpacked (an entry that says less than it holds fails its
    checksum); a file that fails is removed.

    Raises:
        ArtifactError: the archive is not a zip, has an unsafe entry, lacks the file, or the
            file is over the size limit.
    """
    where = f"artifact {artifact!r} of run {run_id}"
    try:
        with zipfile.ZipFile(archive) as bundle:
            entries = bundle.infolist()
            _check_entries(entries, where)
            files = [e for e in entries if not e.is_dir()]
            if not file_name and len(files) != 1:
                raise ArtifactError(
                    f"{where}: holds {len(files)} files; name the dataset among them with the "
                    "action's dataset input"
                )
            file_name = file_name or files[0].filename
            wanted = [e for e in files if e.filename == file_name]
            if not wanted:
                names = ", ".join(sorted(e.filename for e in entries)[:5]) or "nothing"
                raise ArtifactError(
                    f"{where}: has no {file_name} at its top (it holds {names}); upload the "
                    "dataset file itself, or set the action's dataset input to its name"
                )
            entry = wanted[0]
            if entry.file_size > limit:
                raise ArtifactError(f"{where}: {file_name} is over the size limit")
            folder = into or Path(tempfile.mkdtemp(prefix="ragaliq-dataset-"))
            target = folder / PurePosixPath(file_name).name
            digest = hashlib.sha256()
            size = 0
            fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            try:
                with bundle.open(entry) as source, os.fdopen(fd, "wb") as out:
                    while chunk := source.read(_CHUNK):
                        size += len(chunk)
                        if size > limit:
                            raise ArtifactError(f"{where}: {file_name} is over the size limit")
                        digest.update(chunk)
                        out.write(chunk)
            except BaseException:
                target.unlink(missing_ok=True)
                raise
            ignored = tuple(sorted(e.filename for e in files if e is not entry))
    except (zipfile.BadZipFile, zlib.error) as exc:
        raise ArtifactError(f"{where}: is not a zip archive ({exc})") from exc
    return HandOver(
        path=target,
        artifact=artifact,
        run_id=run_id,
        sha256=digest.hexdigest(),
        size=size,
        ignored=ignored,
    )


def _check_entries(entries: list[zipfile.ZipInfo], where: str) -> None:
    """Refuse the archive for any entry that could write outside its folder or link elsewhere."""
    seen: set[str] = set()
    for entry in entries:
        name = entry.filename
        parts = PurePosixPath(name).parts
        unsafe = (
            not name
            or name.startswith(("/", "~"))
            or "\\" in name
            or "\x00" in name
            or ".." in parts
            or (len(name) > 1 and name[1] == ":")
        )
        if unsafe:
            raise ArtifactError(f"{where}: refused: it holds an entry named {name!r}")
        if stat.S_ISLNK(entry.external_attr >> 16):
            raise ArtifactError(f"{where}: refused: {name} is a symbolic link")
        if name in seen:
            raise ArtifactError(f"{where}: refused: it holds {name} twice")
        seen.add(name)


def _failure(exc: Exception, where: str, attempts: int) -> str:
    from github import GithubException

    if isinstance(exc, GithubException):
        return f"{where}: " + describe_failure(
            exc,
            doing=f"listing the {where}",
            attempts=attempts,
            forbidden="the token may not read the run's artifacts; give the workflow "
            "`permissions: actions: read`",
            not_found="the run does not exist or the token may not read it",
        )
    return f"{where}: the GitHub API could not be reached ({type(exc).__name__})"

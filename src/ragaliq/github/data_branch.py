"""The baseline store on a data branch of the repository, through GitHub's API.

Baselines are kept on a branch of their own (``ragaliq-baselines`` by default), never on the
branch pull requests merge into: a repository's own ruleset cannot let the workflow's token
bypass a protected ``main``, so the baseline workflow writes here instead. Files are read
through the Contents API at one commit of the branch (:class:`~ragaliq.github.contents.
ContentsAtCommit`, every file checked against its blob id), and a change is written as one
commit with the Git Data API (blobs, a tree on the last commit's, a commit), then the branch is
moved to it only as a fast-forward: a change that lost a race to another baseline run is
reported as such, and :class:`~ragaliq.store.layout.BaselineStore` writes it again on top.

Anyone who can push to the repository can push to this branch too, which is why a gate never
trusts a baseline for being here (see :mod:`ragaliq.github.provenance`).
"""

from __future__ import annotations

import base64
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

from github import GithubException, UnknownObjectException

from ragaliq.errors import OutputError, RepositoryError
from ragaliq.github.client import GitHubApi, describe_failure, retrying, unreachable
from ragaliq.github.contents import ContentsAtCommit
from ragaliq.store.layout import Snapshot

__all__ = ["BranchBackend"]


@dataclass(frozen=True, kw_only=True)
class BranchBackend:
    """A store on ``branch`` of ``repository``."""

    api: GitHubApi
    branch: str

    @property
    def description(self) -> str:
        return f"the branch {self.branch} of {self.api.repository}"

    def snapshot(self) -> Snapshot | None:
        sha = self._tip(doing=f"reading {self.description}", error=RepositoryError)
        if sha is None:
            return None
        files = ContentsAtCommit(api=self.api, sha=sha, label=f"{self.description} at {sha[:12]}")
        return Snapshot(files=files, version=sha)

    def commit(
        self,
        base: Snapshot | None,
        *,
        put: Mapping[str, bytes],
        delete: Collection[str],
        message: str,
    ) -> bool:
        doing = f"writing to {self.description}"
        tree: list[dict[str, Any]] = [
            {"path": path, "mode": "100644", "type": "blob", "sha": self._blob(data, doing)}
            for path, data in sorted(put.items())
        ]
        tree += [
            {"path": path, "mode": "100644", "type": "blob", "sha": None} for path in sorted(delete)
        ]
        parent = base.version if base is not None else None
        body: dict[str, Any] = {"tree": tree}
        if parent is not None:
            body["base_tree"] = self._call("GET", f"git/commits/{parent}", doing)["tree"]["sha"]
        made = self._call("POST", "git/trees", doing, body)["sha"]
        commit = self._call(
            "POST",
            "git/commits",
            doing,
            {"message": message, "tree": made, "parents": [parent] if parent else []},
        )["sha"]
        try:
            if parent is None:
                self._call(
                    "POST", "git/refs", doing, {"ref": f"refs/heads/{self.branch}", "sha": commit}
                )
            else:
                self._call(
                    "PATCH", f"git/refs/heads/{self.branch}", doing, {"sha": commit, "force": False}
                )
        except _Refused as refused:
            now = self._tip(doing=doing, error=OutputError)
            if now != parent:
                return False  # another run moved the branch first: write again on top of it
            raise OutputError(
                f"GitHub refused to move {self.description} to the new baseline: "
                f"{refused.said}. The data branch must take the workflow token's pushes: do not "
                "protect it (a baseline there counts only once its run is checked), and give "
                "the job `permissions: contents: write`"
            ) from None
        return True

    def _tip(self, *, doing: str, error: type[Exception]) -> str | None:
        """The branch's commit; None when there is no such branch."""
        try:
            found = self._call("GET", f"git/ref/heads/{self.branch}", doing, error=error)
        except UnknownObjectException:
            return None
        target = (found.get("object") or {}) if isinstance(found, dict) else {}
        sha = str(target.get("sha") or "")
        if target.get("type") != "commit" or not sha:
            raise error(f"{self.description}: GitHub names no commit for it")
        return sha

    def _blob(self, data: bytes, doing: str) -> str:
        body = {"content": base64.b64encode(data).decode("ascii"), "encoding": "base64"}
        return str(self._call("POST", "git/blobs", doing, body)["sha"])

    def _call(
        self,
        method: str,
        path: str,
        doing: str,
        body: dict[str, Any] | None = None,
        *,
        error: type[Exception] = OutputError,
    ) -> Any:
        try:
            github = self.api.client()
        except ValueError as exc:
            raise error(f"{self.description}: {exc}") from exc
        url = f"/repos/{self.api.repository}/{path}"
        try:
            _, data = retrying(
                lambda: github.requester.requestJsonAndCheck(method, url, input=body),
                attempts=self.api.attempts if method == "GET" else 1,
            )
            return data
        except UnknownObjectException:
            if method == "GET":
                raise
            raise error(f"GitHub answers 404 while {doing}: {_PERMISSION}") from None
        except GithubException as exc:
            if exc.status == 422 and path.startswith("git/ref"):
                raise _Refused(describe_failure(exc, doing=doing, attempts=1)) from exc
            raise error(
                describe_failure(
                    exc, doing=doing, attempts=self.api.attempts, forbidden=_PERMISSION
                )
            ) from exc
        except OSError as exc:
            raise error(unreachable(self.api.api_url, self.api.attempts)) from exc
        finally:
            github.close()


_PERMISSION = (
    "the token may not write the repository's branches; give the baseline job `permissions: "
    "contents: write`"
)


class _Refused(Exception):
    """GitHub would not move the branch (a race lost, or a rule)."""

    def __init__(self, said: str) -> None:
        super().__init__(said)
        self.said = said

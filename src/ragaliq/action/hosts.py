"""The hosts the edges can reach, by name: the one place that names an adapter besides the entries.

The command line's ``ragaliq publish`` posts a rendered comment on a change of a host; it asks
here for that host's comment, and the adapter (with its client library) is loaded only then.
"""

from __future__ import annotations

from ragaliq.forge import Change, CommentBoard

__all__ = ["DEFAULT_GITHUB_API", "github_comment"]

DEFAULT_GITHUB_API = "https://api.github.com"
"""GitHub's REST API (GitHub Enterprise Server's is ``https://<host>/api/v3``)."""


def github_comment(*, token: str, repository: str, api_url: str, number: int) -> CommentBoard:
    """The gate's comment on pull request ``number`` of ``repository``."""
    from ragaliq.github.client import GitHubApi  # PyGithub: only when publishing
    from ragaliq.github.host import comment_on

    change = Change(number=number, base_sha="", head_sha="", base_repo=repository, head_repo="")
    return comment_on(GitHubApi(token=token, repository=repository, api_url=api_url), change)

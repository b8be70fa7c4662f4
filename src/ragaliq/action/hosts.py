"""The hosts the edges can reach, by name: the one place that names an adapter besides the entries.

The command line's ``ragaliq publish`` posts a rendered comment on a change of a host, and
``ragaliq validate`` checks a GitLab project's settings; each asks here, and the adapter (with its
client library) is loaded only then.
"""

from __future__ import annotations

from collections.abc import Mapping

from ragaliq.forge import Change, CommentBoard

__all__ = ["DEFAULT_GITHUB_API", "github_comment", "gitlab_settings_check"]

DEFAULT_GITHUB_API = "https://api.github.com"
"""GitHub's REST API (GitHub Enterprise Server's is ``https://<host>/api/v3``)."""


def github_comment(*, token: str, repository: str, api_url: str, number: int) -> CommentBoard:
    """The gate's comment on pull request ``number`` of ``repository``."""
    from ragaliq.github.client import GitHubApi  # PyGithub: only when publishing
    from ragaliq.github.host import comment_on

    change = Change(number=number, base_sha="", head_sha="", base_repo=repository, head_repo="")
    return comment_on(GitHubApi(token=token, repository=repository, api_url=api_url), change)


def gitlab_settings_check(env: Mapping[str, str], project: str | None) -> str | None:
    """What ``ragaliq validate`` says of a GitLab project's settings.

    A warning, or why the check was skipped
    (:func:`ragaliq.gitlab.settings_check.check_pipeline_variables`).
    """
    from ragaliq.gitlab.settings_check import check_pipeline_variables  # python-gitlab: lazy

    return check_pipeline_variables(env, project)

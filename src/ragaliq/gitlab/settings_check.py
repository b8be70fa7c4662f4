"""What the project's own settings let others do to the gate, read where the GitLab job reads it.

The gate's job warns in its log and ``ragaliq validate`` on the terminal, both with
:func:`pipeline_variables_warning` over the role :meth:`GitLabHost.pipeline_variables_role` reads.
"""

from __future__ import annotations

from collections.abc import Mapping

from ragaliq.errors import RagaliqError
from ragaliq.gitlab.client import GitLabApi
from ragaliq.gitlab.event import TOKEN_VARIABLE
from ragaliq.gitlab.host import GitLabHost
from ragaliq.gitlab.log import GitLabLog

__all__ = ["OPEN_ROLES", "SETTING", "check_pipeline_variables", "pipeline_variables_warning"]

SETTING = "ci_pipeline_variables_minimum_override_role"
"""The project's setting for who may set pipeline variables."""
OPEN_ROLES = ("developer", "guest", "reporter", "planner")
"""Its values that let more than maintainers set them."""


def pipeline_variables_warning(role: str) -> str | None:
    """The warning while ``role`` lets non-maintainers set pipeline variables, else ``None``."""
    if role not in OPEN_ROLES:
        return None
    return (
        f"anyone with the {role.title()} role may set pipeline variables in this project "
        f"({SETTING} is {role}); the gate refuses to run with any, so a Developer could stop "
        "it. Set Settings > CI/CD > Variables > Minimum role to use pipeline variables to "
        f"Maintainer (or No one allowed: {SETTING}=maintainer or no_one_allowed)"
    )


def _server(env: Mapping[str, str]) -> str:
    url = env.get("CI_SERVER_URL", "").strip()
    if url:
        return url
    api = env.get("CI_API_V4_URL", "").strip().rstrip("/")
    return api.removesuffix("/api/v4")


def check_pipeline_variables(env: Mapping[str, str], project: str | None = None) -> str | None:
    """One line for ``ragaliq validate``: a warning, or why the check was skipped (else ``None``).

    The server comes from ``CI_SERVER_URL`` (or ``CI_API_V4_URL``), the project from ``project``
    (else ``CI_PROJECT_ID``, else ``CI_PROJECT_PATH``), the token from ``RAGALIQ_GITLAB_TOKEN``.
    Never raises: a failure to read the setting is a warning too.
    """
    server = _server(env)
    project = project or env.get("CI_PROJECT_ID", "").strip() or env.get("CI_PROJECT_PATH", "")
    token = env.get(TOKEN_VARIABLE, "")
    missing = [
        what
        for what, value in (
            ("no GitLab server (CI_SERVER_URL or CI_API_V4_URL)", server),
            ("no project (--gitlab-project, CI_PROJECT_ID or CI_PROJECT_PATH)", project),
            (f"no token ({TOKEN_VARIABLE})", token.strip()),
        )
        if not value
    ]
    if missing:
        return f"skipped: who may set pipeline variables was not checked: {', '.join(missing)}"
    api = GitLabApi(url=server, token=token, project=project)
    host = GitLabHost(api=api, log=GitLabLog(folder=None))
    try:
        role = host.pipeline_variables_role()
    except RagaliqError as exc:
        return f"warning: who may set pipeline variables could not be read: {exc}"
    said = pipeline_variables_warning(role)
    return f"warning: {said}" if said else None

"""Whether a push starts the baseline workflow: its ``on.push`` filters, read as GitHub reads them.

A base commit with no baseline run may use its nearest recorded ancestor's baseline only when no
run was due for it: when a push of the difference between that ancestor and the base would not
have started the trusted baseline workflow. :class:`PushFilters` holds the workflow's own
``branches``, ``branches-ignore``, ``tags``, ``tags-ignore``, ``paths`` and ``paths-ignore``;
:meth:`PushFilters.starts` applies them with GitHub's pattern rules:

- ``*`` is any run of characters but ``/``; ``**`` any run including ``/``; ``?`` and ``+`` make
  the character before them optional or repeatable; ``[...]`` is a class; a backslash escapes;
- a pattern starting with ``!`` excludes what an earlier pattern included, and a later positive
  pattern includes it again;
- ``paths``: the workflow runs when at least one changed path is included; ``paths-ignore``: it
  runs unless every changed path is ignored;
- a workflow with only tag filters runs for no branch push, and one with only branch filters for
  no tag push.

When the changed paths are not all known (GitHub evaluates only the first 300 files of a push),
a path filter cannot show that no run was due: :meth:`starts` then says it would have run.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

__all__ = ["MAX_FILTERED_PATHS", "PushFilters", "pattern_matches"]

MAX_FILTERED_PATHS = 300
"""The changed files GitHub reads for a push's path filters; beyond them nothing is certain."""


@lru_cache(maxsize=512)
def _compiled(pattern: str) -> re.Pattern[str]:
    out: list[str] = []
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\" and i + 1 < len(pattern):
            out.append(re.escape(pattern[i + 1]))
            i += 2
            continue
        if ch == "*":
            if pattern.startswith("**", i):
                out.append(".*")
                i += 2
            else:
                out.append("[^/]*")
                i += 1
            continue
        if ch in "?+" and out:
            out.append(ch)
        elif ch == "[":
            end = pattern.find("]", i + 1)
            if end == -1:
                out.append(re.escape(ch))
            else:
                body = pattern[i + 1 : end].replace("\\", "\\\\")
                out.append(f"[{body}]")
                i = end + 1
                continue
        else:
            out.append(re.escape(ch))
        i += 1
    return re.compile("".join(out))


def pattern_matches(pattern: str, value: str) -> bool:
    """Whether one filter pattern (without its ``!``) matches a path or a ref name."""
    return _compiled(pattern).fullmatch(value) is not None


def _included(patterns: Sequence[str], value: str) -> bool:
    """Whether ``value`` is in, after every pattern in order (``!`` patterns exclude)."""
    inside = False
    for pattern in patterns:
        if pattern.startswith("!"):
            if inside and pattern_matches(pattern[1:], value):
                inside = False
        elif not inside and pattern_matches(pattern, value):
            inside = True
    return inside


def _strings(value: Any) -> tuple[str, ...] | None:
    if value is None:
        return None
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list):
        return tuple(str(v) for v in value)
    return None


@dataclass(frozen=True, kw_only=True)
class PushFilters:
    """The ``on.push`` filters of a workflow; None where a filter is not given."""

    branches: tuple[str, ...] | None = None
    branches_ignore: tuple[str, ...] | None = None
    tags: tuple[str, ...] | None = None
    tags_ignore: tuple[str, ...] | None = None
    paths: tuple[str, ...] | None = None
    paths_ignore: tuple[str, ...] | None = None
    on_push: bool = True
    """False when the workflow is not started by a push at all."""

    @classmethod
    def of(cls, push: Any) -> PushFilters:
        """The filters of an ``on.push`` mapping (``None`` or an empty one: no filter)."""
        if not isinstance(push, dict):
            return cls()
        return cls(
            branches=_strings(push.get("branches")),
            branches_ignore=_strings(push.get("branches-ignore")),
            tags=_strings(push.get("tags")),
            tags_ignore=_strings(push.get("tags-ignore")),
            paths=_strings(push.get("paths")),
            paths_ignore=_strings(push.get("paths-ignore")),
        )

    @classmethod
    def of_workflow(cls, workflow: Any) -> PushFilters:
        """The push filters of a whole workflow file, parsed (its ``on``, in any of its forms)."""
        on = workflow.get("on", workflow.get(True)) if isinstance(workflow, dict) else None
        if on == "push" or (isinstance(on, list) and "push" in on):
            return cls()
        if isinstance(on, dict) and "push" in on:
            return cls.of(on["push"])
        return cls(on_push=False)

    def starts_on_branch(self, branch: str) -> bool:
        """Whether a push to ``branch`` passes the ref filters."""
        if not self.on_push:
            return False
        if self.branches is None and self.branches_ignore is None:
            return self.tags is None and self.tags_ignore is None
        if self.branches is not None:
            return _included(self.branches, branch)
        return not _included(self.branches_ignore or (), branch)

    def starts(self, branch: str, changed: Iterable[str] | None) -> bool:
        """Whether a push to ``branch`` changing ``changed`` would start the workflow.

        ``changed`` is None when the changed paths are not known, or are too many to be sure of
        (more than :data:`MAX_FILTERED_PATHS`): with a path filter, that counts as a start.
        """
        if not self.starts_on_branch(branch):
            return False
        if self.paths is None and self.paths_ignore is None:
            return True
        paths = list(changed) if changed is not None else None
        if paths is None or len(paths) > MAX_FILTERED_PATHS:
            return True
        if self.paths is not None:
            return any(_included(self.paths, path) for path in paths)
        return any(not _included(self.paths_ignore or (), path) for path in paths)

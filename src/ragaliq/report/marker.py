"""The hidden marker that makes the PR comment findable and ours."""

from __future__ import annotations

import re

__all__ = ["COMMENT_ID_PATTERN", "comment_marker"]

COMMENT_ID_PATTERN = re.compile(r"^[A-Za-z0-9._-]{1,64}$")


def comment_marker(comment_id: str = "default") -> str:
    """The first line of every comment: ``<!-- ragaliq:comment id=<comment_id> -->``.

    Raises:
        ValueError: the id has characters other than letters, digits, ``.``, ``_`` and ``-``.
    """
    if not COMMENT_ID_PATTERN.match(comment_id):
        raise ValueError(f"comment-id {comment_id!r} must be 1-64 letters, digits, '.', '_' or '-'")
    return f"<!-- ragaliq:comment id={comment_id} -->"

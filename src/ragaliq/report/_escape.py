"""Untrusted text made safe for GitHub Markdown: escaped, on one line, without secrets.

Everything a dataset, a judge or a run supplies (queries, claims, evidence, reasons, errors, case
ids, notices) reaches the comment and the summary through :func:`md`, the ``md`` filter.
"""

from __future__ import annotations

import re

from ragaliq.redaction import redact
from ragaliq.text.plain import BIDI_MARKS

__all__ = ["escape_markdown", "md", "shorten", "shorten_redacted"]

_ENTITIES = {
    "&": "&amp;",
    "<": "&lt;",
    ">": "&gt;",
    "\\": "&#92;",
    "`": "&#96;",
    "*": "&#42;",
    "_": "&#95;",
    "[": "&#91;",
    "]": "&#93;",
    "|": "&#124;",
    "~": "&#126;",
    "$": "&#36;",
}
_SPECIAL = re.compile("[" + re.escape("".join(_ENTITIES)) + "]")
_COMMIT_SHA = re.compile(r"(?<![0-9A-Fa-f])([0-9A-Fa-f]{7})(?=[0-9A-Fa-f]{33}(?![0-9A-Fa-f]))")
_LINE_BREAKS = re.compile("[\x00-\x1f\x7f\x85\u2028\u2029]+")
_AUTOLINKS = re.compile(
    r"@(?=\w)|#(?=\d)|(?i:\b(?:https?|ftp|mailto|xmpp)(?=:)|\bwww(?=\.)|\bgh-(?=\d))"
)
_ZERO_WIDTH_SPACE = "\u200b"
_BLOCK_MARKER = re.compile(r"^(?:[#+-]|\d{1,9}[.)](?=\s|$))")


def escape_markdown(text: object) -> str:
    r"""Make untrusted text safe to show anywhere in the comment, as a single line.

    Escapes use HTML character references, not backslashes, because GitHub decodes them both in
    Markdown (table cells, list items) and in raw HTML (``<summary>``), while a backslash escape
    would show up literally inside ``<summary>``.

    - line breaks and other control characters become spaces, and every bidi mark is dropped;
    - ``&``, ``<`` and ``>`` become entities, so no HTML, comment or ``</details>`` survives;
    - ``\ ` * _ [ ] | ~ $`` become entities, so no emphasis, code, link, table cell, strikethrough
      or math starts; ``# + -`` and ``1.`` / ``1)`` are escaped at the start, where they would
      begin a heading or a list;
    - a zero-width space follows ``@`` before a word character, ``#`` before a digit, a URL
      scheme, ``www.`` and the first seven digits of a 40-digit commit SHA, so GitHub pings no
      one, links no issue or commit and makes no untrusted link.

    Args:
        text: Anything; ``None`` is the empty string, everything else goes through ``str``.

    Returns:
        The escaped text, on one line, without leading or trailing spaces.
    """
    if text is None:
        return ""
    value = BIDI_MARKS.sub("", str(text))
    value = _LINE_BREAKS.sub(" ", value).strip()
    value = _AUTOLINKS.sub(lambda m: m.group(0) + _ZERO_WIDTH_SPACE, value)
    value = _COMMIT_SHA.sub(lambda m: m.group(1) + _ZERO_WIDTH_SPACE, value)
    value = _SPECIAL.sub(lambda m: _ENTITIES[m.group(0)], value)
    start = _BLOCK_MARKER.match(value)
    if start is None:
        return value
    marker = start.group(0)
    return marker[:-1] + f"&#{ord(marker[-1])};" + value[len(marker) :]


def md(text: object) -> str:
    """:func:`escape_markdown` of the text with every secret taken out first.

    Escaping changes a secret's characters (``_`` becomes ``&#95;``), so redacting the rendered
    comment afterwards would no longer find it.
    """
    return escape_markdown(None if text is None else redact(str(text)))


def shorten(text: object, n: int = 80) -> str:
    """The text on one line of at most ``n`` characters, an ellipsis ending what was cut."""
    value = " ".join(str(text).split())
    if len(value) <= n:
        return value
    return value[: max(n - 1, 0)].rstrip() + "…"


def shorten_redacted(text: object, n: int = 80) -> str:
    """:func:`shorten` of the text with every secret taken out first."""
    return shorten(redact(str(text)), n)

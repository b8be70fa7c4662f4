"""Plain text for people, on a terminal, in a CI log or in any message.

Untrusted text shown as one line and never as a runner command: a dataset's case ids, claims and
errors, and a judge's reasons, are printed on the console; in a GitHub Actions log a line starting
with ``::`` is a workflow command (``::set-output``, ``::add-mask``, ``::stop-commands``), so
untrusted text must never start one. And :func:`is_blank`, the one way a query, a response, a fact
or a chunk is found to say nothing.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["BIDI_MARKS", "is_blank", "one_line", "safe_lines"]

BIDI_MARKS = re.compile("[\u200e\u200f\u061c\u202a-\u202e\u2066-\u2069]")
"""Every character that changes the direction text is shown in (Trojan Source)."""
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]+")
_CONTROL_IN_LINES = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
"""Control characters but tab and line ends: terminal escapes, backspaces, bells."""
_LINE_ENDS = re.compile("\r\n?|[\u2028\u2029\x85]")
_COMMAND = re.compile(r"^([^\S\r\n]*+)(::|##\[)", re.MULTILINE)


def is_blank(text: str) -> bool:
    """Whether ``text`` shows nothing: only whitespace and invisible format characters.

    Format characters (Unicode category Cf: a zero-width space, a byte order mark, a word
    joiner, a soft hyphen) print as nothing, so a query or a response made of them says nothing
    and is judged like an empty one, never as an answer with no claims.
    """
    return all(ch.isspace() or unicodedata.category(ch) == "Cf" for ch in text)


def one_line(text: object) -> str:
    """``text`` as one line: control characters and line breaks become spaces, bidi marks go."""
    value = BIDI_MARKS.sub("", str(text))
    return _CONTROL.sub(" ", value).strip()


def safe_lines(text: str) -> str:
    """``text`` fit for a terminal or a CI log, line breaks kept.

    Bidi marks and control characters (terminal escapes, carriage returns that would overwrite
    the line) go; every line that a CI runner would take for a command is shown as text.
    """
    value = _LINE_ENDS.sub("\n", BIDI_MARKS.sub("", text))
    value = _CONTROL_IN_LINES.sub("", value)
    return _COMMAND.sub(lambda m: f"{m.group(1)}> {m.group(2)}", value)

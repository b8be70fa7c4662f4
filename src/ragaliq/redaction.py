r"""Secrets never leave: every known secret value is taken out of all text the run writes.

The CLI and the action register the secrets they hold (the Anthropic key, the GitHub token, and
any environment variable whose name says it is a secret) once, at their edge. Every writer of text
that leaves the process (the console, the report, the decision, the comment, the job summary, the
HTML report, step outputs) passes its text through :func:`redact`, so a secret that reaches a
message by any road (an API error that echoes the key, a template, a dataset) shows as
``[redacted]``.

A secret is found as it is written; with any of its characters written as a JSON escape
(``\uXXXX``, ``\"``, ``\\``, ``\/``); split by whitespace, line breaks, soft hyphens,
zero-width characters or the JSON escapes of blank characters (``\n``, ``\r\n``, ``\t``, ``\f``,
``\b``), as a gateway's error page or a JSON body may wrap it, also in a JSON string inside a
JSON string; and base64-encoded at any alignment, in the standard and the URL-safe alphabet, on
one line or wrapped by line breaks written as they are or as JSON escapes (``\n``, ``\r\n``),
with its slashes escaped (``\/``) or not. Every JSON short escape is decoded into a view of the
text before matching, and a match in the view replaces the escapes it was read from. The work
grows with the text's length and no more (``benchmarks/redaction.py`` prints it at two sizes):
the splits are taken whole, so no match attempt backtracks, and escapes are decoded a few levels
deep at most. What a server sends back and an error quotes (a gateway's error page) is decoded
first, HTML character references, percent-encoding and JSON escapes alike, then redacted and
cut to a short excerpt (:func:`excerpt`).

The registry is process-wide on purpose: a secret must be kept out of every sink, including ones
deep in a library's error message, without every function taking it as a parameter.
"""

from __future__ import annotations

import base64
import bisect
import html
import json
import re
import threading
import urllib.parse
from collections.abc import Callable, Iterable, Mapping

__all__ = [
    "EXCERPT_CHARS",
    "MIN_NAMED_SECRET_CHARS",
    "MIN_SECRET_CHARS",
    "REDACTED",
    "SECRET_NAME",
    "decoded",
    "excerpt",
    "forget_secrets",
    "looks_secret",
    "redact",
    "register_env_secrets",
    "register_secret",
]

REDACTED = "[redacted]"
MIN_SECRET_CHARS = 8
"""Shorter values are not treated as secrets: redacting them would mangle ordinary text."""
MIN_NAMED_SECRET_CHARS = 16
"""The shortest value registered only because its variable is named like a secret's."""
SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|PRIVATE", re.IGNORECASE)
"""Environment variable names whose values are secrets (``AWS_SECRET_ACCESS_KEY``, ...)."""

_BLANK = r"[\s\b\u00ad\u200b\u200c\u200d\u2060\ufeff]"
_SPLIT = _BLANK + "*+"
"""What may stand between two characters of a secret in text that still shows it: whitespace and
line breaks, a backspace, soft hyphens, zero-width characters. Taken whole (possessive), and a
secret's own blank characters are left to it, so no match attempt goes back over a run of them."""
_lock = threading.Lock()
_secrets: set[str] = set()
_pattern: re.Pattern[str] | None = None


def register_secret(value: str | None) -> None:
    """Redact ``value`` and its escaped, split and base64 forms from all text written from now."""
    if value is None:
        return
    global _pattern
    forms = {v for line in value.splitlines() if len(v := line.strip()) >= MIN_SECRET_CHARS}
    forms |= {json.dumps(form)[1:-1] for form in forms}
    forms |= {encoded for form in set(forms) for encoded in _base64_forms(form)}
    with _lock:
        if forms <= _secrets:
            return
        _secrets.update(forms)
        alternatives = sorted(_secrets, key=len, reverse=True)
        _pattern = re.compile("|".join(map(_form_pattern, alternatives)))


def _form_pattern(form: str) -> str:
    """A form of a secret, split anywhere; its own blank characters are matched by the splits.

    A form that is mostly blank is matched only as written, not to match every short word.
    """
    unblank = re.sub(_BLANK, "", form)
    if len(unblank) < MIN_SECRET_CHARS:
        return re.escape(form)
    return _SPLIT.join(map(re.escape, unblank))


def _base64_forms(secret: str) -> set[str]:
    """The base64 text that stands for ``secret`` wherever it starts in an encoded stream.

    Encoded after 0, 1 or 2 other bytes, a secret's own characters are the ones whose six bits
    all come from it; those are registered, in the standard and the URL-safe alphabet.
    """
    data = secret.encode("utf-8")
    forms: set[str] = set()
    for offset in range(3):
        encoded = base64.b64encode(b"\0" * offset + data + b"\0\0").decode("ascii")
        start, end = -(-8 * offset // 6), 8 * (offset + len(data)) // 6
        middle = encoded[start:end]
        if len(middle) >= MIN_SECRET_CHARS:
            forms |= {middle, middle.translate(_URL_SAFE)}
    return forms


_URL_SAFE = str.maketrans("+/", "-_")


def register_env_secrets(env: Mapping[str, str], *, names: Iterable[str] = ()) -> None:
    """Register every value in ``env`` whose name looks like a secret's, plus ``names``.

    A value registered for its name alone must also look like a secret (see
    :func:`looks_secret`): a variable a pull request's step sets through ``$GITHUB_ENV``, named
    like a secret but holding ordinary words, could otherwise blank out the comment's text.
    """
    wanted = set(names)
    for name, value in env.items():
        if name in wanted or (SECRET_NAME.search(name) and looks_secret(value)):
            register_secret(value)


def looks_secret(value: str) -> bool:
    """Whether a value is shaped like a key, token or password, not like words.

    At least ``MIN_NAMED_SECRET_CHARS`` characters, no space, and characters of two kinds at
    least (letters in both cases, digits, symbols), as generated credentials are.
    """
    value = value.strip()
    if len(value) < MIN_NAMED_SECRET_CHARS or any(ch.isspace() for ch in value):
        return False
    kinds = (str.islower, str.isupper, str.isdigit, lambda ch: not ch.isalnum())
    return sum(any(kind(ch) for ch in value) for kind in kinds) >= 2


_JSON_ESCAPE = re.compile(r"\\(?:u([0-9a-fA-F]{4})|([\"\\/bfnrt]))")
_SHORT_ESCAPES = {"b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


def _unescaped(match: re.Match[str]) -> str:
    """The character a JSON escape stands for."""
    if match[1]:
        return chr(int(match[1], 16))
    return _SHORT_ESCAPES.get(match[2], match[2])


_DECODE_ROUNDS = 4
EXCERPT_CHARS = 300
"""The longest excerpt of a server's answer an error message quotes."""


def decoded(text: str) -> str:
    """``text`` with HTML character references, percent-encoding and JSON escapes decoded.

    Applied until nothing changes (a few rounds at most), so a value escaped twice, or in two
    ways, reads as it was sent.
    """
    for _ in range(_DECODE_ROUNDS):
        plain = html.unescape(text)
        plain = urllib.parse.unquote(plain)
        plain = _JSON_ESCAPE.sub(_unescaped, plain)
        if plain == text:
            break
        text = plain
    return text


def excerpt(text: str, *, limit: int = EXCERPT_CHARS) -> str:
    """A short excerpt of what a server sent back (a gateway's error page), safe to show.

    Decoded first (:func:`decoded`), so a secret echoed as HTML references (``&#115;&#107;``),
    percent-encoded or JSON-escaped is found; redacted, then cut to ``limit`` characters on one
    line (redacted before it is cut, so no part of a secret is left at the cut).
    """
    plain = redact(" ".join(decoded(text).split()))
    return plain if len(plain) <= limit else plain[: limit - 1] + "…"


def redact(text: str) -> str:
    """``text`` with every registered secret replaced by ``[redacted]``.

    Matched as written first, then in views of the text with its JSON escapes decoded, once and
    again (a JSON string inside a JSON string) up to a few times: a match in a view replaces the
    escapes it was read from.
    """
    pattern = _pattern
    if pattern is None or not text:
        return text
    text = pattern.sub(REDACTED, text)
    spans: list[tuple[int, int]] = []
    view = text
    start: Callable[[int], int] = _same
    for _ in range(_DECODE_ROUNDS):
        if "\\" not in view:
            break
        view, inner = _json_view(view)
        start = _composed(start, inner)
        spans += [(start(m.start()), start(m.end())) for m in pattern.finditer(view)]
    if not spans:
        return text
    out: list[str] = []
    done = 0
    for begin, end in sorted(spans):
        if end <= done:
            continue
        out += [text[done : max(begin, done)], "" if begin < done else REDACTED]
        done = end
    out.append(text[done:])
    return "".join(out)


def _same(position: int) -> int:
    return position


def _composed(outer: Callable[[int], int], inner: Callable[[int], int]) -> Callable[[int], int]:
    return lambda position: outer(inner(position))


def _json_view(text: str) -> tuple[str, Callable[[int], int]]:
    """``text`` with its JSON escapes decoded, and where each character of that view starts in it.

    One pass over the text; the positions are kept per escape, not per character.
    """
    parts: list[str] = []
    view_at: list[int] = []  # where each escape's character is in the view
    text_at: list[int] = []  # where that escape starts in the text
    text_end: list[int] = []  # and where it ends
    done = viewed = 0
    for match in _JSON_ESCAPE.finditer(text):
        viewed += match.start() - done
        parts += [text[done : match.start()], _unescaped(match)]
        view_at.append(viewed)
        text_at.append(match.start())
        text_end.append(match.end())
        viewed += 1
        done = match.end()
    parts.append(text[done:])

    def start(position: int) -> int:
        k = bisect.bisect_right(view_at, position) - 1
        if k < 0:
            return position
        if view_at[k] == position:
            return text_at[k]
        return text_end[k] + position - view_at[k] - 1

    return "".join(parts), start


def forget_secrets() -> None:
    """Clear the registry (for tests that run several edges in one process)."""
    global _pattern
    with _lock:
        _secrets.clear()
        _pattern = None

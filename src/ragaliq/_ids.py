"""Case ids: unique, distinguishable, stable; and derived from the query where a file has none.

The baseline comparison matches cases by id, so two ids that print alike must not name two cases:
``refund`` and ``refund\u200b`` (a zero-width space), ``ﬁle`` and ``file`` (a compatibility
ligature), or ``refund `` (a trailing space) would let one case shadow another in every comment.
:class:`IdRegistry` folds each id (NFKC, invisible characters removed, surrounding space
stripped) and refuses an id whose folded form was seen before, naming both lines; for a million
cases it keeps one short string and one number per id. A case's chunk ids, sources and labels are
folded alike, and two that look the same but differ are refused with :func:`lookalike`'s words.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata

__all__ = ["IdRegistry", "derive_id", "fold_id", "lookalike", "looks_generated", "visible"]

_INVISIBLE = re.compile(
    "[\u00ad\u034f\u115f\u1160\u17b4\u17b5\u180b-\u180f\u3164\ufe00-\ufe0f\uffa0"
    "\U000e0100-\U000e01ef]"
)
"""Characters that print as nothing but are not format characters (fillers, selectors)."""


def fold_id(value: str) -> str:
    """The form two ids that look the same share: NFKC, without invisible characters, stripped."""
    folded = unicodedata.normalize("NFKC", value)
    folded = "".join(ch for ch in folded if unicodedata.category(ch) != "Cf")
    return _INVISIBLE.sub("", folded).strip()


def visible(value: str) -> str:
    """An id quoted for a message, with invisible and unusual space characters escaped."""
    out = []
    for ch in value:
        category = unicodedata.category(ch)
        if ch == "'" or ch == "\\":
            out.append("\\" + ch)
        elif (category in {"Cf", "Cc", "Zl", "Zp"} or (category == "Zs" and ch != " ")) or (
            _INVISIBLE.match(ch)
        ):
            out.append(f"\\u{ord(ch):04x}" if ord(ch) <= 0xFFFF else f"\\U{ord(ch):08x}")
        else:
            out.append(ch)
    return "'" + "".join(out) + "'"


class IdRegistry:
    """The ids seen so far, to refuse a duplicate or a lookalike of an earlier one."""

    def __init__(self) -> None:
        self._first: dict[str, int] = {}  # folded id -> line of its first use
        self._exact: dict[str, str] = {}  # folded id -> the id as written, where they differ

    def __len__(self) -> int:
        return len(self._first)

    def has(self, value: str) -> bool:
        """Whether ``value``, or an id that looks the same, was seen."""
        return fold_id(value) in self._first

    def add(self, value: str, line: int) -> str | None:
        """Record ``value``, first used on ``line``; or say why it clashes with an earlier id."""
        folded = fold_id(value)
        if folded not in self._first:
            self._first[folded] = line
            if folded != value:
                self._exact[folded] = value
            return None
        earlier_line = self._first[folded]
        earlier = self._exact.get(folded, folded)
        if earlier == value:
            return (
                f"duplicate id {visible(value)} (first used on line {earlier_line}); ids must be "
                "unique and stable"
            )
        return lookalike(
            value, earlier, f"on line {earlier_line}", fix="give each case an id of its own"
        )


def lookalike(value: str, earlier: str, place: str, *, fix: str) -> str:
    """Why ``value`` is refused beside ``earlier`` (used ``place``): two ids that look the same."""
    return (
        f"id {visible(value)} looks the same as id {visible(earlier)} {place}: they differ only "
        f"by invisible, compatibility or surrounding space characters; {fix}"
    )


_SLUG_WORDS = 8
_SLUG_CHARS = 48


def derive_id(query: str) -> str:
    """A stable id from a query: its first words as a slug and a short hash of all of it.

    ``"How do I reset my password?"`` gives ``how-do-i-reset-my-password-1a2b3c4d``: readable in
    a comment, and the same on every run for the same query.
    """
    ascii_text = unicodedata.normalize("NFKD", query).encode("ascii", "ignore").decode("ascii")
    words = re.findall(r"[a-z0-9]+", ascii_text.lower())[:_SLUG_WORDS]
    slug = "-".join(words)[:_SLUG_CHARS].strip("-") or "case"
    digest = hashlib.sha256(query.encode("utf-8")).hexdigest()[:8]
    return f"{slug}-{digest}"


_GENERATED = [
    (
        re.compile(
            r"[0-9a-f]{8}-?[0-9a-f]{4}-?[124678][0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}",
            re.IGNORECASE,
        ),
        "a random or time-based UUID",
    ),
    (re.compile(r"\b0[0-9A-HJKMNP-TV-Z]{25}\b"), "a ULID"),
    (
        re.compile(r"(19|20)\d\d-?[01]\d-?[0-3]\d[T _ -]?[0-2]\d:?[0-5]\d(:?[0-5]\d)?"),
        "a date and time",
    ),
    (re.compile(r"(?<!\d)1[5-9]\d{8}(\d{3})?(?!\d)"), "a Unix timestamp"),
]


def looks_generated(value: str) -> str | None:
    """What a per-run generated id looks like, when ``value`` holds one (a UUID, a timestamp)."""
    for pattern, kind in _GENERATED:
        if pattern.search(value):
            return kind
    return None

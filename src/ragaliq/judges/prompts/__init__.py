"""The Claude judge's prompts: the system prompt, and one file per section a question asks with.

Kept apart from the judge itself, so that naming the judge a report was made with (its prompt
version, :func:`ragaliq.judges.questions.prompt_version`) does not load the Anthropic SDK. Each
question (:mod:`ragaliq.judges.questions`) names the sections it is asked with; a section two
questions share (the verdict fields) is written once. The system prompt goes before every
request, and the composing note before the sections of several questions asked at once.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path

__all__ = [
    "BLOCKS",
    "COMPOSE_PROMPT",
    "PROMPTS_DIR",
    "SYSTEM_PROMPT",
    "Prompts",
    "as_data",
]

PROMPTS_DIR = Path(__file__).parent
SYSTEM_PROMPT = "system.md"
COMPOSE_PROMPT = "compose.md"
"""Says how to answer several questions in one reply: one member per question."""


BLOCKS = ("query", "response", "context", "chunk", "claims", "facts")
"""The XML-like blocks untrusted text is framed in; text inside one must not open or close one."""
_OPENERS = frozenset("<\uff1c\ufe64\u2329\u27e8\u3008\u02c2\u2039\u276e\u276c\u1438")
"""``<`` and the characters a reader takes for it: full-width, small, angle brackets, arrows."""
_SLASHES = frozenset("/\uff0f\u2215\u2044\u29f8\u2571")
_FILLERS = frozenset("\u115f\u1160\u3164\uffa0\u2800")
"""Characters that draw as nothing although Unicode calls them letters (Hangul fillers, the
blank Braille pattern)."""
_INVISIBLE = frozenset(("Cc", "Cf", "Mn", "Me", "Zs", "Zl", "Zp"))
"""Unicode categories a reader does not see in a delimiter: controls and line breaks, format
characters (zero-width, bidi marks, tags), combining marks and variation selectors, spaces."""
_LOOK_ALIKES = str.maketrans(
    {
        **dict.fromkeys("\u0430\u03b1", "a"),
        **dict.fromkeys("\u0441\u03f2\u217d", "c"),
        **dict.fromkeys("\u0435\u0454\u03b5", "e"),
        **dict.fromkeys("\u04bb\u0570", "h"),
        **dict.fromkeys("\u0456\u03b9\u0131", "i"),
        **dict.fromkeys("\u043a\u03ba", "k"),
        **dict.fromkeys("\u04cf\u0399\u2223\u01c0", "l"),
        **dict.fromkeys("\u043c", "m"),
        **dict.fromkeys("\u0578\u03b7", "n"),
        **dict.fromkeys("\u043e\u03bf\u0585\u03c3", "o"),
        **dict.fromkeys("\u0440\u03c1", "p"),
        **dict.fromkeys("\u051b\u0566", "q"),
        **dict.fromkeys("\u0433", "r"),
        **dict.fromkeys("\u0455", "s"),
        **dict.fromkeys("\u0442\u03c4", "t"),
        **dict.fromkeys("\u057d\u03c5", "u"),
        **dict.fromkeys("\u0445\u03c7", "x"),
        **dict.fromkeys("\u0443\u04af\u03b3", "y"),
    }
)
"""Letters of other scripts that look like the Latin letters of our block names."""
_LONGEST = max(len(name) for name in BLOCKS) + 1


def _seen(char: str) -> str:
    """What a reader takes a character for: nothing, ``/``, or a lower-case Latin letter."""
    if char in _FILLERS or unicodedata.category(char) in _INVISIBLE:
        return ""
    if char in _SLASHES:
        return "/"
    return unicodedata.normalize("NFKC", char).casefold().translate(_LOOK_ALIKES)


def _opens_a_block(text: str, start: int) -> bool:
    """Whether the text after an opening bracket reads as one of our block names."""
    seen = ""
    for char in text[start : start + 64 * _LONGEST]:
        seen += _seen(char)
        if len(seen) >= _LONGEST:
            break
    name = seen[1:] if seen.startswith("/") else seen
    return name.startswith(BLOCKS)


def as_data(text: str) -> str:
    """Untrusted text made safe to put inside one of our blocks.

    Every opening bracket that begins one of our block names as a reader sees it becomes
    ``&lt;``, so the text can neither close its block nor open another: ``</ response``,
    ``< /response``, invisible characters of any kind between the letters (zero-width, bidi,
    tags, combining marks, variation selectors, fillers), full-width, mathematical or look-alike
    letters of other scripts, and brackets and slashes a reader takes for ``<`` and ``/``.
    Everything else is left as it is, so quotes from the context still match it.
    """
    if _OPENERS.isdisjoint(text):
        return text
    parts = []
    for i, char in enumerate(text):
        parts.append("&lt;" if char in _OPENERS and _opens_a_block(text, i + 1) else char)
    return "".join(parts)


@dataclass(frozen=True)
class Prompts:
    """The text of each prompt file."""

    system: str
    compose: str
    sections: Mapping[str, str]
    """Each question's sections, by file name."""

    @classmethod
    def load(cls) -> Prompts:
        """Read the prompt files (once: they ship with the package)."""
        return _load()


@cache
def _load() -> Prompts:
    read = {
        path.name: path.read_text(encoding="utf-8").strip()
        for path in sorted(PROMPTS_DIR.glob("*.md"))
    }
    return Prompts(system=read.pop(SYSTEM_PROMPT), compose=read.pop(COMPOSE_PROMPT), sections=read)

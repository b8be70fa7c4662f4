"""The Claude judge's prompts: versioned files, and the hash that names their version.

Kept apart from the judge itself, so that naming the judge a report was made with (its prompt
version) does not load the Anthropic SDK. Each task file belongs to one question
(:mod:`ragaliq.judges.questions`); the system prompt goes before every one.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "BLOCKS",
    "PROMPTS_DIR",
    "PROMPT_FILES",
    "PROMPT_VERSION",
    "SYSTEM_PROMPT",
    "Prompts",
    "as_data",
]

PROMPTS_DIR = Path(__file__).parent
SYSTEM_PROMPT = "system.md"
PROMPT_FILES = (
    SYSTEM_PROMPT,
    "extract_claims.md",
    "verify_claims.md",
    "relevance.md",
    "rate_chunks.md",
)
"""Every prompt file, in the order the version hashes them (a new one goes last)."""


def _prompt_version() -> str:
    digest = hashlib.sha256()
    for name in PROMPT_FILES:
        digest.update(name.encode())
        digest.update((PROMPTS_DIR / name).read_bytes())
    return digest.hexdigest()[:12]


PROMPT_VERSION = _prompt_version()
"""A hash of the prompt files, recorded in every report: a prompt change shows as a new judge."""


BLOCKS = ("query", "response", "context", "chunk", "claims")
"""The XML-like blocks untrusted text is framed in; text inside one must not open or close one."""
_OPENERS = "<\uff1c\ufe64\u2329\u27e8\u3008"
"""``<`` and the characters a reader takes for it: full-width, small, angle brackets."""
_SLASHES = "/\uff0f\u2215\u2044\u29f8"
_GAP = "[\\s\u00ad\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\ufeff]*"
"""Spaces and invisible characters someone may slip into a delimiter to get it past a filter."""


def _letter(char: str) -> str:
    wide = chr(ord(char) - ord("a") + 0xFF41), chr(ord(char) - ord("a") + 0xFF21)
    return f"[{char}{char.upper()}{''.join(wide)}]"


_DELIMITER = re.compile(
    f"[{_OPENERS}](?={_GAP}[{_SLASHES}]?{_GAP}(?:"
    + "|".join(_GAP.join(_letter(c) for c in name) for name in BLOCKS)
    + "))"
)


def as_data(text: str) -> str:
    """Untrusted text made safe to put inside one of our blocks.

    Every opening bracket that begins one of our block names (``<response``, ``</ response``,
    ``< /response``, with zero-width characters between the letters, in full-width letters or
    brackets) becomes ``&lt;``, so the text can neither close its block nor open another.
    Everything else is left as it is, so quotes from the context still match it.
    """
    return _DELIMITER.sub("&lt;", text)


@dataclass(frozen=True)
class Prompts:
    """The text of each prompt."""

    system: str
    tasks: Mapping[str, str]
    """Each task's prompt, by its file's name."""

    @classmethod
    def load(cls) -> Prompts:
        """Read the prompt files."""
        read = {
            name: (PROMPTS_DIR / name).read_text(encoding="utf-8").strip() for name in PROMPT_FILES
        }
        system = read.pop(SYSTEM_PROMPT)
        return cls(system=system, tasks=read)

"""The Claude judge's prompts: versioned files, and the hash that names their version.

Kept apart from the judge itself, so that naming the judge a report was made with (its prompt
version) does not load the Anthropic SDK.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

__all__ = ["PROMPTS_DIR", "PROMPT_FILES", "PROMPT_VERSION", "Prompts"]

PROMPTS_DIR = Path(__file__).parent
PROMPT_FILES = ("system.md", "extract_claims.md", "verify_claims.md", "relevance.md")


def _prompt_version() -> str:
    digest = hashlib.sha256()
    for name in PROMPT_FILES:
        digest.update(name.encode())
        digest.update((PROMPTS_DIR / name).read_bytes())
    return digest.hexdigest()[:12]


PROMPT_VERSION = _prompt_version()
"""A hash of the prompt files, recorded in every report: a prompt change shows as a new judge."""


@dataclass(frozen=True)
class Prompts:
    """The text of each prompt."""

    system: str
    extract: str
    verify: str
    relevance: str

    @classmethod
    def load(cls) -> Prompts:
        """Read the prompt files."""
        read = [(PROMPTS_DIR / name).read_text(encoding="utf-8").strip() for name in PROMPT_FILES]
        return cls(*read)

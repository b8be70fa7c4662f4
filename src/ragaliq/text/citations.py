"""Citation markers: which retrieved chunks a response's ``[2]`` or ``[doc-7]`` points at.

A marker is a match of a pattern (by default a bracketed list of references: ``[2]``,
``[doc-7]``, ``[1, 3]``); each reference in it is a chunk's number in retrieval order, from 1, or
a chunk's id as the dataset names it (an id wins over a number that reads the same). A marker
cites only the chunks its references name: ``[sic]`` names no chunk and ``[2019]`` is out of
range for any context shorter than that, so neither is a citation.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

__all__ = [
    "CITATION_PATTERN",
    "Citation",
    "CitationReader",
    "cited_chunks",
    "without_citations",
]

CITATION_PATTERN = r"\[([^\[\]\n]{1,200})\]"
"""The default marker: square brackets around one or more references, separated by commas."""
_SEPARATOR = re.compile(r"(?<!\s)\s*+[,;]\s*+")
_NUMBER = re.compile(r"[0-9]{1,9}")
_DEFAULT = re.compile(CITATION_PATTERN)


@dataclass(frozen=True, kw_only=True)
class Citation:
    """One marker of a text that cites chunks."""

    marker: str
    """The marker as written: ``[2]``."""
    start: int
    end: int
    chunks: tuple[int, ...]
    """The chunks it cites, by their number in retrieval order (from 1), in its order."""


@dataclass(frozen=True)
class CitationReader:
    """Reads the markers of one case's texts: what its chunks are called, what a marker is."""

    chunks: int
    """How many chunks were retrieved."""
    by_id: Mapping[str, int]
    """Each chunk id the dataset names, and its chunk's number (the first, for a repeated id)."""
    pattern: re.Pattern[str]

    @classmethod
    def of(
        cls, *, chunks: int, ids: Sequence[str | None] = (), pattern: re.Pattern[str] | None = None
    ) -> CitationReader:
        """The reader of a case with ``chunks`` chunks.

        Args:
            chunks: How many chunks were retrieved.
            ids: Each chunk's id in retrieval order, where the dataset names them (None for a
                chunk without one).
            pattern: What a marker looks like; its first group holds the references (the whole
                match when it has no group). :data:`CITATION_PATTERN` when None.
        """
        by_id: dict[str, int] = {}
        for number, chunk_id in enumerate(ids, start=1):
            if chunk_id is not None:
                by_id.setdefault(chunk_id, number)
        return cls(chunks, by_id, pattern or _DEFAULT)

    def find(self, text: str) -> list[Citation]:
        """The markers of ``text`` that cite at least one of the chunks."""
        found = []
        for match in self.pattern.finditer(text):
            named = match.group(1) if self.pattern.groups else match.group(0)
            cited: list[int] = []
            for reference in _SEPARATOR.split((named or "").strip()):
                number = self._number(reference)
                if number is not None and number not in cited:
                    cited.append(number)
            if cited:
                found.append(
                    Citation(
                        marker=match.group(0),
                        start=match.start(),
                        end=match.end(),
                        chunks=tuple(cited),
                    )
                )
        return found

    def _number(self, reference: str) -> int | None:
        """The chunk a reference names: a known id, else a number in range; None otherwise."""
        number = self.by_id.get(reference)
        if number is None and _NUMBER.fullmatch(reference) and 1 <= int(reference) <= self.chunks:
            number = int(reference)
        return number


def cited_chunks(citations: Sequence[Citation]) -> tuple[int, ...]:
    """Every chunk the citations cite, once each, in order of number."""
    return tuple(sorted({chunk for citation in citations for chunk in citation.chunks}))


def without_citations(text: str, citations: Sequence[Citation]) -> str:
    """The text with its citing markers taken out (and the spaces before them): what it states."""
    kept = []
    end = 0
    for citation in citations:
        kept.append(text[end : citation.start].rstrip())
        end = citation.end
    kept.append(text[end:])
    return "".join(kept) if citations else text

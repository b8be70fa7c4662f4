"""Markdown tables in a text, read as sentences.

Each body row becomes one sentence naming its cells by their headers ("Plan: Pro; Price: $20"),
so that a claim about one row is held to that row.
"""

from __future__ import annotations

import re

_TABLE_SEPARATOR = re.compile(r"^\s*+\|?\s*+:?-{2,}:?\s*+(?:\|\s*+:?-{2,}:?\s*+)*+\|?\s*+$")


def _cells(line: str) -> list[str]:
    body = line.strip()
    if body.startswith("|"):
        body = body[1:]
    if body.endswith("|") and not body.endswith("\\|"):
        body = body[:-1]
    return [cell.strip() for cell in re.split(r"(?<!\\)\|", body)]


def is_table_start(lines: list[str], i: int) -> bool:
    """Whether ``lines[i]`` is a table's header row: a separator row follows it."""
    return (
        "|" in lines[i]
        and i + 1 < len(lines)
        and bool(_TABLE_SEPARATOR.match(lines[i + 1]))
        and "|" in lines[i + 1]
    )


def table_rows(lines: list[str], i: int) -> tuple[list[str], int]:
    """Each body row of the table at ``lines[i]`` as ``Header: cell; ...``, and the next line."""
    header = [_plain(h) for h in _cells(lines[i])]
    i += 2
    rows: list[str] = []
    while i < len(lines) and "|" in lines[i] and lines[i].strip():
        cells = [_plain(c) for c in _cells(lines[i])]
        pairs = [
            f"{name}: {cell}" if name else cell
            for name, cell in zip(header, cells, strict=False)
            if cell
        ]
        if pairs:
            rows.append("; ".join(pairs))
        i += 1
    return rows, i


def _plain(cell: str) -> str:
    return re.sub(r"(\*\*|__|`)", "", cell).strip()

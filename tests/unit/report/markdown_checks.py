"""Reading rendered Markdown back: snapshots, GitHub's HTML, tables and <details> blocks."""

from __future__ import annotations

import os
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import cmarkgfm
import pytest
from cmarkgfm.cmark import Options

from ragaliq.report.markdown import UserTemplate

SNAPSHOTS = Path(__file__).parent / "snapshots"
ZWSP = "\u200b"


# --- helpers -------------------------------------------------------------------------------


def write(tmp_path: Path, name: str, source: str) -> UserTemplate:
    """A template of yours, written to ``tmp_path`` and read back."""
    path = tmp_path / name
    path.write_text(source, encoding="utf-8")
    return UserTemplate.from_file(path)


def assert_snapshot(name: str, text: str) -> None:
    path = SNAPSHOTS / name
    if os.environ.get("UPDATE_SNAPSHOTS") == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8"))
        return
    if not path.exists():
        pytest.fail(f"snapshot {path} is missing; run with UPDATE_SNAPSHOTS=1 to write it")
    assert text == path.read_bytes().decode("utf-8"), f"{name} differs from its snapshot"


def to_html(text: str) -> str:
    # Unsafe keeps raw HTML, as GitHub does before sanitising, so that any leak would show.
    return str(cmarkgfm.github_flavored_markdown_to_html(text, options=Options.CMARK_OPT_UNSAFE))


ALLOWED_TAGS = {
    "a", "code", "del", "details", "em", "h3", "h4", "li", "p", "pre", "strong", "sub",
    "summary", "table", "tbody", "td", "th", "thead", "tr", "ul",
}  # fmt: skip


class Structure(HTMLParser):
    """Tags, comments, tables and the nesting of <details> in rendered HTML."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.tags: list[str] = []
        self.comments: list[str] = []
        self.tables: list[dict[str, Any]] = []
        self.cell: list[str] | None = None
        self.row: list[str] | None = None
        self.in_head = False
        self.summaries: list[str] = []
        self.summary: list[str] | None = None
        self.text: list[str] = []
        self.problems: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        if tag == "details":
            self.stack.append("details")
        elif tag == "summary":
            if not self.stack or self.stack[-1] != "details":
                self.problems.append("<summary> outside <details>")
            self.summary = []
        elif tag == "table":
            self.tables.append({"header": [], "rows": []})
        elif tag == "thead":
            self.in_head = True
        elif tag == "tr":
            self.row = []
        elif tag in ("td", "th"):
            self.cell = []

    def handle_endtag(self, tag):
        if tag == "details":
            if not self.stack:
                self.problems.append("</details> without <details>")
            else:
                self.stack.pop()
        elif tag == "summary" and self.summary is not None:
            self.summaries.append("".join(self.summary))
            self.summary = None
        elif tag == "thead":
            self.in_head = False
        elif tag in ("td", "th") and self.cell is not None and self.row is not None:
            self.row.append(" ".join("".join(self.cell).split()))
            self.cell = None
        elif tag == "tr" and self.row is not None:
            table = self.tables[-1]
            if self.in_head:
                table["header"] = self.row
            else:
                table["rows"].append(self.row)
            self.row = None

    def handle_data(self, data):
        self.text.append(data)
        if self.cell is not None:
            self.cell.append(data)
        if self.summary is not None:
            self.summary.append(data)

    def handle_comment(self, data):
        self.comments.append(data)


def structure(text: str) -> Structure:
    parser = Structure()
    parser.feed(to_html(text))
    parser.close()
    assert not parser.problems, parser.problems
    assert not parser.stack, "unclosed <details>"
    assert text.count("<details") == text.count("</details>")
    return parser


def assert_well_formed(text: str, *, marker: str | None = None) -> Structure:
    parsed = structure(text)
    assert set(parsed.tags) <= ALLOWED_TAGS, set(parsed.tags) - ALLOWED_TAGS
    assert "script" not in parsed.tags
    expected_comments = [marker[4:-3]] if marker else []
    assert parsed.comments == expected_comments
    for table in parsed.tables:
        assert table["header"], "a table without a header"
        for row in table["rows"]:
            assert len(row) == len(table["header"]), (table["header"], row)
    for block in re.findall(r"(?:^\|.*\n)+", text, re.MULTILINE):
        pipes = {line.count("|") for line in block.splitlines()}
        assert len(pipes) == 1, block
    return parsed


def visible(text: str) -> str:
    return " ".join(text.replace(ZWSP, "").split())


def headers(parsed: Structure) -> list[list[str]]:
    return [t["header"] for t in parsed.tables]


TABLE_TAGS = {"table", "thead", "tbody", "tr", "th", "td"}
SCORES_HEADER = ["evaluator", "baseline", "head", "delta", "threshold", "status"]
REGRESSED_HEADER = ["case", "evaluator", "baseline", "head", "delta"]
CASES_HEADER = ["case", "status", "faithfulness", "hallucination", "relevance"]

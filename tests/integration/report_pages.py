"""The HTML report in a browser, for its tests: pages written to disk, what the page shows,
and screenshots decoded with the standard library."""

from __future__ import annotations

import json
import re
import struct
import zlib
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from ragaliq.gate import GateDecision
from ragaliq.models import RunReport, TestCase
from tests.integration.chromium import Browser
from tests.unit.report.html_pages import (
    Data,
    read_data,
    render_html_report,
)

TITLE = "Browser test"


@dataclass(frozen=True)
class Page:
    path: Path
    html: str
    head: RunReport
    decision: GateDecision
    cases: list[TestCase]
    data: Data

    @property
    def url(self) -> str:
        return self.path.as_uri()


def write_page(path: Path, head: RunReport, decision: GateDecision, cases: list[TestCase]) -> Page:
    html = render_html_report(head, decision=decision, cases=cases, title=TITLE)
    path.write_text(html, encoding="utf-8")
    return Page(path, html, head, decision, cases, read_data(html))


def element_id(case_id: str) -> str:
    """The id of a case's element, as the script writes it (with encodeURIComponent)."""
    return "case=" + quote(case_id, safe="-_.!~*'()")


def find_case(case_id: str) -> str:
    return f"document.getElementById({json.dumps(element_id(case_id))})"


def console_problems(browser: Browser) -> list[str]:
    """Console lines that mean the page's script failed or the CSP blocked something."""
    return [
        line
        for line in browser.console
        if re.search(r"^(error|exception|warning)|Content Security Policy|Refused to", line)
    ]


def shown_ids(browser: Browser) -> list[str]:
    return browser.evaluate(
        "Array.from(document.querySelectorAll('#case-list > details.case'))"
        ".map(function (d) { return d.dataset.caseId; })"
    )


TYPE = r"""
new Promise(function (done) {
  var box = document.getElementById("f-search");
  box.value = %s;
  box.dispatchEvent(new Event("input", { bubbles: true }));
  var want = box.value.trim().toLowerCase().split(/\s+/).join(" ");
  (function look() {
    if (document.body.dataset.query === want) {
      requestAnimationFrame(function () { done(true); });
    } else { setTimeout(look, 5); }
  })();
})
"""


def type_query(browser: Browser, text: str) -> None:
    browser.evaluate(TYPE % json.dumps(text))


def settle(browser: Browser) -> None:
    """Wait for what a click or a hash change scheduled."""
    browser.evaluate(
        "new Promise(function (done) { setTimeout(function () {"
        " requestAnimationFrame(function () { done(true); }); }, 20); })"
    )


def order(data: Data) -> list[str]:
    """The case ids as the page lists them: problems first, then in the report's order."""
    ranked = sorted(enumerate(data.cases), key=lambda item: (item[1]["r"], item[0]))
    return [record["i"] for _, record in ranked]


def haystack(data: Data, record: dict[str, Any]) -> str:
    """What the page's search looks through for a case, lower-cased."""
    parts = [record["i"], record["q"], data.text(record.get("x")) or ""]
    parts += [record.get("p", ""), record.get("a", ""), *record.get("t", [])]
    for claim in data.verdicts(record) + data.verdicts(record, "f"):
        parts += [claim["text"], claim["evidence"] or "", claim["reason"]]
    parts += [data.text(k[1]) or "" for k in record.get("k", [])]
    parts += [r["reasoning"] for r in data.results(record).values()]
    return "\n".join(parts).lower()


# --- PNG, decoded with the standard library ----------------------------------------------------

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _paeth(a: int, b: int, c: int) -> int:
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def decode_png(data: bytes) -> tuple[int, int, list[bytes], int]:
    """Width, height, unfiltered rows and bytes per pixel of an 8-bit RGB(A) PNG."""
    assert data[:8] == PNG_SIGNATURE, "not a PNG"
    pos, ihdr, idat = 8, None, []
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos : pos + 8])
        body = data[pos + 8 : pos + 8 + length]
        assert (
            zlib.crc32(kind + body)
            == struct.unpack(">I", data[pos + 8 + length : pos + 12 + length])[0]
        )
        pos += 12 + length
        if kind == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
    assert ihdr is not None and idat, "PNG without IHDR or IDAT"
    width, height, depth, colour, _, _, interlace = ihdr
    assert depth == 8 and colour in (2, 6) and interlace == 0, ihdr
    bpp = 3 if colour == 2 else 4
    raw = zlib.decompress(b"".join(idat))
    stride = width * bpp
    assert len(raw) == height * (stride + 1)
    rows: list[bytes] = []
    prev = bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        kind_of_filter = raw[start]
        line = bytearray(raw[start + 1 : start + 1 + stride])
        if kind_of_filter == 1:
            for x in range(bpp, stride):
                line[x] = (line[x] + line[x - bpp]) & 0xFF
        elif kind_of_filter == 2:
            line = bytearray((a + b) & 0xFF for a, b in zip(line, prev, strict=True))
        elif kind_of_filter == 3:
            for x in range(stride):
                left = line[x - bpp] if x >= bpp else 0
                line[x] = (line[x] + ((left + prev[x]) >> 1)) & 0xFF
        elif kind_of_filter == 4:
            for x in range(stride):
                left = line[x - bpp] if x >= bpp else 0
                corner = prev[x - bpp] if x >= bpp else 0
                line[x] = (line[x] + _paeth(left, prev[x], corner)) & 0xFF
        else:
            assert kind_of_filter == 0, f"bad filter {kind_of_filter}"
        rows.append(bytes(line))
        prev = line
    return width, height, rows, bpp


def colours(rows: list[bytes], bpp: int) -> Counter[tuple[int, int, int]]:
    counts: Counter[tuple[int, int, int]] = Counter()
    for row in rows:
        for x in range(0, len(row), bpp):
            counts[(row[x], row[x + 1], row[x + 2])] += 1
    return counts


def css_colour(html: str, variable: str) -> tuple[int, int, int]:
    """A colour of the light theme, read from the page's own CSS variables."""
    found = re.search(rf"{re.escape(variable)}:\s*#([0-9a-fA-F]{{6}})", html)
    assert found, variable
    value = found.group(1)
    return int(value[0:2], 16), int(value[2:4], 16), int(value[4:6], 16)


def near(counts: Counter[tuple[int, int, int]], target: tuple[int, int, int], tol: int = 3) -> int:
    return sum(
        n
        for rgb, n in counts.items()
        if all(abs(a - b) <= tol for a, b in zip(rgb, target, strict=True))
    )

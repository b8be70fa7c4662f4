"""The HTML report in a real headless browser: it paints, its script runs, its filters work.

Needs Chromium (Debian: ``apt-get install chromium``) at /usr/bin/chromium, or ``chromium``,
``chromium-browser`` or ``google-chrome`` on PATH; skipped only when there is none.
"""

from __future__ import annotations

import os
import re
import shutil
import struct
import subprocess
import zlib
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest

from ragaliq.baseline import record_baseline
from ragaliq.dataset import load_dataset
from ragaliq.gate import GateDecision, GateRules, compare
from ragaliq.models import RunReport, TestCase
from ragaliq.report.html import render_html_report
from tests.unit.report.test_html_report import (
    HOSTILE_CASE,
    QUICKSTART,
    SCRIPT,
    Node,
    judge,
    parse,
    seeded,
)

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
WIDTH, HEIGHT = 1280, 2000
TIMEOUT = 240  # seconds per browser run; generous for slow CI machines, never asserted on


def find_browser() -> str | None:
    if os.access("/usr/bin/chromium", os.X_OK):
        return "/usr/bin/chromium"
    for name in BROWSERS:
        found = shutil.which(name)
        if found:
            return found
    return None


@pytest.fixture(scope="module")
def browser() -> str:
    found = find_browser()
    if found is None:
        pytest.skip(
            "no headless browser found: install Chromium (Debian: apt-get install chromium) "
            "or put chromium-browser or google-chrome on PATH"
        )
    return found


@dataclass(frozen=True)
class Page:
    path: Path
    html: str
    head: RunReport
    decision: GateDecision


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Page:
    base_cases = load_dataset(QUICKSTART)
    head_cases: list[TestCase] = [*seeded(base_cases), HOSTILE_CASE]
    base, head = judge(base_cases), judge(head_cases)
    decision = compare(head, record_baseline(base), rules=GateRules())
    html = render_html_report(head, decision=decision, cases=head_cases, title="Browser test")
    path = tmp_path_factory.mktemp("html") / "report.html"
    path.write_text(html, encoding="utf-8")
    return Page(path, html, head, decision)


def run_browser(
    browser: str, workdir: Path, *args: str, url: str
) -> subprocess.CompletedProcess[str]:
    profile = workdir / "profile"
    command = [
        browser,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--hide-scrollbars",
        "--force-device-scale-factor=1",
        "--enable-logging=stderr",
        "--v=0",
        f"--user-data-dir={profile}",
        *args,
        url,
    ]
    env = {**os.environ, "HOME": str(workdir)}
    return subprocess.run(
        command, capture_output=True, text=True, timeout=TIMEOUT, check=False, env=env
    )


def console_problems(stderr: str) -> list[str]:
    """Console lines that mean the page's script failed or the CSP blocked something."""
    return [
        line
        for line in stderr.splitlines()
        if "CONSOLE" in line
        and re.search(r"Uncaught|Content Security Policy|Refused to|Failed to load", line)
    ]


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


# --- the tests ---------------------------------------------------------------------------------


def test_screenshot_paints_the_report(browser: str, page: Page, tmp_path: Path):
    shot = tmp_path / "shot.png"
    result = run_browser(
        browser,
        tmp_path,
        f"--window-size={WIDTH},{HEIGHT}",
        "--virtual-time-budget=2000",
        f"--screenshot={shot}",
        url=page.path.as_uri(),
    )
    assert shot.is_file(), f"no screenshot (exit {result.returncode}):\n{result.stderr[-3000:]}"
    data = shot.read_bytes()
    assert data[:8] == PNG_SIGNATURE
    assert len(data) > 50_000, f"{len(data)} bytes: a blank page is a few kB"
    width, height, rows, bpp = decode_png(data)
    assert (width, height) == (WIDTH, HEIGHT)
    counts = colours(rows, bpp)
    assert len(counts) > 100, "the screenshot is (almost) one colour"
    assert counts.most_common(1)[0][1] < 0.9 * width * height
    # the verdict highlights are painted: supported claims and at least one problem claim
    assert near(counts, css_colour(page.html, "--sup-bg")) > 1000
    problem = sum(
        near(counts, css_colour(page.html, name)) for name in ("--con-bg", "--nei-bg", "--par-bg")
    )
    assert problem > 500
    assert console_problems(result.stderr) == []


def visible_cases(dom_html: str) -> tuple[Node, list[Node], list[Node]]:
    dom = parse(dom_html).root
    cases = dom.find_all("details", cls="case")
    return dom, [c for c in cases if "hidden" not in c.attrs], cases


@pytest.mark.parametrize(
    ("query", "keep"),
    [
        ("", lambda case: True),
        ("?verdict=unsupported", lambda case: any(c.verdict != "SUPPORTED" for c in case.claims)),
        (
            "?evaluator=failing:hallucination",
            lambda case: case.results["hallucination"].passed is False,
        ),
        ("?new=1", None),
    ],
    ids=["no-filter", "unsupported", "failing-hallucination", "new-only"],
)
def test_script_runs_and_filters(browser: str, page: Page, tmp_path: Path, query: str, keep):
    result = run_browser(
        browser,
        tmp_path,
        "--virtual-time-budget=2000",
        "--dump-dom",
        url=page.path.as_uri() + query,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert console_problems(result.stderr) == []
    dom, shown, cases = visible_cases(result.stdout)
    assert dom.find("body").attrs.get("data-ready") == "true", "the page's script did not finish"
    assert "hidden" not in dom.find(cls="filters").attrs
    assert len(dom.find_all("script")) == 1
    assert any(SCRIPT in node.text() for node in dom.find_all(cls="case-query"))
    assert len(cases) == len(page.head.cases)

    if keep is None:
        expected = {c.case_id for c in page.decision.new_hallucinations}
    else:
        expected = {c.id for c in page.head.cases if keep(c)}
    assert {c.attrs["data-case-id"] for c in shown} == expected
    assert dom.find(id="f-shown").text() == f"Showing {len(expected)} of {len(cases)} cases"
    assert ("hidden" in dom.find(id="f-empty").attrs) == bool(expected)


def test_hidden_verdicts_are_unhighlighted(browser: str, page: Page, tmp_path: Path):
    result = run_browser(
        browser,
        tmp_path,
        "--virtual-time-budget=2000",
        "--dump-dom",
        url=page.path.as_uri() + "?hide=SUPPORTED,NOT_ENOUGH_INFO",
    )
    dom, _, _ = visible_cases(result.stdout)
    body = dom.find("body")
    assert {"hide-SUPPORTED", "hide-NOT_ENOUGH_INFO"} <= body.classes
    assert "hide-CONTRADICTED" not in body.classes
    toggles = [n for n in dom.find_all("input") if "data-toggle-verdict" in n.attrs]
    assert len(toggles) == 4
    assert all("hidden" not in n.attrs for n in toggles)

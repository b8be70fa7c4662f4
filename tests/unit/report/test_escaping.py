from __future__ import annotations

import pytest

from ragaliq.report._sandbox import markdown_environment
from ragaliq.report._templates import templates_root
from ragaliq.report.markdown import (
    escape_markdown,
)
from tests.unit.report.decisions import DASH, HOSTILE, MINUS
from tests.unit.report.markdown_checks import TABLE_TAGS, ZWSP, Structure, to_html, visible

# --- escape_markdown -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "escaped"),
    [
        ("<script>alert(1)</script>", "&lt;script&gt;alert(1)&lt;/script&gt;"),
        ("</details>", "&lt;/details&gt;"),
        ("<!-- x -->", "&lt;!-- x --&gt;"),
        ("a & b &amp; c", "a &amp; b &amp;amp; c"),
        ("| a | b |", "&#124; a &#124; b &#124;"),
        ("`code`", "&#96;code&#96;"),
        ("*em* _em_", "&#42;em&#42; &#95;em&#95;"),
        ("[link](https://x.test)", f"&#91;link&#93;(https{ZWSP}://x.test)"),
        ("![img](x.png)", "!&#91;img&#93;(x.png)"),
        ("see https://x.test/a_b", f"see https{ZWSP}://x.test/a&#95;b"),
        ("www.x.test and mailto:a@b.test", f"www{ZWSP}.x.test and mailto{ZWSP}:a@{ZWSP}b.test"),
        ("see GH-123 and gh-7", f"see GH-{ZWSP}123 and gh-{ZWSP}7"),
        ("~~gone~~", "&#126;&#126;gone&#126;&#126;"),
        ("$x^2$", "&#36;x^2&#36;"),
        ("back\\slash", "back&#92;slash"),
        ("# heading", "&#35; heading"),
        ("- item", "&#45; item"),
        ("+ item", "&#43; item"),
        ("= setext", "= setext"),
        ("0.5 and 2024. 3.14", "0.5 and 2024. 3.14"),
        ("1. ordered", "1&#46; ordered"),
        ("12) ordered", "12&#41; ordered"),
        ("> quote", "&gt; quote"),
        ("well-known v2.4, e.g. 1.5 MB/s # not a heading", None),
        ("@octocat", f"@{ZWSP}octocat"),
        ("ping @octo-org/team now", f"ping @{ZWSP}octo-org/team now"),
        ("a @ b", "a @ b"),
        ("fixes #12", f"fixes #{ZWSP}12"),
        ("C# and #hash", "C# and #hash"),
        ("one\ntwo\r\nthree\n\n- four", "one two three - four"),
        ("tab\there\x00nul\u2028sep", "tab here nul sep"),
        ("    indented code", "indented code"),
        ("abc\u202edcba", "abcdcba"),
        ("a\u200eb\u200fc\u061cd\u2066e\u2069f\u202ag", "abcdefg"),
        (
            "fixed in 0123456789abcdef0123456789abcdef01234567 today",
            "fixed in 0123456\u200b789abcdef0123456789abcdef01234567 today",
        ),
        (
            "build 12345678901234567890123456789012345678901",
            "build 12345678901234567890123456789012345678901",
        ),
        ("", ""),
    ],
)
def test_escape_markdown(raw, escaped):
    assert escape_markdown(raw) == (raw if escaped is None else escaped)


def test_escape_markdown_takes_any_object():
    assert escape_markdown(None) == ""
    assert escape_markdown(0.5) == "0.5"


HAZARDS = [
    HOSTILE,
    "- a\n- b",
    "1. first\n2. second",
    "# title",
    "    code block",
    "```\nfence\n```",
    "| x | y |\n|---|---|\n| 1 | 2 |",
    "**bold** and __bold__",
    "<details><summary>s</summary>",
    "&lt;script&gt; &#60;b&#62;",
    "line ending with two spaces  \nnext",
    "trailing backslash \\",
    "https://example.test/a_b_c <https://x.test>",
    "footnote[^1] and :smile:",
]


@pytest.mark.parametrize("raw", HAZARDS)
@pytest.mark.parametrize(
    ("wrap", "before", "after"),
    [
        ("- {}\n", "", ""),
        ("| h |\n|---|\n| {} |\n", "h ", ""),
        ("<details>\n<summary>{}</summary>\n\nbody\n\n</details>\n", "", " body"),
        ("Before {} after\n", "Before ", " after"),
    ],
    ids=["list-item", "table-cell", "html-summary", "paragraph"],
)
def test_escaped_text_reads_back_as_itself(raw, wrap, before, after):
    parsed = Structure()
    parsed.feed(to_html(wrap.format(escape_markdown(raw))))
    shown = visible("".join(parsed.text))
    assert shown.startswith(before) and shown.endswith(after)
    assert shown[len(before) : len(shown) - len(after)] == visible(raw)
    assert set(parsed.tags) <= {"details", "li", "p", "summary", "ul"} | TABLE_TAGS
    assert not parsed.comments


# --- filters -------------------------------------------------------------------------------


def render_string(source: str, **context: object) -> str:
    env, _ = markdown_environment(None)
    return str(env.from_string(source).render(context))


@pytest.mark.parametrize(
    ("source", "value", "expected"),
    [
        ("{{ v | score }}", 0.87654, "0.877"),
        ("{{ v | score }}", None, DASH),
        ("{{ v | delta }}", 0.0123, "+0.012"),
        ("{{ v | delta }}", -0.05, f"{MINUS}0.050"),
        ("{{ v | delta }}", -0.0001, "±0.000"),
        ("{{ v | delta }}", None, DASH),
        ("{{ v | pct }}", 0.875, "87.5%"),
        ("{{ v | pct }}", None, DASH),
        ("{{ v | usd }}", 1234.5, "$1,234.5000"),
        ("{{ v | shorten(10) }}", "abcdefghijklmnop", "abcdefghi…"),
        ("{{ v | shorten(10) }}", "short", "short"),
        ("{{ v | shorten(10) | md }}", "<b>bold</b> text", "&lt;b&gt;bold&lt;/…"),
        ("{{ v | plural('claim') }}", 1, "1 claim"),
        ("{{ v | plural('claim') }}", 1234, "1,234 claims"),
        ("{{ v | verdict }}", "NOT_ENOUGH_INFO", "not in the context"),
    ],
)
def test_filters(source, value, expected):
    assert render_string(source, v=value) == expected


def test_markdown_and_html_share_one_filter_per_name():
    from ragaliq.report import html
    from ragaliq.report.filters import SHARED_FILTERS

    markdown_env, _ = markdown_environment(None)
    html_env = html._environment()
    for name, function in SHARED_FILTERS.items():
        assert html_env.filters[name] is function
        assert markdown_env.filters[name].__wrapped__ is function  # bounded, the same function
    for template in ("comment.md.j2", "summary.md.j2", "report.html.j2"):
        source = (templates_root() / template).read_text(encoding="utf-8")
        assert "verdict_label" not in source and "| format(" not in source, template

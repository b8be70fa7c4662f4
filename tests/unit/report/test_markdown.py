from __future__ import annotations

import asyncio
import os
import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import cmarkgfm
import pytest
from cmarkgfm.cmark import Options

from ragaliq.baseline import Provenance, record_baseline
from ragaliq.dataset import load_dataset
from ragaliq.errors import TemplateError
from ragaliq.evaluators import FaithfulnessEvaluator, HallucinationEvaluator, RelevanceEvaluator
from ragaliq.gate import (
    CaseFailure,
    ClaimChange,
    EvaluatorDecision,
    GateDecision,
    GateRules,
    RegressedCase,
    compare,
)
from ragaliq.judges import OfflineJudge
from ragaliq.models import (
    CaseResult,
    EvaluationResult,
    EvaluatorInfo,
    EvaluatorSummary,
    JudgeInfo,
    RunReport,
    RunSummary,
    Usage,
)
from ragaliq.report import markdown
from ragaliq.report._sandbox import markdown_environment
from ragaliq.report._templates import TemplateLoader, templates_root
from ragaliq.report.markdown import (
    COMMENT_LIMIT,
    SUMMARY_LIMIT,
    UserTemplate,
    escape_markdown,
    render_comment,
    render_summary,
)
from ragaliq.report.marker import comment_marker
from ragaliq.runner import run_suite
from tests.conftest import REPO_ROOT

SNAPSHOTS = Path(__file__).parent / "snapshots"
ZWSP = "\u200b"
DASH = "\N{EN DASH}"
MINUS = "\N{MINUS SIGN}"
DETAILS_URL = "https://github.com/northwind/assistant/actions/runs/4242"
HOSTILE = (
    "<script>alert(1)</script> </details> | a | b | `tick` @octocat <!-- x --> first line\n"
    "\n- item\n# heading *em* _u_ [link](https://x.test) ~~s~~ $x$ #12 \\ &amp; <img src=x>"
)


# --- fixtures ------------------------------------------------------------------------------


def claude() -> JudgeInfo:
    return JudgeInfo(provider="anthropic", model="claude-sonnet-4-5", prompt_version="2f1c9a7e04b3")


def provenance() -> Provenance:
    versions = {"faithfulness": "1", "hallucination": "1", "relevance": "1"}
    return Provenance(
        judge_provider="anthropic",
        judge_model="claude-sonnet-4-5",
        prompt_version="2f1c9a7e04b3",
        evaluator_versions=versions,
    )


def change(case_id: str, query: str, claim: str, **overrides: Any) -> ClaimChange:
    values: dict[str, Any] = {
        "case_id": case_id,
        "query": query,
        "claim": claim,
        "verdict": "CONTRADICTED",
        "evidence": None,
        "reason": "",
        "confidence": 0.9,
    }
    values.update(overrides)
    return ClaimChange(**values)


REFUND_Q = "Can I get a refund on my annual Personal plan?"
RESTORE_Q = "How do I restore a folder I deleted by mistake?"
API_Q = "What are the rate limits for the Northwind Cloud API?"


def realistic_decision(**overrides: Any) -> GateDecision:
    values: dict[str, Any] = {
        "passed": False,
        "failures": (
            "hallucination: 0.742 is below the threshold 0.75",
            "faithfulness: 0.812 dropped 0.071 from the baseline 0.883 (max_drop 0.05)",
            "1 case could not be judged (gate.on_error: fail)",
        ),
        "first_run": False,
        "comparable": True,
        "evaluators": {
            "faithfulness": EvaluatorDecision(
                head=0.8125,
                baseline=0.883333,
                delta=-0.070833,
                threshold=0.7,
                max_drop=0.05,
                status="regressed",
                passed=False,
                errors=1,
            ),
            "hallucination": EvaluatorDecision(
                head=0.741667,
                baseline=0.883333,
                delta=-0.141667,
                threshold=0.75,
                max_drop=0.05,
                status="below_threshold",
                passed=False,
                errors=1,
            ),
            "relevance": EvaluatorDecision(
                head=0.9745,
                baseline=0.962,
                delta=0.0125,
                threshold=0.6,
                max_drop=0.05,
                status="pass",
                passed=True,
            ),
        },
        "new_hallucinations": (
            change(
                "billing-refund-window",
                REFUND_Q,
                "Annual Personal plans can be refunded if you cancel within 30 days of the "
                "initial purchase or renewal date.",
                evidence="Northwind Cloud offers a full refund on annual Personal, Team and "
                "Business subscriptions if you cancel within 14 days of the initial purchase "
                "or renewal date.",
                reason="The context gives 14 days, not 30.",
                confidence=0.95,
            ),
            change(
                "restore-deleted-folder",
                RESTORE_Q,
                "Folders can be restored for 365 days on Team, Business and Enterprise plans.",
                evidence="Deleted files and folders can be restored for 30 days on the Free and "
                "Personal plans and for 180 days on Team, Business and Enterprise plans.",
                reason="The context gives 180 days for these plans.",
                confidence=0.92,
            ),
            change(
                "restore-deleted-folder",
                RESTORE_Q,
                "Restored folders keep their original sharing settings.",
                verdict="NOT_ENOUGH_INFO",
                reason="The context does not say what happens to sharing settings.",
                confidence=0.71,
            ),
        ),
        "fixed_hallucinations": (
            change(
                "mobile-offline-files",
                "Can I use offline files on the Free plan?",
                "Yes, offline files are available on the Free plan.",
                evidence="Offline files are not available on the Free plan.",
                reason="The context says the opposite.",
            ),
        ),
        "regressed_cases": (
            RegressedCase(
                case_id="restore-deleted-folder",
                query=RESTORE_Q,
                evaluator="hallucination",
                baseline=1.0,
                head=0.333333,
            ),
            RegressedCase(
                case_id="api-rate-limits",
                query=API_Q,
                evaluator="faithfulness",
                baseline=1.0,
                head=None,
            ),
        ),
        "errors": (
            CaseFailure(
                case_id="api-rate-limits",
                query=API_Q,
                error="the judge replied twice without a verdict for claim 2",
            ),
        ),
        "added_cases": ("sso-okta-scim",),
        "removed_cases": (),
        "notices": ("1 case is new since the baseline: sso-okta-scim.",),
        "cases": 21,
        "usage": Usage(
            calls=42,
            input_tokens=61_480,
            output_tokens=9_312,
            cache_read_tokens=40_960,
            cache_write_tokens=4_096,
            cache_hits=3,
            cost_usd=0.3217,
        ),
        "judge": claude(),
        "baseline_provenance": provenance(),
        "baseline_commit": "3f2c1e9a7b5d40c8e1f2a3b4c5d6e7f8a9b0c1d2",
    }
    values.update(overrides)
    return GateDecision(**values)


def result(name: str, score: float | None, threshold: float) -> EvaluationResult:
    if score is None:
        return EvaluationResult(evaluator=name, score=None, passed=None, status="error")
    return EvaluationResult(evaluator=name, score=score, passed=score >= threshold)


THRESHOLDS = {"faithfulness": 0.7, "hallucination": 0.75, "relevance": 0.6}


def case(case_id: str, query: str, scores: tuple[float | None, ...]) -> CaseResult:
    error = scores[0] is None
    return CaseResult(
        id=case_id,
        input_hash="0" * 64,
        status="error" if error else "ok",
        query=query,
        results={
            name: result(name, score, THRESHOLDS[name])
            for name, score in zip(THRESHOLDS, scores, strict=True)
        },
        error="the judge replied twice without a verdict for claim 2" if error else None,
    )


def realistic_report() -> RunReport:
    cases = (
        case("billing-refund-window", REFUND_Q, (0.5, 0.5, 1.0)),
        case("sso-okta-scim", "Does SSO with Okta provision users?", (1.0, 1.0, 0.875)),
        case("restore-deleted-folder", RESTORE_Q, (0.333333, 0.333333, 0.9375)),
        case("api-rate-limits", API_Q, (None, None, None)),
        case("mobile-offline-files", "Can I use offline files on the Free plan?", (1.0, 1.0, 1.0)),
    )
    return RunReport(
        judge=claude(),
        evaluators={n: EvaluatorInfo(threshold=t, version="1") for n, t in THRESHOLDS.items()},
        summary=RunSummary(
            cases=len(cases),
            errors=1,
            evaluators={
                n: EvaluatorSummary(score=0.8, pass_rate=0.75, passed=True, threshold=t)
                for n, t in THRESHOLDS.items()
            },
        ),
        usage=Usage(),
        cases=cases,
    )


def first_run_decision() -> GateDecision:
    return realistic_decision(
        passed=True,
        failures=(),
        first_run=True,
        comparable=False,
        evaluators={
            "faithfulness": EvaluatorDecision(
                head=0.9,
                baseline=None,
                delta=None,
                threshold=0.7,
                max_drop=0.05,
                status="pass",
                passed=True,
            ),
        },
        new_hallucinations=(),
        hallucinations=realistic_decision().new_hallucinations[:2],
        fixed_hallucinations=(),
        regressed_cases=(),
        errors=(),
        added_cases=(),
        notices=("No baseline yet: only thresholds apply.",),
        baseline_provenance=None,
        baseline_commit=None,
    )


def hostile_decision() -> GateDecision:
    hostile_change = change(
        "case|`x`</details>@octocat",
        HOSTILE,
        HOSTILE,
        evidence=HOSTILE,
        reason=HOSTILE,
    )
    return realistic_decision(
        failures=(HOSTILE,),
        new_hallucinations=(hostile_change, *realistic_decision().new_hallucinations),
        fixed_hallucinations=(hostile_change,),
        regressed_cases=(
            RegressedCase(
                case_id=HOSTILE, query=HOSTILE, evaluator="faithfulness", baseline=1.0, head=0.5
            ),
        ),
        errors=(CaseFailure(case_id=HOSTILE, query=HOSTILE, error=HOSTILE),),
        notices=(HOSTILE,),
        baseline_commit=HOSTILE,
    )


def many_claims_decision(count: int) -> GateDecision:
    claims = tuple(
        change(
            f"case-{i // 3:04d}",
            f"Question number {i // 3} about the refund policy of the annual plans?",
            f"Claim {i}: annual plans can be refunded within {30 + i} days of purchase.",
            evidence="Northwind Cloud offers a full refund on annual subscriptions if you cancel "
            "within 14 days of the initial purchase or renewal date.",
            reason=f"The context gives 14 days, not {30 + i}.",
        )
        for i in range(count)
    )
    return realistic_decision(new_hallucinations=claims)


# --- helpers -------------------------------------------------------------------------------


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


# --- snapshots -----------------------------------------------------------------------------


def test_comment_snapshot():
    text = render_comment(realistic_decision(), details_url=DETAILS_URL)
    assert_snapshot("comment.md", text)


def test_summary_snapshot():
    text = render_summary(realistic_decision(), report=realistic_report())
    assert_snapshot("summary.md", text)


def test_first_run_comment_snapshot():
    text = render_comment(first_run_decision(), comment_id="docs-bot")
    assert_snapshot("comment_first_run.md", text)


# --- structure of the rendered Markdown ----------------------------------------------------


def test_comment_starts_with_the_marker_and_renders_to_balanced_html():
    text = render_comment(realistic_decision(), comment_id="nightly", details_url=DETAILS_URL)
    marker = comment_marker("nightly")
    assert text.split("\n", 1)[0] == marker
    parsed = assert_well_formed(text, marker=marker)
    assert headers(parsed) == [SCORES_HEADER, REGRESSED_HEADER]
    scores = parsed.tables[0]["rows"]
    assert [row[0] for row in scores] == ["faithfulness", "hallucination", "relevance"]
    assert scores[0][1:5] == ["0.883", "0.812", f"{MINUS}0.071", "0.700"]
    assert scores[1][5] == "❌ below threshold (1 error)"
    assert scores[2][3] == "+0.013"
    assert parsed.tables[1]["rows"][1] == [
        "api-rate-limits",
        "faithfulness",
        "1.000",
        "error",
        DASH,
    ]


def test_comment_groups_new_claims_per_case_with_query_verdict_and_evidence():
    parsed = structure(render_comment(realistic_decision()))
    assert parsed.summaries[:2] == [
        f"billing-refund-window · {REFUND_Q} · 1 claim",
        f"restore-deleted-folder · {RESTORE_Q} · 2 claims",
    ]
    text = visible("".join(parsed.text))
    assert "contradicted: Annual Personal plans can be refunded if you cancel within 30" in text
    assert "evidence: Northwind Cloud offers a full refund" in text
    assert "why: The context gives 14 days, not 30. (confidence 0.95)" in text
    assert "not in the context: Restored folders keep their original sharing settings." in text


def test_comment_lists_everything_else():
    text = render_comment(realistic_decision())
    assert "### ❌ RagaliQ Gate failed" in text
    assert "- hallucination: 0.742 is below the threshold 0.75" in text
    assert "1 claim no longer hallucinated" in text
    assert "2 case scores dropped by more than the tolerance" in text
    assert "1 case could not be judged" in text
    assert "the judge replied twice without a verdict for claim 2" in text
    assert "1 case is new since the baseline: sso&#45;okta&#45;scim." not in text
    assert "- 1 case is new since the baseline: sso-okta-scim." in text
    assert "42 judge calls · 61,480 tokens in / 9,312 out" in text
    assert "&#36;0.3217 · 3 cache hits" in text
    assert "anthropic/claude-sonnet-4-5, prompt 2f1c9a7e04b3" in text
    assert "commit 3f2c1e9a7b5d" in text
    assert "heuristic" not in text
    assert "ragaliq baseline record" in text


def test_passed_first_run_shows_thresholds_only():
    text = render_comment(first_run_decision())
    parsed = assert_well_formed(text, marker=comment_marker())
    assert "### ✅ RagaliQ Gate passed" in text
    assert "only the thresholds apply" in text
    assert parsed.tables[0]["rows"] == [["faithfulness", DASH, "0.900", DASH, "0.700", "✅ pass"]]
    assert "Baseline: none yet" in text
    assert "Newly hallucinated" not in text


def test_incomparable_baseline_and_heuristic_judge_are_flagged():
    decision = realistic_decision(
        comparable=False,
        judge=JudgeInfo(
            provider="offline", model="offline-heuristic", prompt_version="9f77", heuristic=True
        ),
    )
    text = render_comment(decision)
    assert "score drops are shown but do not fail the gate" in text
    assert "heuristic offline judge" in text
    assert "judged by anthropic/claude-sonnet-4-5, prompt 2f1c9a7e04b3" in text


def test_summary_has_the_tables_and_every_case():
    text = render_summary(realistic_decision(), report=realistic_report())
    parsed = assert_well_formed(text)
    assert not text.startswith("<!--")
    assert headers(parsed) == [SCORES_HEADER, REGRESSED_HEADER, CASES_HEADER]
    rows = parsed.tables[2]["rows"]
    assert [row[0] for row in rows] == [
        "api-rate-limits",
        "billing-refund-window",
        "restore-deleted-folder",
        "sso-okta-scim",
        "mobile-offline-files",
    ]
    assert rows[0] == ["api-rate-limits", "⚠️ error", "error", "error", "error"]
    assert rows[1] == [
        "billing-refund-window",
        "❌ below threshold",
        "0.500 ❌",
        "0.500 ❌",
        "1.000",
    ]
    assert rows[3] == ["sso-okta-scim", "✅ pass", "1.000", "1.000", "0.875"]
    assert "1 case added since the baseline" in visible("".join(parsed.summaries))


def test_quickstart_with_a_seeded_regression_renders_every_new_claim():
    cases = load_dataset(REPO_ROOT / "examples/quickstart/rag_outputs.jsonl")
    evaluators = [FaithfulnessEvaluator(), HallucinationEvaluator(), RelevanceEvaluator()]

    def judged(edits: dict[str, tuple[str, str]]) -> RunReport:
        edited = [
            c.model_copy(update={"response": c.response.replace(*edits[c.id])})
            if c.id in edits
            else c
            for c in cases
        ]
        return asyncio.run(run_suite(edited, judge=OfflineJudge(), evaluators=evaluators))

    baseline = record_baseline(judged({}), commit="3f2c1e9a7b")
    head = judged(
        {
            "billing-refund-window": ("within 30 days", "within 14 days"),
            "restore-deleted-folder": ("for 180 days", "for 365 days"),
            "api-rate-limits": ("600 requests per minute", "6,000 requests per minute"),
        }
    )
    decision = compare(head, baseline, rules=GateRules(fail_on_new_hallucinations=True))
    assert decision.new_hallucinations
    comment = render_comment(decision, details_url=DETAILS_URL)
    parsed = assert_well_formed(comment, marker=comment_marker())
    assert headers(parsed)[0] == SCORES_HEADER
    text = visible("".join(parsed.text))
    for claim in decision.new_hallucinations:
        assert visible(claim.claim) in text
    summary = render_summary(decision, report=head)
    parsed = assert_well_formed(summary)
    assert len(parsed.tables[-1]["rows"]) == len(head.cases)


# --- untrusted text ------------------------------------------------------------------------


@pytest.mark.parametrize("render", ["comment", "summary"])
def test_hostile_text_cannot_break_out(render):
    decision = hostile_decision()
    if render == "comment":
        text = render_comment(decision)
        parsed = assert_well_formed(text, marker=comment_marker())
        assert headers(parsed) == [SCORES_HEADER, REGRESSED_HEADER]
    else:
        text = render_summary(decision, report=realistic_report())
        parsed = assert_well_formed(text)
        assert headers(parsed) == [SCORES_HEADER, REGRESSED_HEADER, CASES_HEADER]
    assert "<script" not in text and "<img" not in text and "<!-- x" not in text
    assert "@octocat" not in "".join(parsed.text)
    assert "@octocat" not in text
    assert visible(parsed.tables[1]["rows"][0][0]) == visible(HOSTILE)
    query = " ".join(HOSTILE.split())[:79].rstrip() + "…"
    assert f"case|`x`</details>@octocat · {query} · 1 claim" in [
        visible(s) for s in parsed.summaries
    ]


def test_hostile_text_makes_no_links_headings_or_strikethrough():
    parsed = assert_well_formed(render_comment(hostile_decision()), marker=comment_marker())
    assert not {"a", "del", "em", "h1", "h2", "img", "script", "ol"} & set(parsed.tags)
    assert "[link](https://x.test)" in visible("".join(parsed.text))


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


# --- size limits ---------------------------------------------------------------------------


def test_three_thousand_new_claims_fit_in_one_comment():
    decision = many_claims_decision(3000)
    text = render_comment(decision, details_url=DETAILS_URL)
    assert len(text) <= COMMENT_LIMIT
    assert text.split("\n", 1)[0] == comment_marker()
    parsed = assert_well_formed(text, marker=comment_marker())
    assert headers(parsed)[0] == SCORES_HEADER
    more = re.search(
        r"^… and ([\d,]+) more newly hallucinated claims in \[the job summary\]\("
        + re.escape(DETAILS_URL)
        + r"\)\.$",
        text,
        re.MULTILINE,
    )
    assert more is not None
    shown = text.count("- **contradicted**:")
    assert shown + int(more.group(1).replace(",", "")) == 3000
    assert shown > 100
    assert "the judge replied twice without a verdict for claim 2" in text


def test_three_thousand_new_claims_fit_in_the_summary():
    decision = many_claims_decision(3000)
    text = render_summary(decision, report=realistic_report())
    assert len(text.encode("utf-8")) <= SUMMARY_LIMIT
    assert_well_formed(text)


def test_new_claims_are_kept_longest_when_cutting():
    fixed = tuple(
        change(f"fixed-{i}", "q?", f"Fixed claim number {i} " + "x" * 200) for i in range(400)
    )
    decision = realistic_decision(fixed_hallucinations=fixed)
    text = render_comment(decision, limit=20_000)
    assert len(text) <= 20_000
    assert_well_formed(text, marker=comment_marker())
    assert "evidence: Northwind Cloud offers a full refund" in text
    assert "more fixed claims in the job summary" in text
    assert "more newly hallucinated" not in text


def test_cuts_step_by_step_and_says_so():
    decision = many_claims_decision(60)
    full = render_comment(decision)
    assert "evidence:" in full
    assert full.count("- **contradicted**:") == 60
    half = render_comment(decision, limit=len(full) // 2)
    assert len(half) <= len(full) // 2
    assert_well_formed(half, marker=comment_marker())
    assert "evidence:" not in half
    assert half.count("- **contradicted**:") == 60
    third = render_comment(decision, limit=len(full) // 3)
    assert len(third) <= len(full) // 3
    assert_well_formed(third, marker=comment_marker())
    shown = third.count("- **contradicted**:")
    assert 0 < shown < 60
    assert f"… and {60 - shown} more newly hallucinated claims in the job summary." in third
    tiny = render_comment(decision, limit=3000)
    assert_well_formed(tiny, marker=comment_marker())
    assert "1 more fixed claim in the job summary" in tiny
    assert "2 more regressed case scores in the job summary" in tiny
    assert "1 more case error in the job summary" in tiny


def test_a_limit_below_the_shortest_rendering_is_a_template_error():
    with pytest.raises(TemplateError, match="even with every list cut"):
        render_comment(realistic_decision(), limit=500)
    with pytest.raises(TemplateError, match="job summary"):
        render_summary(realistic_decision(), report=realistic_report(), limit=500)


def test_summary_limit_counts_bytes():
    decision = realistic_decision()
    text = render_summary(decision, report=realistic_report())
    size = len(text.encode("utf-8"))
    assert size > len(text)
    cut = render_summary(decision, report=realistic_report(), limit=size - 1)
    assert len(cut.encode("utf-8")) <= size - 1


# --- user templates ------------------------------------------------------------------------


def write(tmp_path: Path, name: str, source: str) -> UserTemplate:
    path = tmp_path / name
    path.write_text(source, encoding="utf-8")
    return UserTemplate.from_file(path)


def test_user_template_extends_ours_and_overrides_a_block(tmp_path):
    template = write(
        tmp_path,
        "custom.md.j2",
        '{% extends "comment.md.j2" %}{% block footer %}custom footer{% endblock %}',
    )
    text = render_comment(realistic_decision(), template=template)
    assert text.split("\n", 1)[0] == comment_marker()
    assert "### ❌ RagaliQ Gate failed" in text
    assert "Newly hallucinated claims (3)" in text
    assert text.rstrip().endswith("custom footer")
    assert "claude-sonnet-4-5, prompt" not in text
    assert_well_formed(text, marker=comment_marker())


def test_user_template_named_like_ours_can_still_extend_ours(tmp_path):
    template = write(
        tmp_path,
        "comment.md.j2",
        '{% extends "comment.md.j2" %}{% block usage %}## Our RAG gate\n\n{% endblock %}',
    )
    text = render_comment(realistic_decision(), template=template)
    assert "## Our RAG gate" in text
    assert "RagaliQ Gate failed" in text


@pytest.mark.parametrize("block", ["headline", "notices", "marker"])
def test_a_template_cannot_override_the_verdict_the_notices_or_the_marker(tmp_path, block):
    template = write(
        tmp_path,
        "liar.md.j2",
        f'{{% extends "comment.md.j2" %}}{{% block {block} %}}### ✅ passed{{% endblock %}}',
    )
    with pytest.raises(TemplateError, match=f"overrides the block {block}.*the gate's"):
        render_comment(realistic_decision(), template=template)


def test_a_template_that_says_passed_elsewhere_keeps_the_real_headline_first(tmp_path):
    template = write(
        tmp_path,
        "liar.md.j2",
        '{% extends "comment.md.j2" %}{% block scores %}### ✅ RagaliQ Gate passed\n\n'
        "{% endblock %}",
    )
    text = render_comment(realistic_decision(), template=template)
    assert text.index("### ❌ RagaliQ Gate failed") < text.index("### ✅ RagaliQ Gate passed")
    notices = realistic_decision().notices
    assert all(escape_markdown(n)[:40] in text for n in notices)


def test_a_template_cannot_hide_the_notices_in_an_html_comment(tmp_path):
    template = write(
        tmp_path,
        "hide.md.j2",
        '{% extends "comment.md.j2" %}{% block cases %}<!--{% endblock %}'
        "{% block update_baseline %}-->{% endblock %}",
    )
    with pytest.raises(TemplateError, match="HTML comment"):
        render_comment(realistic_decision(), template=template)


def test_a_standalone_template_is_refused_since_it_would_drop_the_verdict(tmp_path):
    template = write(tmp_path, "plain.md.j2", "### ✅ all good\n")
    with pytest.raises(TemplateError, match="must \\{% extends"):
        render_comment(realistic_decision(), template=template)


def test_filters_escape_untrusted_text_in_a_user_block(tmp_path):
    template = write(
        tmp_path,
        "plain.md.j2",
        '{% extends "comment.md.j2" %}{% block new_hallucinations %}'
        "{% for c in decision.new_hallucinations %}* {{ c.claim | shorten(20) | md }}\n"
        "{% endfor %}{% endblock %}",
    )
    text = render_comment(hostile_decision(), template=template)
    assert "* &lt;script&gt;alert(1)&lt;/s…" in text.splitlines()


def test_user_summary_template_extends_ours(tmp_path):
    template = write(
        tmp_path, "s.md.j2", '{% extends "summary.md.j2" %}{% block cases %}no cases{% endblock %}'
    )
    text = render_summary(realistic_decision(), report=realistic_report(), template=template)
    assert "no cases" in text
    assert "Scores per case" not in text


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("line one\n{{ not_a_variable }}\n", r"bad\.md\.j2:2: 'not_a_variable' is undefined"),
        ("{{ decision.nope }}", r"bad\.md\.j2:1: .*has no attribute 'nope'"),
        ("ok\n\n{% if %}", r"bad\.md\.j2:3: "),
        ("{{ ''.__class__.__mro__ }}", r"bad\.md\.j2:1: access to attribute '__class__'.*unsafe"),
        ("{{ decision.__class__ }}", r"bad\.md\.j2:1: .*unsafe"),
        ("{{ 1 + 'a' }}", r"bad\.md\.j2:1: TypeError"),
        ('{% extends "missing.md.j2" %}', r"bad\.md\.j2:1: template 'missing\.md\.j2' not found"),
        ("{{ decision.evaluators.clear() }}", r"bad\.md\.j2:1: "),
        ("{{ 'x' * 100000000 }}", r"bad\.md\.j2:1: .*over 1,000,000 characters"),
        ("{{ 'xy' | center(100000000) }}", r"bad\.md\.j2:1: .*size over 1,000,000"),
        ("{{ 2 ** 100000 }}", r"bad\.md\.j2:1: .*power over 64"),
        (
            '{% set a = "x" * 999999 %}{{ a ~ a }}',
            r"bad\.md\.j2:1: .*over 1,000,000 characters",
        ),
        (
            '{% set a = "x" * 500000 %}{% set ns = namespace(s=[]) %}'
            "{% for i in range(100000) %}{% set ns.s = ns.s + [a ~ i] %}{% endfor %}",
            r"bad\.md\.j2:1: .*over 50,000,000 characters in all",
        ),
        (
            '{% extends "comment.md.j2" %}{% block scores %}'
            '{% set ns = namespace(s="") %}{% for i in range(200) %}'
            '{% set ns.s = ns.s ~ ("y" * 999) ~ "x" * 99999 %}{% endfor %}{% endblock %}',
            r"bad\.md\.j2:1: .*over 1,000,000 characters",
        ),
        (
            '{% include "/proc/self/environ" %}',
            r"not a path inside the repository",
        ),
        ('{% include "../../outside.j2" %}', r"leads out of the repository"),
    ],
)
def test_broken_or_unsafe_user_templates_raise_template_error(tmp_path, source, message):
    template = write(tmp_path, "bad.md.j2", source)
    with pytest.raises(TemplateError, match=message):
        render_comment(realistic_decision(), template=template)


def test_a_template_through_a_symbolic_link_is_refused(tmp_path):
    (tmp_path / "real.md.j2").write_text('{% extends "comment.md.j2" %}', encoding="utf-8")
    (tmp_path / "link.md.j2").symlink_to(tmp_path / "real.md.j2")
    with pytest.raises(TemplateError, match="symbolic link"):
        UserTemplate.from_file(tmp_path / "link.md.j2")


def test_a_missing_user_template_is_a_template_error(tmp_path):
    with pytest.raises(TemplateError, match="not found"):
        UserTemplate.from_file(tmp_path / "nope.md.j2")


def test_bad_arguments():
    with pytest.raises(ValueError, match="comment-id"):
        render_comment(realistic_decision(), comment_id="no spaces please")
    with pytest.raises(ValueError, match="details_url"):
        render_comment(realistic_decision(), details_url="javascript:alert(1)")
    with pytest.raises(ValueError, match="details_url"):
        render_comment(realistic_decision(), details_url="https://x.test/a) [b](c")


def test_our_templates_are_found_by_name():
    root = templates_root()
    assert (root / "comment.md.j2").is_file()
    assert (root / "summary.md.j2").is_file()
    loader = TemplateLoader(root)
    assert {"comment.md.j2", "summary.md.j2"} <= set(loader.list_templates())


def test_an_installed_package_uses_its_own_templates(tmp_path):
    shutil.copytree(REPO_ROOT / "src" / "ragaliq", tmp_path / "ragaliq")
    shutil.copytree(REPO_ROOT / "templates", tmp_path / "ragaliq" / "templates")
    (tmp_path / "ragaliq" / "templates" / "comment.md.j2").write_text("packaged\n")
    script = (
        "from ragaliq.report import _templates, markdown; from tests.unit.report.test_markdown "
        "import first_run_decision; print(_templates.templates_root()); "
        "print(markdown.render_comment(first_run_decision()), end='')"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(REPO_ROOT)])}
    run = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True
    )
    root, marker, body = run.stdout.splitlines()
    assert Path(root) == tmp_path / "ragaliq" / "templates"
    assert marker == comment_marker()
    assert body == "packaged"


def test_a_secret_echoed_into_the_verdict_never_reaches_the_comment_in_any_form():
    from ragaliq.redaction import forget_secrets, register_secret

    secret = "ghs_live_Token_1234567890_abcdef"
    register_secret(secret)
    try:
        decision = realistic_decision(
            notices=(f"The API said: bad credentials {secret} for *you*",),
            failures=(f"judge error: {secret[:20]}{secret[20:]}",),
        )
        for text in (
            render_comment(decision),
            render_summary(decision, report=realistic_report()),
            markdown.render_status(title="could not judge", reason=f"401 {secret}"),
        ):
            escaped = escape_markdown(secret)
            assert escaped != secret  # escaping changes it, which is why it is redacted first
            assert secret not in text and escaped not in text
            assert "ghs&#95;live" not in text and "ghs_live" not in text
            assert "&#91;redacted&#93;" in text or "[redacted]" in text
    finally:
        forget_secrets()


def test_a_template_that_writes_text_before_the_headline_is_refused(tmp_path):
    template = write(
        tmp_path,
        "liar.md.j2",
        '### ✅ RagaliQ Gate passed\n{% extends "comment.md.j2" %}',
    )
    with pytest.raises(TemplateError, match="writes text before the gate's headline"):
        render_comment(realistic_decision(), template=template)


def test_claims_not_verifiable_offline_are_counted_and_listed_apart_from_hallucinations():
    unsure = change(
        "share-expiry", RESTORE_Q, "The owner gets an email reminder.", verdict="NOT_ENOUGH_INFO"
    )
    decision = realistic_decision(unverifiable_claims=(unsure,))
    text = render_comment(decision)
    headline = next(line for line in text.splitlines() if "cases judged" in line)
    assert "· 1 not verifiable offline ·" in headline
    assert "1 claim not verifiable offline, not counted as hallucinated" in text
    block = text.split("not counted as hallucinated</summary>", 1)[1].split("</details>", 1)[0]
    assert "The owner gets an email reminder." in block
    assert "The owner gets an email reminder." not in text.split("<summary>🔍", 1)[0]
    summary = render_summary(decision, report=realistic_report())
    assert "1 claim not verifiable offline" in summary
    assert "not verifiable offline" not in render_comment(realistic_decision())


def test_the_console_counts_claims_not_verifiable_offline():
    from ragaliq.report.console import format_decision

    unsure = change("a", "q", "The owner gets an email reminder.", verdict="NOT_ENOUGH_INFO")
    text = format_decision(realistic_decision(unverifiable_claims=(unsure,)))
    assert "1 claim not verifiable offline" in text
    assert "not verifiable" not in format_decision(realistic_decision())

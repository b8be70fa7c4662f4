from __future__ import annotations

import asyncio
import re

import pytest

from ragaliq.dataset import load_dataset
from ragaliq.errors import TemplateError
from ragaliq.evaluators import FaithfulnessEvaluator, HallucinationEvaluator, RelevanceEvaluator
from ragaliq.gate import (
    GateRules,
    compare,
)
from ragaliq.judges import OfflineJudge
from ragaliq.models import (
    JudgeInfo,
    RunReport,
)
from ragaliq.report import markdown
from ragaliq.report.markdown import (
    BASELINE_ADVICE,
    COMMENT_LIMIT,
    SUMMARY_LIMIT,
    UserTemplate,
    escape_markdown,
    render_comment,
    render_summary,
)
from ragaliq.report.marker import comment_marker
from ragaliq.runner import run_suite
from tests.baselines import record_baseline
from tests.conftest import REPO_ROOT
from tests.unit.report.decisions import (
    DASH,
    DETAILS_URL,
    HOSTILE,
    MINUS,
    REFUND_Q,
    RESTORE_Q,
    change,
    first_run_decision,
    hostile_decision,
    many_claims_decision,
    realistic_decision,
    realistic_report,
)
from tests.unit.report.markdown_checks import (
    CASES_HEADER,
    REGRESSED_HEADER,
    SCORES_HEADER,
    assert_snapshot,
    assert_well_formed,
    headers,
    structure,
    to_html,
    visible,
    write,
)

# --- snapshots -----------------------------------------------------------------------------


def test_comment_snapshot():
    text = render_comment(realistic_decision(), details_url=DETAILS_URL, report_artifact=True)
    assert_snapshot("comment.md", text)


@pytest.mark.parametrize(
    ("details_url", "report_artifact", "said"),
    [(DETAILS_URL, True, True), (DETAILS_URL, False, False), (None, True, False)],
    ids=["the-run-keeps-it", "no-report-written", "no-run-to-link"],
)
def test_the_comment_says_which_run_keeps_the_html_report(details_url, report_artifact, said):
    text = render_comment(
        realistic_decision(), details_url=details_url, report_artifact=report_artifact
    )
    assert_well_formed(text, marker=comment_marker("default"))
    paragraphs = [p for p in re.findall(r"<p>(.*?)</p>", to_html(text), re.DOTALL) if "HTML" in p]
    if not said:
        assert paragraphs == []
        return
    # one paragraph: the report is an artifact of the run it links to, listed on its page
    (paragraph,) = paragraphs
    assert re.findall(r'href="([^"]+)"', paragraph) == [DETAILS_URL]
    assert visible(re.sub(r"<[^>]+>", "", paragraph)) == (
        "📄 The HTML report, every case claim by claim, is an artifact of this run: download it "
        "from the Artifacts list on the run's page."
    )


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
    assert BASELINE_ADVICE in text  # how to update the baseline, for the store in use


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


# --- templates that must be refused ------------------------------------------------------


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


def test_claims_not_verifiable_offline_are_counted_and_listed_apart_from_hallucinations():
    unsure = change(
        "share-expiry",
        RESTORE_Q,
        "The owner gets an email reminder.",
        verdict="NOT_ENOUGH_INFO",
        reason="Not verifiable offline: the context sentence it rests on does not state email.",
    )
    decision = realistic_decision(unverifiable_claims=(unsure,))
    text = render_comment(decision)
    headline = next(line for line in text.splitlines() if "cases judged" in line)
    assert "· **1 new claim could not be checked offline** ·" in headline
    assert (
        "🔍 1 new claim could not be checked offline: left out of the scores, not counted as "
        "hallucinated</summary>"
    ) in text
    block = text.split("not counted as hallucinated</summary>", 1)[1].split("</details>", 1)[0]
    assert "The owner gets an email reminder." in block
    why = "  - why: Not verifiable offline: the context sentence it rests on does not state"
    assert why in block
    assert "`judge.provider: cascade`" in block and "`gate.fail_on_unchecked_claims: true`" in block
    assert "The owner gets an email reminder." not in text.split("<summary>🔍", 1)[0]
    summary = render_summary(decision, report=realistic_report())
    assert "1 new claim could not be checked offline" in summary
    assert "could not be checked offline" not in render_comment(realistic_decision())


def test_the_console_counts_claims_not_verifiable_offline():
    from ragaliq.report.console import format_decision

    unsure = change("a", "q", "The owner gets an email reminder.", verdict="NOT_ENOUGH_INFO")
    text = format_decision(realistic_decision(unverifiable_claims=(unsure,)))
    assert "1 new claim could not be checked offline: left out of the scores" in text
    assert "unchecked in a: The owner gets an email reminder." in text
    assert "judge.provider: cascade" in text
    assert "could not be checked" not in format_decision(realistic_decision())

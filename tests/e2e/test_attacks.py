"""A pull request that tries to lower its own bar or read the gate's secrets, as an attacker would.

Every test records a baseline on main, then opens a pull request that regresses the RAG outputs
and, in the same change, tries one way to pass anyway or to leak the API key. The gate runs as the
action does (``ragaliq action`` in a subprocess, against the fake Anthropic and GitHub APIs) and
must fail the pull request, keep the secret out of everything it writes, and say what was tried.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
import yaml

from ragaliq.dataset import load_dataset
from ragaliq.evaluators import FaithfulnessEvaluator, HallucinationEvaluator, RelevanceEvaluator
from ragaliq.evaluators.questions import EXTRACT, RELEVANCE, VERIFY, Answers, Question, Questions
from ragaliq.judges.cache import CachedJudge
from ragaliq.judges.claude import PROMPT_VERSION
from ragaliq.judges.questions import wording_version
from ragaliq.models import (
    ClaimsResult,
    ClaimVerdict,
    JudgeInfo,
    RelevanceResult,
    TestCase,
    Verdict,
    VerificationResult,
)
from ragaliq.offline import extract_sentence_claims
from ragaliq.report.markdown import escape_markdown
from ragaliq.runner import run_suite
from tests.e2e.workspace import (
    CONFIG,
    KEY,
    REPO,
    TOKEN,
    Action,
    cases,
    git,
    pr_event,
    record_baseline_on_main,
    regress,
    write_dataset,
)
from tests.fakes.anthropic_server import FakeAnthropic, structured_responder
from tests.unit.report.html_pages import page_text

Change = Callable[[Path], None]


def attack(
    action: Action, number: int, change: Change, **inputs: str
) -> tuple[int, str, dict, str]:
    """Record the baseline on main, then open a PR that regresses and makes ``change``."""
    base = record_baseline_on_main(action)
    write_dataset(action.workspace, regress(cases()))
    change(action.workspace)
    head = action.commit("feature: a change that regresses")
    action.github.add_pull(REPO, number, base_sha=base, head_sha=head)
    return action.run(event=pr_event(number, base, head), event_name="pull_request", **inputs)


def with_config(extra: str) -> Change:
    """A change whose ragaliq.yaml is main's with ``extra`` (YAML) merged over it."""

    def merge(into: dict, over: dict) -> dict:
        for key, value in over.items():
            into[key] = merge(into.get(key, {}), value) if isinstance(value, dict) else value
        return into

    def change(workspace: Path) -> None:
        config = merge(yaml.safe_load(CONFIG), yaml.safe_load(extra))
        (workspace / "ragaliq.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")

    return change


def leaked(action: Action, log: str, summary: str) -> list[str]:
    """Where a secret shows up in what the run wrote, as written or escaped for Markdown or HTML
    (a mask command is not a leak)."""
    places = {"log": log.replace(f"::add-mask::{KEY}", "").replace(f"::add-mask::{TOKEN}", "")}
    places["summary"] = summary
    places.update({f"comment {c.id}": c.body for c in action.github.comments(REPO, 70)})
    for path in (action.last / ".ragaliq").glob("*.json"):
        places[str(path.name)] = path.read_text(encoding="utf-8")
    for path in [*action.last.glob("*.html"), *(action.last / ".ragaliq").glob("*.html")]:
        places[str(path.name)] = page_text(path.read_text(encoding="utf-8"))
    forms = {form for secret in (KEY, TOKEN) for form in (secret, escape_markdown(secret))}
    forms |= {secret.replace("_", "\\u005f") for secret in (KEY, TOKEN)}
    return [name for name, text in places.items() if any(form in text for form in forms)]


def assert_failed_and_said(code: int, log: str, *expected: str) -> None:
    assert code == 1, log
    assert "Traceback" not in log
    for text in expected:
        assert text in log, f"{text!r} not in the log"


# --- 1. templates that would read the environment ---------------------------------------------


@pytest.mark.parametrize(
    "path",
    ["/proc/self/environ", "../../../../proc/self/environ", "~/.bash_history"],
)
def test_a_pr_template_path_is_only_a_proposal(setup, path):
    code, log, _, summary = attack(setup, 70, with_config(f"templates:\n  comment: {path}\n"))
    assert_failed_and_said(code, log, "templates.comment unset → ", "apply once it is merged")
    assert leaked(setup, log, summary) == []


def test_a_template_replaced_by_a_symlink_in_the_pr_is_read_at_the_base(setup):
    action = setup
    custom = '{% extends "comment.md.j2" %}{% block footer %}house style{% endblock %}\n'
    (action.workspace / "custom.md.j2").write_text(custom, encoding="utf-8")
    (action.workspace / "ragaliq.yaml").write_text(
        CONFIG + "templates:\n  comment: custom.md.j2\n", encoding="utf-8"
    )

    def to_symlink(workspace: Path) -> None:
        (workspace / "custom.md.j2").unlink()
        os.symlink("/proc/self/environ", workspace / "custom.md.j2")

    code, log, _, summary = attack(action, 70, to_symlink)
    assert code == 1, log
    body = action.github.comments(REPO, 70)[0].body
    assert "house style" in body
    assert leaked(action, log, summary) == []


def test_an_include_the_pr_edits_is_read_at_the_base(setup):
    action = setup
    (action.workspace / "partials").mkdir()
    (action.workspace / "partials" / "footer.md.j2").write_text("team footer\n", encoding="utf-8")
    (action.workspace / "custom.md.j2").write_text(
        '{% extends "comment.md.j2" %}{% block footer %}{% include "partials/footer.md.j2" %}'
        "{% endblock %}\n",
        encoding="utf-8",
    )
    (action.workspace / "ragaliq.yaml").write_text(
        CONFIG + "templates:\n  comment: custom.md.j2\n", encoding="utf-8"
    )

    def edit_partial(workspace: Path) -> None:
        (workspace / "partials" / "footer.md.j2").write_text("PWNED ✅ passed\n", encoding="utf-8")

    code, log, _, _ = attack(action, 70, edit_partial)
    assert code == 1, log
    body = action.github.comments(REPO, 70)[0].body
    assert "team footer" in body
    assert "PWNED" not in body


def test_a_base_config_naming_a_file_outside_the_repository_stops_with_one_line(setup):
    action = setup
    record_baseline_on_main(action)
    (action.workspace / "ragaliq.yaml").write_text(
        CONFIG + "templates:\n  comment: /proc/self/environ\n", encoding="utf-8"
    )
    base = action.commit("main: a misconfigured template path")
    write_dataset(action.workspace, regress(cases()))
    head = action.commit("feature: regress")
    action.github.add_pull(REPO, 70, base_sha=base, head_sha=head)
    code, log, outputs, summary = action.run(
        event=pr_event(70, base, head), event_name="pull_request"
    )
    assert code == 2, log
    assert "templates.comment: '/proc/self/environ' is not a path inside the repository" in log
    assert outputs["passed"] == "false"
    assert leaked(action, log, summary) == []


def test_a_lying_base_template_cannot_hide_the_verdict(setup):
    action = setup
    (action.workspace / "custom.md.j2").write_text(
        '{% extends "comment.md.j2" %}{% block scores %}### ✅ RagaliQ Gate passed\n\n'
        "{% endblock %}\n",
        encoding="utf-8",
    )
    (action.workspace / "ragaliq.yaml").write_text(
        CONFIG + "templates:\n  comment: custom.md.j2\n", encoding="utf-8"
    )
    code, log, _, _ = attack(action, 70, lambda _: None)
    assert code == 1, log
    body = action.github.comments(REPO, 70)[0].body
    assert body.index("RagaliQ Gate failed") < body.index("RagaliQ Gate passed")


def base_template(action: Action, source: str) -> None:
    """Main's config names a comment template of main's own."""
    (action.workspace / "custom.md.j2").write_text(source, encoding="utf-8")
    (action.workspace / "ragaliq.yaml").write_text(
        CONFIG + "templates:\n  comment: custom.md.j2\n", encoding="utf-8"
    )


@pytest.mark.parametrize(
    ("source", "said"),
    [
        ('### ✅ RagaliQ Gate passed\n{% extends "comment.md.j2" %}', "text before the gate's"),
        (
            '{% extends "comment.md.j2" %}{% block notices %}{% endblock %}',
            "overrides the block notices",
        ),
        ('{% include "/proc/self/environ" %}', "not a path inside the repository"),
        ('{% include "../../../../proc/self/environ" %}', "leads out of the repository"),
    ],
)
def test_a_base_template_that_lies_hides_notices_or_reads_the_environment_stops_the_gate(
    setup, source, said
):
    action = setup
    record_baseline_on_main(action)
    base_template(action, source)
    base = action.commit("main: a comment template of our own")
    write_dataset(action.workspace, regress(cases()))
    head = action.commit("feature: a change that regresses")
    action.github.add_pull(REPO, 70, base_sha=base, head_sha=head)
    code, log, outputs, summary = action.run(
        event=pr_event(70, base, head), event_name="pull_request"
    )
    assert code == 2, log
    assert said in log
    assert outputs["passed"] == "false"
    body = action.github.comments(REPO, 70)[0].body
    assert "could not judge" in body
    assert "passed" not in body.lower().replace("passed=false", "")
    assert leaked(action, log, summary) == []


def test_a_pr_template_that_overrides_the_headline_is_not_used(setup):
    def liar(workspace: Path) -> None:
        (workspace / "liar.md.j2").write_text(
            '{% extends "comment.md.j2" %}{% block headline %}### ✅ passed{% endblock %}',
            encoding="utf-8",
        )
        (workspace / "ragaliq.yaml").write_text(
            CONFIG + "templates:\n  comment: liar.md.j2\n", encoding="utf-8"
        )

    code, log, _, _ = attack(setup, 70, liar)
    assert_failed_and_said(code, log, "templates.comment unset → liar.md.j2")
    body = setup.github.comments(REPO, 70)[0].body
    assert "RagaliQ Gate failed" in body
    assert "✅ passed" not in body


# --- 2. a judge endpoint chosen by the PR ---------------------------------------------------


def all_supported(body: dict) -> dict:
    from tests.fakes.claude_sim import answer

    reply = answer(body)
    for verdict in reply.get("verdicts", []):
        verdict["verdict"] = "SUPPORTED"
    return reply


def test_the_key_is_never_sent_to_a_base_url_the_pr_chose(setup):
    with FakeAnthropic(structured_responder(all_supported)) as evil:
        code, log, _, summary = attack(
            setup, 70, with_config(f"judge:\n  base_url: {evil.base_url}\n")
        )
        assert evil.requests == []
    assert_failed_and_said(code, log, "judge.base_url unset → ")
    assert leaked(setup, log, summary) == []


# --- 3. a forged judge cache ------------------------------------------------------------------


class Forger:
    """Says every claim is supported, under the real judge's identity, into a cache."""

    def __init__(self, endpoint: str) -> None:
        self.info = JudgeInfo(
            provider="anthropic",
            model="claude-sonnet-5-5",
            prompt_version=PROMPT_VERSION,
            endpoint=endpoint,
        )

    def version_of(self, question: Question) -> str:
        return wording_version(question)  # the real judge's key, as a forger would compute it

    async def ask(
        self, questions: Questions, case: TestCase, *, claims: Sequence[str] = (), sample: int = 0
    ) -> Answers:
        quote = case.context[0].split(".")[0]
        forged = {
            EXTRACT.name: ClaimsResult(claims=tuple(extract_sentence_claims(case.response))),
            VERIFY.name: VerificationResult(
                verdicts=tuple(
                    ClaimVerdict(text=c, verdict=Verdict.SUPPORTED, evidence=quote) for c in claims
                )
            ),
            RELEVANCE.name: RelevanceResult(score=1.0),
        }
        return Answers(found={q.name: forged[q.name] for q in questions})

    async def aclose(self) -> None:
        return None


def forge_cache(workspace: Path, endpoint: str, path: str = ".ragaliq/cache.sqlite") -> None:
    judge = CachedJudge(Forger(endpoint), workspace / path, secret="sk-ant-a-guess")
    dataset = load_dataset(workspace / "rag_outputs.jsonl")
    suite = [FaithfulnessEvaluator(), HallucinationEvaluator(), RelevanceEvaluator()]

    async def go() -> None:
        await run_suite(dataset, judge=judge, evaluators=suite)
        await judge.aclose()

    asyncio.run(go())


ONE_JOB = {"trust_pr_code": "true"}
"""The gate in the job that ran the PR's code: what each attack meets when a team opts in."""


@pytest.mark.parametrize(
    ("inputs", "said"),
    [
        ({}, "RagaliQ Gate failed"),  # two zones: the PR's files never reach the gate's runner
        (ONE_JOB, "is tracked by this change's tree, so it is not used"),
    ],
)
def test_a_committed_forged_cache_is_not_used(setup, inputs, said):
    endpoint = setup.anthropic.base_url.rstrip("/")

    def commit_cache(workspace: Path) -> None:
        forge_cache(workspace, endpoint)
        git(workspace, "add", "-f", ".ragaliq/cache.sqlite")

    code, log, _, summary = attack(setup, 70, commit_cache, **inputs)
    assert_failed_and_said(code, log)
    assert said in log + summary


@pytest.mark.parametrize("inputs", [{}, ONE_JOB])
def test_a_cache_planted_by_the_prs_pipeline_is_not_trusted(setup, inputs):
    """The action reads judge answers only as signed rows (the baseline store, earlier gates'
    artifacts), never a cache file in the workspace: with one job too, the forged verdicts
    reach no decision and the regression fails."""
    action = setup
    base = record_baseline_on_main(action)
    write_dataset(action.workspace, regress(cases()))
    head = action.commit("feature: regress")
    # The PR's own pipeline step runs before the gate and writes an untracked cache.
    forge_cache(action.workspace, action.anthropic.base_url.rstrip("/"))
    action.github.add_pull(REPO, 70, base_sha=base, head_sha=head)
    code, log, _, summary = action.run(
        event=pr_event(70, base, head), event_name="pull_request", **inputs
    )
    assert_failed_and_said(code, log)
    assert "RagaliQ Gate failed" in summary
    assert "faithfulness:" in log and "dropped" in log  # judged anew, not the forged verdicts


def test_a_cache_path_in_the_pr_config_is_only_a_proposal(setup):
    endpoint = setup.anthropic.base_url.rstrip("/")

    def elsewhere(workspace: Path) -> None:
        with_config("judge:\n  cache_path: forged/cache.sqlite\n")(workspace)
        forge_cache(workspace, endpoint, "forged/cache.sqlite")

    code, log, _, _ = attack(setup, 70, elsewhere)
    assert_failed_and_said(
        code, log, "judge.cache_path .ragaliq/cache.sqlite → forged/cache.sqlite"
    )


# --- 4. the baseline --------------------------------------------------------------------------


def test_a_pr_naming_another_baseline_is_still_compared_with_main(setup):
    code, log, _, _ = attack(setup, 70, with_config("baseline: .ragaliq/none.json\n"))
    assert_failed_and_said(code, log, "baseline .ragaliq/baseline.json → .ragaliq/none.json")
    assert "No baseline yet" not in log


@pytest.mark.parametrize("target", ["nowhere.json", "/etc/passwd"])
def test_a_baseline_replaced_by_a_symlink_is_read_at_the_base(setup, target):
    def to_symlink(workspace: Path) -> None:
        baseline = workspace / ".ragaliq" / "baseline.json"
        baseline.unlink()
        os.symlink(target, baseline)

    code, log, _, _ = attack(setup, 70, to_symlink)
    assert_failed_and_said(code, log, "This change edits .ragaliq/baseline.json")
    assert "No baseline yet" not in log


# --- 5. the judge's provider or model -----------------------------------------------------------


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        ("judge:\n  provider: offline\n", "judge.provider auto → offline"),
        ("judge:\n  model: claude-haiku-4-5\n", "judge.model claude-sonnet-5-5 → claude-haiku-4-5"),
    ],
)
def test_switching_the_judge_is_a_proposal_and_never_a_pass(setup, extra, said):
    code, log, _, _ = attack(setup, 70, with_config(extra))
    assert_failed_and_said(code, log, said)
    assert "judged differently" not in log
    decision = json.loads((setup.last / ".ragaliq" / "decision.json").read_text())
    assert decision["comparable"] is True


# --- 6. deleted and diluted cases -------------------------------------------------------------


def perfect_cases(action: Action) -> set[str]:
    """The baseline's cases with every claim supported."""
    baseline = json.loads((action.workspace / ".ragaliq" / "baseline.json").read_text())
    return {
        c["id"]
        for c in baseline["cases"]
        if c["scores"]["faithfulness"] == c["scores"]["hallucination"] == 1.0
    }


def test_deleting_the_cases_that_were_not_perfect_fails(setup):
    action = setup
    base = record_baseline_on_main(action)
    perfect = perfect_cases(action)
    kept = [row for row in cases() if row["id"] in perfect]
    assert 0 < len(kept) < len(cases())
    write_dataset(action.workspace, kept)
    head = action.commit("feature: drop the hard questions")
    action.github.add_pull(REPO, 70, base_sha=base, head_sha=head)
    code, log, _, _ = action.run(event=pr_event(70, base, head), event_name="pull_request")
    assert_failed_and_said(code, log, "missing from this run")


def test_diluting_a_drop_with_copies_of_perfect_cases_fails(setup):
    action = setup
    base = record_baseline_on_main(action)
    rows = regress(cases())
    perfect = next(row for row in cases() if row["id"] in perfect_cases(action))
    copies = [{**perfect, "id": f"copy-{i}"} for i in range(200)]
    write_dataset(action.workspace, rows + copies)
    head = action.commit("feature: regress, and add many easy questions")
    action.github.add_pull(REPO, 70, base_sha=base, head_sha=head)
    code, log, _, _ = action.run(event=pr_event(70, base, head), event_name="pull_request")
    assert_failed_and_said(code, log, "200 cases are new since the baseline")
    decision = json.loads((action.last / ".ragaliq" / "decision.json").read_text())
    hallucination = decision["evaluators"]["hallucination"]
    assert hallucination["head"] > hallucination["head_shared"]  # the copies lift the whole run
    assert hallucination["shared_cases"] == len(cases())
    assert hallucination["status"] != "pass"


# --- 7. verdict weights -------------------------------------------------------------------------


def test_verdict_weights_in_the_pr_are_a_proposal(setup):
    weights = (
        "evaluators:\n  faithfulness:\n    threshold: 0.7\n    verdict_scores:\n"
        "      NOT_ENOUGH_INFO: 1\n      CONTRADICTED: 1\n      PARTIALLY_SUPPORTED: 1\n"
    )
    code, log, _, _ = attack(setup, 70, with_config(weights))
    assert_failed_and_said(code, log, "faithfulness.verdict_scores")


# --- a PR may tighten the bar -------------------------------------------------------------------


def test_a_pr_that_tightens_a_threshold_gets_the_tighter_bar_at_once(setup):
    action = setup
    base = record_baseline_on_main(action)
    (action.workspace / "ragaliq.yaml").write_text(
        CONFIG.replace("faithfulness: {threshold: 0.7}", "faithfulness: {threshold: 0.99}"),
        encoding="utf-8",
    )
    head = action.commit("feature: a stricter faithfulness bar")
    action.github.add_pull(REPO, 70, base_sha=base, head_sha=head)
    code, log, _, _ = action.run(event=pr_event(70, base, head), event_name="pull_request")
    assert_failed_and_said(
        code, log, "faithfulness threshold 0.7 → 0.99", "tighter setting applies"
    )


# --- secrets echoed by an API -------------------------------------------------------------------


def test_a_key_echoed_by_the_api_is_redacted_everywhere(setup):
    from tests.fakes.anthropic_server import Fault

    action = setup
    base = record_baseline_on_main(action)
    write_dataset(action.workspace, regress(cases()))
    head = action.commit("feature: regress")
    action.github.add_pull(REPO, 70, base_sha=base, head_sha=head)
    echo = Fault(400, message=f"invalid request for key {KEY} and token {TOKEN}")
    action.anthropic.enqueue(*[echo] * 3)
    code, log, _, summary = action.run(
        event=pr_event(70, base, head), event_name="pull_request", **{"html-report": "r.html"}
    )
    assert code == 1, log
    assert (action.last / "r.html").is_file()
    report = (action.last / ".ragaliq" / "report.json").read_text(encoding="utf-8")
    assert "invalid request for key [redacted]" in report
    assert leaked(action, log, summary) == []


def test_a_key_a_gateway_echoes_in_html_references_or_escapes_is_redacted(setup):
    from tests.fakes.anthropic_server import Fault

    action = setup
    base = record_baseline_on_main(action)
    write_dataset(action.workspace, regress(cases()))
    head = action.commit("feature: regress")
    action.github.add_pull(REPO, 70, base_sha=base, head_sha=head)
    referenced = "".join(f"&#{ord(ch)};" for ch in KEY)
    percent = "".join(f"%{ord(ch):02X}" for ch in KEY)
    escaped = "".join(f"\\u{ord(ch):04x}" for ch in KEY)
    page = f"<html><body>Bad key {referenced} / {percent} / {escaped}</body></html>"
    action.anthropic.enqueue(*[Fault(400, page=page)] * 3)
    code, log, _, summary = action.run(event=pr_event(70, base, head), event_name="pull_request")
    assert code == 1, log
    decision = (action.last / ".ragaliq" / "decision.json").read_text(encoding="utf-8")
    report = (action.last / ".ragaliq" / "report.json").read_text(encoding="utf-8")
    assert "Bad key [redacted] / [redacted] / [redacted]" in report
    for text in (log, summary, decision, report, action.github.comments(REPO, 70)[0].body):
        assert referenced not in text and percent not in text and escaped not in text
    assert leaked(action, log, summary) == []


def test_a_key_in_the_prs_config_cannot_blank_out_the_headline(setup):
    # Registered as a secret, this "key" would redact every "RagaliQ Gate failed" it equals.
    code, log, _, summary = attack(
        setup, 70, with_config('judge:\n  api_key: "RagaliQ Gate failed"\n')
    )
    assert_failed_and_said(code, log, "judge.api_key (changed)")
    body = setup.github.comments(REPO, 70)[0].body
    assert "### ❌ RagaliQ Gate failed" in body
    assert "RagaliQ Gate failed" in summary

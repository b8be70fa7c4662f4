"""The one store of judge answers: keyed by what was asked, signed by who asked, read as data."""

from __future__ import annotations

import json

from ragaliq.evaluators import FaithfulnessEvaluator, HallucinationEvaluator, RelevanceEvaluator
from ragaliq.judges.answers import (
    MAX_ANSWER_FILE_BYTES,
    MAX_ROW_BYTES,
    AnswerRows,
    Signer,
    answer_key,
)
from ragaliq.judges.cache import CachedJudge
from ragaliq.models import JudgeInfo
from ragaliq.runner import run_suite
from tests.conftest import make_case
from tests.fakes.judge import FakeJudge

KEY = "sk-ant-answers-signing"
INFO = JudgeInfo(provider="anthropic", model="claude-x", prompt_version="p1")


def suite():
    return [FaithfulnessEvaluator(), HallucinationEvaluator(), RelevanceEvaluator()]


def cases(n: int = 3):
    return [make_case(id=f"c{i}", response=f"Refunds take 14 days. Case {i}.") for i in range(n)]


async def judged_with(rows: AnswerRows, judge: FakeJudge):
    cached = CachedJudge(judge, store=rows)
    report = await run_suite(cases(), judge=cached, evaluators=suite())
    await cached.aclose()
    return report, cached


async def test_answers_a_run_used_serve_the_next_run_at_no_call():
    first = AnswerRows()
    first.bind(KEY)
    judge = FakeJudge()
    await judged_with(first, judge)
    asked = len(judge.calls)
    assert asked == 9  # claims, verdicts, relevance for three cases
    exported = first.export()
    assert len(exported.splitlines()) == 9

    again = AnswerRows()
    assert again.load(exported, source="artifact ragaliq-answers of run 1") == 9
    again.bind(KEY)
    fresh = FakeJudge()
    report, _ = await judged_with(again, fresh)
    assert fresh.calls == []  # every question answered by the rows
    assert report.usage.calls == 0 and report.usage.cache_hits == 9


async def test_an_answer_not_signed_with_the_judges_key_is_never_used():
    honest = AnswerRows()
    honest.bind(KEY)
    await judged_with(honest, FakeJudge())
    rows = [json.loads(line) for line in honest.export().splitlines()]
    forged = dict(rows[0])
    forged["v"] = forged["v"].replace("{", '{"verdict":"CONTRADICTED",', 1)  # a rewritten answer
    other_key = Signer("sk-ant-someone-else")
    resigned = {**rows[1], "s": other_key.sign(rows[1]["k"], rows[1]["v"])}
    planted = "\n".join(json.dumps(r) for r in (forged, resigned, *rows[2:])).encode()

    reader = AnswerRows()
    reader.load(planted, source="artifact ragaliq-answers of run 9")
    reader.bind(KEY)
    assert reader.get(forged["k"]) is None
    assert reader.get(resigned["k"]) is None
    assert reader.get(rows[2]["k"]) == rows[2]["v"]
    assert reader.warnings == [
        "judge answers from artifact ragaliq-answers of run 9: rows not signed with this judge's "
        "key were ignored and asked again (answers from another key, or forged ones)"
    ]
    unbound = AnswerRows()
    unbound.load(planted, source="x")
    assert unbound.get(rows[2]["k"]) is None  # no key, no answers


def test_rows_that_are_not_signed_answers_are_skipped_with_one_warning():
    rows = AnswerRows()
    key = "a" * 64
    good = json.dumps({"k": key, "v": "{}", "s": "0" * 64})
    text = "\n".join(
        [
            good,
            "not json",
            json.dumps({"k": "short", "v": "{}", "s": "x"}),
            json.dumps({"k": key, "v": 1, "s": "x"}),
            json.dumps({"k": key, "v": "{}", "s": "x", "extra": 1}),
            "x" * (MAX_ROW_BYTES + 1),
        ]
    )
    assert rows.load(text.encode(), source="the baseline store") == 1
    assert rows.warnings == [
        "judge answers from the baseline store: 5 rows that are not signed answers were skipped"
    ]
    huge = AnswerRows()
    assert huge.load(b"x" * (MAX_ANSWER_FILE_BYTES + 1), source="big") == 0
    assert huge.warnings == ["judge answers from big: over the size limit, not read"]


def test_a_key_is_the_question_its_prompt_version_the_judge_and_what_it_reads():
    payload = {"query": "q", "response": "r"}
    base = answer_key(INFO, "extract_claims", "v1", payload)
    assert answer_key(INFO, "extract_claims", "v1", dict(payload)) == base
    for other in (
        answer_key(INFO, "evaluate_relevance", "v1", payload),
        answer_key(INFO, "extract_claims", "v2", payload),
        answer_key(INFO.model_copy(update={"model": "claude-y"}), "extract_claims", "v1", payload),
        answer_key(
            INFO.model_copy(update={"endpoint": "https://gw"}), "extract_claims", "v1", payload
        ),
        answer_key(INFO, "extract_claims", "v1", {**payload, "response": "r2"}),
    ):
        assert other != base


async def test_the_export_leaves_out_what_the_next_run_reads_where_it_is():
    rows = AnswerRows()
    rows.bind(KEY)
    await judged_with(rows, FakeJudge())
    kept = rows.export()
    reread = AnswerRows()
    reread.load(kept, source="the baseline store")
    reread.bind(KEY)
    judge = FakeJudge()
    cached = CachedJudge(judge, store=reread)
    changed = [make_case(id="c0", response="Refunds take 30 days.")]
    await run_suite([*changed, *cases()[1:]], judge=cached, evaluators=suite())
    exported = reread.export(skip=("the baseline store",))
    assert 0 < len(exported.splitlines()) <= 3  # only the changed case's new answers
    assert len(reread.export().splitlines()) > len(exported.splitlines())

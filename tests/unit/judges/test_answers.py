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
    assert len(exported.splitlines()) == 9 + 1  # the rows, and the line that signs them all

    again = AnswerRows()
    again.load(exported, source="artifact ragaliq-answers of run 1")
    assert again.taken == {}  # held unread until the key can check the file
    again.bind(KEY)
    assert again.taken == {"artifact ragaliq-answers of run 1": 9}
    fresh = FakeJudge()
    report, _ = await judged_with(again, fresh)
    assert fresh.calls == []  # every question answered by the rows
    assert report.usage.calls == 0 and report.usage.cache_hits == 9


def signed_file(rows: list[dict], signer: Signer) -> bytes:
    """An answers file of ``rows``, signed as a whole by ``signer`` (as another run would)."""
    body = "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in rows).encode()
    trailer = {"ragaliq-answers": 1, "rows": len(rows), "sig": signer.sign_file(body)}
    return body + json.dumps(trailer).encode() + b"\n"


async def test_a_file_not_signed_as_a_whole_with_the_judges_key_is_never_read():
    honest = AnswerRows()
    honest.bind(KEY)
    await judged_with(honest, FakeJudge())
    exported = honest.export()
    rows = [json.loads(line) for line in exported.splitlines()[:-1]]
    forged = dict(rows[0])
    forged["v"] = forged["v"].replace("{", '{"verdict":"CONTRADICTED",', 1)  # a rewritten answer
    edited = exported.replace(
        json.dumps(rows[0], separators=(",", ":")).encode(),
        json.dumps(forged, separators=(",", ":")).encode(),
    )
    cut = b"\n".join(exported.splitlines()[1:]) + b"\n"  # a row dropped
    unsigned = b"".join(line + b"\n" for line in exported.splitlines()[:-1])  # no trailer
    other = signed_file(rows, Signer("sk-ant-someone-else"))
    for planted in (edited, cut, unsigned, other):
        reader = AnswerRows()
        reader.load(planted, source="artifact ragaliq-answers-pr9 of run 9")
        reader.bind(KEY)
        assert reader.taken == {}
        assert all(reader.get(row["k"]) is None for row in rows)  # not one row read
        assert reader.warnings == [
            "judge answers from artifact ragaliq-answers-pr9 of run 9: not signed as a whole "
            "with this judge's key, so no row of it was read (answers from another key, an "
            "older version, or forged)"
        ]
    whole = AnswerRows()
    whole.load(exported, source="x")
    assert whole.get(rows[2]["k"]) is None  # no key, no answers
    whole.bind(KEY)
    assert whole.get(rows[2]["k"]) == rows[2]["v"]


async def test_a_row_not_signed_with_the_judges_key_is_never_used_in_a_file_that_is():
    honest = AnswerRows()
    honest.bind(KEY)
    await judged_with(honest, FakeJudge())
    rows = [json.loads(line) for line in honest.export().splitlines()[:-1]]
    other_key = Signer("sk-ant-someone-else")
    resigned = {**rows[1], "s": other_key.sign(rows[1]["k"], rows[1]["v"])}
    reader = AnswerRows()
    reader.load(signed_file([resigned, *rows[2:]], Signer(KEY)), source="run 9")
    reader.bind(KEY)
    assert reader.get(resigned["k"]) is None
    assert reader.get(rows[2]["k"]) == rows[2]["v"]
    assert reader.warnings == [
        "judge answers from run 9: rows not signed with this judge's key were ignored and asked "
        "again (answers from another key, or forged ones)"
    ]


def test_rows_that_are_not_signed_answers_are_skipped_with_one_warning():
    rows = AnswerRows()
    rows.bind(KEY)
    key = "a" * 64
    good = json.dumps({"k": key, "v": "{}", "s": "0" * 64})
    lines = [
        good,
        "not json",
        json.dumps({"k": "short", "v": "{}", "s": "x"}),
        json.dumps({"k": key, "v": 1, "s": "x"}),
        json.dumps({"k": key, "v": "{}", "s": "x", "extra": 1}),
        "x" * (MAX_ROW_BYTES + 1),
    ]
    body = "".join(line + "\n" for line in lines).encode()
    trailer = {"ragaliq-answers": 1, "rows": 6, "sig": Signer(KEY).sign_file(body)}
    rows.load(body + json.dumps(trailer).encode() + b"\n", source="the baseline store")
    assert rows.taken == {"the baseline store": 1}
    assert rows.warnings == [
        "judge answers from the baseline store: 5 rows that are not signed answers were skipped"
    ]
    huge = AnswerRows()
    huge.load(b"x" * (MAX_ANSWER_FILE_BYTES + 1), source="big")
    assert huge.warnings == ["judge answers from big: over the size limit, not read"]


def test_the_files_one_run_loads_are_bounded_all_together():
    rows = AnswerRows(limit=100)
    rows.load(b"x" * 60, source="first")
    rows.load(b"x" * 60, source="second")  # past the run's limit: never held
    assert rows.warnings == ["judge answers from second: over the size limit, not read"]


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
    assert 0 < len(exported.splitlines()) - 1 <= 3  # only the changed case's new answers
    assert len(reread.export().splitlines()) > len(exported.splitlines())

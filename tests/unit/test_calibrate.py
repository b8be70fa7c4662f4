from __future__ import annotations

import asyncio
import importlib.util
import json
import math
import sys
from collections.abc import Sequence

import pytest

from ragaliq.calibrate import calibrate
from ragaliq.errors import DatasetError, JudgeError, JudgeResponseError, JudgeUnavailableError
from ragaliq.evaluators.questions import VERIFY, Answers, Question, Questions
from ragaliq.judges import OfflineJudge
from ragaliq.labels import VERDICT_LABELS, LabelledClaim, load_labels, parse_labels
from ragaliq.metrics import (
    BINARY_LABELS,
    ClaimPrediction,
    accuracy,
    balanced_accuracy,
    cohen_kappa,
    confusion_matrix,
    kappa_strength,
    measure,
)
from ragaliq.models import (
    ClaimVerdict,
    JudgeInfo,
    TestCase,
    Usage,
    Verdict,
    VerificationResult,
)
from ragaliq.report.calibration import format_calibration
from tests.conftest import REPO_ROOT

SAMPLE = REPO_ROOT / "examples" / "calibration" / "golden.jsonl"
S, P, N, C = (v for v in Verdict)


def matrix(labels: Sequence[str], rows: Sequence[Sequence[int]]) -> dict[str, dict[str, int]]:
    return {
        gold: dict(zip(labels, row, strict=True)) for gold, row in zip(labels, rows, strict=True)
    }


def claim(i: int, label: Verdict = S, context: Sequence[str] = ("ctx",)) -> LabelledClaim:
    return LabelledClaim(id=f"c{i}", claim=f"claim {i}", context=tuple(context), label=label)


class ScriptedJudge:
    """Answers from a script by claim id: a Verdict, or an exception to raise."""

    def __init__(self, script: dict[str, Verdict | Exception], *, confidence: float = 0.9):
        self.script = script
        self.confidence = confidence
        self.calls: list[tuple[str, tuple[str, ...], tuple[str, ...]]] = []
        self.in_flight = 0
        self.most_in_flight = 0

    @property
    def info(self) -> JudgeInfo:
        return JudgeInfo(provider="scripted", model="s-1", prompt_version="p1")

    def version_of(self, question: Question) -> str:
        return "p1"

    async def ask(
        self, questions: Questions, case: TestCase, *, claims: Sequence[str] = (), sample: int = 0
    ) -> Answers:
        assert list(questions) == [VERIFY], "calibration asks only for verdicts"
        self.calls.append((case.id, tuple(claims), case.context))
        self.in_flight += 1
        self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            await asyncio.sleep(0)
            await asyncio.sleep(0)
            answer = self.script.get(case.id, S)
            if isinstance(answer, Exception):
                raise answer
            verdict = ClaimVerdict(text=claims[0], verdict=answer, confidence=self.confidence)
            return Answers(
                found={VERIFY.name: VerificationResult(verdicts=(verdict,))},
                usage=Usage(calls=1, input_tokens=10, cost_usd=0.01),
            )
        finally:
            self.in_flight -= 1

    async def aclose(self) -> None:
        return None


# --- metrics on hand-computed matrices ---------------------------------------------------------


def test_two_by_two_matrix_metrics():
    # p_o = 35/50 = 0.7; p_e = (25*30 + 25*20) / 50^2 = 0.5; kappa = 0.2 / 0.5 = 0.4
    m = matrix(("yes", "no"), [[20, 5], [10, 15]])
    assert accuracy(m) == pytest.approx(0.7)
    assert balanced_accuracy(m) == pytest.approx((20 / 25 + 15 / 25) / 2)
    assert cohen_kappa(m) == pytest.approx(0.4)


def test_three_by_three_matrix_metrics():
    # p_o = 39/50 = 0.78; row and column sums are both 15, 10, 25, so
    # p_e = (15^2 + 10^2 + 25^2) / 50^2 = 0.38 and kappa = 0.40 / 0.62 = 20/31.
    m = matrix(("a", "b", "c"), [[10, 2, 3], [1, 8, 1], [4, 0, 21]])
    assert accuracy(m) == pytest.approx(0.78)
    assert balanced_accuracy(m) == pytest.approx(173 / 225)  # (10/15 + 8/10 + 21/25) / 3
    assert cohen_kappa(m) == pytest.approx(20 / 31)


def test_kappa_extremes():
    assert cohen_kappa(matrix(("a", "b"), [[10, 0], [0, 5]])) == pytest.approx(1.0)
    assert cohen_kappa(matrix(("a", "b"), [[25, 25], [25, 25]])) == pytest.approx(0.0)
    assert cohen_kappa(matrix(("a", "b"), [[0, 10], [10, 0]])) == pytest.approx(-1.0)


def test_balanced_accuracy_averages_over_gold_labels_present_only():
    # No claim is labelled "c", so its empty row does not count as a recall of 0.
    m = matrix(("a", "b", "c"), [[3, 1, 0], [0, 0, 2], [0, 0, 0]])
    assert balanced_accuracy(m) == pytest.approx((3 / 4 + 0 / 2) / 2)
    assert accuracy(m) == pytest.approx(3 / 6)


def test_always_the_majority_label_has_high_accuracy_but_no_agreement():
    m = matrix(("a", "b"), [[90, 0], [10, 0]])
    assert accuracy(m) == pytest.approx(0.9)
    assert balanced_accuracy(m) == pytest.approx(0.5)
    assert cohen_kappa(m) == pytest.approx(0.0)


def test_undefined_metrics_are_nan():
    empty = matrix(("a", "b"), [[0, 0], [0, 0]])
    assert math.isnan(accuracy(empty))
    assert math.isnan(balanced_accuracy(empty))
    assert math.isnan(cohen_kappa(empty))
    one_class = matrix(("a", "b"), [[7, 0], [0, 0]])
    assert accuracy(one_class) == 1.0
    assert math.isnan(cohen_kappa(one_class))


def test_confusion_matrix_counts_pairs_and_rejects_unknown_labels():
    m = confusion_matrix([("a", "a"), ("a", "b"), ("b", "b"), ("a", "b")], ("a", "b"))
    assert m == {"a": {"a": 1, "b": 2}, "b": {"a": 0, "b": 1}}
    with pytest.raises(ValueError, match="unknown label"):
        confusion_matrix([("a", "z")], ("a", "b"))


def test_kappa_strength_words():
    assert kappa_strength(-0.1).startswith("poor")
    assert kappa_strength(0.15) == "slight"
    assert kappa_strength(0.4) == "fair"
    assert kappa_strength(0.55) == "moderate"
    assert kappa_strength(0.7) == "substantial"
    assert kappa_strength(0.95) == "almost perfect"
    assert kappa_strength(math.nan) == "undefined"


def test_measure_collapses_to_supported_versus_hallucinated():
    pairs = [(S, S), (S, P), (P, P), (N, C), (C, S), (N, N)]
    predictions = [
        ClaimPrediction(id=str(i), gold=g, predicted=p, confidence=0.9)
        for i, (g, p) in enumerate(pairs)
    ]
    c = measure(predictions)
    assert c.n == 6
    assert c.labels == VERDICT_LABELS
    assert c.confusion[S][P] == 1 and c.confusion[C][S] == 1 and c.confusion[N][C] == 1
    assert c.accuracy == pytest.approx(3 / 6)
    # supported/hallucinated: gold S,S,H,H,H,H vs predicted S,H,H,H,S,H
    assert c.binary.labels == BINARY_LABELS
    assert c.binary.confusion == {
        "supported": {"supported": 1, "hallucinated": 1},
        "hallucinated": {"supported": 1, "hallucinated": 3},
    }
    assert c.binary.accuracy == pytest.approx(4 / 6)
    assert c.binary.balanced_accuracy == pytest.approx((1 / 2 + 3 / 4) / 2)
    # p_o = 4/6; p_e = (2/6)(2/6) + (4/6)(4/6) = 20/36; kappa = (24/36 - 20/36) / (16/36) = 0.25
    assert c.binary.kappa == pytest.approx(0.25)
    assert c.binary.recall == pytest.approx(3 / 4)
    assert c.binary.precision == pytest.approx(3 / 4)


def test_measure_counts_low_confidence_supported_as_hallucinated_with_min_confidence():
    predictions = [
        ClaimPrediction(id="sure", gold=S, predicted=S, confidence=0.95),
        ClaimPrediction(id="unsure", gold=N, predicted=S, confidence=0.4),
    ]
    plain = measure(predictions)
    assert plain.binary.confusion["hallucinated"]["supported"] == 1
    strict = measure(predictions, min_confidence=0.5)
    assert strict.binary.confusion["hallucinated"] == {"supported": 0, "hallucinated": 1}
    assert strict.binary.accuracy == 1.0
    assert strict.confusion == plain.confusion  # the four-verdict view is unchanged


# --- the labels file -------------------------------------------------------------------------


def test_load_labels_reads_chunks_strings_and_aliases(tmp_path):
    rows = [
        {"id": "a", "claim": "X is Y.", "context": ["X is Y.", "Z."], "label": "SUPPORTED"},
        {"id": "b", "claim": "X is W.", "context": "X is Y.", "label": "not_supported"},
        {"id": 3, "claim": "Q.", "context": [], "label": "partially_supported", "source": "me"},
        {"id": "d", "claim": "R.", "context": ["S."], "label": "Contradicted"},
    ]
    path = tmp_path / "golden.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n\n", encoding="utf-8")
    labels = load_labels(path)
    assert [c.id for c in labels] == ["a", "b", "3", "d"]
    assert [c.label for c in labels] == [S, N, P, C]
    assert labels[0].context == ("X is Y.", "Z.")
    assert labels[1].context == ("X is Y.",)
    assert labels[2].source == "me" and labels[2].line == 3
    case = labels[0].to_case()
    assert case.response == "X is Y." and case.context == ("X is Y.", "Z.")


def test_labels_may_use_axions_verdict_names(tmp_path):
    rows = [
        {"id": str(i), "claim": "X.", "context": ["X."], "label": label}
        for i, label in enumerate(["FULLY_SUPPORTED", "No Evidence", "contradictory"])
    ]
    path = tmp_path / "golden.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    assert [c.label for c in load_labels(path)] == [S, N, C]


def test_bad_label_lines_are_reported_with_file_and_line(tmp_path):
    good = {"id": "a", "claim": "X.", "context": ["X."], "label": "SUPPORTED"}
    lines = [
        json.dumps(good),
        "{not json",
        json.dumps({**good, "id": "b", "label": "maybe"}),
        json.dumps({"id": "c", "claim": "X.", "label": "SUPPORTED"}),
        json.dumps({**good, "id": "d", "contxt": ["X."]}),
        json.dumps({**good, "id": "e", "context": ["X.", 3]}),
        json.dumps({**good, "id": "a"}),
        json.dumps({**good, "id": "f", "claim": "  "}),
        json.dumps(["a list"]),
    ]
    path = tmp_path / "golden.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(DatasetError) as info:
        load_labels(path)
    problems = str(info.value).splitlines()
    name = str(path)
    assert problems[0].startswith(f"{name}:2: invalid JSON")
    assert f"{name}:3: label: must be one of SUPPORTED" in problems[1]
    assert "(got string 'maybe')" in problems[1]
    assert problems[2] == f"{name}:4: context: missing required field"
    assert problems[3] == f"{name}:5: contxt: unknown key 'contxt'; did you mean 'context'?"
    assert problems[4] == f"{name}:6: context: chunk 1 must be a string (got number 3)"
    assert problems[5].startswith(f"{name}:7: id: duplicate id 'a' (first used on line 1)")
    assert problems[6] == f"{name}:8: claim: must not be empty"
    assert problems[7] == f"{name}:9: a labelled claim must be an object (got list)"
    assert len(problems) == 8


def test_empty_missing_and_non_utf8_label_files(tmp_path):
    with pytest.raises(DatasetError, match="no labelled claims"):
        parse_labels("\n\n", name="empty.jsonl")
    with pytest.raises(DatasetError, match="not found"):
        load_labels(tmp_path / "nope.jsonl")
    latin = tmp_path / "latin.jsonl"
    latin.write_bytes(b'{"id": "a"}\n{"claim": "caf\xe9"}\n')
    with pytest.raises(DatasetError, match=r"latin\.jsonl:2: not UTF-8"):
        load_labels(latin)


def test_shipped_sample_loads_and_is_small():
    labels = load_labels(SAMPLE)
    assert 60 <= len(labels) <= 150
    assert SAMPLE.stat().st_size < 150_000
    assert {c.label for c in labels} >= {S, P, N}
    assert all(c.source and c.context for c in labels)


# --- calibrate ---------------------------------------------------------------------------------


async def test_calibrate_offline_judge_on_the_shipped_sample():
    labels = load_labels(SAMPLE)
    c = await calibrate(labels, judge=OfflineJudge())
    assert c.n == len(labels) and not c.errors
    assert sum(sum(row.values()) for row in c.confusion.values()) == c.n
    assert sum(sum(row.values()) for row in c.binary.confusion.values()) == c.n
    assert list(c.confusion) == list(VERDICT_LABELS)
    for gold, row in c.confusion.items():
        assert sum(row.values()) == sum(1 for item in labels if item.label.value == gold)
    for value in (c.accuracy, c.balanced_accuracy, c.binary.accuracy, c.binary.balanced_accuracy):
        assert 0.0 <= value <= 1.0
    for value in (c.kappa, c.binary.kappa):
        assert -1.0 <= value <= 1.0
    assert c.judge is not None and c.judge.heuristic
    text = format_calibration(c)
    assert "heuristic" in text and "Cohen's kappa" in text


async def test_calibrate_sends_one_claim_per_call_with_its_context():
    labels = [claim(1, S, ["first"]), claim(2, N, ["second", "third"])]
    judge = ScriptedJudge({"c2": C})
    c = await calibrate(labels, judge=judge)
    assert sorted(judge.calls) == [
        ("c1", ("claim 1",), ("first",)),
        ("c2", ("claim 2",), ("second", "third")),
    ]
    assert [(p.id, p.gold, p.predicted) for p in c.predictions] == [("c1", S, S), ("c2", N, C)]
    assert c.accuracy == 0.5
    assert c.binary.accuracy == 1.0
    assert c.usage.calls == 2 and c.usage.cost_usd == pytest.approx(0.02)


async def test_judge_errors_are_counted_not_predicted():
    labels = [claim(i, S if i % 2 else N) for i in range(6)]
    judge = ScriptedJudge(
        {
            "c1": JudgeResponseError("the judge returned 0 verdicts for 1 claim"),
            "c4": JudgeError("timed out after 4 retries"),
            "c5": RuntimeError("a bug"),
        }
    )
    c = await calibrate(labels, judge=judge)
    assert c.n == 3
    assert c.total == 6
    assert [e.id for e in c.errors] == ["c1", "c4", "c5"]
    assert "timed out" in c.errors[1].message
    assert c.errors[2].message == "unexpected RuntimeError: a bug"
    assert {p.id for p in c.predictions} == {"c0", "c2", "c3"}
    assert sum(sum(row.values()) for row in c.confusion.values()) == 3
    text = format_calibration(c)
    assert "3 judged, 3 errors" in text
    assert "c4: timed out after 4 retries" in text


async def test_an_unavailable_judge_stops_the_calibration():
    labels = [claim(i) for i in range(5)]
    judge = ScriptedJudge({"c2": JudgeUnavailableError("invalid API key")})
    with pytest.raises(JudgeUnavailableError, match="invalid API key"):
        await calibrate(labels, judge=judge, concurrency=1)


async def test_calibrate_bounds_concurrency_and_reports_progress():
    labels = [claim(i) for i in range(12)]
    judge = ScriptedJudge({})
    progress: list[tuple[int, int]] = []
    c = await calibrate(
        labels, judge=judge, concurrency=3, on_progress=lambda *a: progress.append(a)
    )
    assert c.n == 12
    assert 1 <= judge.most_in_flight <= 3
    assert progress[-1] == (12, 12) and len(progress) == 12


async def test_calibrate_stops_starting_claims_once_the_budget_is_spent():
    labels = [claim(i) for i in range(10)]
    c = await calibrate(labels, judge=ScriptedJudge({}), concurrency=1, budget_usd=0.03)
    assert c.n == 3
    assert not c.errors
    assert c.stopped_early is not None and "7 of 10 claims were not judged" in c.stopped_early


async def test_calibrate_rejects_a_concurrency_below_one():
    with pytest.raises(ValueError, match="concurrency"):
        await calibrate([claim(1)], judge=ScriptedJudge({}), concurrency=0)


async def test_calibrate_with_no_labels_gives_undefined_metrics():
    c = await calibrate([], judge=ScriptedJudge({}))
    assert c.n == 0
    assert math.isnan(c.accuracy) and math.isnan(c.kappa)
    assert "n/a" in format_calibration(c)
    assert c.as_dict()["accuracy"] is None


# --- the report --------------------------------------------------------------------------------


def test_format_calibration_shows_metrics_and_an_aligned_matrix():
    pairs = [(S, S)] * 5 + [(S, P)] + [(N, N)] * 3 + [(C, N)] + [(P, P)] * 2
    predictions = [
        ClaimPrediction(id=str(i), gold=g, predicted=p, confidence=0.9)
        for i, (g, p) in enumerate(pairs)
    ]
    c = measure(predictions, judge=JudgeInfo(provider="claude", model="m", prompt_version="1"))
    text = format_calibration(c)
    assert "Calibration of claude/m on 12 labelled claims: 12 judged, 0 errors" in text
    assert f"{c.accuracy:.3f}" in text and f"{c.kappa:.3f}" in text
    assert f"{c.binary.balanced_accuracy:.3f}" in text
    lines = text.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("label \\ judge  "))
    table = lines[header : header + 6]
    assert table[0].split()[-5:] == [*VERDICT_LABELS, "total"]
    assert table[1].split() == ["SUPPORTED", "5", "1", "0", "0", "6"]
    assert table[4].split() == ["CONTRADICTED", "0", "0", "1", "0", "1"]
    assert table[5].split() == ["total", "5", "3", "4", "0", "12"]
    # right-aligned: each count ends where its column header ends
    for column in VERDICT_LABELS:
        end = table[0].index(column) + len(column)
        assert all(row[end - 1].isdigit() for row in table[1:])


def test_as_dict_is_json_ready():
    predictions = [ClaimPrediction(id="a", gold=S, predicted=N, confidence=0.5, reason="r")]
    c = measure(predictions)
    data = json.loads(c.to_json())
    assert data["n"] == 1
    assert data["confusion"]["SUPPORTED"]["NOT_ENOUGH_INFO"] == 1
    assert data["kappa"] == 0.0  # p_o = 0 and p_e = 0
    assert data["predictions"] == [
        {
            "id": "a",
            "gold": "SUPPORTED",
            "predicted": "NOT_ENOUGH_INFO",
            "confidence": 0.5,
            "reason": "r",
        }
    ]


def test_sample_builder_rebuilds_the_shipped_sample(monkeypatch):
    script = REPO_ROOT / "scripts" / "build_calibration_sample.py"
    spec = importlib.util.spec_from_file_location("build_calibration_sample", script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)  # dataclasses look their module up
    spec.loader.exec_module(module)
    if not module.DEFAULT_DATA.is_dir():
        pytest.skip(
            f"the shared data sets (RAGTruth, WiCE, HaluEval) are not in {module.DEFAULT_DATA}: "
            "put the shared folder beside this project, so that ../shared/data holds them "
            "(CONTRIBUTING.md, The shared data)"
        )
    assert module.build(module.DEFAULT_DATA) == SAMPLE.read_text(encoding="utf-8")

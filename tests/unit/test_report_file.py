"""Run reports written case by case and read case by case; older layouts still read."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragaliq.errors import ReportError
from ragaliq.models import (
    CaseResult,
    EvaluationResult,
    EvaluatorInfo,
    JudgeInfo,
    RunReport,
    RunSummary,
    Usage,
)
from ragaliq.run_report import ReportFile, write_report

JUDGE = JudgeInfo(provider="fake", model="fake-1", prompt_version="p1")
EVALUATORS = {"faithfulness": EvaluatorInfo(threshold=0.7, version="1")}


def case(i: int, score: float | None = 1.0, status: str = "ok") -> CaseResult:
    result = EvaluationResult(
        evaluator="faithfulness",
        score=score,
        passed=None if score is None else score >= 0.7,
        status="ok" if score is not None else "error",
    )
    return CaseResult(
        id=f"case-{i}",
        input_hash="h" * 64,
        status=status,  # type: ignore[arg-type]
        query=f"question {i} with </script> and \u2028 in it",
        results={"faithfulness": result},
        error=None if status == "ok" else "judge failed",
    )


def report_of(cases: list[CaseResult], **extra) -> RunReport:
    return RunReport(
        judge=JUDGE,
        evaluators=EVALUATORS,
        summary=RunSummary.of(cases, EVALUATORS),
        usage=Usage(calls=3, cost_usd=0.5),
        cases=tuple(cases),
        **extra,
    )


def test_a_report_streams_out_and_back_unchanged(tmp_path: Path):
    report = report_of(
        [case(1), case(2, 0.5), case(3, None, "error")], notices=("heads up",), shard="2/4"
    )
    path = tmp_path / "report.json"
    head = write_report(path, report)
    assert head == report.head
    read = ReportFile(path)
    assert list(read.iter_cases()) == list(report.cases)
    assert read.head == report.head
    # one JSON document that any JSON tool reads, one case a line
    assert RunReport.model_validate_json(path.read_text(encoding="utf-8")) == report
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 2 + len(report.cases)


def test_the_summary_is_what_the_cases_say_not_what_the_file_says(tmp_path: Path):
    path = tmp_path / "report.json"
    write_report(path, report_of([case(1, 0.2), case(2, 0.4)]))
    text = path.read_text(encoding="utf-8")
    forged = text.replace('"score":0.3', '"score":0.99')
    assert forged != text
    path.write_text(forged, encoding="utf-8")
    assert ReportFile(path).head.summary.evaluators["faithfulness"].score == 0.3


def test_an_indented_report_of_an_earlier_version_is_read_whole(tmp_path: Path):
    report = report_of([case(1), case(2, 0.5)])
    path = tmp_path / "old.json"
    path.write_text(report.model_dump_json(indent=2), encoding="utf-8")
    read = ReportFile(path)
    assert read.head == report.head
    assert list(read.iter_cases()) == list(report.cases)


@pytest.mark.parametrize(
    ("mangle", "phrase"),
    [
        (
            lambda lines: (
                [lines[0].replace('"schema_version":1', '"schema_version":99'), *lines[1:]]
            ),
            "schema_version 99",
        ),
        (lambda lines: [*lines[:2], ',{"id": 3}', *lines[3:]], ":3: not a valid case"),
        (lambda lines: lines[:-1], "ends before its cases are closed"),
        (lambda lines: [*lines, "{}"], "text after the end"),
        (lambda lines: [*lines[:2], lines[2].lstrip(","), *lines[3:]], "expected ','"),
    ],
)
def test_a_broken_report_is_one_clear_error(tmp_path: Path, mangle, phrase: str):
    path = tmp_path / "report.json"
    write_report(path, report_of([case(1), case(2), case(3)]))
    lines = path.read_text(encoding="utf-8").splitlines()
    path.write_text("\n".join(mangle(lines)) + "\n", encoding="utf-8")
    with pytest.raises(ReportError, match=phrase):
        read = ReportFile(path)
        list(read.iter_cases())


def test_a_missing_report_says_what_to_pass(tmp_path: Path):
    with pytest.raises(ReportError, match="not found"):
        ReportFile(tmp_path / "nope.json")


def test_a_report_that_holds_a_case_twice_is_refused(tmp_path: Path):
    path = tmp_path / "report.json"
    write_report(path, report_of([case(1), case(2), case(1, score=0.0)]))
    with pytest.raises(ReportError, match=r"report\.json:\d+: case 'case-1' comes twice"):
        list(ReportFile(path).iter_cases())
    whole = tmp_path / "whole.json"
    whole.write_text(report_of([case(1), case(1)]).model_dump_json(indent=2), encoding="utf-8")
    with pytest.raises(ReportError, match="case 'case-1' comes twice"):
        list(ReportFile(whole).iter_cases())

from __future__ import annotations

import io

from ragaliq.models import Progress, Usage
from ragaliq.report.progress import ProgressPrinter


def progress(done: int, total: int = 10, errors: int = 0) -> Progress:
    return Progress(done=done, total=total, errors=errors, usage=Usage(cost_usd=0.42))


def test_progress_on_ci_prints_plain_periodic_lines():
    out = io.StringIO()
    clock = iter([0.0] + [1.0] * 200)
    printer = ProgressPrinter(out, live=False, every_s=100, quiet_s=0, clock=lambda: next(clock))
    for done in range(1, 101):
        printer(progress(done, total=100, errors=3))
    lines = out.getvalue().splitlines()
    assert lines[0] == "judged 10/100 cases, 3 errors, $0.42 so far"
    assert lines[-1] == "judged 100/100 cases, 3 errors, $0.42 so far"
    assert len(lines) == 10
    assert "\r" not in out.getvalue()


def test_progress_prints_on_time_too():
    out = io.StringIO()
    times = iter([0.0, 1.0, 20.0, 21.0, 50.0])
    printer = ProgressPrinter(out, live=False, every_s=15, clock=lambda: next(times))
    for done in (1, 2, 3, 4):
        printer(progress(done, total=1000))
    assert len(out.getvalue().splitlines()) == 2  # at 20 s and at 50 s, not in between


def test_a_quick_run_prints_no_progress():
    out = io.StringIO()
    printer = ProgressPrinter(out, live=False, clock=lambda: 0.5)
    for done in range(1, 21):
        printer(progress(done, total=20))
    assert out.getvalue() == ""


def test_progress_on_a_terminal_redraws_one_line():
    out = io.StringIO()
    printer = ProgressPrinter(out, live=True)
    for done in range(1, 11):
        printer(progress(done))
    text = out.getvalue()
    assert text.count("\r") == 10
    assert text.endswith("10/10 cases · 0 errors · 0 calls · $0.42\n")


def test_verbose_prints_every_case_from_the_first_and_quiet_prints_none():
    loud, silent = io.StringIO(), io.StringIO()
    verbose = ProgressPrinter(loud, live=False, clock=lambda: 0.5, verbosity="verbose")
    quiet = ProgressPrinter(silent, live=True, verbosity="quiet")
    for done in range(1, 4):
        verbose(progress(done, total=3))
        quiet(progress(done, total=3))
    assert loud.getvalue().splitlines() == [
        f"judged {done}/3 cases, 0 errors, $0.42 so far" for done in (1, 2, 3)
    ]
    assert silent.getvalue() == ""


def test_one_case_and_one_error_are_singular():
    plain, live = io.StringIO(), io.StringIO()
    ProgressPrinter(plain, live=False, verbosity="verbose")(progress(1, total=1, errors=1))
    ProgressPrinter(live, live=True)(progress(1, total=1, errors=1))
    assert plain.getvalue() == "judged 1/1 case, 1 error, $0.42 so far\n"
    assert live.getvalue().endswith("1/1 case · 1 error · 0 calls · $0.42\n")


def test_the_cases_judged_and_the_total_are_written_alike():
    out = io.StringIO()
    printer = ProgressPrinter(out, live=False, verbosity="verbose", clock=lambda: 0.0)
    printer(progress(1808, total=6000))
    assert out.getvalue() == "judged 1,808/6,000 cases, 0 errors, $0.42 so far\n"

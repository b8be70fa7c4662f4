from __future__ import annotations

import signal

import pytest

from ragaliq.config import GatePolicy
from ragaliq.exits import (
    ExitCode,
    calibration_exit_code,
    gate_exit_code,
    run_exit_code,
    stopped_exit,
)
from ragaliq.gate import GateDecision
from ragaliq.metrics import ClaimPrediction, JudgeFailure, measure
from ragaliq.models import EvaluatorSummary, JudgeInfo, ReportHead, RunSummary, Usage, Verdict
from ragaliq.signals import TERMINATING, Terminated, stop_held, stop_on_termination

S, N = Verdict.SUPPORTED, Verdict.NOT_ENOUGH_INFO


def head(*, passed=True, judged=3, errors=0, stopped_early=None) -> ReportHead:
    summary = EvaluatorSummary(
        score=0.9 if judged else None,
        pass_rate=1.0 if judged else None,
        passed=passed,
        threshold=0.7,
        judged=judged,
        errors=errors,
    )
    return ReportHead(
        judge=JudgeInfo(provider="fake", model="m", prompt_version="1"),
        evaluators={},
        summary=RunSummary(cases=3, errors=errors, evaluators={"faithfulness": summary}),
        usage=Usage(),
        stopped_early=stopped_early,
    )


@pytest.mark.parametrize(
    ("report", "policy", "shard", "code"),
    [
        (head(), GatePolicy(), False, ExitCode.PASSED),
        (head(passed=False), GatePolicy(), False, ExitCode.FAILED),
        (head(errors=1), GatePolicy(), False, ExitCode.FAILED),
        (head(errors=1), GatePolicy(on_error="ignore"), False, ExitCode.PASSED),
        (head(judged=0), GatePolicy(), False, ExitCode.UNJUDGED),
        (head(stopped_early="budget"), GatePolicy(), False, ExitCode.UNJUDGED),
        # A shard is judged on its own; the merged report meets the thresholds.
        (head(passed=False), GatePolicy(), True, ExitCode.PASSED),
        (head(judged=0), GatePolicy(), True, ExitCode.UNJUDGED),
    ],
)
def test_the_run_exit_code(report, policy, shard, code):
    assert run_exit_code(report, policy, shard=shard) is code


@pytest.mark.parametrize("passed", [True, False])
def test_the_gate_exit_code_is_the_decision_unless_nothing_was_judged(passed):
    decision = GateDecision(
        passed=passed,
        failures=(),
        first_run=True,
        comparable=True,
        evaluators={},
        cases=3,
        usage=Usage(),
        judge=JudgeInfo(provider="fake", model="m", prompt_version="1"),
    )
    assert gate_exit_code(head(), decision) is (ExitCode.PASSED if passed else ExitCode.FAILED)
    assert gate_exit_code(head(judged=0), decision) is ExitCode.UNJUDGED
    assert gate_exit_code(head(stopped_early="budget"), decision) is ExitCode.UNJUDGED


def predictions(pairs):
    return [
        ClaimPrediction(id=str(i), gold=gold, predicted=said, confidence=0.9)
        for i, (gold, said) in enumerate(pairs)
    ]


def test_the_calibration_exit_code():
    agreeing = measure(predictions([(S, S), (N, N), (S, S), (N, N)]))
    contrary = measure(predictions([(S, N), (N, S), (S, N), (N, S)]))
    one_class = measure(predictions([(S, S), (S, S)]))
    nothing = measure([], errors=[JudgeFailure(id="a", message="down")])
    assert calibration_exit_code(agreeing, min_kappa=None) == (ExitCode.PASSED, None)
    assert calibration_exit_code(agreeing, min_kappa=0.9) == (ExitCode.PASSED, None)
    code, why = calibration_exit_code(contrary, min_kappa=0.5)
    assert code is ExitCode.FAILED and "kappa -1.000 is below --min-kappa 0.5" in str(why)
    code, why = calibration_exit_code(one_class, min_kappa=0.5)
    assert code is ExitCode.FAILED and "undefined" in str(why)
    code, why = calibration_exit_code(nothing, min_kappa=None)
    assert code is ExitCode.UNJUDGED and "no labelled claim could be judged" in str(why)


@pytest.fixture
def stop_handlers():
    saved = {s: signal.getsignal(s) for s in TERMINATING}
    stop_on_termination()
    yield
    for s, handler in saved.items():
        signal.signal(s, handler)


@pytest.mark.parametrize(("name", "code"), [("SIGTERM", 143), ("SIGHUP", 129)])
def test_sigterm_and_sighup_stop_as_ctrl_c_does_with_their_own_exit_code(stop_handlers, name, code):
    signum = getattr(signal, name)
    with pytest.raises(KeyboardInterrupt) as caught:
        signal.raise_signal(signum)
    assert isinstance(caught.value, Terminated)
    assert stopped_exit(caught.value) == (code, f"terminated by {name}: nothing more was written")
    # A second signal while the first is handled cannot cut the cleanup short.
    signal.raise_signal(signal.SIGTERM)


def test_a_held_stop_waits_for_the_end_of_the_block(stop_handlers):
    done = []
    with pytest.raises(Terminated), stop_held():
        signal.raise_signal(signal.SIGTERM)
        done.append("the block went on")
    assert done == ["the block went on"]


def test_a_held_stop_wins_over_an_error_the_signal_caused_in_the_block(stop_handlers):
    with pytest.raises(Terminated) as stopped, stop_held():
        signal.raise_signal(signal.SIGTERM)
        raise BrokenPipeError("a worker ended by the same signal, found as it was started")
    assert isinstance(stopped.value.__context__, BrokenPipeError)


def test_ctrl_c_is_130():
    assert stopped_exit(KeyboardInterrupt()) == (130, "interrupted: nothing more was written")

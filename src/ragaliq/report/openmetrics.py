"""The gate decision as OpenMetrics text, the metrics file GitLab and Prometheus tools read.

Each evaluator's score in the head run and in the baseline (``ragaliq_evaluator_score``, labelled
``evaluator`` and ``run``), its change (``ragaliq_evaluator_delta``), its threshold and whether it
passed; the gate's result and its counts (cases, errors, newly hallucinated claims, unstable
claims, lost relevant chunks, newly miscited claims); and what the judge cost: calls, tokens by
kind, cache hits and US dollars. A value the decision does not have
(no baseline yet, no score) is left out, never written as zero. The file ends with ``# EOF``.

Label values go through the comment's redaction (:func:`~ragaliq.redaction.redact`) and
OpenMetrics escaping (backslash, double quote, line feed); other controls become spaces.
"""

from __future__ import annotations

import re
from pathlib import Path

from ragaliq._files import write_atomic
from ragaliq.evaluators.citations import MiscitedClaim
from ragaliq.gate import GateDecision
from ragaliq.redaction import redact
from ragaliq.text.plain import BIDI_MARKS

__all__ = ["PREFIX", "render_metrics", "write_metrics"]

PREFIX = "ragaliq"
"""The name every metric starts with."""

_CONTROL = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029]")


def _label(value: str) -> str:
    text = _CONTROL.sub(" ", BIDI_MARKS.sub("", redact(value)))
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _number(value: float | int | bool) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int):
        return str(value)
    return repr(float(value))


class _Family:
    def __init__(self, name: str, help_text: str) -> None:
        self.name = f"{PREFIX}_{name}"
        self.lines = [f"# TYPE {self.name} gauge", f"# HELP {self.name} {help_text}"]

    def add(self, value: float | int | bool | None, **labels: str) -> None:
        if value is None:
            return
        inner = ",".join(f'{key}="{_label(text)}"' for key, text in labels.items())
        self.lines.append(
            f"{self.name}{{{inner}}} {_number(value)}" if inner else f"{self.name} {_number(value)}"
        )


def render_metrics(decision: GateDecision) -> str:
    """The OpenMetrics text of a decision, ``# EOF`` its last line."""
    passed = _Family("gate_passed", "1 when the gate passed, 0 when it failed.")
    passed.add(decision.passed)
    cases = _Family("cases", "Cases in the run.")
    cases.add(decision.cases)
    errors = _Family("case_errors", "Cases the judge could not judge.")
    errors.add(decision.count("errors"))
    new = _Family("new_hallucinations", "Claims newly hallucinated since the baseline.")
    new.add(decision.count("new_hallucinations"))
    unstable = _Family(
        "unstable_claims", "Hallucinated claims the judge's verdicts disagreed on when asked again."
    )
    unstable.add(decision.count("unstable_claims"))
    lost = _Family(
        "lost_chunks", "Relevant chunks the baseline retrieved within k that this run does not."
    )
    lost.add(decision.count("lost_chunks"))
    miscited = _Family(
        "new_miscited_claims", "Claims this run miscites that the baseline's case did not."
    )
    miscited.add(_new_miscited(decision))
    score = _Family("evaluator_score", "An evaluator's mean score, in the head run or baseline.")
    delta = _Family("evaluator_delta", "The head's score less the baseline's, on shared cases.")
    threshold = _Family("evaluator_threshold", "The score an evaluator must reach.")
    ok = _Family("evaluator_passed", "1 when an evaluator passed the gate, 0 when it failed it.")
    for name, evaluator in decision.evaluators.items():
        score.add(evaluator.head, evaluator=name, run="head")
        score.add(evaluator.baseline, evaluator=name, run="baseline")
        delta.add(evaluator.delta, evaluator=name)
        threshold.add(evaluator.threshold, evaluator=name)
        ok.add(evaluator.passed, evaluator=name)
    usage = decision.usage
    calls = _Family("judge_calls", "Requests sent to the judge's backend (cache hits are not).")
    calls.add(usage.calls)
    tokens = _Family("judge_tokens", "Tokens the judge's requests used, by kind.")
    tokens.add(usage.input_tokens, kind="input")
    tokens.add(usage.output_tokens, kind="output")
    tokens.add(usage.cache_read_tokens, kind="cache_read")
    tokens.add(usage.cache_write_tokens, kind="cache_write")
    hits = _Family("judge_cache_hits", "Judge operations answered by the local cache.")
    hits.add(usage.cache_hits)
    cost = _Family("judge_cost_usd", "What the judge's requests cost, in US dollars.")
    cost.add(usage.cost_usd)
    families = [passed, cases, errors, new, unstable, lost, miscited, score, delta, threshold, ok]
    families += [calls, tokens, hits, cost]
    lines = [line for family in families for line in family.lines]
    return "\n".join([*lines, "# EOF"]) + "\n"


def _new_miscited(decision: GateDecision) -> int | None:
    """The newly miscited claims; None when the list was cut short (the rest are not told)."""
    if decision.omitted.get("miscited_claims"):
        return None
    entries = decision.listed("miscited_claims")
    return sum(isinstance(entry, MiscitedClaim) and entry.new for entry in entries)


def write_metrics(path: Path, decision: GateDecision) -> None:
    """Write :func:`render_metrics` to ``path`` atomically.

    Raises:
        OutputError: the file cannot be written.
    """
    write_atomic(path, render_metrics(decision))

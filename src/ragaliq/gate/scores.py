"""Each evaluator's verdict: its head score against its threshold and against the baseline.

An evaluator passes when its head score reaches its threshold (on every case, and on the cases
both runs share, so that new cases cannot hide a drop) and has not dropped more than ``max_drop``
below the baseline on the shared cases. A drop past ``max_drop`` that the suite cannot tell from
noise is ``inconclusive`` (:mod:`ragaliq.gate.statistics`). The thresholds and rules are the bar
in force, already held to the baseline's (:mod:`ragaliq.trust`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import NamedTuple

from ragaliq.baseline import Baseline, Provenance
from ragaliq.evaluators.registry import evaluator_class
from ragaliq.gate.decision import EvaluatorDecision, EvaluatorStatus
from ragaliq.gate.statistics import PairedDelta, cases_to_resolve, paired_delta
from ragaliq.models import NOT_SCORED, ReportHead
from ragaliq.policy import GateRules
from ragaliq.text.counts import plural

__all__ = ["Comparability", "Shared", "comparable", "decide_evaluators", "failure_line"]


class Shared(NamedTuple):
    """One evaluator's scores over the cases both runs scored."""

    head_sum: float
    base_sum: float
    deltas: list[float]


def decide_evaluators(
    head: ReportHead,
    *,
    baseline: Baseline | None,
    shared: Mapping[str, Shared],
    thresholds: Mapping[str, float],
    rules: GateRules,
    comparable: Comparability,
    notices: list[str],
) -> dict[str, EvaluatorDecision]:
    """Each evaluator's head score against its threshold and, where comparable, the baseline.

    An evaluator the baseline has and the run lacks has no score, and fails.
    """
    decisions: dict[str, EvaluatorDecision] = {}
    for name, summary in head.summary.evaluators.items():
        held = comparable.holds(name)
        threshold = thresholds.get(name, summary.threshold)
        scores = _SharedScores()
        if baseline is not None:
            scores = _SharedScores.of(shared.get(name))
        max_drop = rules.drop_for(name)
        head_score = summary.score
        delta = scores.delta
        change = paired_delta(scores.deltas, confidence=rules.confidence) if held else None
        to_resolve = None
        if head_score is None:
            status: EvaluatorStatus = "no_score"
        elif head_score < threshold or (scores.head is not None and scores.head < threshold):
            status = "below_threshold"
        elif held and delta is not None and delta < -max_drop - 1e-9:
            if change is not None and change.resolved_drop:
                status = "regressed"
            else:
                status = "inconclusive"
                sd = change.sd if change is not None else 0.0
                to_resolve = cases_to_resolve(sd, max_drop=max_drop, confidence=rules.confidence)
                notices.append(
                    _inconclusive_notice(name, -delta, scores.cases, change, to_resolve, rules)
                )
        else:
            status = "pass"
        passed = status == "pass" or (status == "inconclusive" and rules.on_inconclusive == "pass")
        decisions[name] = EvaluatorDecision(
            head=head_score,
            baseline=scores.baseline,
            delta=delta,
            threshold=threshold,
            max_drop=max_drop,
            status=status,
            passed=passed,
            comparable=held,
            errors=summary.errors,
            shared_cases=scores.cases if baseline is not None else None,
            head_shared=scores.head,
            interval=None if change is None else (round(change.low, 6), round(change.high, 6)),
            confidence=None if change is None else rules.confidence,
            cases_to_resolve=to_resolve,
            claims=summary.claims,
            checked=summary.checked,
        )
    missing = sorted(set(baseline.thresholds) - set(decisions)) if baseline is not None else []
    for name in missing:
        assert baseline is not None  # missing is empty without one
        decisions[name] = EvaluatorDecision(
            head=None,
            baseline=baseline.score(name),
            delta=None,
            threshold=baseline.thresholds[name],
            max_drop=rules.drop_for(name),
            status="no_score",
            passed=False,
            turned_off=True,
        )
    if missing:
        notices.append(
            f"This run has no {', '.join(missing)} score, which the baseline has: a PR cannot "
            "turn an evaluator off until it is merged and the baseline updated."
        )
    return decisions


@dataclass(frozen=True, kw_only=True)
class Comparability:
    """Which evaluators' drops from the baseline count: those judged alike.

    A judge, a prompt or an evaluator version that differs from the baseline's sets apart the
    evaluators that ask the judge; an evaluator that asks none (the retrieval metrics) is set
    apart only by a change of its own version.
    """

    baseline: bool
    """Whether there is a baseline at all."""
    judge_differences: tuple[str, ...] = ()
    """How the judging differs from the baseline's, for the evaluators that ask the judge."""
    apart: frozenset[str] = frozenset()
    """The evaluators asking no judge whose own version differs from the baseline's."""

    def holds(self, name: str) -> bool:
        """Whether ``name``'s drops from the baseline count."""
        if not self.baseline or name in self.apart:
            return False
        return not (_asks_judge(name) and self.judge_differences)


def comparable(head: ReportHead, baseline: Baseline | None, notices: list[str]) -> Comparability:
    """Which evaluators' drops from the baseline can count: it exists, and it was judged alike."""
    if baseline is None:
        notices.append(
            "No baseline yet: only thresholds apply, and no hallucinated claim counts as new. "
            "Record one on the main branch with the action's mode: update-baseline, or with "
            "ragaliq baseline record."
        )
        return Comparability(baseline=False)
    ours, theirs = baseline.provenance, Provenance.of(head)
    judge_free = {name for name in head.evaluators if not _asks_judge(name)}
    judge_differences = tuple(ours.differences(theirs, leaving_out=judge_free))
    apart = frozenset(
        name
        for name in judge_free
        if name in ours.evaluator_versions
        and ours.evaluator_versions[name] != theirs.evaluator_versions[name]
    )
    result = Comparability(baseline=True, judge_differences=judge_differences, apart=apart)
    differences = [
        *judge_differences,
        *(
            f"{name} evaluator version: {ours.evaluator_versions[name]} → "
            f"{theirs.evaluator_versions[name]}"
            for name in sorted(apart)
        ),
    ]
    held = [name for name in head.summary.evaluators if result.holds(name)]
    set_apart = [name for name in head.summary.evaluators if not result.holds(name)]
    if not differences or not set_apart:
        return result  # nothing this run scores was judged apart
    if held:
        notices.append(
            "The baseline was judged differently (" + "; ".join(differences) + "), so "
            f"drops of {', '.join(set_apart)} are shown but do not fail the gate; "
            f"{', '.join(held)}{_held_because(judge_differences, len(held))} still held to the "
            "baseline; thresholds still apply. Update the baseline on main to compare like with "
            "like."
        )
    else:
        notices.append(
            "The baseline was judged differently (" + "; ".join(differences) + "), so "
            "score drops are shown but do not fail the gate; thresholds still apply. "
            "Update the baseline on main to compare like with like."
        )
    return result


def _held_because(judge_differences: tuple[str, ...], count: int) -> str:
    """`` ask no judge and are`` where the judging differs, else `` are``."""
    be = "is" if count == 1 else "are"
    if judge_differences:
        return f" {'asks' if count == 1 else 'ask'} no judge and {be}"
    return f" {be}"


def _asks_judge(name: str) -> bool:
    """Whether the evaluator ``name`` asks the judge; an unknown one is taken to."""
    try:
        return evaluator_class(name).asks_judge()
    except KeyError:
        return True


class _SharedScores(NamedTuple):
    """One evaluator's means over the cases both runs scored, and the per-case changes."""

    baseline: float | None = None
    head: float | None = None
    cases: int = 0
    deltas: tuple[float, ...] = ()

    @classmethod
    def of(cls, shared: Shared | None) -> _SharedScores:
        if shared is None or not shared.deltas:
            return cls()
        count = len(shared.deltas)
        return cls(
            baseline=round(shared.base_sum / count, 6),
            head=round(shared.head_sum / count, 6),
            cases=count,
            deltas=tuple(shared.deltas),
        )

    @property
    def delta(self) -> float | None:
        if self.baseline is None or self.head is None:
            return None
        return round(self.head - self.baseline, 6)


def _inconclusive_notice(
    name: str,
    drop: float,
    cases: int,
    change: PairedDelta | None,
    to_resolve: int | None,
    rules: GateRules,
) -> str:
    if change is None:
        noise = "one shared case cannot say how noisy the scores are"
    else:
        noise = (
            f"its {rules.confidence:.0%} interval [{change.low:+.3f}, {change.high:+.3f}] "
            "includes no change"
        )
    more = (
        f"; about {plural(to_resolve, 'case')} would resolve a drop of that size"
        if to_resolve
        else ""
    )
    does = "fails" if rules.on_inconclusive == "fail" else "does not fail"
    return (
        f"{name} dropped {drop:.3f} on the {plural(cases, 'case')} both runs share, "
        f"past max_drop {rules.drop_for(name):g}, but {noise}: the suite cannot tell this drop "
        "from noise"
        f"{more}. It {does} the gate (gate.on_inconclusive: {rules.on_inconclusive})."
    )


def failure_line(name: str, decision: EvaluatorDecision) -> str:
    """The line a failed evaluator adds to the gate's failures."""
    head, shared = decision.head, decision.head_shared
    if decision.turned_off:
        return f"{name}: turned off, but the baseline has it"
    if head is None:
        return f"{name}: {NOT_SCORED}"
    if decision.status == "below_threshold":
        if head >= decision.threshold and shared is not None:
            return (
                f"{name}: {shared:.3f} over the {plural(decision.shared_cases or 0, 'case')} "
                f"the baseline has is below the threshold {decision.threshold:.2f} (new cases do "
                "not lift it)"
            )
        return f"{name}: {head:.3f} is below the threshold {decision.threshold:.2f}"
    # Regressed or inconclusive: a drop past max_drop on the cases both runs scored.
    base, delta = decision.baseline, decision.delta
    assert base is not None
    assert shared is not None
    assert delta is not None
    if decision.status == "inconclusive":
        return (
            f"{name}: dropped {-delta:.3f}, past max_drop {decision.max_drop:g}, but within what "
            "the suite can resolve (gate.on_inconclusive: fail)"
        )
    return (
        f"{name}: {shared:.3f} dropped {base - shared:.3f} from the baseline {base:.3f} "
        f"(max_drop {decision.max_drop:g})"
    )

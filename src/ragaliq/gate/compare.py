"""Comparing a head run with the baseline: the gate decision.

An evaluator passes when its head score reaches its threshold and, on the cases both runs share,
has not dropped more than ``max_drop`` below the baseline. A claim is *newly hallucinated* when it
is hallucinated in the head run and no hallucinated claim of the same case in the baseline matches
it (:mod:`ragaliq.text.matching`), so that a re-worded claim is not reported as new.
"""

from __future__ import annotations

from typing import NamedTuple

from ragaliq.baseline import Baseline, Provenance
from ragaliq.gate.decision import (
    CaseFailure,
    ClaimChange,
    EvaluatorDecision,
    EvaluatorStatus,
    GateDecision,
    IrrelevantChunk,
    RegressedCase,
)
from ragaliq.gate.rules import GateRules
from ragaliq.gate.statistics import PairedDelta, cases_to_resolve, paired_delta
from ragaliq.models import CaseResult, ClaimVerdict, RunReport, Verdict
from ragaliq.text.matching import normalise, unmatched

__all__ = ["HALLUCINATION", "compare", "hallucinated_claims"]

HALLUCINATION = "hallucination"
"""The evaluator whose flagged claims are the hallucinated ones the comment lists."""


def hallucinated_claims(case: CaseResult) -> list[ClaimVerdict]:
    """The claims the hallucination evaluator holds against a case (none without it)."""
    result = case.results.get(HALLUCINATION)
    flagged = set(result.flagged_claims or ()) if result is not None else set()
    return [claim for i, claim in enumerate(case.claims) if i in flagged]


def _text_of(claim: ClaimVerdict) -> str:
    return claim.text


def _change(case: CaseResult, claim: ClaimVerdict) -> ClaimChange:
    return ClaimChange(
        case_id=case.id,
        query=case.query,
        claim=claim.text,
        verdict=claim.verdict.value,
        evidence=claim.evidence,
        reason=claim.reason,
        confidence=claim.confidence,
        agreement=claim.agreement,
    )


def compare(head: RunReport, baseline: Baseline | None, *, rules: GateRules) -> GateDecision:
    """The gate decision for a head run against the baseline (or thresholds only, without one)."""
    notices: list[str] = list(head.notices)
    rules, comparable = _against_baseline(head, baseline, rules, notices)
    evaluators = _decide_evaluators(head, baseline, rules, comparable, notices)
    claims = _claim_diff(head, baseline, count_unstable=rules.count_unstable, notices=notices)
    cases = _case_sets(head, baseline, rules, notices)
    errors = tuple(
        CaseFailure(case_id=c.id, query=c.query, error=c.error or "unknown error")
        for c in head.cases
        if c.status == "error"
    )
    failures = [_failure_line(name, e) for name, e in evaluators.items() if not e.passed]
    failures += list(cases.failures)
    if errors and rules.on_error == "fail":
        failures.append(f"{len(errors)} cases could not be judged (gate.on_error: fail)")
    if head.stopped_early:
        failures.append(f"the run stopped early: {head.stopped_early}")
    if claims.new and rules.fail_on_new_hallucinations:
        failures.append(
            f"{len(claims.new)} newly hallucinated claims (gate.fail_on_new_hallucinations: true)"
        )
    elif claims.new:
        notices.append(
            "Newly hallucinated claims are listed but do not fail this gate "
            "(gate.fail_on_new_hallucinations: false); the scores decide."
        )
    regressed = (
        _regressed_cases(head, baseline.report, rules, list(evaluators))
        if baseline is not None
        else []
    )
    lost_facts = _lost_facts(head, baseline.report) if baseline is not None else ()
    return GateDecision(
        passed=not failures,
        failures=tuple(failures),
        first_run=baseline is None,
        comparable=comparable,
        evaluators=evaluators,
        new_hallucinations=claims.new,
        hallucinations=claims.first_run,
        fixed_hallucinations=claims.fixed,
        unstable_claims=claims.unstable,
        regressed_cases=tuple(regressed),
        lost_facts=lost_facts,
        irrelevant_chunks=_irrelevant_chunks(head),
        errors=errors,
        added_cases=cases.added,
        removed_cases=cases.removed,
        notices=tuple(notices),
        cases=head.summary.cases,
        usage=head.usage,
        judge=head.judge,
        baseline_provenance=baseline.provenance if baseline else None,
        baseline_commit=baseline.commit if baseline else None,
    )


class _ClaimDiff(NamedTuple):
    new: tuple[ClaimChange, ...] = ()
    fixed: tuple[ClaimChange, ...] = ()
    unstable: tuple[ClaimChange, ...] = ()
    first_run: tuple[ClaimChange, ...] = ()
    """Without a baseline: every hallucinated claim, none of them new."""


def _claim_diff(
    head: RunReport, baseline: Baseline | None, *, count_unstable: bool, notices: list[str]
) -> _ClaimDiff:
    """Claims hallucinated now and not before (new), and before but not now (fixed)."""
    if baseline is None:
        first_run = tuple(
            _change(case, claim)
            for case in head.cases
            if case.status == "ok"
            for claim in hallucinated_claims(case)
        )
        return _ClaimDiff(first_run=first_run)
    base_cases = {c.id: c for c in baseline.report.cases}
    new: list[ClaimChange] = []
    fixed: list[ClaimChange] = []
    unstable: list[ClaimChange] = []
    for case in head.cases:
        if case.status != "ok":
            continue
        before = base_cases.get(case.id)
        now = hallucinated_claims(case)
        was = hallucinated_claims(before) if before is not None and before.status == "ok" else []
        for claim in unmatched(now, was, text=_text_of):
            change = _change(case, claim)
            if "unstable" in claim.flags:
                unstable.append(change)
            if "unstable" not in claim.flags or count_unstable:
                new.append(change)
        if before is not None and before.status == "ok":
            fixed += [_change(before, c) for c in unmatched(was, now, text=_text_of)]
    if unstable and not count_unstable:
        notices.append(
            f"{len(unstable)} hallucinated claims are unstable (the judge's repeated verdicts "
            "disagreed), so they are listed apart and not counted as new."
        )
    return _ClaimDiff(new=tuple(new), fixed=tuple(fixed), unstable=tuple(unstable))


def _lost_facts(head: RunReport, baseline: RunReport) -> tuple[ClaimChange, ...]:
    """Needed facts the baseline's context held (supported) and this run's no longer does."""
    held = {
        (case.id, normalise(fact.text))
        for case in baseline.cases
        for fact in case.facts
        if fact.verdict is Verdict.SUPPORTED
    }
    return tuple(
        _change(case, fact)
        for case in head.cases
        if case.status == "ok"
        for fact in case.facts
        if fact.verdict is not Verdict.SUPPORTED and (case.id, normalise(fact.text)) in held
    )


def _irrelevant_chunks(head: RunReport) -> tuple[IrrelevantChunk, ...]:
    return tuple(
        IrrelevantChunk(case_id=case.id, query=case.query, rank=rank, reason=rating.reason)
        for case in head.cases
        for rank, rating in enumerate(case.chunks, start=1)
        if not rating.relevant
    )


class _CaseSets(NamedTuple):
    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    failures: tuple[str, ...] = ()


def _case_sets(
    head: RunReport, baseline: Baseline | None, rules: GateRules, notices: list[str]
) -> _CaseSets:
    """Cases new since the baseline, and baseline cases the run lacks (a failure by default)."""
    if baseline is None:
        return _CaseSets()
    head_ids = {c.id for c in head.cases}
    base_ids = {c.id for c in baseline.report.cases}
    added = tuple(sorted(head_ids - base_ids))
    removed = tuple(sorted(base_ids - head_ids))
    if base_ids and head_ids and base_ids.isdisjoint(head_ids):
        notices.append(
            "No case id is in both the baseline and this run: check that the baseline was "
            "recorded from the same dataset, since the scores compared are of different cases."
        )
    if added:
        notices.append(
            f"{len(added)} cases are new since the baseline: {_few(added)}. They count towards "
            "the thresholds; drops are measured on the cases both runs share."
        )
    failures: list[str] = []
    if removed:
        missing = f"{len(removed)} baseline cases are missing from this run: {_few(removed)}"
        if rules.on_missing_cases == "notice":
            notices.append(f"{missing} (gate.on_missing_cases: notice).")
        else:
            failures.append(
                f"{missing}; a run must judge every case the baseline has "
                "(gate.on_missing_cases: fail). To drop cases on purpose, record the baseline "
                "without them on the base branch first"
            )
    return _CaseSets(added=added, removed=removed, failures=tuple(failures))


def _against_baseline(
    head: RunReport, baseline: Baseline | None, rules: GateRules, notices: list[str]
) -> tuple[GateRules, bool]:
    """The rules in force (no looser than the baseline's) and whether drops can count."""
    if baseline is None:
        notices.append(
            "No baseline yet: only thresholds apply, and no hallucinated claim counts as new. "
            "Record one on the main branch with the action's mode: update-baseline, or with "
            "ragaliq run -o report.json and then ragaliq baseline update --report report.json."
        )
        return rules, False
    if baseline.policy is not None:
        rules, loosened = rules.at_least(baseline.policy)
        if loosened:
            notices.append(
                "This PR loosens the gate (" + "; ".join(loosened) + "); until it is merged "
                "and the baseline updated, the stricter setting applies."
            )
    differences = baseline.provenance.differences(Provenance.of(head))
    if differences:
        notices.append(
            "The baseline was judged differently (" + "; ".join(differences) + "), so "
            "score drops are shown but do not fail the gate; thresholds still apply. "
            "Update the baseline on main to compare like with like."
        )
    return rules, not differences


def _decide_evaluators(
    head: RunReport,
    baseline: Baseline | None,
    rules: GateRules,
    comparable: bool,
    notices: list[str],
) -> dict[str, EvaluatorDecision]:
    decisions: dict[str, EvaluatorDecision] = {}
    edited: list[str] = []
    for name, summary in head.summary.evaluators.items():
        threshold = summary.threshold
        shared = _SharedScores()
        if baseline is not None:
            recorded = baseline.thresholds.get(name)
            if recorded is not None and recorded != threshold:
                edited.append(f"{name} {recorded:g} → {threshold:g}")
                threshold = max(threshold, recorded)  # a PR cannot lower its own bar
            shared = _shared_scores(head, baseline.report, name)
        max_drop = rules.drop_for(name)
        head_score = summary.score
        delta = shared.delta
        change = paired_delta(shared.deltas, confidence=rules.confidence) if comparable else None
        to_resolve = None
        if head_score is None:
            status: EvaluatorStatus = "no_score"
        elif head_score < threshold or (shared.head is not None and shared.head < threshold):
            status = "below_threshold"
        elif comparable and delta is not None and delta < -max_drop - 1e-9:
            if change is not None and change.resolved_drop:
                status = "regressed"
            else:
                status = "inconclusive"
                sd = change.sd if change is not None else 0.0
                to_resolve = cases_to_resolve(sd, max_drop=max_drop, confidence=rules.confidence)
                notices.append(_inconclusive_notice(name, shared, change, to_resolve, rules))
        else:
            status = "pass"
        passed = status == "pass" or (status == "inconclusive" and rules.on_inconclusive == "pass")
        decisions[name] = EvaluatorDecision(
            head=head_score,
            baseline=shared.baseline,
            delta=delta,
            threshold=threshold,
            max_drop=max_drop,
            status=status,
            passed=passed,
            errors=summary.errors,
            shared_cases=shared.cases if baseline is not None else None,
            head_shared=shared.head,
            interval=None if change is None else (round(change.low, 6), round(change.high, 6)),
            confidence=None if change is None else rules.confidence,
            cases_to_resolve=to_resolve,
        )
    if edited:
        notices.append(
            "This PR changes thresholds (" + "; ".join(edited) + "); until it is merged and "
            "the baseline updated, the stricter of the two applies."
        )
    missing = sorted(set(baseline.thresholds) - set(decisions)) if baseline is not None else []
    for name in missing:
        assert baseline is not None  # missing is empty without one
        base_summary = baseline.report.summary.evaluators.get(name)
        decisions[name] = EvaluatorDecision(
            head=None,
            baseline=base_summary.score if base_summary else None,
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


class _SharedScores(NamedTuple):
    """One evaluator's means over the cases both runs scored, and the per-case changes."""

    baseline: float | None = None
    head: float | None = None
    cases: int = 0
    deltas: tuple[float, ...] = ()

    @property
    def delta(self) -> float | None:
        if self.baseline is None or self.head is None:
            return None
        return round(self.head - self.baseline, 6)


def _inconclusive_notice(
    name: str,
    shared: _SharedScores,
    change: PairedDelta | None,
    to_resolve: int | None,
    rules: GateRules,
) -> str:
    drop = -(shared.delta or 0.0)
    if change is None:
        noise = "one shared case cannot say how noisy the scores are"
    else:
        noise = (
            f"its {rules.confidence:.0%} interval [{change.low:+.3f}, {change.high:+.3f}] "
            "includes no change"
        )
    more = f"; about {to_resolve} cases would resolve a drop of that size" if to_resolve else ""
    does = "fails" if rules.on_inconclusive == "fail" else "does not fail"
    return (
        f"{name} dropped {drop:.3f} on the {shared.cases} cases both runs share, past max_drop "
        f"{rules.drop_for(name):g}, but {noise}: the suite cannot tell this drop from noise"
        f"{more}. It {does} the gate (gate.on_inconclusive: {rules.on_inconclusive})."
    )


def _scores(report: RunReport, name: str) -> dict[str, float]:
    """Each judged case's score for one evaluator, by case id."""
    return {
        case.id: result.score
        for case in report.cases
        if case.status == "ok"
        and (result := case.results.get(name)) is not None
        and result.status == "ok"
        and result.score is not None
    }


def _shared_scores(head: RunReport, baseline: RunReport, name: str) -> _SharedScores:
    """The means of both runs over the cases both scored: a paired comparison."""
    now, before = _scores(head, name), _scores(baseline, name)
    shared = sorted(now.keys() & before.keys())
    if not shared:
        return _SharedScores()
    return _SharedScores(
        baseline=round(sum(before[i] for i in shared) / len(shared), 6),
        head=round(sum(now[i] for i in shared) / len(shared), 6),
        cases=len(shared),
        deltas=tuple(now[i] - before[i] for i in shared),
    )


def _regressed_cases(
    head: RunReport, baseline: RunReport, rules: GateRules, evaluators: list[str]
) -> list[RegressedCase]:
    head_cases = {c.id: c for c in head.cases}
    base_cases = {c.id: c for c in baseline.cases}
    out: list[tuple[float, RegressedCase]] = []
    for case_id, case in head_cases.items():
        before = base_cases.get(case_id)
        if before is None or before.status != "ok":
            continue
        for name in evaluators:
            old = before.results.get(name)
            new = case.results.get(name)
            if old is None or old.score is None or new is None:
                continue
            drop = old.score - (new.score if new.score is not None else 0.0)
            if new.score is None or drop > rules.drop_for(name) + 1e-9:
                regressed = RegressedCase(
                    case_id=case_id,
                    query=case.query,
                    evaluator=name,
                    baseline=old.score,
                    head=new.score,
                )
                out.append((drop, regressed))
    out.sort(key=lambda item: (-item[0], item[1].case_id, item[1].evaluator))
    return [r for _, r in out]


def _failure_line(name: str, decision: EvaluatorDecision) -> str:
    if decision.turned_off:
        return f"{name}: turned off, but the baseline has it"
    if decision.status == "no_score":
        return f"{name}: no case could be scored"
    if decision.status == "inconclusive":
        return (
            f"{name}: dropped {-(decision.delta or 0.0):.3f}, past max_drop "
            f"{decision.max_drop:g}, but within what the suite can resolve "
            "(gate.on_inconclusive: fail)"
        )
    head = decision.head if decision.head is not None else 0.0
    shared = decision.head_shared
    if decision.status == "below_threshold":
        if head >= decision.threshold and shared is not None:
            return (
                f"{name}: {shared:.3f} over the {decision.shared_cases} cases the baseline has is "
                f"below the threshold {decision.threshold:.2f} (new cases do not lift it)"
            )
        return f"{name}: {head:.3f} is below the threshold {decision.threshold:.2f}"
    base = decision.baseline if decision.baseline is not None else 0.0
    now = shared if shared is not None else head
    return (
        f"{name}: {now:.3f} dropped {base - now:.3f} from the baseline {base:.3f} "
        f"(max_drop {decision.max_drop:g})"
    )


def _few(ids: tuple[str, ...], limit: int = 5) -> str:
    shown = ", ".join(ids[:limit])
    return shown + (f" and {len(ids) - limit} more" if len(ids) > limit else "")

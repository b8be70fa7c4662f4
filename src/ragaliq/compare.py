"""Comparing a head run with the baseline: the gate decision and the claim diff.

An evaluator passes when its head score reaches its threshold and has not dropped more than
``max_drop`` below the baseline. A claim is *newly hallucinated* when it is hallucinated in the
head run and no hallucinated claim of the same case in the baseline matches it, first by
normalised text and then by a fuzzy match, so that a re-worded claim is not reported as new.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ragaliq.baseline import Baseline, Provenance, RecordedPolicy
from ragaliq.config import GateConfig
from ragaliq.models import SCHEMA_VERSION, CaseResult, ClaimVerdict, JudgeInfo, RunReport, Usage
from ragaliq.text.matching import unmatched

__all__ = [
    "CaseError",
    "ClaimChange",
    "EvaluatorDecision",
    "GateDecision",
    "GateRules",
    "RegressedCase",
    "compare",
    "hallucinated_claims",
]


HALLUCINATION = "hallucination"
"""The evaluator whose flagged claims are the hallucinated ones the comment lists."""


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)


class GateRules(_Model):
    """What the gate enforces, taken from the head config."""

    max_drop: dict[str, float] = Field(default_factory=dict)
    """Per evaluator; evaluators not listed use ``default_max_drop``."""
    default_max_drop: float = 0.05
    fail_on_new_hallucinations: bool = False
    on_error: Literal["fail", "ignore"] = "fail"
    count_unstable: bool = False
    """Whether claims flagged ``unstable`` (repeats disagreed) can be newly hallucinated."""
    on_missing_cases: Literal["fail", "notice"] = "fail"
    """Whether baseline cases missing from the run fail the gate."""

    @classmethod
    def from_config(cls, config: GateConfig) -> GateRules:
        """The rules of a config file."""
        return cls(
            max_drop={
                name: options.max_drop
                for name, options in config.evaluators.sections()
                if options.max_drop is not None
            },
            default_max_drop=config.gate.max_drop,
            fail_on_new_hallucinations=config.gate.fail_on_new_hallucinations,
            on_error=config.gate.on_error,
            count_unstable=config.gate.count_unstable,
            on_missing_cases=config.gate.on_missing_cases,
        )

    def drop_for(self, evaluator: str) -> float:
        """The largest drop from the baseline tolerated for one evaluator."""
        return self.max_drop.get(evaluator, self.default_max_drop)

    def recorded(self, evaluators: Iterable[str]) -> RecordedPolicy:
        """These rules as a baseline records them, for the given evaluators."""
        return RecordedPolicy(
            max_drop={name: self.drop_for(name) for name in evaluators},
            fail_on_new_hallucinations=self.fail_on_new_hallucinations,
            on_error=self.on_error,
            count_unstable=self.count_unstable,
            on_missing_cases=self.on_missing_cases,
        )

    def at_least(self, policy: RecordedPolicy) -> tuple[GateRules, list[str]]:
        """These rules, made no looser than the baseline's; and what had been loosened."""
        loosened: list[str] = []
        max_drop = dict(self.max_drop)
        for name, recorded in sorted(policy.max_drop.items()):
            if self.drop_for(name) > recorded:
                loosened.append(f"{name} max_drop {recorded:g} → {self.drop_for(name):g}")
                max_drop[name] = recorded
        fail_on_new = self.fail_on_new_hallucinations
        if policy.fail_on_new_hallucinations and not fail_on_new:
            loosened.append("fail_on_new_hallucinations true → false")
            fail_on_new = True
        on_error = self.on_error
        if policy.on_error == "fail" and on_error == "ignore":
            loosened.append("on_error fail → ignore")
            on_error = "fail"
        count_unstable = self.count_unstable
        if policy.count_unstable and not count_unstable:
            loosened.append("count_unstable true → false")
            count_unstable = True
        on_missing = self.on_missing_cases
        if policy.on_missing_cases == "fail" and on_missing == "notice":
            loosened.append("on_missing_cases fail → notice")
            on_missing = "fail"
        rules = self.model_copy(
            update={
                "max_drop": max_drop,
                "fail_on_new_hallucinations": fail_on_new,
                "on_error": on_error,
                "count_unstable": count_unstable,
                "on_missing_cases": on_missing,
            }
        )
        return rules, loosened


EvaluatorStatus = Literal["pass", "below_threshold", "regressed", "no_score"]


class EvaluatorDecision(_Model):
    """One evaluator's head score against its threshold and the baseline."""

    head: float | None
    baseline: float | None
    delta: float | None
    threshold: float
    max_drop: float
    status: EvaluatorStatus
    passed: bool
    errors: int = 0
    turned_off: bool = False
    """The baseline has this evaluator but the run does not: the PR turned it off."""
    shared_cases: int | None = None
    """How many cases both runs scored: ``baseline`` and ``delta`` are over these alone."""
    head_shared: float | None = None
    """The head's mean over the shared cases; it must reach the threshold too, so that new
    cases cannot hide a drop on the baseline's."""


class ClaimChange(_Model):
    """A claim that became, or stopped being, hallucinated."""

    case_id: str
    query: str
    claim: str
    verdict: str
    evidence: str | None = None
    reason: str = ""
    confidence: float = 1.0
    agreement: float | None = None
    """With ``judge.repeat``: the share of repetitions that gave the verdict."""


class RegressedCase(_Model):
    """A case whose score for one evaluator dropped by more than the tolerance."""

    case_id: str
    query: str
    evaluator: str
    baseline: float
    head: float | None
    """None when the case now fails to judge."""


class CaseError(_Model):
    """A case the judge could not judge in the head run."""

    case_id: str
    query: str
    error: str


class GateDecision(_Model):
    """Everything the comment, the summary, the outputs and the exit code are made from."""

    schema_version: int = SCHEMA_VERSION
    passed: bool
    failures: tuple[str, ...]
    """Why the gate failed, one line each; empty when it passed."""
    first_run: bool
    """No baseline yet: thresholds only."""
    comparable: bool
    """Whether the baseline's provenance equals the head's, so regressions count."""
    evaluators: dict[str, EvaluatorDecision]
    new_hallucinations: tuple[ClaimChange, ...] = ()
    hallucinations: tuple[ClaimChange, ...] = ()
    """On the first run only: every hallucinated claim, listed but not counted as new."""
    fixed_hallucinations: tuple[ClaimChange, ...] = ()
    unstable_claims: tuple[ClaimChange, ...] = ()
    """Hallucinated claims whose repeated verdicts disagreed; not new unless counted."""
    regressed_cases: tuple[RegressedCase, ...] = ()
    errors: tuple[CaseError, ...] = ()
    added_cases: tuple[str, ...] = ()
    removed_cases: tuple[str, ...] = ()
    notices: tuple[str, ...] = ()
    cases: int
    usage: Usage
    judge: JudgeInfo
    baseline_provenance: Provenance | None = None
    baseline_commit: str | None = None

    @field_validator("schema_version")
    @classmethod
    def _supported(cls, value: int) -> int:
        if value != SCHEMA_VERSION:
            raise ValueError(
                f"schema_version {value} is not the supported {SCHEMA_VERSION}; decide the gate "
                "again with this version of RagaliQ Gate"
            )
        return value

    @property
    def scores(self) -> dict[str, float | None]:
        """Head score per evaluator."""
        return {name: e.head for name, e in self.evaluators.items()}


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
    base_cases = {c.id: c for c in baseline.report.cases} if baseline else {}
    head_cases = {c.id: c for c in head.cases}

    evaluators = _decide_evaluators(head, baseline, rules, comparable, notices)
    new, fixed, regressed = [], [], []
    for case in head.cases if baseline is not None else ():
        before = base_cases.get(case.id)
        if case.status != "ok":
            continue
        now = hallucinated_claims(case)
        if before is None or before.status != "ok":
            new += [_change(case, c) for c in now]
            continue
        was = hallucinated_claims(before)
        new += [_change(case, c) for c in unmatched(now, was, text=_text_of)]
        fixed += [_change(before, c) for c in unmatched(was, now, text=_text_of)]
    unstable = [c for c in new if _is_unstable(head_cases[c.case_id], c.claim)]
    if unstable and not rules.count_unstable:
        new = [c for c in new if c not in unstable]
        notices.append(
            f"{len(unstable)} hallucinated claims are unstable (the judge's repeated verdicts "
            "disagreed), so they are listed apart and not counted as new."
        )
    if baseline is not None:
        regressed = _regressed_cases(head_cases, base_cases, rules, list(evaluators))
    first_run = [
        _change(case, claim)
        for case in (head.cases if baseline is None else ())
        if case.status == "ok"
        for claim in hallucinated_claims(case)
    ]

    errors = [
        CaseError(case_id=c.id, query=c.query, error=c.error or "unknown error")
        for c in head.cases
        if c.status == "error"
    ]
    added = tuple(sorted(set(head_cases) - set(base_cases))) if baseline else ()
    removed = tuple(sorted(set(base_cases) - set(head_cases))) if baseline else ()
    if base_cases and head_cases and set(base_cases).isdisjoint(head_cases):
        notices.append(
            "No case id is in both the baseline and this run: check that the baseline was "
            "recorded from the same dataset, since the scores compared are of different cases."
        )
    if added:
        notices.append(
            f"{len(added)} cases are new since the baseline: {_few(added)}. They count towards "
            "the thresholds; drops are measured on the cases both runs share."
        )
    missing_cases = ""
    if removed:
        missing_cases = f"{len(removed)} baseline cases are missing from this run: {_few(removed)}"
        if rules.on_missing_cases == "notice":
            notices.append(f"{missing_cases} (gate.on_missing_cases: notice).")

    failures = [_failure_line(name, e) for name, e in evaluators.items() if not e.passed]
    if missing_cases and rules.on_missing_cases == "fail":
        failures.append(
            f"{missing_cases}; a run must judge every case the baseline has "
            "(gate.on_missing_cases: fail). To drop cases on purpose, record the baseline without "
            "them on the base branch first"
        )
    if errors and rules.on_error == "fail":
        failures.append(f"{len(errors)} cases could not be judged (gate.on_error: fail)")
    if head.stopped_early:
        failures.append(f"the run stopped early: {head.stopped_early}")
    if new and rules.fail_on_new_hallucinations:
        failures.append(
            f"{len(new)} newly hallucinated claims (gate.fail_on_new_hallucinations: true)"
        )
    elif new:
        notices.append(
            "Newly hallucinated claims are listed but do not fail this gate "
            "(gate.fail_on_new_hallucinations: false); the scores decide."
        )
    return GateDecision(
        passed=not failures,
        failures=tuple(failures),
        first_run=baseline is None,
        comparable=comparable,
        evaluators=evaluators,
        new_hallucinations=tuple(new),
        hallucinations=tuple(first_run),
        fixed_hallucinations=tuple(fixed),
        unstable_claims=tuple(unstable),
        regressed_cases=tuple(regressed),
        errors=tuple(errors),
        added_cases=added,
        removed_cases=removed,
        notices=tuple(notices),
        cases=head.summary.cases,
        usage=head.usage,
        judge=head.judge,
        baseline_provenance=baseline.provenance if baseline else None,
        baseline_commit=baseline.commit if baseline else None,
    )


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
        if head_score is None:
            status: EvaluatorStatus = "no_score"
        elif head_score < threshold or (shared.head is not None and shared.head < threshold):
            status = "below_threshold"
        elif comparable and delta is not None and delta < -max_drop - 1e-9:
            status = "regressed"
        else:
            status = "pass"
        decisions[name] = EvaluatorDecision(
            head=head_score,
            baseline=shared.baseline,
            delta=delta,
            threshold=threshold,
            max_drop=max_drop,
            status=status,
            passed=status == "pass",
            errors=summary.errors,
            shared_cases=shared.cases if baseline is not None else None,
            head_shared=shared.head,
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
    """One evaluator's means over the cases both runs scored."""

    baseline: float | None = None
    head: float | None = None
    cases: int = 0

    @property
    def delta(self) -> float | None:
        if self.baseline is None or self.head is None:
            return None
        return round(self.head - self.baseline, 6)


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
    )


def _is_unstable(case: CaseResult, claim: str) -> bool:
    return any(c.text == claim and "unstable" in c.flags for c in case.claims)


def _regressed_cases(
    head_cases: dict[str, CaseResult],
    base_cases: dict[str, CaseResult],
    rules: GateRules,
    evaluators: list[str],
) -> list[RegressedCase]:
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

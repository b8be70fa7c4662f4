"""Comparing a head run with the baseline: the gate decision.

An evaluator passes when its head score reaches its threshold and, on the cases both runs share,
has not dropped more than ``max_drop`` below the baseline. A claim is *newly hallucinated* when it
is hallucinated in the head run and no hallucinated claim of the same case in the baseline matches
it (:mod:`ragaliq.text.matching`), so that a re-worded claim is not reported as new. A claim the
offline judge could neither ground nor fault is never hallucinated; the claims of changed cases
that it flags so are listed apart, as not verifiable offline.

A newly hallucinated claim a trusted reviewer accepted (:mod:`ragaliq.gate.acceptance`), or an
unstable one unless ``gate.count_unstable``, stands in for the judge's verdict here only: it no
longer counts as new, and the claim-based scores of its case (faithfulness, hallucination) are
scored again with it as supported, so that the gate decides on what was accepted. The run report
keeps the judge's verdict, and the decision shows both scores.

What the comparison lists about each case beside the scores is what the evaluators declare
(:mod:`ragaliq.evaluators.findings`): each kind of finding reads the case against what the
baseline kept of it, and may hold the case's scores to that (the baseline's relevance labels).
The gate's own policy acts on three: acceptances and ``fail_on_new_hallucinations`` on the
newly hallucinated claims, ``fail_on_lost_chunks`` and ``fail_on_miscited_claims`` on lost
relevant chunks and newly miscited claims (:mod:`ragaliq.gate.listed`).

The comparison takes the head's cases one at a time (:class:`Comparison`), against the baseline's
compact index, so a suite of any size is decided without holding its report: it can follow a run
as the run writes its report, or read a report file as a stream.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from ragaliq.baseline import Baseline, BaselineCase
from ragaliq.evaluators._claims import ClaimChange, claim_id
from ragaliq.evaluators.base import CaseJudgement, Evaluator
from ragaliq.evaluators.citations import MiscitedClaims
from ragaliq.evaluators.findings import Before, Finding, FindingKind
from ragaliq.evaluators.hallucination import (
    NEW_HALLUCINATIONS,
    UNSTABLE_APART,
    UNSTABLE_CLAIMS,
    hallucinated_claims,
)
from ragaliq.evaluators.questions import VERIFY
from ragaliq.evaluators.registry import finding_kinds, finding_lists
from ragaliq.gate.acceptance import ALL, Acceptance, covering
from ragaliq.gate.decision import MAX_LISTED, CaseFailure, GateDecision, RegressedCase
from ragaliq.gate.listed import listed_failures
from ragaliq.gate.rescoring import rescoring_evaluators
from ragaliq.gate.scores import Shared, decide_evaluators, failure_line
from ragaliq.gate.scores import comparable as judged_alike
from ragaliq.gate.unchecked import unchecked_headline
from ragaliq.models import (
    CaseResult,
    ClaimVerdict,
    ReportHead,
    RunSummary,
    TestCase,
    Verdict,
)
from ragaliq.policy import GateRules
from ragaliq.run_report import ReportSource
from ragaliq.text.counts import plural, plural_is

__all__ = ["Comparison", "compare", "rescoring_evaluators"]

T = TypeVar("T")
K = TypeVar("K", bound=FindingKind)


def compare(
    head: ReportSource,
    baseline: Baseline | None,
    *,
    rules: GateRules,
    acceptances: tuple[Acceptance, ...] = (),
    thresholds: Mapping[str, float] | None = None,
    notices: tuple[str, ...] = (),
) -> GateDecision:
    """The gate decision for a head run against the baseline (or thresholds only, without one).

    ``rules`` and ``thresholds`` are the bar in force, already held to the baseline's
    (:func:`ragaliq.trust.hold_to_baseline`, whose ``notices`` say what it held).
    """
    comparison = Comparison(
        baseline,
        rules=rules,
        acceptances=acceptances,
        thresholds=thresholds,
        notices=notices,
        evaluators=rescoring_evaluators(head.head.evaluators, needed=bool(acceptances)),
    )
    for case in head.iter_cases():
        comparison.add(case)
    return comparison.decide(head.head)


@dataclass
class _Listed(Generic[T]):
    """A list kept to ``limit`` entries, counting those left out.

    With a ``worst`` key it keeps the ``limit`` lowest keys, lowest first; otherwise the first
    entries added.
    """

    limit: int
    worst: Callable[[T], Any] | None = None
    entries: list[T] = field(default_factory=list)
    total: int = 0

    def add(self, item: T) -> None:
        self.total += 1
        if self.worst is not None:
            self.entries.append(item)
            if len(self.entries) > 2 * self.limit:
                self.entries = sorted(self.entries, key=self.worst)[: self.limit]
        elif len(self.entries) < self.limit:
            self.entries.append(item)

    @property
    def items(self) -> list[T]:
        if self.worst is None:
            return self.entries
        return sorted(self.entries, key=self.worst)[: self.limit]

    @property
    def omitted(self) -> int:
        return self.total - len(self.items)


class Comparison:
    """The gate decision, built case by case: :meth:`add` each head case, then :meth:`decide`."""

    def __init__(
        self,
        baseline: Baseline | None,
        *,
        rules: GateRules,
        listed: int = MAX_LISTED,
        acceptances: tuple[Acceptance, ...] = (),
        thresholds: Mapping[str, float] | None = None,
        notices: tuple[str, ...] = (),
        evaluators: Sequence[Evaluator[Any]] = (),
    ) -> None:
        self.baseline = baseline
        self.rules = rules
        """The rules in force: already held to the baseline's (``ragaliq.trust``)."""
        self.thresholds = dict(thresholds or {})
        """Each evaluator's threshold in force; the run's own where none is given."""
        self.bar_notices = notices
        """What holding the bar to the baseline said."""
        self.listed = listed
        self.acceptances = acceptances
        """Reviewers' acceptances at this commit: claims they accept, or every newly
        hallucinated claim."""
        self.evaluators = tuple(e for e in evaluators if e.asks(VERIFY))
        """The claim-based evaluators the run was scored with: they score a case again with
        its accepted claims as supported."""
        self.kinds: tuple[FindingKind, ...] = tuple(kind() for kind in finding_kinds())
        """Every kind of finding the evaluators declare, one instance for this comparison."""
        self._lists: dict[str, _Listed[Finding]] = {
            name: _Listed(listed, worst=_severity if entry.worst_first else None)
            for name, entry in finding_lists().items()
        }
        self._accepted = 0
        self._accepting: set[str] = set()
        """The ids of the claims accepted in the case being added."""
        self._flagged_ids: set[str] = set()
        self._decided: dict[str, list[float]] = {}
        """Per evaluator, the sum and count of the case scores the gate decides on."""
        self._changed: set[str] = set()
        """The evaluators whose scores the gate decides on differ from the run's own."""
        self._lifted: set[str] = set()
        """The evaluators whose scores accepted claims changed."""
        self._base = baseline.by_id if baseline is not None else {}
        self._seen: set[str] = set()
        self._asked_again = [0, 0]
        """Claims asked again to confirm them, and the cases (one confirming call each)."""
        self._added = _Listed[str](listed)
        self._errors = _Listed[CaseFailure](listed)
        self._regressed: list[tuple[float, RegressedCase]] = []
        self._regressed_total = 0
        self._shared: dict[str, Shared] = {}

    # --- one case at a time ---------------------------------------------------------------------

    def add(self, case: CaseResult) -> None:
        """Take one case of the head run into the comparison."""
        self._seen.add(case.id)
        again = sum(1 for claim in case.claims if claim.asked)
        self._asked_again = [self._asked_again[0] + again, self._asked_again[1] + bool(again)]
        before = self._base.get(case.id)
        if self.baseline is not None and before is None:
            self._added.add(case.id)
        if case.status == "error":
            self._errors.add(
                CaseFailure(case_id=case.id, query=case.query, error=case.error or "unknown error")
            )
        self._accepting = set()
        for kind in self.kinds:
            kind.find(case, _before(before, kind), first_run=self.baseline is None, emit=self._emit)
        if self.baseline is None:
            return
        if case.status == "ok":
            case = self._as_decided(case, before)
        if before is None:
            return
        self._scores(case, before)
        self._regressions(case, before)

    def _emit(self, name: str, finding: Finding) -> None:
        """Add one finding to its list, under the gate's policy on newly hallucinated claims."""
        if name in (NEW_HALLUCINATIONS, UNSTABLE_CLAIMS):
            finding = self._accept(name, finding)
            if name == UNSTABLE_CLAIMS and self.rules.count_unstable:
                self._lists[NEW_HALLUCINATIONS].add(finding)
            elif name == UNSTABLE_CLAIMS:  # scored as supported: never failing the gate alone
                assert isinstance(finding, ClaimChange)
                self._accepting.add(finding.id)
        self._lists[name].add(finding)

    def _accept(self, name: str, change: Finding) -> Finding:
        """A newly hallucinated claim, marked with the reviewer who accepted it, if one did."""
        assert isinstance(change, ClaimChange)
        self._flagged_ids.add(change.id)
        accepted = covering(self.acceptances, change.id)
        if accepted is None:
            return change
        self._accepted += name == NEW_HALLUCINATIONS or self.rules.count_unstable
        self._accepting.add(change.id)
        return change.model_copy(update={"accepted_by": accepted.by})

    def _as_decided(self, case: CaseResult, before: BaselineCase | None) -> CaseResult:
        """The case as the gate decides on it: held to what the baseline kept, claims accepted.

        Accepted claims are scored as supported. Its scores are counted towards the means the
        gate decides on.
        """
        judged = case
        if before is not None:
            for kind in self.kinds:
                held = _before(before, kind)
                assert held is not None
                case = kind.as_decided(case, held, self.thresholds)
        accepted = [
            claim
            for claim in hallucinated_claims(case)
            if claim_id(case.id, claim.text) in self._accepting
        ]
        if accepted:
            case = self._rescored(case, accepted)
        for name, result in case.results.items():
            if result.status == "ok" and result.score is not None:
                tally = self._decided.setdefault(name, [0.0, 0])
                tally[0] += result.score
                tally[1] += 1
            own = judged.results.get(name)
            if own is None or own.score != result.score:
                self._changed.add(name)
        return case

    def _rescored(self, case: CaseResult, accepted: list[ClaimVerdict]) -> CaseResult:
        """The case with its claim-based scores scored again, its accepted claims supported."""
        verdicts = tuple(
            _accepted(claim) if any(claim is a for a in accepted) else claim
            for claim in case.claims
        )
        judgement = CaseJudgement(
            case=TestCase(id=case.id, query=case.query, context=(), response=""),
            verdicts=verdicts,
        )
        results = dict(case.results)
        for evaluator in self.evaluators:
            judged = case.results.get(evaluator.name)
            if judged is None or judged.status != "ok" or judged.score is None:
                continue
            rescored = evaluator.evaluate(judgement)
            if rescored.status != "ok" or rescored.score is None:
                continue
            results[evaluator.name] = rescored
            if rescored.score != judged.score:
                self._lifted.add(evaluator.name)
        return case.model_copy(update={"results": results})

    def _scores(self, case: CaseResult, before: BaselineCase) -> None:
        """Each evaluator's score against the baseline's, on the cases both scored."""
        if case.status != "ok" or before.status != "ok":
            return
        for name, result in case.results.items():
            old = before.scores.get(name)
            if result.status != "ok" or result.score is None or old is None:
                continue
            shared = self._shared.setdefault(name, Shared(0.0, 0.0, []))
            self._shared[name] = shared._replace(
                head_sum=shared.head_sum + result.score, base_sum=shared.base_sum + old
            )
            shared.deltas.append(result.score - old)

    def _regressions(self, case: CaseResult, before: BaselineCase) -> None:
        if before.status != "ok":
            return
        for name, old in before.scores.items():
            new = case.results.get(name)
            if new is None or new.status == "skipped":
                continue  # nothing to score now (every claim not verifiable offline) is no drop
            drop = old - (new.score if new.score is not None else 0.0)
            if new.score is None or drop > self.rules.drop_for(name) + 1e-9:
                self._regressed_total += 1
                self._regressed.append(
                    (
                        drop,
                        RegressedCase(
                            case_id=case.id,
                            query=case.query,
                            evaluator=name,
                            baseline=old,
                            head=new.score,
                        ),
                    )
                )
                if len(self._regressed) > 2 * self.listed:
                    self._regressed = _worst(self._regressed, self.listed)

    # --- the decision ---------------------------------------------------------------------------

    def decide(self, head: ReportHead) -> GateDecision:
        """The decision once every head case has been added."""
        baseline, rules = self.baseline, self.rules
        notices: list[str] = [*head.notices, *self.bar_notices]
        comparable = judged_alike(head, baseline, notices)
        judged = head
        head = head.model_copy(update={"summary": self._decided_summary(head.summary)})
        evaluators = decide_evaluators(
            head,
            baseline=baseline,
            shared=self._shared,
            thresholds=self.thresholds,
            rules=rules,
            comparable=comparable,
            notices=notices,
        )
        for name in self._lifted & set(evaluators):
            own = judged.summary.evaluators.get(name)
            if own is not None and own.score != evaluators[name].head:
                evaluators[name] = evaluators[name].model_copy(update={"judge_score": own.score})
        removed = _Listed[str](self.listed)
        for case_id in sorted(set(self._base) - self._seen):
            removed.add(case_id)
        failures = [failure_line(name, e) for name, e in evaluators.items() if not e.passed]
        failures += self._case_sets(removed, rules, notices)
        self._claim_failures(head, failures, notices)
        lost, miscited = self._lists["lost_chunks"], self._kind(MiscitedClaims)
        held, said = listed_failures(
            rules, lost.items, lost.total, miscited.new, miscited.new_total
        )
        failures, notices = failures + held, notices + said
        for kind in self.kinds:
            notices += kind.notices()
        listed: dict[str, _Listed[Any]] = {
            **self._lists,
            "errors": self._errors,
            "added_cases": self._added,
            "removed_cases": removed,
        }
        omitted = {name: entries.omitted for name, entries in listed.items() if entries.omitted}
        regressed = [r for _, r in _worst(self._regressed, self.listed)]
        if self._regressed_total > len(regressed):
            omitted["regressed_cases"] = self._regressed_total - len(regressed)
        return GateDecision(
            passed=not failures,
            failures=tuple(failures),
            first_run=baseline is None,
            comparable=baseline is not None
            and all(e.comparable for e in evaluators.values() if not e.turned_off),
            evaluators=evaluators,
            findings={name: tuple(lst.items) for name, lst in self._lists.items() if lst.items},
            regressed_cases=tuple(regressed),
            errors=tuple(self._errors.items),
            added_cases=tuple(sorted(self._added.items)),
            removed_cases=tuple(removed.items),
            omitted=omitted,
            notices=tuple(notices),
            acceptances=self.acceptances,
            accepted_claims=self._accepted,
            cases=head.summary.cases,
            usage=head.usage,
            judge=head.judge,
            baseline_provenance=baseline.provenance if baseline else None,
            baseline_commit=baseline.commit if baseline else None,
        )

    def _kind(self, kind: type[K]) -> K:
        return next(k for k in self.kinds if isinstance(k, kind))

    def _claim_failures(self, head: ReportHead, failures: list[str], notices: list[str]) -> None:
        """The failures of errors, an early stop and new hallucinations added to ``failures``.

        What a reviewer accepted no longer counts as new; nothing else is set aside.
        """
        rules = self.rules
        if self._errors.total and rules.on_error == "fail":
            failures.append(
                f"{plural(self._errors.total, 'case')} could not be judged (gate.on_error: fail)"
            )
        if head.stopped_early:
            failures.append(f"the run stopped early: {head.stopped_early}")
        new = self._lists[NEW_HALLUCINATIONS].total - self._accepted
        if new and rules.fail_on_new_hallucinations:
            failures.append(
                f"{plural(new, 'newly hallucinated claim')} (gate.fail_on_new_hallucinations: true)"
            )
        unchecked = self._lists["unverifiable_claims"].total
        if unchecked and self.baseline is not None and rules.fail_on_unchecked_claims:
            failures.append(
                f"{unchecked_headline(unchecked, new=True)} (gate.fail_on_unchecked_claims: true)"
            )
        if self._accepted:
            lifted = " and ".join(sorted(self._lifted))  # faithfulness, hallucination or both
            notices.append(
                f"{plural(self._accepted, 'newly hallucinated claim')} accepted by a reviewer at "
                "this commit"
                + (
                    f", counted as supported in the {lifted} scores the gate decides on (the "
                    "run report keeps the judge's verdicts)"
                    if lifted
                    else ""
                )
                + "; a new push needs a new review."
            )
        notices += self._unknown_ids()
        if new and not rules.fail_on_new_hallucinations:
            notices.append(
                "Newly hallucinated claims are listed but do not fail this gate "
                "(gate.fail_on_new_hallucinations: false); the scores decide."
            )
        claims, calls = self._asked_again
        if claims:
            notices.append(
                f"{plural(claims, 'claim')} that would fail the gate asked again to confirm, in "
                f"{plural(calls, 'confirming ask')} (counted in the usage; a cache hit for a case "
                "asked before)."
            )
        unstable = self._lists[UNSTABLE_CLAIMS].total
        if unstable and not rules.count_unstable:
            notices.append(
                f"{plural_is(unstable, 'hallucinated claim')} "
                "unstable (the judge's verdicts disagreed when asked again), so "
                f"{'it is' if unstable == 1 else 'they are'} {UNSTABLE_APART}"
            )

    def _decided_summary(self, summary: RunSummary) -> RunSummary:
        """The run's means as the gate decides on them: held to the baseline, claims accepted.

        Only the scores are read (:func:`decide_evaluators`).
        """
        evaluators = dict(summary.evaluators)
        for name in self._changed & set(evaluators):
            total, judged = self._decided.get(name, [0.0, 0])
            score = round(total / judged, 6) if judged else None
            evaluators[name] = evaluators[name].model_copy(update={"score": score})
        return summary.model_copy(update={"evaluators": evaluators})

    def _unknown_ids(self) -> list[str]:
        """A notice per acceptance naming ids that no newly hallucinated claim here has."""
        notices = []
        for acceptance in self.acceptances:
            if acceptance.claims == ALL:
                continue
            unknown = [i for i in acceptance.claims if i not in self._flagged_ids]
            if unknown:
                notices.append(
                    f"{acceptance.by} accepted {_few(unknown, len(unknown))}, which no newly "
                    "hallucinated claim at this commit has: nothing was accepted for "
                    f"{'it' if len(unknown) == 1 else 'them'}. The comment shows each claim's id."
                )
        return notices

    def _case_sets(self, removed: _Listed[str], rules: GateRules, notices: list[str]) -> list[str]:
        """Cases new since the baseline, and baseline cases the run lacks (a failure by default)."""
        if self.baseline is None:
            return []
        if self._base and self._seen and self._added.total == len(self._seen):
            notices.append(
                "No case id is in both the baseline and this run: check that the baseline was "
                "recorded from the same dataset, since the scores compared are of different cases."
            )
        if self._added.total:
            notices.append(
                f"{plural_is(self._added.total, 'case')} new since the baseline: "
                f"{_few(sorted(self._added.items), self._added.total)}. They count towards "
                "the thresholds; drops are measured on the cases both runs share."
            )
        if not removed.total:
            return []
        missing = (
            f"{plural_is(removed.total, 'baseline case')} missing from this run: "
            f"{_few(removed.items, removed.total)}"
        )
        if rules.on_missing_cases == "notice":
            notices.append(f"{missing} (gate.on_missing_cases: notice).")
            return []
        return [
            f"{missing}; a run must judge every case the baseline has "
            "(gate.on_missing_cases: fail). To drop cases on purpose, record the baseline "
            "without them on the base branch first"
        ]


def _severity(finding: Finding) -> tuple[Any, ...]:
    return finding.severity()


def _before(before: BaselineCase | None, kind: type[FindingKind] | FindingKind) -> Before | None:
    """A baseline case as one kind of finding reads it."""
    if before is None:
        return None
    return Before(
        input_hash=before.input_hash, status=before.status, kept=before.kept.get(kind.name)
    )


def _accepted(claim: ClaimVerdict) -> ClaimVerdict:
    """A claim a reviewer accepted, as the gate's scores count it: supported."""
    return claim.model_copy(update={"verdict": Verdict.SUPPORTED, "confidence": 1.0})


def _worst(
    regressed: list[tuple[float, RegressedCase]], limit: int
) -> list[tuple[float, RegressedCase]]:
    """The ``limit`` largest drops, largest first."""
    regressed.sort(key=lambda item: (-item[0], item[1].case_id, item[1].evaluator))
    return regressed[:limit]


def _few(ids: list[str] | tuple[str, ...], total: int, limit: int = 5) -> str:
    shown = ", ".join(ids[:limit])
    return shown + (f" and {total - limit} more" if total > limit else "")

"""The compact table ``ragaliq run`` prints."""

from __future__ import annotations

from collections.abc import Collection, Sequence

from ragaliq.gate import GateDecision
from ragaliq.gate.acceptance import claim_id
from ragaliq.gate.unchecked import JUDGE_THEM, coverage_note, unchecked_headline
from ragaliq.models import CaseResult, ClaimVerdict, Preflight, ReportHead, RunReport, Usage
from ragaliq.report.filters import findings, verdict_label
from ragaliq.text.counts import plural
from ragaliq.text.plain import one_line

__all__ = [
    "format_decision",
    "format_failing_cases",
    "format_preflight",
    "format_run_table",
    "format_unchecked_claims",
    "format_usage",
]


def _num(value: float | None, spec: str = ".3f") -> str:
    return "-" if value is None else format(value, spec)


def _name_width(names: Collection[str]) -> int:
    """The width of a table's evaluator column: its longest name, or its header's."""
    return max([len("evaluator"), *map(len, names)])


def format_usage(usage: Usage) -> str:
    """``12 judge calls · 3,400 tokens in / 800 out · $0.0123 · 5 cache hits``."""
    parts = [
        plural(usage.calls, "judge call"),
        f"{usage.input_tokens:,} tokens in / {usage.output_tokens:,} out",
    ]
    if usage.cache_read_tokens or usage.cache_write_tokens:
        parts.append(
            f"prompt cache {usage.cache_read_tokens:,} read / {usage.cache_write_tokens:,} written"
        )
    parts += [f"${usage.cost_usd:.4f}", plural(usage.cache_hits, "cache hit")]
    return " · ".join(parts)


def format_run_table(
    report: RunReport | ReportHead, *, errored: Sequence[CaseResult] | None = None
) -> str:
    """Evaluator, score, threshold, pass rate and status, one row each, with a header line.

    ``errored``: the first cases that failed to judge (taken from ``report`` when it holds its
    cases); ``report.summary.errors`` counts them all.
    """
    if errored is None:
        errored = (
            [c for c in report.cases if c.status == "error"][:5]
            if isinstance(report, RunReport)
            else []
        )
    judge = report.judge
    width = _name_width(report.summary.evaluators)
    kind = (
        "heuristic, not a language model" if judge.heuristic else f"prompt {judge.prompt_version}"
    )
    lines = [
        f"{plural(report.summary.cases, 'case')} · {plural(report.summary.errors, 'error')} · "
        f"judge: {one_line(judge.provider)}/{one_line(judge.model)} ({one_line(kind)})",
        "",
        f"{'evaluator':<{width}} {'score':>6} {'threshold':>10} {'pass rate':>10}  status",
    ]
    for name, summary in report.summary.evaluators.items():
        status = "no score" if summary.score is None else "pass" if summary.passed else "FAIL"
        if summary.errors:
            status += f" ({plural(summary.errors, 'error')})"
        if summary.claims is not None:
            status += f" · {coverage_note(summary.checked, summary.claims)}"
        lines.append(
            f"{name:<{width}} {_num(summary.score):>6} {summary.threshold:>10.2f} "
            f"{_num(summary.pass_rate, '.0%'):>10}  {status}"
        )
    lines += ["", f"usage: {format_usage(report.usage)}"]
    for case in errored[:5]:
        lines.append(f"error in case {one_line(case.id)}: {one_line(case.error)}")
    if report.summary.errors > 5:
        lines.append(f"... and {report.summary.errors - 5} more case errors (see the report)")
    if report.stopped_early:
        lines.append(f"stopped early: {one_line(report.stopped_early)}")
    return "\n".join(lines)


def format_failing_cases(
    cases: Sequence[CaseResult], *, total: int, run_passed: bool = False
) -> str:
    """The cases below a threshold, worst first: each with its failing evaluators and claims.

    ``cases`` are the ones kept to show (the worst), ``total`` how many failed in all. A run
    passes or fails on each evaluator's mean score, so where it passed (``run_passed``) the
    heading says so: single cases below a threshold do not fail it.
    """
    if not total:
        return ""
    shown = f"the worst {len(cases)}" if total > len(cases) else "worst first"
    if run_passed:
        shown += "; the run passes on the mean scores"
    lines = [f"{plural(total, 'case')} below a threshold ({shown}):"]
    for case in cases:
        failing = case.failing_evaluators()
        scores = ", ".join(f"{name} {_num(case.results[name].score)}" for name in failing)
        lines.append(f"  {one_line(case.id)}: {scores}")
        flagged = sorted({i for name in failing for i in case.results[name].flagged_claims or ()})
        for index in flagged:
            if index < len(case.claims):
                claim = case.claims[index]
                lines.append(
                    f"    {verdict_label(claim.verdict)}: {one_line(claim.text)} "
                    f"[{claim_id(case.id, claim.text)}]"
                )
    if total > len(cases):
        lines.append(f"  ... and {plural(total - len(cases), 'more case')} (see the report)")
    return "\n".join(lines)


def format_unchecked_claims(claims: Sequence[tuple[str, ClaimVerdict]], *, total: int) -> str:
    """The claims the offline judge could not check in a run, each with its id and why.

    A headline first and what to do last; empty when there are none. ``claims`` are the first
    ones with their cases' ids, ``total`` how many there were in all.
    """
    if not total:
        return ""
    lines = [
        f"{unchecked_headline(total, new=False)}: left out of the scores, not counted as "
        "hallucinated"
    ]
    for case_id, claim in claims:
        lines.append(
            f"  unchecked in {one_line(case_id)}: {one_line(claim.text)} "
            f"[{claim_id(case_id, claim.text)}]"
        )
        if claim.reason:
            lines.append(f"    {one_line(claim.reason)}")
    if total > len(claims):
        lines.append(f"  ... and {total - len(claims)} more (see the report)")
    lines.append(f"  {JUDGE_THEM}")
    return "\n".join(lines)


def format_decision(decision: GateDecision, *, shown_notices: Collection[str] = ()) -> str:
    """The gate's verdict for a terminal: notices, headline, evaluators against the baseline.

    ``shown_notices`` are left out (the run's own notices, when its table was printed first).
    """
    lines = [f"notice: {one_line(n)}" for n in decision.notices if n not in shown_notices]
    headline = "gate: PASSED" if decision.passed else "gate: FAILED"
    lines += [headline, ""]
    width = _name_width(decision.evaluators)
    lines.append(
        f"{'evaluator':<{width}} {'baseline':>8} {'head':>7} {'delta':>8} {'threshold':>10}  status"
    )
    for name, e in decision.evaluators.items():
        delta = "-" if e.delta is None else f"{e.delta:+.3f}"
        lines.append(
            f"{name:<{width}} {_num(e.baseline):>8} {_num(e.head):>7} {delta:>8} "
            f"{e.threshold:>10.2f}  {e.status.replace('_', ' ')}"
            + (
                f" (judge: {e.judge_score:.3f}; accepted and unstable claims count as supported)"
                if e.judge_score is not None
                else ""
            )
            + (f" · {coverage_note(e.checked, e.claims)}" if e.claims is not None else "")
        )
    lines.append("")
    errors = plural(len(decision.errors), "error")
    if decision.first_run:
        listed, label = decision.hallucinations, "in"
        lines.append(
            f"{plural(len(listed), 'hallucinated claim')} (no baseline, so none is new), {errors}"
        )
    else:
        listed, label = decision.new_hallucinations, "new in"
        accepted = decision.accepted_claims
        lines.append(
            f"{plural(decision.count_new(), 'newly hallucinated claim')}"
            + (f", {accepted} accepted" if accepted else "")
            + f", {len(decision.fixed_hallucinations)} fixed, "
            f"{plural(len(decision.regressed_cases), 'regressed case score')}, "
            f"{decision.count('unstable_claims')} unstable, {errors}"
        )
    for change in listed[:10]:
        accepted_by = f", accepted by {one_line(change.accepted_by)}" if change.accepted_by else ""
        lines.append(
            f"  {label} {one_line(change.case_id)}: {one_line(change.claim)} "
            f"[{verdict_label(change.verdict)}{accepted_by}] id {change.id}"
        )
    if len(listed) > 10:
        lines.append(f"  ... and {len(listed) - 10} more")
    if any(not change.accepted_by for change in decision.new_hallucinations):
        lines.append(
            "  a claim the judge got wrong is accepted by a reviewer's review saying "
            "`/ragaliq accept <id>` (locally: --acceptances FILE)"
        )
    lines += _unstable_lines(decision)
    lines += _unchecked_lines(decision)
    if decision.lost_facts or decision.irrelevant_chunks:
        lines.append(
            f"retrieval: {plural(len(decision.lost_facts), 'needed fact')} lost since the "
            f"baseline, {plural(len(decision.irrelevant_chunks), 'chunk')} judged irrelevant"
        )
    lines += _findings_lines(decision)
    lines += [f"failed: {one_line(failure)}" for failure in decision.failures]
    return "\n".join(lines)


def _findings_lines(decision: GateDecision, shown: int = 10) -> list[str]:
    """Each list of findings no line above shows (lost relevant chunks ...), its worst first."""
    lines = []
    for found in findings(decision):
        lines.append(f"{found.title.lower()}: {plural(found.total, found.noun)}")
        for entry in found.entries[:shown]:
            headline = f"{one_line(entry.headline)} " if entry.headline else ""
            lines.append(f"  {one_line(entry.case_id)}: {headline}{one_line(entry.text)}")
        if found.total > shown:
            lines.append(f"  ... and {found.total - shown} more")
    return lines


def _unstable_lines(decision: GateDecision, shown: int = 10) -> list[str]:
    """The claims whose verdicts disagreed when asked again, each with every ask's verdict."""
    total = decision.count("unstable_claims")
    if not total:
        return []
    lines = [
        f"unstable: {plural(total, 'claim')} the judge's verdicts disagreed on when asked again "
        "(listed apart; gate.count_unstable decides whether they count as new)"
    ]
    for change in decision.unstable_claims[:shown]:
        asked = " then ".join(verdict_label(v) for v in change.verdicts) or (
            verdict_label(change.verdict)
            + (f", agreement {change.agreement:.0%}" if change.agreement is not None else "")
        )
        lines.append(f"  {one_line(change.case_id)}: {one_line(change.claim)} [{asked}]")
    if total > shown:
        lines.append(f"  ... and {total - shown} more")
    return lines


def _unchecked_lines(decision: GateDecision, shown: int = 10) -> list[str]:
    """The claims the offline judge could not check: a headline, each with why, what to do."""
    total = decision.count("unverifiable_claims")
    if not total:
        return []
    lines = [
        f"{unchecked_headline(total, new=not decision.first_run)}: left out of the scores, not "
        "counted as hallucinated"
    ]
    for change in decision.unverifiable_claims[:shown]:
        lines.append(f"  unchecked in {one_line(change.case_id)}: {one_line(change.claim)}")
        if change.reason:
            lines.append(f"    {one_line(change.reason)}")
    if total > shown:
        lines.append(f"  ... and {total - shown} more")
    lines.append(f"  {JUDGE_THEM}")
    return lines


def format_preflight(plan: Preflight, *, shown: int = 20) -> str:
    """The pre-flight estimate: per case, then totals; says that nothing was sent."""
    usage = plan.usage
    judge = plan.judge
    lines = [
        f"pre-flight: {plural(len(plan.cases), 'case')} · judge {judge.provider}/{judge.model}",
        "",
        f"{'case':<32} {'operations':>10} {'cached':>7} {'calls':>6}",
    ]
    for case in plan.cases[:shown]:
        lines.append(
            f"{one_line(case.case_id)[:32]:<32} {case.operations:>10} {case.cache_hits:>7} "
            f"{case.calls:>6}"
        )
    if len(plan.cases) > shown:
        lines.append(f"... and {plural(len(plan.cases) - shown, 'more case')}")
    operations = sum(c.operations for c in plan.cases)
    lines += [
        "",
        f"operations: {operations:,} · expected cache hits: {usage.cache_hits:,} · "
        f"judge calls: {usage.calls:,}",
        f"estimated tokens: {usage.input_tokens:,} in / {usage.output_tokens:,} out · "
        f"estimated cost: ${usage.cost_usd:.4f}",
        "no judge was called",
    ]
    lines += [f"notice for the real run: {one_line(n)}" for n in plan.notices]
    return "\n".join(lines)

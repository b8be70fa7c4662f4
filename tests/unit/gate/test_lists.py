"""Every list of a decision keeps its first entries and counts the rest, each under its own name:
the comment's "and N more" for each list is what the decision counts."""

from __future__ import annotations

import tracemalloc

from ragaliq.evaluators import (
    ContextPrecisionEvaluator,
    ContextRecallEvaluator,
    FaithfulnessEvaluator,
    HallucinationEvaluator,
)
from ragaliq.gate import Comparison, GateRules, compare
from ragaliq.gate.rescoring import rescoring_evaluators
from ragaliq.models import NOT_VERIFIABLE, Verdict
from tests.baselines import record_baseline
from tests.conftest import make_verdict
from tests.unit.gate.runs import failed, judged, run_of, scored

S, N, C = Verdict.SUPPORTED, Verdict.NOT_ENOUGH_INFO, Verdict.CONTRADICTED
EVALUATORS = [
    FaithfulnessEvaluator(),
    HallucinationEvaluator(),
    ContextPrecisionEvaluator(enabled=True),
    ContextRecallEvaluator(enabled=True),
]
LISTS = (
    "new_hallucinations",
    "fixed_hallucinations",
    "unstable_claims",
    "unverifiable_claims",
    "still_unchecked_claims",
    "regressed_cases",
    "lost_facts",
    "irrelevant_chunks",
    "errors",
    "added_cases",
    "removed_cases",
)
RULES = GateRules(max_drop=1.0)


def two(verdict, prefix, **overrides):
    return [make_verdict(verdict, text=f"{prefix} claim {i}.", **overrides) for i in (1, 2)]


def case(case_id, claims=None, **kw):
    return judged(case_id, EVALUATORS, claims=claims or two(S, case_id), **kw)


def a_pull_with_two_of_everything():
    base = [
        case("new"),
        case("fixed", two(C, "fixed")),
        case("shaky"),
        case("changed"),
        case("still", two(N, "still", flags=(NOT_VERIFIABLE,))),
        case("facts", facts=two(S, "fact")),
        case("chunks", chunks=[True, True]),
        case("err1"),
        case("err2"),
        case("gone1"),
        case("gone2"),
    ]
    head = [
        case("new", two(C, "new")),
        case("fixed", two(S, "fixed")),
        case("shaky", two(C, "shaky", flags=("unstable",))),
        case("changed", two(N, "changed", flags=(NOT_VERIFIABLE,)), response="Something else."),
        case("still", two(N, "still", flags=(NOT_VERIFIABLE,)), response="Something more."),
        case("facts", facts=two(N, "fact")),
        case("chunks", chunks=[False, False]),
        failed("err1", EVALUATORS),
        failed("err2", EVALUATORS),
        case("add1"),
        case("add2"),
    ]
    return run_of(head, EVALUATORS), record_baseline(run_of(base, EVALUATORS), allow_errors=True)


def test_every_list_keeps_its_first_entries_and_counts_the_rest():
    head, base = a_pull_with_two_of_everything()
    full = compare(head, base, rules=RULES)
    assert full.omitted == {}
    assert all(full.count(name) >= 2 for name in LISTS), {n: full.count(n) for n in LISTS}
    assert full.count("regressed_cases") > 2  # more than twice the kept entries: trimmed as added

    evaluators = rescoring_evaluators(head.head.evaluators)  # the unstable claim scored again
    comparison = Comparison(base, rules=RULES, listed=1, evaluators=evaluators)
    for judged_case in head.iter_cases():
        comparison.add(judged_case)
    short = comparison.decide(head.head)
    assert short.omitted == {name: full.count(name) - 1 for name in LISTS}
    for name in LISTS:
        assert getattr(short, name) == getattr(full, name)[:1], name
        assert short.count(name) == full.count(name), name
    assert (short.passed, short.evaluators) == (full.passed, full.evaluators)


def _peak_memory_of_deciding(regressed: int) -> int:
    """The most memory a comparison listing ten cases holds while ``regressed`` cases regress."""
    ids = [f"c{i}" for i in range(regressed)]
    base = record_baseline(scored(dict.fromkeys(ids, 1.0)))
    head = scored(dict.fromkeys(ids, 0.5))
    tracemalloc.start()
    try:
        comparison = Comparison(base, rules=GateRules(), listed=10)
        for judged_case in head.iter_cases():
            comparison.add(judged_case)
        decision = comparison.decide(head.head)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert (len(decision.regressed_cases), decision.omitted["regressed_cases"]) == (
        10,
        regressed - 10,
    )
    return peak


def test_regressed_cases_beyond_those_listed_are_counted_not_kept():
    # Per case the comparison keeps its id and its score changes (about 150 bytes); a regressed
    # case kept whole would cost over 1 kB more for each.
    per_case = (_peak_memory_of_deciding(2000) - _peak_memory_of_deciding(500)) / 1500
    assert per_case < 400, f"{per_case:.0f} bytes per regressed case"

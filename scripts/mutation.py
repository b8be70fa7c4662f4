#!/usr/bin/env python3
"""Mutation testing of the code that decides pass or fail: how many small breaks the tests catch.

    python scripts/mutation.py                 # every group; prints the table at the end
    python scripts/mutation.py --group gate    # one group
    python scripts/mutation.py --report        # the table of the last run, without running again
    python scripts/mutation.py --group evaluators --module src/ragaliq/evaluators/retrieval.py
                                               # some modules of a group (repeatable)

A measurement, not part of CI. The project's tracked files (with uncommitted changes) are copied
to a scratch folder (``--workdir``, by default under the system's temporary folder) with a venv of
its own, and mutmut (pinned below) changes the modules of each group one small change at a time:
a comparison's boundary, an operator, a constant, a string, a deleted argument. Each mutant runs
only against the unit and integration tests that execute its function, so a full run takes about
half an hour on two cores.

A mutant no behaviour can tell from the original is *equivalent*: it is listed in ``EQUIVALENT``
below with the reason, and counted apart rather than killed by a test of an implementation
detail. An entry that matches no surviving mutant is reported as stale, so the list stays true.

Exit code 0 when every group kills at least ``--floor`` (90%) of its non-equivalent mutants, 1
when one does not, 2 when the run itself fails.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MUTMUT = "mutmut==3.8.1"

GROUPS: dict[str, tuple[str, ...]] = {
    "evaluators": ("src/ragaliq/evaluators/*",),
    "gate": ("src/ragaliq/gate/*",),
    "bar": ("src/ragaliq/trust.py", "src/ragaliq/policy.py"),
    "custody": (
        "src/ragaliq/ci/custody.py",
        "src/ragaliq/ci/follow.py",
        "src/ragaliq/store/finder.py",
        "src/ragaliq/github/provenance.py",
        "src/ragaliq/github/push_filters.py",
    ),
    "assertions": ("src/ragaliq/testing.py",),
}
"""What decides pass or fail: the evaluators' formulas, the gate's verdict (the comparison, its
statistics, the decision), the bar a change is held to (its ratchets and where it is read), which
baseline is the bar (custody: the run records' rules, the follower's plan, the local finder, a
run's proof of the file it recorded, the push filters) and the Python API's assertions."""

TESTS = ("tests/unit", "tests/integration")
IGNORED = ("tests/integration/test_signals.py",)
"""Tests that start ``python -m ragaliq`` in a process of its own, which mutmut cannot follow."""
DESELECTED = ("tests/unit/test_readme.py::test_the_example_comment_is_what_the_gate_renders_today",)
"""Tests that need the copy to be a git repository: the README's example comment names the
baseline by its path from the repository's root, and mutmut's copy has no ``.git``."""
PYTEST_ARGS = [
    "-p",
    "no:cacheprovider",
    "-x",
    "-q",
    *(f"--ignore={path}" for path in IGNORED),
    *(f"--deselect={test}" for test in DESELECTED),
]


@dataclass(frozen=True)
class Equivalent:
    """A survivor no behaviour can tell apart: the function it is in, a line of its change."""

    function: str
    """The mutated function, as mutmut names it (``ragaliq.gate.statistics.x__seed``)."""
    change: str
    """A fragment of the mutated line (the ``+`` side of its diff)."""
    reason: str

    def matches(self, name: str, change: str) -> bool:
        added = [row[1:] for row in change.splitlines() if row.startswith("+")]
        function = name.rsplit("__mutmut_", 1)[0]
        return function == self.function and any(self.change in row for row in added)


EQUIVALENT: tuple[Equivalent, ...] = (
    # The bootstrap's seed only has to be the same for the same deltas; any fixed derivation is.
    Equivalent(
        "ragaliq.gate.statistics.x__seed",
        '"XX,XX".join',
        "another separator is still a fixed function of the deltas",
    ),
    Equivalent(
        "ragaliq.gate.statistics.x__seed",
        "digest()[:8], )",
        'int.from_bytes defaults to "big" byte order',
    ),
    # Clamping the percentile indexes: they lie far inside [0, RESAMPLES - 1] at any confidence
    # the config accepts (0.5 to 0.999), so the clamp's other bound never binds.
    Equivalent(
        "ragaliq.gate.statistics.x_paired_delta",
        "max(1, math.floor",
        "the lower index is at least 1 for every accepted confidence (0.999 gives 1)",
    ),
    Equivalent(
        "ragaliq.gate.statistics.x_paired_delta",
        "min(RESAMPLES + 1,",
        "the upper index is at most RESAMPLES - 2 for every accepted confidence",
    ),
    Equivalent(
        "ragaliq.gate.statistics.x_paired_delta",
        "min(RESAMPLES - 2,",
        "the upper index is at most RESAMPLES - 2 for every accepted confidence",
    ),
    Equivalent(
        "ragaliq.gate.statistics.x_paired_delta",
        "* RESAMPLES) + 1)]",
        "moves the upper end by two of 2000 resampled means (0.1 percentile point), under the "
        "bootstrap's own resampling noise; no decision can be pinned to it",
    ),
    # The gate's verdict.
    Equivalent(
        "ragaliq.gate.acceptance.x_claim_key",
        '"XXLNSXX"',
        "every Unicode general category starts with one of L, M, N, P, S, Z or C, never X: the "
        "same characters are kept",
    ),
    Equivalent(
        "ragaliq.gate.acceptance.x_parse_command",
        "every = None",
        "every is only read as a condition, where None and False agree",
    ),
    Equivalent(
        "ragaliq.gate.acceptance.x_parse_command",
        'body or "XXXX"',
        "an empty body and XXXX both hold no /ragaliq accept line: None either way",
    ),
    Equivalent(
        "ragaliq.gate.acceptance.x_read_acceptances",
        'encoding="UTF-8"',
        "Python's codec names are case-insensitive.",
    ),
    Equivalent(
        "ragaliq.gate.compare.x__accepted",
        '"confidence": 2.0',
        "an accepted claim's confidence is read only against hallucination's min_confidence, a "
        "fraction of at most 1 that both 1.0 and 2.0 reach; the rescored claims are never recorded",
    ),
    Equivalent(
        "ragaliq.gate.compare.xǁComparisonǁ_as_accepted",
        'result.status == "ok" or result.score is not None',
        "or and and differ only for a missing result, an ok result without a score or a skipped or "
        "failed one with a score, and none is built: runner/case.py gives every evaluator of the "
        "run a result on every case, and an ok case has no error among them; Evaluator.result "
        "always gives a score, skipped() and error() never do",
    ),
    Equivalent(
        "ragaliq.gate.compare.xǁComparisonǁ_regressions",
        ">= 2 * self.listed",
        "trims the kept regressions one case earlier: the same worst cases are kept, within the "
        "same bound",
    ),
    Equivalent(
        "ragaliq.gate.compare.xǁComparisonǁ_regressions",
        "> 2 / self.listed",
        "trims the kept regressions at every regressed case instead of every listed-th: the same "
        "worst cases are kept, in less memory, only sorted more often",
    ),
    Equivalent(
        "ragaliq.gate.compare.xǁComparisonǁ_regressions",
        "> 3 * self.listed",
        "trims the kept regressions at three times the listed cases instead of twice: the same "
        "worst cases are kept, and the memory still does not grow with the suite",
    ),
    Equivalent(
        "ragaliq.gate.compare.xǁComparisonǁ_rescored",
        "case=None,",
        "the claim-based evaluators (faithfulness, hallucination) read only the verdicts of a "
        "judgement, never its case",
    ),
    Equivalent(
        "ragaliq.gate.compare.xǁComparisonǁ_rescored",
        'response="XXXX"',
        "the claim-based evaluators (faithfulness, hallucination) read only the verdicts of a "
        "judgement, never its case's response",
    ),
    Equivalent(
        "ragaliq.gate.compare.xǁComparisonǁ_rescored",
        'judged.status != "ok" and judged.score is None',
        "or and and differ only for an ok result without a score or a skipped or failed one with a "
        "score, and none is built: runner/case.py gives every evaluator of the run a result on "
        "every case, and an ok case has no error among them; Evaluator.result always gives a "
        "score, skipped() and error() never do",
    ),
    Equivalent(
        "ragaliq.gate.compare.xǁComparisonǁ_rescored",
        "judged is None and judged.status",
        "it differs only when an ok case has no result of a claim-based evaluator the run has, "
        "which is never built: runner/case.py gives every evaluator of the run a result on every "
        "case, and an ok case has no error among them; Evaluator.result always gives a score, "
        "skipped() and error() never do",
    ),
    Equivalent(
        "ragaliq.gate.compare.xǁComparisonǁ_rescored",
        "break",
        "neither continue is ever taken for an ok case with an accepted claim: faithfulness and "
        "hallucination are both scored from the same verdicts (runner/case.py), skipped alike only "
        "when none is verifiable, and an accepted claim is a verifiable hallucinated one, so "
        "scored again as supported it always gives an ok result with a score",
    ),
    Equivalent(
        "ragaliq.gate.compare.xǁComparisonǁ_rescored",
        'rescored.status != "ok" and rescored.score is None',
        "a case scored again with an accepted claim, verifiable and now supported, always gets an "
        "ok result with a score (Evaluator.result), so neither test of it is ever true",
    ),
    Equivalent(
        "ragaliq.gate.compare.xǁComparisonǁ_scores",
        'result.status != "ok" and result.score is None or old is None',
        "or and and differ only for an ok result without a score or a skipped or failed one with a "
        "score, and none is built: runner/case.py gives every evaluator of the run a result on "
        "every case, and an ok case has no error among them; Evaluator.result always gives a "
        "score, skipped() and error() never do",
    ),
    Equivalent(
        "ragaliq.gate.scores.x_failure_line",
        "shared_cases or 1",
        "a mean over the shared cases is set only with their count, at least one "
        "(_SharedScores.of), and with a baseline, when shared_cases is that count: the fallback is "
        "never read",
    ),
    Equivalent(
        "ragaliq.gate.statistics.x__seed",
        "digest()[:9]",
        "nine bytes of the digest instead of eight are still a fixed function of the deltas",
    ),
    Equivalent(
        "ragaliq.gate.statistics.x_paired_delta",
        "* RESAMPLES) - 2)]",
        "moves the upper end by one of 2000 resampled means (0.05 percentile point), under the "
        "bootstrap's own resampling noise; no decision can be pinned to it",
    ),
    # The bar a change is held to (trust.py, policy.py).
    Equivalent(
        "ragaliq.trust.x__differences",
        "isinstance(mine, BaseModel) or isinstance(theirs, BaseModel)",
        "Each field compared here (judge, templates, the top-level scalars and their sub-fields) "
        "is either a model in both configs or a model in neither, because no field is typed Model"
        " | None. So or and and agree.",
    ),
    Equivalent(
        "ragaliq.trust.x__differences",
        "isinstance(mine, dict) and isinstance(theirs, dict)",
        "The only dict field outside the evaluators and the gate is judge.pricing, and it is a "
        "dict in both configs. So or and and agree.",
    ),
    Equivalent(
        "ragaliq.trust.x__read_baseline",
        "edited = read_text(proposal, path, what=None",
        "what only names the file in a RepositoryError. For the change's copy of the baseline "
        'that error is caught and becomes the same "This change edits …" notice, and the notice '
        "does not include the error's text.",
    ),
    Equivalent(
        "ragaliq.trust.x__read_baseline",
        'edited = read_text(proposal, path, what="XXbaselineXX"',
        "what only names the file in a RepositoryError. For the change's copy of the baseline "
        'that error is caught and becomes the same "This change edits …" notice, and the notice '
        "does not include the error's text.",
    ),
    Equivalent(
        "ragaliq.trust.x__read_baseline",
        'edited = read_text(proposal, path, what="BASELINE"',
        "what only names the file in a RepositoryError. For the change's copy of the baseline "
        'that error is caught and becomes the same "This change edits …" notice, and the notice '
        "does not include the error's text.",
    ),
    Equivalent(
        "ragaliq.trust.x__tighten_evaluator",
        "b is not None and b >= a",
        "When a == b the loop hits continue a line earlier, so >= and > agree on every value that"
        " gets this far.",
    ),
    Equivalent(
        "ragaliq.trust.x__tighten_evaluator",
        "if (update) or True else None",
        "An evaluator with nothing tightened gets an unchanged copy of its own section. The "
        "merged config is equal, and nothing reads which evaluator sections were set: the only "
        "model_fields_set that is read is the judge's and the recorded policy's.",
    ),
    Equivalent(
        "ragaliq.trust.x_read_bar",
        "None if (same_source) and False else proposal",
        "With a single source, the proposal *is* the trusted source. The baseline is then read "
        "twice from the same place, the two texts are equal, and no notice results.",
    ),
    Equivalent(
        "ragaliq.trust.x_read_text",
        'data.decode("UTF-8-SIG")',
        "Python's codec names are case-insensitive.",
    ),
    Equivalent(
        "ragaliq.policy.x_ratchet",
        "set(type(mine).model_fields) | set(type(theirs).model_fields)",
        "Every walk compares two versions of the same model class (GatePolicy with GatePolicy, "
        "GateRules with GateRules, Budget with Budget), so the union is the same set as the "
        "intersection.",
    ),
    Equivalent(
        "ragaliq.policy.x_ratchet",
        "names = set(only)",
        "only is a recorded GateRules' model_fields_set minus two names, so it is always a subset"
        " of the fields. Intersecting with it changes nothing, and the loop only visits mine's "
        "fields anyway.",
    ),
    Equivalent(
        "ragaliq.policy.x_ratchet",
        "isinstance(a, BaseModel) or isinstance(b, BaseModel)",
        "Both values come from the same field of the same class. The only model-typed field "
        "(budget) is a Budget on both sides, and every other field is a model on neither side.",
    ),
    Equivalent(
        "ragaliq.policy.x_ratchet",
        "break",
        "The continue follows the only nested section, budget. That is the last field of "
        "GatePolicy. In GateRules the one field after it, drops, is excluded from every walk by "
        "at_least's only, so no walk ever reaches a field after budget.",
    ),
    Equivalent(
        "ragaliq.policy.x_show",
        "if (isinstance(v, float)) or True else",
        "The only place a dict reaches show is an evaluator option, and the only dict option is "
        "verdict_scores. Its values are validated as floats (YAML integers become floats), so the"
        " :g branch is the one taken anyway.",
    ),
    Equivalent(
        "ragaliq.policy.xǁGateRulesǁat_least",
        '{"max_drop", "XXdropsXX"}',
        "If drops is not excluded, the walk compares it. It has no Ratchet marker, so it ends up "
        "among the unmarked changes, which at_least discards. The drops are then held per "
        "evaluator a few lines below, as before.",
    ),
    Equivalent(
        "ragaliq.policy.xǁGateRulesǁat_least",
        '{"max_drop", "DROPS"}',
        "If drops is not excluded, the walk compares it. It has no Ratchet marker, so it ends up "
        "among the unmarked changes, which at_least discards. The drops are then held per "
        "evaluator a few lines below, as before.",
    ),
    # The evaluators' formulas.
    Equivalent(
        "ragaliq.evaluators.context_precision.x_rank_weighted_precision",
        "relevant, strict=None)",
        "the weights are built from len(relevant): zip's lengths always match",
    ),
    Equivalent(
        "ragaliq.evaluators.context_precision.x_rank_weighted_precision",
        "zip(weights, relevant, )",
        "the weights are built from len(relevant): zip's lengths always match",
    ),
    Equivalent(
        "ragaliq.evaluators.context_precision.x_rank_weighted_precision",
        "relevant, strict=False)",
        "the weights are built from len(relevant): zip's lengths always match",
    ),
    Equivalent(
        "ragaliq.evaluators.context_precision.x_rank_weighted_precision",
        "[2 / rank for rank",
        "doubling every weight doubles both sums exactly (a power of two): the same ratio, "
        "bit for bit",
    ),
    Equivalent(
        "ragaliq.evaluators.base.xǁEvaluatorOptionsǁscoring",
        "model_dump(mode=None,",
        "the registered evaluators' scoring options (min_confidence) are floats or None, which "
        "Python and JSON mode dump alike; faithfulness records its own",
    ),
    Equivalent(
        "ragaliq.evaluators.base.xǁEvaluatorOptionsǁscoring",
        "model_dump(exclude=",
        "the registered evaluators' scoring options (min_confidence) are floats or None, which "
        "Python and JSON mode dump alike; faithfulness records its own",
    ),
    Equivalent(
        "ragaliq.evaluators.base.xǁEvaluatorOptionsǁscoring",
        'mode="XXjsonXX"',
        "pydantic dumps in Python mode for any mode but 'json', and the registered evaluators' "
        "scoring options are floats or None, dumped alike in both",
    ),
    Equivalent(
        "ragaliq.evaluators.base.xǁEvaluatorOptionsǁscoring",
        'mode="JSON"',
        "pydantic dumps in Python mode for any mode but 'json', and the registered evaluators' "
        "scoring options are floats or None, dumped alike in both",
    ),
    Equivalent(
        "ragaliq.evaluators.registry.xǁEvaluatorSectionsǁ__get_pydantic_json_schema__",
        "section = copy.copy(handler",
        "the section's definition is inlined and then dropped from the schema, so changing it in "
        "place (through a shallow copy) changes no schema",
    ),
    Equivalent(
        "ragaliq.evaluators.hallucination.xǁHallucinationEvaluatorǁevaluate",
        "            2.0,",
        "the vacuous score of a response without claims goes through result(), which clamps it "
        "to [0, 1]: 2.0 is recorded as 1.0",
    ),
    Equivalent(
        "ragaliq.evaluators.faithfulness.xǁFaithfulnessEvaluatorǁevaluate",
        "            2.0,",
        "the vacuous score of a response without claims goes through result(), which clamps it "
        "to [0, 1]: 2.0 is recorded as 1.0",
    ),
    Equivalent(
        "ragaliq.evaluators.base.xǁEvaluatorǁresult",
        "min(2.0, max(0.0, score))",
        "no evaluator computes a score above 1 (weights at most 1, relevance validated to [0, 1]): "
        "the upper bound never binds",
    ),
    Equivalent(
        "ragaliq.evaluators.citations.xǁCitationAccuracyEvaluatorǁnot_retrieved",
        '(references or "XXXX")',
        "a marker whose group matched nothing names no chunk either way: neither the empty "
        "reference nor XXXX is an id, a label or another chunk of a retrieved document",
    ),
    Equivalent(
        "ragaliq.evaluators.retrieval.x_text_digest",
        '.encode("UTF-8")',
        "codec names are case-insensitive: UTF-8 is utf-8",
    ),
    Equivalent(
        "ragaliq.evaluators.retrieval.x__texts",
        "case.retrieved_texts, strict=None)",
        "strict=None is falsy, as zip's strict=False: the same unchecked zip",
    ),
    Equivalent(
        "ragaliq.evaluators.retrieval.x__texts",
        "case.retrieved_texts, )",
        "zip's strict defaults to False: leaving it out is the same unchecked zip",
    ),
    Equivalent(
        "ragaliq.evaluators.retrieval.xǁ_RankEvaluatorǁdescribe_shortfall",
        "if labels is None and _unlabelled(labels) is not None:",
        "labels that _unlabelled refuses grade nothing relevant, so the list of relevant items "
        "missed is empty whether it returns early or not",
    ),
)


@dataclass
class Tally:
    killed: int = 0
    """A test failed, or the run timed out."""
    survived: int = 0
    """Every test that executes the mutant passed, or no test executes it."""
    equivalent: int = 0
    other: int = 0
    """Not run, or a result mutmut calls suspicious: counted against the score."""

    @property
    def score(self) -> float:
        """Killed, of the mutants that are not equivalent."""
        judged = self.killed + self.survived + self.other
        return self.killed / judged if judged else 1.0

    def add(self, status: str) -> None:
        setattr(self, status, getattr(self, status) + 1)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--group", action="append", choices=sorted(GROUPS), help="repeatable")
    parser.add_argument(
        "--workdir", type=Path, default=Path(tempfile.gettempdir()) / "ragaliq-mutation"
    )
    parser.add_argument("--max-children", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--floor", type=float, default=0.9)
    parser.add_argument("--report", action="store_true", help="only print the last run's table")
    parser.add_argument("--survivors", action="store_true", help="print each survivor's change")
    parser.add_argument(
        "--module", action="append", help="only these files of the groups (repeatable)"
    )
    args = parser.parse_args(argv)
    groups = args.group or sorted(GROUPS)
    if args.module:
        for group in groups:
            GROUPS[group] = tuple(
                m for m in args.module if any(fnmatch.fnmatch(m, p) for p in GROUPS[group])
            )
        groups = [group for group in groups if GROUPS[group]]
    work: Path = args.workdir
    try:
        if not args.report:
            prepare(work, groups)
            started = time.monotonic()
            run(
                [str(work / ".venv/bin/mutmut"), "run", "--max-children", str(args.max_children)],
                work,
            )
            print(f"mutation run took {(time.monotonic() - started) / 60:.1f} min", file=sys.stderr)
        return report(work, groups, floor=args.floor, survivors=args.survivors)
    except (subprocess.CalledProcessError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


def prepare(work: Path, groups: Iterable[str]) -> None:
    """A fresh copy of the project at ``work`` with mutmut configured for ``groups``."""
    tracked = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, check=True, capture_output=True
    ).stdout.split(b"\0")
    if (work / "mutants").exists():
        run(["rm", "-rf", str(work / "mutants")], ROOT)
    work.mkdir(parents=True, exist_ok=True)
    for raw in filter(None, tracked):
        name = raw.decode()
        source, target = ROOT / name, work / name
        if source.is_file() and not source.is_symlink():
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(source.read_bytes())
    if not (work / ".venv/bin/mutmut").exists():
        run([sys.executable, "-m", "venv", str(work / ".venv")], work)
        run([str(work / ".venv/bin/pip"), "install", "-q", "-e", ".[dev]", MUTMUT], work)
    tops = sorted({name.decode().split("/")[0] for name in tracked if name})
    also = [t + "/" if (work / t).is_dir() else t for t in tops if t not in ("src", "tests")]
    only = [pattern for group in groups for pattern in GROUPS[group]]
    config = (
        "\n[tool.mutmut]\n"
        'source_paths = ["src/"]\n'
        f"only_mutate = {json.dumps(only)}\n"
        f"pytest_add_cli_args_test_selection = {json.dumps(list(TESTS))}\n"
        f"pytest_add_cli_args = {json.dumps(PYTEST_ARGS)}\n"
        f"also_copy = {json.dumps(also)}\n"
    )
    pyproject = work / "pyproject.toml"
    pyproject.write_text(pyproject.read_text(encoding="utf-8") + config, encoding="utf-8")


def report(work: Path, groups: Sequence[str], *, floor: float, survivors: bool) -> int:
    """Print the per-module and per-group table; 1 when a group is under ``floor``."""
    rows: dict[str, Tally] = {}
    by_group: dict[str, Tally] = {group: Tally() for group in groups}
    used: set[Equivalent] = set()
    listed: list[str] = []
    for group in groups:
        for meta in metas(work, GROUPS[group]):
            module = meta.relative_to(work / "mutants").as_posix().removesuffix(".meta")
            tally = rows.setdefault(module, Tally())
            codes = json.loads(meta.read_text(encoding="utf-8"))["exit_code_by_key"]
            for name, code in sorted(codes.items()):
                status = STATUS.get(code, "other")
                if status == "survived":
                    change = diff_of(work, name)
                    match = next((e for e in EQUIVALENT if e.matches(name, change)), None)
                    if match is not None:
                        used.add(match)
                        status = "equivalent"
                    elif survivors:
                        listed.append(f"{name}\n{change}")
                tally.add(status)
                by_group[group].add(status)
    print(HEADER)
    for module, tally in sorted(rows.items()):
        print(line(module, tally))
    print()
    for group, tally in by_group.items():
        print(line(f"group {group}", tally))
    for text in listed:
        print("\n" + text)
    stale = [
        e
        for e in EQUIVALENT
        if e not in used and any(e.function.startswith(m) for m in prefixes(groups))
    ]
    for entry in stale:
        print(f"stale EQUIVALENT entry (no surviving mutant matches): {entry}", file=sys.stderr)
    return 0 if all(t.score >= floor for t in by_group.values()) else 1


HEADER = (
    f"{'module':44} {'mutants':>7} {'killed':>6} {'survived':>8} {'equiv.':>6} {'other':>5} "
    f"{'score':>6}"
)


def line(label: str, tally: Tally) -> str:
    total = tally.killed + tally.survived + tally.equivalent + tally.other
    return (
        f"{label:44} {total:7} {tally.killed:6} {tally.survived:8} {tally.equivalent:6} "
        f"{tally.other:5} {tally.score:6.1%}"
    )


STATUS = {
    **dict.fromkeys((1, 3), "killed"),  # a test failed (3: pytest's internal error)
    **dict.fromkeys((36, 24, -24, 152, 255), "killed"),  # timed out
    **dict.fromkeys((0, 5, 33), "survived"),  # passed, or no test executes the mutant
}
"""mutmut's exit codes (``mutmut.stats.status_by_exit_code``); any other is counted as other."""


def metas(work: Path, patterns: Iterable[str]) -> list[Path]:
    found: list[Path] = []
    for pattern in patterns:
        suffix = ".meta" if pattern.endswith(".py") else ".py.meta"
        found += sorted((work / "mutants").glob(pattern + suffix))
    return found


def prefixes(groups: Iterable[str]) -> list[str]:
    modules = []
    for group in groups:
        for pattern in GROUPS[group]:
            dotted = pattern.removeprefix("src/").removesuffix(".py").removesuffix("/*")
            modules.append(dotted.replace("/", "."))
    return modules


def diff_of(work: Path, name: str) -> str:
    shown = subprocess.run(
        [str(work / ".venv/bin/mutmut"), "show", name], cwd=work, capture_output=True, text=True
    ).stdout
    return "\n".join(
        row for row in shown.splitlines() if row[:1] in "+-" and not row.startswith(("+++", "---"))
    )


def run(command: list[str], cwd: Path) -> None:
    subprocess.run(command, cwd=cwd, check=True)


if __name__ == "__main__":
    sys.exit(main())

"""The HTML report of a large run: its size, the cost of writing it, and how fast it opens.

Usage: python benchmarks/html_report.py [--cases 10000] [--claims 6] [--retrieval] [--no-browser]

Builds a synthetic run of N cases shaped like the offline judge's output (about six claims a case,
each with a verdict, an evidence quote, a reason and a confidence; three evaluators, or five with
``--retrieval``, which adds two needed facts and three rated chunks a case), and a gate decision
against a baseline in which a few hundred claims were not yet hallucinated and some case scores
were higher. Then it writes the HTML report with ``write_html_report`` twice: without the dataset
(the report alone) and with it (responses with their claims highlighted, the retrieved context).

For each it prints the file size, the write time and the peak memory of the write (tracemalloc,
over what the run's cases already hold), then opens the page in headless Chromium over the
DevTools protocol and prints the load time (navigation until the first screen of cases has
rendered and been painted), the time a search takes from typing the query until its results are
shown, and the time to clear it again. The last line is machine-readable ``key=value`` pairs for
the report without the dataset (``dataset_*`` for the one with it).
"""

from __future__ import annotations

import argparse
import io
import random
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.integration.chromium import Browser, find_browser

from ragaliq.gate import ClaimChange, EvaluatorDecision, GateDecision, RegressedCase
from ragaliq.models import (
    CaseResult,
    ChunkRating,
    ClaimVerdict,
    EvaluationResult,
    EvaluatorInfo,
    JudgeInfo,
    ReportHead,
    RunSummary,
    TestCase,
    Usage,
    Verdict,
)
from ragaliq.report.html import write_html_report

SEARCH = "217 days"
"""A figure and a unit: all the terms must occur in a case, here in about one case in twenty."""

NOUNS = (
    "plan storage workspace invoice refund member admin folder backup device export report "
    "policy region contract seat license webhook token audit quota archive retention network "
    "server replica schedule dashboard"
).split()
VERBS = "includes allows requires limits keeps stores sends covers blocks renews supports".split()
ADJECTIVES = "annual monthly shared private regional quarterly external internal default".split()
PLANS = ("Free", "Personal", "Team", "Business", "Enterprise")
VERDICTS = (
    (Verdict.SUPPORTED, 0.72),
    (Verdict.PARTIALLY_SUPPORTED, 0.08),
    (Verdict.NOT_ENOUGH_INFO, 0.12),
    (Verdict.CONTRADICTED, 0.08),
)


def sentence(rng: random.Random, length: int) -> str:
    """About ``length`` characters of plausible support-desk prose, with a figure in it."""
    plan = rng.choice(PLANS)
    words = [f"The {plan} plan"]
    while sum(len(w) + 1 for w in words) < length - 20:
        words.append(rng.choice(VERBS) if len(words) % 3 == 1 else rng.choice(NOUNS))
        if rng.random() < 0.3:
            words.append(rng.choice(ADJECTIVES))
    words.append(f"for {rng.randint(2, 400)} {rng.choice(('days', 'GB', 'users', 'hours'))}")
    return " ".join(words) + "."


def reason(rng: random.Random, verdict: Verdict) -> str:
    """The offline judge's kinds of reasons: some fixed, most with figures filled in."""
    if verdict is Verdict.SUPPORTED:
        if rng.random() < 0.5:
            return "The context states this almost word for word."
        return (
            f"The context holds {rng.randint(70, 99)}% of the claim's content words "
            f"(at best {rng.randint(60, 95)}% in one sentence)."
        )
    if verdict is Verdict.CONTRADICTED:
        return (
            f"The closest context sentence states other figures; {rng.randint(2, 400)} does not "
            "occur in the context."
        )
    if verdict is Verdict.PARTIALLY_SUPPORTED:
        return f"One context sentence holds {rng.randint(40, 69)}% of the claim's content words."
    return f"The figure {rng.randint(2, 400)} does not occur in the context."


def verdict_of(rng: random.Random) -> Verdict:
    return rng.choices([v for v, _ in VERDICTS], weights=[w for _, w in VERDICTS])[0]


def claim_verdict(rng: random.Random, text: str) -> ClaimVerdict:
    verdict = verdict_of(rng)
    return ClaimVerdict(
        text=text,
        verdict=verdict,
        evidence=sentence(rng, rng.randint(80, 130))
        if verdict is not Verdict.NOT_ENOUGH_INFO
        else None,
        reason=reason(rng, verdict),
        confidence=round(rng.uniform(0.5, 1.0), 3),
        flags=("offline_confident",) if rng.random() < 0.4 else (),
    )


class Drawn(NamedTuple):
    """A dataset case and the verdicts on its response's sentences."""

    case: TestCase
    verdicts: tuple[ClaimVerdict, ...]


def make_case(rng: random.Random, i: int, claims: int, retrieval: bool) -> Drawn:
    """One dataset case: about ``claims`` sentences of response, three chunks of context."""
    count = rng.randint(max(1, claims - 3), claims + 3)
    texts = [sentence(rng, rng.randint(60, 110)) for _ in range(count)]
    verdicts = tuple(claim_verdict(rng, t) for t in texts)
    context = tuple(
        " ".join(sentence(rng, 100) for _ in range(3)) + " " + (v.evidence or "")
        for v in verdicts[:3]
    )
    case = TestCase(
        id=f"{rng.choice(NOUNS)}-{rng.choice(NOUNS)}-{i:05d}",
        query=f"How does the {rng.choice(PLANS)} plan handle {rng.choice(NOUNS)} "
        f"{rng.choice(NOUNS)} on {rng.choice(ADJECTIVES)} accounts?",
        context=context,
        response=" ".join(texts),
        expected_facts=tuple(sentence(rng, 70) for _ in range(2)) if retrieval else (),
    )
    return Drawn(case, verdicts)


def claim_scores(
    rng: random.Random, verdicts: tuple[ClaimVerdict, ...]
) -> dict[str, tuple[float, str]]:
    """The three claim evaluators' scores and reasons for a case's verdicts."""
    supported = sum(v.verdict is Verdict.SUPPORTED for v in verdicts)
    share = supported / len(verdicts)
    return {
        "faithfulness": (
            share,
            f"{len(verdicts)} claims: {supported} supported, {len(verdicts) - supported} not.",
        ),
        "hallucination": (
            share,
            f"{len(verdicts) - supported} of {len(verdicts)} claims "
            "are not supported by the context.",
        ),
        "relevance": (
            round(rng.uniform(0.4, 1.0), 2),
            f"The response uses {rng.randint(2, 5)} of the query's 5 key terms.",
        ),
    }


class Retrieval(NamedTuple):
    facts: tuple[ClaimVerdict, ...]
    chunks: tuple[ChunkRating, ...]


def retrieval_results(
    rng: random.Random, case: TestCase, scores: dict[str, tuple[float, str]]
) -> Retrieval:
    """The needed facts and chunk ratings of a case, their scores added to ``scores``."""
    facts = tuple(claim_verdict(rng, f) for f in case.expected_facts)
    held = sum(f.verdict is Verdict.SUPPORTED for f in facts)
    scores["context_recall"] = (
        held / len(facts),
        f"{held} of {len(facts)} needed facts are in the context.",
    )
    chunks = tuple(
        ChunkRating(
            relevant=(rel := rng.random() < 0.7),
            reason=f"Heuristic: holds {rng.randint(0, 5)} of the query's 5 key terms."
            if rel
            else "Heuristic: the response draws on none of its sentences.",
            heuristic=True,
        )
        for _ in case.context
    )
    relevant = sum(c.relevant for c in chunks)
    scores["context_precision"] = (
        relevant / len(chunks),
        f"{relevant} of {len(chunks)} chunks are relevant.",
    )
    return Retrieval(facts, chunks)


def make_run(
    n: int, claims: int, retrieval: bool, seed: int = 7
) -> tuple[list[TestCase], list[CaseResult], dict[str, EvaluatorInfo]]:
    rng = random.Random(seed)
    names = ["faithfulness", "hallucination", "relevance"]
    if retrieval:
        names += ["context_recall", "context_precision"]
    evaluators = {
        name: EvaluatorInfo(threshold=0.7 if name != "hallucination" else 0.8, version="1")
        for name in names
    }
    dataset, results = [], []
    for i in range(n):
        case, verdicts = make_case(rng, i, claims, retrieval)
        scores = claim_scores(rng, verdicts)
        facts: tuple[ClaimVerdict, ...] = ()
        chunks: tuple[ChunkRating, ...] = ()
        if retrieval:
            facts, chunks = retrieval_results(rng, case, scores)
        results.append(
            CaseResult(
                id=case.id,
                input_hash=case.input_hash,
                status="ok",
                query=case.query,
                claims=verdicts,
                facts=facts,
                chunks=chunks,
                results={
                    name: EvaluationResult(
                        evaluator=name,
                        score=round(score, 6),
                        passed=score >= evaluators[name].threshold,
                        reasoning=why,
                        flagged_claims=tuple(
                            j for j, v in enumerate(verdicts) if v.verdict is not Verdict.SUPPORTED
                        )
                        if name == "hallucination"
                        else None,
                    )
                    for name, (score, why) in scores.items()
                },
            )
        )
        dataset.append(case)
    return dataset, results, evaluators


def make_decision(head: ReportHead, cases: list[CaseResult], rng: random.Random) -> GateDecision:
    new, regressed = [], []
    for case in rng.sample(cases, k=min(len(cases), 300)):
        for claim in case.claims:
            if claim.verdict is not Verdict.SUPPORTED:
                new.append(
                    ClaimChange(
                        case_id=case.id,
                        query=case.query,
                        claim=claim.text,
                        verdict=claim.verdict.value,
                        evidence=claim.evidence,
                        reason=claim.reason,
                        confidence=claim.confidence,
                    )
                )
                break
    for case in rng.sample(cases, k=min(len(cases), 150)):
        result = case.results["faithfulness"]
        if result.score is not None and result.score < 0.8:
            regressed.append(
                RegressedCase(
                    case_id=case.id,
                    query=case.query,
                    evaluator="faithfulness",
                    baseline=min(1.0, result.score + 0.3),
                    head=result.score,
                )
            )
    evaluators = {}
    for name, summary in head.summary.evaluators.items():
        baseline = None if summary.score is None else min(1.0, summary.score + 0.02)
        delta = None if summary.score is None or baseline is None else summary.score - baseline
        evaluators[name] = EvaluatorDecision(
            head=summary.score,
            baseline=baseline,
            delta=delta,
            threshold=summary.threshold,
            max_drop=0.01,
            status="regressed" if summary.passed else "below_threshold",
            passed=False,
        )
    return GateDecision(
        passed=False,
        failures=tuple(f"{name}: dropped from the baseline" for name in evaluators),
        first_run=False,
        comparable=True,
        evaluators=evaluators,
        new_hallucinations=tuple(new),
        regressed_cases=tuple(regressed),
        cases=len(cases),
        usage=head.usage,
        judge=head.judge,
    )


class _Null(io.TextIOBase):
    """A sink that keeps nothing, so the peak is the writer's own memory."""

    def write(self, text: str) -> int:
        return len(text)


def write(path: Path, **kwargs: Any) -> tuple[float, float]:
    """Seconds to write the page, and the peak memory of the write in MB (a second write)."""
    start = time.perf_counter()
    with path.open("w", encoding="utf-8") as out:
        write_html_report(out, **kwargs)
    seconds = time.perf_counter() - start
    tracemalloc.start()
    tracemalloc.reset_peak()
    before = tracemalloc.get_traced_memory()[0]
    write_html_report(_Null(), **kwargs)
    peak = tracemalloc.get_traced_memory()[1] - before
    tracemalloc.stop()
    return seconds, peak / 2**20


SEARCH_JS = r"""
new Promise(function (done) {
  var box = document.getElementById("f-search");
  var start = performance.now();
  box.value = %s;
  box.dispatchEvent(new Event("input", { bubbles: true }));
  function look() {
    if (document.body.dataset.query === box.value.trim().toLowerCase().split(/\s+/).join(" ")) {
      requestAnimationFrame(function () {
        done([performance.now() - start, document.getElementById("f-shown").textContent]);
      });
    } else { setTimeout(look, 1); }
  }
  look();
})
"""


def measure_browser(browser: str, path: Path) -> dict[str, Any]:
    with Browser(browser, width=1280, height=900) as page:
        loads = []
        for _ in range(3):
            loads.append(page.open(path.as_uri()))
        problems = [line for line in page.console if not line.startswith("verbose")]
        search_ms, shown = page.evaluate(SEARCH_JS % f'"{SEARCH}"')
        clear_ms, everything = page.evaluate(SEARCH_JS % '""')
    return {
        "load_s": sorted(loads)[1],
        "search_s": search_ms / 1000,
        "clear_s": clear_ms / 1000,
        "shown": shown,
        "everything": everything,
        "console": problems,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--claims", type=int, default=6, help="claims per case, on average")
    parser.add_argument("--retrieval", action="store_true", help="five evaluators, not three")
    parser.add_argument("--no-browser", action="store_true")
    args = parser.parse_args()

    dataset, cases, evaluators = make_run(args.cases, args.claims, args.retrieval)
    head = ReportHead(
        judge=JudgeInfo(provider="offline", model="offline-1", prompt_version="v1", heuristic=True),
        evaluators=evaluators,
        summary=RunSummary.of(cases, evaluators),
        usage=Usage(),
    )
    decision = make_decision(head, cases, random.Random(11))
    by_id = {case.id: case for case in dataset}
    claims = sum(len(c.claims) for c in cases)
    print(
        f"{len(cases):,} cases, {claims:,} claims ({claims / len(cases):.1f} a case), "
        f"{len(evaluators)} evaluators; {len(decision.new_hallucinations)} newly hallucinated "
        f"claims, {len(decision.regressed_cases)} regressed case scores"
    )
    browser = None if args.no_browser else find_browser()
    if browser is None and not args.no_browser:
        print("no Chromium found: load and search times are not measured")
    figures: dict[str, dict[str, Any]] = {}
    lookup: dict[str, Callable[[str], TestCase | None] | None] = {
        "report": None,
        "dataset": by_id.get,
    }
    with tempfile.TemporaryDirectory(prefix="ragaliq-html-") as tmp:
        for label, lookup_case in lookup.items():
            path = Path(tmp) / f"{label}.html"
            seconds, peak = write(
                path, head=head, cases=cases, decision=decision, dataset=lookup_case
            )
            size = path.stat().st_size / 2**20
            found: dict[str, Any] = {"size_mb": size, "write_s": seconds, "write_peak_mb": peak}
            line = (
                f"{label:8} {size:6.1f} MB, written in {seconds:.2f} s "
                f"(peak {peak:.1f} MB over the run's cases)"
            )
            if browser is not None:
                seen = measure_browser(browser, path)
                found.update(seen)
                line += (
                    f"; loaded in {seen['load_s']:.2f} s; search {SEARCH!r}: "
                    f"{seen['search_s'] * 1000:.0f} ms ({seen['shown']}); cleared in "
                    f"{seen['clear_s'] * 1000:.0f} ms ({seen['everything']})"
                )
                for problem in seen["console"]:
                    line += f"\n  console: {problem}"
            print(line)
            figures[label] = found
    keys = ("size_mb", "write_s", "write_peak_mb", "load_s", "search_s", "clear_s")
    pairs = [f"cases={len(cases)}"]
    for label, prefix in (("report", ""), ("dataset", "dataset_")):
        for key in keys:
            if key in figures[label]:
                pairs.append(f"{prefix}{key}={figures[label][key]:.3f}")
    print(" ".join(pairs))


if __name__ == "__main__":
    main()

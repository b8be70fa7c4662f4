"""Quality of the offline judge on labelled data: RAGTruth responses and WiCE claims.

Usage::

    python benchmarks/ragtruth.py [--data DIR] [--wice DIR] [--halueval DIR]
                                  [--split heldout|tune|check|all]

Every RAGTruth response is judged the way a run judges a case: the offline judge extracts the
response's claims (its sentences) and verifies them against the context (the passages for qa, the
article for summary, the business record as JSON for data2txt; the query is the question where
there is one), and the response is predicted "hallucinated" when the hallucination evaluator
finds at least one hallucinated claim: what the gate lists and fails on. A claim the judge marks
not verifiable offline is not hallucinated there. A response is labelled hallucinated when
RAGTruth marks any span of it.

Held-out half: a source is held out when ``sha256(str(source_id)) mod 2 == 0`` (about half of the
sources of each task, with all their responses). The offline judge was tuned and its model
trained on the other half only (``--split tune``); the figures quoted for it are the held-out
ones. WiCE claims and HaluEval items are split the same way, by a hash of the claim and of the
question (``sha256(text) mod 2 == 0`` is held out), and never used for tuning.

Check split (``--split check``): the held-out sources split again by source document, those
with ``sha256("cascade-check:" + source_id) mod 2 == 0``. It was fixed, with the rule the
cascade settles by, before the rule was measured on it, and it is measured once per rule: the
cascade's bar is at most 1% of the hallucinated claims settled offline as SUPPORTED, with at
least 10% of all claims still settled offline.

Units: *responses* for the detection figures (a response is flagged when the judge accuses one
of its claims); *claims* for the cascade figures, where a claim is one of the offline judge's
claims (its sentences, clauses and added parts, as ``ragaliq.text.sentences`` splits them),
labelled hallucinated when it overlaps a span the annotators marked.

Printed per task (qa, summary, data2txt) and overall: response-level precision, recall and F1 of
the hallucinated class, balanced accuracy and responses per second; then the same with the
responses that have a claim not verifiable offline counted as flagged too (what a reviewer would
read, not what fails the gate); then the accused precision per task (of the responses the judge
accuses, the share that are hallucinated); then the cascade figures (the share of claims the
offline judge settles as SUPPORTED without asking Claude, the share of the hallucinated claims
among them, and the judge calls saved, without a network); then WiCE claim-level accuracy and
HaluEval QA (right against hallucinated answers, none of it used in training). The last line is:

overall_f1=<x> overall_bacc=<x> qa_bacc=<x> summary_bacc=<x> data2txt_bacc=<x>
overall_precision=<x> qa_precision=<x> summary_precision=<x> data2txt_precision=<x>
settled_share=<x> hallucinated_settled=<x> responses_per_s=<x>
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import re
import sys
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from ragaliq.evaluators.base import CaseJudgement  # noqa: E402
from ragaliq.evaluators.hallucination import HallucinationEvaluator  # noqa: E402
from ragaliq.judges.cascade import settles_offline  # noqa: E402
from ragaliq.models import ClaimVerdict, TestCase, Verdict  # noqa: E402
from ragaliq.offline import OfflineJudge  # noqa: E402
from ragaliq.text.sentences import CONTINUATION  # noqa: E402

DEFAULT_DATA = ROOT.parent / "shared/data/ragtruth-dev"
DEFAULT_WICE = ROOT.parent / "shared/data/wice-dev"
DEFAULT_HALUEVAL = ROOT.parent / "shared/data/halueval"
TASKS = ("qa", "summary", "data2txt")
HELD_OUT_MODULUS = 2
Split = Literal["tune", "heldout", "check", "all"]
CHECK_SALT = "cascade-check:"
"""The check split: of the held-out half's sources, those with ``sha256(CHECK_SALT + source_id)
mod 2 == 0``, about a quarter of all sources, with all their responses."""


@dataclass(frozen=True)
class Item:
    """One labelled RAGTruth response with the case it becomes."""

    task: str
    source_id: str
    model: str
    case: TestCase
    spans: tuple[tuple[int, int], ...]
    """Character spans of the response that the annotators marked as hallucinated."""

    @property
    def hallucinated(self) -> bool:
        return bool(self.spans)


def split_of(source_id: object) -> Literal["tune", "heldout"]:
    """The fixed half a source (or a claim, or a question) belongs to: held out when
    sha256(source_id) mod 2 == 0."""
    digest = hashlib.sha256(str(source_id).encode("utf-8")).hexdigest()
    return "heldout" if int(digest, 16) % HELD_OUT_MODULUS == 0 else "tune"


def chosen(key: object, split: Split) -> bool:
    """Whether an item keyed so is in the chosen split."""
    if split == "check":
        digest = hashlib.sha256(f"{CHECK_SALT}{key}".encode()).hexdigest()
        return split_of(key) == "heldout" and int(digest, 16) % 2 == 0
    return split == "all" or split_of(key) == split


def load_ragtruth(data: Path, split: Split, tasks: Sequence[str] = TASKS) -> list[Item]:
    """The responses of the chosen part, in file order."""
    items: list[Item] = []
    for task in tasks:
        path = data / f"ragtruth_{task}.jsonl"
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            row = json.loads(line)
            if not chosen(row["source_id"], split):
                continue
            source = row["source"]
            if task == "qa":
                query, context = source["question"], (source["passages"],)
            elif task == "summary":
                query, context = "", (source,)
            else:
                query, context = "", (json.dumps(source, ensure_ascii=False),)
            for i, response in enumerate(row["responses"]):
                case = TestCase(
                    id=f"{task}-{row['source_id']}-{i}",
                    query=query,
                    context=context,
                    response=response["response"],
                )
                spans = tuple((int(s["start"]), int(s["end"])) for s in response["labels"])
                items.append(Item(task, str(row["source_id"]), response["model"], case, spans))
    return items


def claim_spans(response: str, claims: Sequence[str]) -> list[tuple[int, int] | None]:
    """Where each claim (a sentence of the response) sits in the response, in order."""
    out: list[tuple[int, int] | None] = []
    cursor = 0
    for claim in claims:
        # A clause split off a longer sentence may have gained a capital, a full stop or the
        # mark of a part that goes on from the claim before it.
        claim = claim.removeprefix(CONTINUATION)
        body = claim[:-1] if claim.endswith(".") else claim
        pattern = r"\s+".join(re.escape(part) for part in body.split())
        if body and body[0].isalpha():
            pattern = f"[{re.escape(body[0].upper())}{re.escape(body[0].lower())}]{pattern[1:]}"
        compiled = re.compile(pattern)
        match = compiled.search(response, cursor) or compiled.search(response)
        if match is None:
            out.append(None)
            continue
        out.append((match.start(), match.end()))
        cursor = match.end()
    return out


def claim_labels(item: Item, claims: Sequence[str]) -> list[bool]:
    """Whether each claim overlaps a labelled span (a claim that cannot be placed: False)."""
    labels = []
    for span in claim_spans(item.case.response, claims):
        if span is None:
            labels.append(False)
            continue
        start, end = span
        labels.append(any(s < end and start < e for s, e in item.spans))
    return labels


@dataclass(frozen=True)
class Judged:
    item: Item
    verdicts: tuple[ClaimVerdict, ...]
    predicted: bool
    """A claim is hallucinated: what the gate lists."""

    @property
    def for_review(self) -> bool:
        """A claim is hallucinated or not verifiable offline: what a reviewer would read."""
        return self.predicted or any(not v.verifiable for v in self.verdicts)


async def judge_all(items: Iterable[Item], judge: OfflineJudge) -> list[Judged]:
    evaluator = HallucinationEvaluator()
    out = []
    for item in items:
        claims = (await judge.extract_claims(item.case)).claims
        verdicts = (await judge.verify_claims(item.case, claims)).verdicts if claims else ()
        result = evaluator.evaluate(CaseJudgement(case=item.case, verdicts=verdicts))
        predicted = bool(result.flagged_claims)
        out.append(Judged(item, verdicts, predicted))
    return out


@dataclass(frozen=True)
class Scores:
    n: int
    positives: int
    precision: float
    recall: float
    f1: float
    bacc: float

    @classmethod
    def of(cls, pairs: Sequence[tuple[bool, bool]]) -> Scores:
        """Scores from (gold, predicted) pairs; the positive class is "hallucinated"."""
        tp = sum(g and p for g, p in pairs)
        fp = sum(not g and p for g, p in pairs)
        fn = sum(g and not p for g, p in pairs)
        tn = sum(not g and not p for g, p in pairs)
        precision = tp / (tp + fp) if tp + fp else 0.0
        recall = tp / (tp + fn) if tp + fn else 0.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        specificity = tn / (tn + fp) if tn + fp else 0.0
        return cls(len(pairs), tp + fn, precision, recall, f1, (recall + specificity) / 2)

    def row(self, name: str) -> str:
        return (
            f"{name:<9} {self.n:>5} {self.positives:>5} {self.precision:>6.3f} {self.recall:>6.3f} "
            f"{self.f1:>6.3f} {self.bacc:>6.3f}"
        )


@dataclass(frozen=True)
class Cascade:
    """What the cascade would settle offline and send to Claude, from the offline verdicts."""

    lines: list[str]
    settled_share: float
    """The share of claims settled offline."""
    hallucinated_settled: float
    """The share of the hallucinated claims settled offline as SUPPORTED."""


def cascade_figures(judged: Sequence[Judged]) -> Cascade:
    """What the cascade would send to Claude, from the offline verdicts alone (no network).

    The offline judge's claims are the response's sentences here; a cascade run verifies Claude's
    atomic claims instead, which are shorter and more often verbatim, so these shares are an
    estimate on the cautious side.
    """
    claims = sent = responses_without_calls = 0
    hallucinated = settled_hallucinated = 0
    oracle: list[tuple[bool, bool]] = []
    for j in judged:
        labels = claim_labels(j.item, [v.text for v in j.verdicts])
        sent_here = 0
        flagged = False
        for verdict, label in zip(j.verdicts, labels, strict=True):
            claims += 1
            hallucinated += label
            if settles_offline(verdict):
                settled_hallucinated += label
            else:
                sent_here += 1
                flagged = flagged or label  # a Claude that is always right
        sent += sent_here
        responses_without_calls += sent_here == 0
        oracle.append((j.item.hallucinated, flagged))
    settled = claims - sent
    n = len(judged)
    best = Scores.of(oracle)
    lines = [
        f"claims={claims} settled_offline={settled} ({settled / max(claims, 1):.3f}) "
        f"sent_to_claude={sent} ({sent / max(claims, 1):.3f})",
        f"hallucinated claims settled offline as SUPPORTED: {settled_hallucinated} of "
        f"{hallucinated} ({settled_hallucinated / max(hallucinated, 1):.3f}); "
        f"{settled_hallucinated / max(settled, 1):.3f} of the settled claims",
        f"verify calls saved: {responses_without_calls} of {n} responses "
        f"({responses_without_calls / max(n, 1):.3f}); of the claim pass (1 extract + 1 verify "
        f"per response): {responses_without_calls / max(2 * n, 1):.3f}",
        f"ceiling if Claude were right on every claim sent on: f1={best.f1:.3f} "
        f"bacc={best.bacc:.3f}",
    ]
    return Cascade(
        lines,
        settled_share=settled / max(claims, 1),
        hallucinated_settled=settled_hallucinated / max(hallucinated, 1),
    )


def load_wice(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


WICE_LABEL = {
    Verdict.SUPPORTED: "supported",
    Verdict.PARTIALLY_SUPPORTED: "partially_supported",
    Verdict.NOT_ENOUGH_INFO: "not_supported",
    Verdict.CONTRADICTED: "not_supported",
}


async def wice_lines(wice: Path, judge: OfflineJudge, split: Split) -> list[str]:
    lines = []
    for subset in ("oracle_chunks", "entailment_retrieval"):
        path = wice / subset / "claim" / "dev.jsonl"
        if not path.exists():
            lines.append(f"wice {subset}: {path} not found")
            continue
        confusion: Counter[tuple[str, str]] = Counter()
        for row in load_wice(path):
            if not chosen(row["claim"], split):
                continue
            case = TestCase(id="w", query="", context=tuple(row["evidence"]), response="")
            verdict = (await judge.verify_claims(case, [row["claim"]])).verdicts[0]
            confusion[(row["label"], WICE_LABEL[verdict.verdict])] += 1
        total = sum(confusion.values())
        correct = sum(c for (g, p), c in confusion.items() if g == p)
        binary = sum(
            c for (g, p), c in confusion.items() if (g == "supported") == (p == "supported")
        )
        gold_supported = sum(c for (g, _), c in confusion.items() if g == "supported")
        lines.append(
            f"wice {subset}: claims={total} accuracy_3way={correct / total:.3f} "
            f"accuracy_supported_vs_not={binary / total:.3f} "
            f"(always-partial baseline {confusion_share(confusion, 'partially_supported'):.3f}; "
            f"supported share {gold_supported / total:.3f})"
        )
        labels = ("supported", "partially_supported", "not_supported")
        lines.append("  gold \\ predicted: " + " ".join(f"{p[:9]:>9}" for p in labels))
        for g in labels:
            lines.append(f"  {g:<19}" + " ".join(f"{confusion[(g, p)]:>9}" for p in labels))
    return lines


def confusion_share(confusion: Counter[tuple[str, str]], label: str) -> float:
    total = sum(confusion.values())
    return sum(c for (g, _), c in confusion.items() if g == label) / max(total, 1)


async def halueval_lines(folder: Path, judge: OfflineJudge, split: Split) -> list[str]:
    """HaluEval QA: each item's right answer and hallucinated answer, judged against its knowledge.

    A response is predicted hallucinated when one of its claims is not SUPPORTED (as for
    RAGTruth). The two answers of an item share their question and knowledge, so the figures say
    how well the judge tells a grounded answer from an invented one.
    """
    path = folder / "qa_one-turn_data.json"
    if not path.exists():
        return [f"halueval: {path} not found"]
    evaluator = HallucinationEvaluator()
    pairs: list[tuple[bool, bool]] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        if not chosen(row["question"], split):
            continue
        for label, answer in ((False, row["right_answer"]), (True, row["hallucinated_answer"])):
            case = TestCase(
                id="h", query=row["question"], context=(row["knowledge"],), response=answer
            )
            claims = (await judge.extract_claims(case)).claims
            verdicts = (await judge.verify_claims(case, claims)).verdicts if claims else ()
            result = evaluator.evaluate(CaseJudgement(case=case, verdicts=verdicts))
            pairs.append((label, bool(result.flagged_claims)))
    scores = Scores.of(pairs)
    return [
        f"halueval qa one-turn: responses={scores.n} hallucinated={scores.positives} "
        f"precision={scores.precision:.3f} recall={scores.recall:.3f} f1={scores.f1:.3f} "
        f"bacc={scores.bacc:.3f}"
    ]


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="RAGTruth folder")
    parser.add_argument("--wice", type=Path, default=DEFAULT_WICE, help="WiCE folder")
    parser.add_argument("--split", choices=("heldout", "tune", "check", "all"), default="heldout")
    parser.add_argument("--no-wice", action="store_true", help="skip the WiCE claims")
    parser.add_argument("--halueval", type=Path, default=DEFAULT_HALUEVAL, help="HaluEval folder")
    parser.add_argument("--no-halueval", action="store_true", help="skip HaluEval")
    args = parser.parse_args(argv)

    items = load_ragtruth(args.data, args.split)
    judge = OfflineJudge()
    asyncio.run(judge_all(items[:20], judge))  # warm caches and imports before timing
    start = time.process_time()
    judged = asyncio.run(judge_all(items, judge))
    seconds = time.process_time() - start
    per_second = len(items) / seconds if seconds > 0 else float("inf")

    print(f"RAGTruth {args.data} split={args.split} (held out: sha256(source_id) mod 2 == 0)")
    print(f"judge: {judge.info.provider}/{judge.info.model} version {judge.info.prompt_version}")
    print(f"{'task':<9} {'resp':>5} {'hall':>5} {'prec':>6} {'rec':>6} {'f1':>6} {'bacc':>6}")
    scores: dict[str, Scores] = {}
    accused: dict[str, int] = {}
    for task in (*TASKS, "overall"):
        subset = [j for j in judged if task == "overall" or j.item.task == task]
        scores[task] = Scores.of([(j.item.hallucinated, j.predicted) for j in subset])
        accused[task] = sum(j.predicted for j in subset)
        print(scores[task].row(task))
    print("flagged for review (a claim hallucinated or not verifiable offline):")
    for task in (*TASKS, "overall"):
        subset = [j for j in judged if task == "overall" or j.item.task == task]
        print(Scores.of([(j.item.hallucinated, j.for_review) for j in subset]).row(task))
    claims = sum(len(j.verdicts) for j in judged)
    print(
        f"responses={len(items)} claims={claims} cpu_s={seconds:.2f} "
        f"responses_per_s={per_second:.1f} (one core, CPU time of the judging loop)"
    )
    verdicts = Counter(v.verdict.value for j in judged for v in j.verdicts if v.verifiable)
    unverifiable = sum(not v.verifiable for j in judged for v in j.verdicts)
    print(
        "verdicts: "
        + ", ".join(f"{k}={verdicts[k.value]}" for k in Verdict)
        + f", not verifiable offline={unverifiable}"
    )
    print(
        "accused precision (responses the judge accuses that are hallucinated): "
        + " ".join(
            f"{t}={scores[t].precision:.3f} ({round(scores[t].precision * accused[t])} of "
            f"{accused[t]})"
            for t in (*TASKS, "overall")
        )
    )
    print("cascade (offline settles confident claims, the rest go to Claude in one call):")
    cascade = cascade_figures(judged)
    for line in cascade.lines:
        print(f"  {line}")
    if not args.no_wice:
        for line in asyncio.run(wice_lines(args.wice, judge, args.split)):
            print(line)
    if not args.no_halueval:
        for line in asyncio.run(halueval_lines(args.halueval, judge, args.split)):
            print(line)
    print(
        f"overall_f1={scores['overall'].f1:.3f} overall_bacc={scores['overall'].bacc:.3f} "
        f"qa_bacc={scores['qa'].bacc:.3f} summary_bacc={scores['summary'].bacc:.3f} "
        f"data2txt_bacc={scores['data2txt'].bacc:.3f} "
        + " ".join(f"{t}_precision={scores[t].precision:.3f}" for t in ("overall", *TASKS))
        + f" settled_share={cascade.settled_share:.3f}"
        f" hallucinated_settled={cascade.hallucinated_settled:.3f}"
        f" responses_per_s={per_second:.1f}"
    )


if __name__ == "__main__":
    main()

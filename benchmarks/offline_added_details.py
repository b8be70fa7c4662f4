"""The offline judge on grounded sentences, their faithful paraphrases and one invented detail each.

Usage::

    python benchmarks/offline_added_details.py [--data PATH] [--half tune|test|both] [--list]

``benchmarks/data/offline_added_details.jsonl`` holds sentences written for this benchmark, each
grounded in a short context (products, policies, public services, travel, news, science,
housing, food, finance), with two rewrites: a faithful paraphrase that keeps the context's
nouns, and the same sentence with one invented detail that has no figure or name to point at
(a material, an extra item, a condition, a channel, a place, an agent, a manner), some of them
words the context uses in another sentence. Each text is judged as a response: split into the
offline judge's claims and verified against the context.

A response is *supported* when every claim is SUPPORTED, *accused* when a claim is hallucinated
(what the gate lists), and otherwise *not verifiable* offline. The sentences are split in two
halves by ``sha256(group) mod 2`` (a group is one context and its sentences): the judge is tuned
on the ``tune`` half only, and the ``test`` half is the figure. The bar, per half: at least 90% of
the responses with an invented detail not supported, at most 5% of the paraphrases accused, at
least 70% of the paraphrases supported. ``--list`` prints every tune-half outcome with its
reasons (never the test half's).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from offline_probes import Outcome, halves_parser, outcome_of  # noqa: E402

from ragaliq.models import ClaimVerdict, TestCase  # noqa: E402
from ragaliq.offline import OfflineJudge  # noqa: E402

DEFAULT_DATA = ROOT / "benchmarks" / "data" / "offline_added_details.jsonl"
FORMS = ("grounded", "paraphrase", "added")
MIN_ADDED_NOT_SUPPORTED = 0.90
MAX_PARAPHRASES_ACCUSED = 0.05
MIN_PARAPHRASES_SUPPORTED = 0.70
Half = Literal["tune", "test"]
Form = Literal["grounded", "paraphrase", "added"]


@dataclass(frozen=True)
class Sentence:
    """One grounded sentence of a context, with its paraphrase and its invented detail."""

    id: str
    group: str
    domain: str
    query: str
    context: tuple[str, ...]
    texts: dict[str, str]

    @property
    def half(self) -> Half:
        """``test`` when sha256(group) is even, else ``tune``."""
        digest = int(hashlib.sha256(self.group.encode("utf-8")).hexdigest(), 16)
        return "test" if digest % 2 == 0 else "tune"


@dataclass(frozen=True)
class Judged:
    """What the judge made of one form of a sentence."""

    sentence: Sentence
    form: Form
    outcome: Outcome
    verdicts: tuple[ClaimVerdict, ...]


def load(path: Path) -> list[Sentence]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    return [
        Sentence(
            id=row["id"],
            group=row["group"],
            domain=row["domain"],
            query=row.get("query", ""),
            context=tuple(row["context"]),
            texts={form: row[form] for form in FORMS},
        )
        for row in rows
    ]


def response_outcome(verdicts: Sequence[ClaimVerdict]) -> Outcome:
    """Accused when a claim is, supported when every claim is, else not verifiable offline."""
    outcomes = [outcome_of(v) for v in verdicts]
    if "flagged" in outcomes:
        return "flagged"
    if outcomes and all(o == "supported" for o in outcomes):
        return "supported"
    return "not verifiable"


async def judge_all(sentences: Sequence[Sentence]) -> list[Judged]:
    judge = OfflineJudge()
    out = []
    for sentence in sentences:
        for form in FORMS:
            text = sentence.texts[form]
            case = TestCase(
                id=sentence.id, query=sentence.query, context=sentence.context, response=text
            )
            claims = (await judge.extract_claims(case)).claims
            verdicts = (await judge.verify_claims(case, claims)).verdicts if claims else ()
            out.append(Judged(sentence, form, response_outcome(verdicts), verdicts))  # type: ignore[arg-type]
    return out


def _share(part: int, whole: int) -> str:
    return f"{part:>3}/{whole:<3} {part / whole:>4.0%}" if whole else f"{'-':>8}     "


def table(judged: Sequence[Judged], half: str) -> tuple[str, bool]:
    """The outcomes of one half per form, and whether the half meets the bar."""
    counts: Counter[tuple[str, Outcome]] = Counter((j.form, j.outcome) for j in judged)
    totals = Counter(j.form for j in judged)
    lines = [
        f"{half} half ({totals['grounded']} grounded sentences, "
        f"{len({j.sentence.group for j in judged})} contexts)",
        f"{'form':<11} {'supported':>13} {'not verif.':>13} {'accused':>13}",
    ]
    for form in FORMS:
        lines.append(
            f"{form:<11} {_share(counts[(form, 'supported')], totals[form]):>13} "
            f"{_share(counts[(form, 'not verifiable')], totals[form]):>13} "
            f"{_share(counts[(form, 'flagged')], totals[form]):>13}"
        )
    added = totals["added"] or 1
    paraphrases = totals["paraphrase"] or 1
    added_caught = 1 - counts[("added", "supported")] / added
    accused = counts[("paraphrase", "flagged")] / paraphrases
    supported = counts[("paraphrase", "supported")] / paraphrases
    met = (
        added_caught >= MIN_ADDED_NOT_SUPPORTED
        and accused <= MAX_PARAPHRASES_ACCUSED
        and supported >= MIN_PARAPHRASES_SUPPORTED
    )
    lines.append(
        f"{half}: added_not_supported={added_caught:.3f} (bar >= {MIN_ADDED_NOT_SUPPORTED}) "
        f"paraphrases_accused={accused:.3f} (bar <= {MAX_PARAPHRASES_ACCUSED}) "
        f"paraphrases_supported={supported:.3f} (bar >= {MIN_PARAPHRASES_SUPPORTED}) "
        f"-> {'met' if met else 'NOT met'}"
    )
    return "\n".join(lines), met


def main(argv: Sequence[str] | None = None) -> None:
    args = halves_parser(__doc__, DEFAULT_DATA, "sentences").parse_args(argv)
    sentences = load(args.data)
    judged = asyncio.run(judge_all(sentences))
    judge = OfflineJudge().info
    contexts = len({s.group for s in sentences})
    print(f"{args.data.name}: {len(sentences)} grounded sentences in {contexts} contexts")
    print(f"judge: {judge.provider}/{judge.model} version {judge.prompt_version}")
    for half in ("tune", "test") if args.half == "both" else (args.half,):
        print()
        print(table([j for j in judged if j.sentence.half == half], half)[0])
    if args.list:
        print()
        for j in judged:
            if j.sentence.half != "tune":
                continue
            print(f"[{j.form}] {j.outcome:<15} {j.sentence.texts[j.form]}")
            for verdict in j.verdicts:
                print(f"    {verdict.verdict.value}: {verdict.text} | {verdict.reason}")


if __name__ == "__main__":
    main()

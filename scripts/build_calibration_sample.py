#!/usr/bin/env python3
"""Rebuild examples/calibration/golden.jsonl, the labelled claims `ragaliq calibrate` ships with.

The sample is drawn deterministically (no randomness, no network) from two public data sets kept
in the shared data folder (see its SOURCES.md):

* WiCE dev, ``entailment_retrieval/claim/dev.jsonl``: Wikipedia claims checked against the web page
  they cite, labelled supported / partially_supported / not_supported. The context of a claim is
  the smallest annotated set of supporting sentences plus the page's sentences that share the most
  words with the claim (what a retriever would likely return), capped in count and length, in page
  order; consecutive sentences are joined into one chunk.
* HaluEval QA, ``qa_one-turn_data.json``: a question, its knowledge paragraph, a right answer and a
  hallucinated answer. "The answer to <question> is: <answer>" with the knowledge as the context is
  SUPPORTED for the right answer and not supported for the hallucinated one.

Rows are picked in the order of a SHA-256 of their upstream id, so a rebuild from the same data
writes the same bytes. Usage::

    python scripts/build_calibration_sample.py [--data ../shared/data] [--out PATH] [--check]

``--check`` exits 1 when the file on disk differs from what would be written.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA = REPO_ROOT.parent / "shared" / "data"
DEFAULT_OUT = REPO_ROOT / "examples" / "calibration" / "golden.jsonl"

WICE_FILE = Path("wice-dev/entailment_retrieval/claim/dev.jsonl")
HALUEVAL_FILE = Path("halueval/qa_one-turn_data.json")

WICE_PER_LABEL = {"supported": 24, "partially_supported": 24, "not_supported": 24}
WICE_LABELS = {
    "supported": "SUPPORTED",
    "partially_supported": "PARTIALLY_SUPPORTED",
    "not_supported": "NOT_ENOUGH_INFO",
}
HALUEVAL_RIGHT = 12
HALUEVAL_HALLUCINATED = 12
HALUEVAL_REVIEW: dict[tuple[int, str], str | None] = {
    # Gold labels of the HaluEval answers the selection reaches, by (line, kind), from reading each
    # answer against its knowledge paragraph. HaluEval itself only says "right" or "hallucinated";
    # here a claim is CONTRADICTED when the knowledge states something incompatible with it and
    # NOT_ENOUGH_INFO when the knowledge does not say. None leaves an item out: its right answer is
    # not backed by the knowledge given, or its hallucinated answer is in fact backed by it.
    (48, "right"): "SUPPORTED",
    (96, "right"): "SUPPORTED",
    (129, "right"): None,  # the knowledge never names Manhattan West
    (153, "right"): "SUPPORTED",
    (191, "right"): "SUPPORTED",
    (203, "right"): "SUPPORTED",
    (216, "right"): "SUPPORTED",
    (269, "right"): "SUPPORTED",
    (302, "right"): "SUPPORTED",
    (305, "right"): "SUPPORTED",
    (416, "right"): "SUPPORTED",
    (484, "right"): "SUPPORTED",
    (491, "right"): "SUPPORTED",
    (78, "hallucinated"): "NOT_ENOUGH_INFO",  # "was also an astronaut": not mentioned
    (99, "hallucinated"): None,  # "in the Deadwood museum" is true but names no county
    (122, "hallucinated"): "NOT_ENOUGH_INFO",  # Baptisia and deserts are not mentioned
    (124, "hallucinated"): "CONTRADICTED",  # 1980s and 400 songs; the knowledge: 1970s, 300
    (137, "hallucinated"): "CONTRADICTED",  # the knowledge names Imi Lichtenfeld (Imi Sde-Or)
    (138, "hallucinated"): "CONTRADICTED",  # Jimmy Barnes is Scottish-Australian
    (149, "hallucinated"): "CONTRADICTED",  # Monument Records, not Capitol
    (278, "hallucinated"): "CONTRADICTED",  # Cardwellia is endemic to Queensland
    (381, "hallucinated"): None,  # "both involved in film" is true of two film directors
    (423, "hallucinated"): "CONTRADICTED",  # country music, not rock
    (438, "hallucinated"): "CONTRADICTED",  # United 300 is an American film
    (440, "hallucinated"): "CONTRADICTED",  # NBC's president was Brandon Tartikoff
    (479, "hallucinated"): "CONTRADICTED",  # the Eastern Front of World War II
    (490, "hallucinated"): "CONTRADICTED",  # John Kassir and Tom Kenny voice the Ice King
}

MAX_CLAIM_CHARS = 300
MAX_SENTENCE_CHARS = 350
MAX_CONTEXT_SENTENCES = 5
MAX_CONTEXT_CHARS = 1_100
MAX_KNOWLEDGE_CHARS = 600
MIN_SENTENCE_CHARS = 25

_WORD = re.compile(r"[a-z0-9]+")
_STOPWORDS = frozenset(
    """
    a an the and or but of to in on at by for with from as is are was were be been being has have
    had it its this that these those he she they his her their him them who which what when where
    also after before into over than then there not no one two first new its
    """.split()
)


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if len(w) > 2 and w not in _STOPWORDS}


@dataclass(frozen=True)
class Row:
    id: str
    claim: str
    context: list[str]
    label: str
    source: str

    def to_json(self) -> str:
        record = {
            "id": self.id,
            "claim": self.claim,
            "context": self.context,
            "label": self.label,
            "source": self.source,
        }
        return json.dumps(record, ensure_ascii=False)


def _usable(sentence: str) -> bool:
    text = sentence.strip()
    return (
        MIN_SENTENCE_CHARS <= len(text) <= MAX_SENTENCE_CHARS
        and not text.startswith("(meta data)")
        and not text.startswith("#")
    )


def _chunks(evidence: Sequence[str], picked: Iterable[int]) -> list[str]:
    """The picked sentences in page order, consecutive ones joined into one chunk."""
    chunks: list[list[str]] = []
    previous = -2
    for index in sorted(set(picked)):
        if index == previous + 1 and chunks:
            chunks[-1].append(evidence[index].strip())
        else:
            chunks.append([evidence[index].strip()])
        previous = index
    return [" ".join(chunk) for chunk in chunks]


def wice_context(item: dict[str, Any]) -> list[str] | None:
    """The context of a WiCE claim, or None when its support is too long to ship."""
    evidence: list[str] = item["evidence"]
    sets = [sorted(set(s)) for s in item["supporting_sentences"] if s]
    support = min(sets, key=lambda s: (len(s), s)) if sets else []
    if len(support) > MAX_CONTEXT_SENTENCES:
        return None
    if any(len(evidence[i].strip()) > MAX_SENTENCE_CHARS for i in support):
        return None
    total = sum(len(evidence[i].strip()) for i in support)
    if total > MAX_CONTEXT_CHARS:
        return None
    claim_words = _words(item["claim"])
    candidates = sorted(
        (
            (-len(claim_words & _words(sentence)), index)
            for index, sentence in enumerate(evidence)
            if index not in support and _usable(sentence)
        ),
    )
    picked = list(support)
    for overlap, index in candidates:
        if len(picked) >= MAX_CONTEXT_SENTENCES or overlap == 0:
            break
        size = len(evidence[index].strip())
        if total + size > MAX_CONTEXT_CHARS:
            continue
        picked.append(index)
        total += size
    if not picked:
        return None
    return _chunks(evidence, picked)


def wice_rows(data: Path) -> list[Row]:
    path = data / WICE_FILE
    items = [
        (number, json.loads(line))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if line.strip()
    ]
    items.sort(key=lambda pair: _sha(pair[1]["meta"]["id"]))
    taken = dict.fromkeys(WICE_PER_LABEL, 0)
    rows: list[Row] = []
    for number, item in items:
        label = item["label"]
        if taken[label] >= WICE_PER_LABEL[label] or len(item["claim"]) > MAX_CLAIM_CHARS:
            continue
        context = wice_context(item)
        if context is None:
            continue
        meta = item["meta"]
        rows.append(
            Row(
                id=f"wice-{meta['id']}",
                claim=item["claim"].strip(),
                context=context,
                label=WICE_LABELS[label],
                source=(
                    f"WiCE dev {meta['id']} ({WICE_FILE}:{number}; "
                    f"Wikipedia: {meta['claim_title']}; upstream label {label})"
                ),
            )
        )
        taken[label] += 1
    short = {label: n for label, n in WICE_PER_LABEL.items() if taken[label] < n}
    if short:
        raise SystemExit(f"not enough usable WiCE claims for {short}")
    return sorted(rows, key=lambda row: row.id)


def _answer_claim(question: str, answer: str) -> str:
    answer = answer.strip().rstrip(".")
    return f'The answer to the question "{question.strip()}" is: {answer}.'


def halueval_rows(data: Path) -> list[Row]:
    path = data / HALUEVAL_FILE
    items = [
        (number, json.loads(line))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if line.strip()
    ]
    items = [
        pair
        for pair in items
        if len(pair[1]["knowledge"]) <= MAX_KNOWLEDGE_CHARS
        and pair[1]["right_answer"].strip().rstrip(".").lower()
        != pair[1]["hallucinated_answer"].strip().rstrip(".").lower()
    ]
    items.sort(key=lambda pair: _sha(pair[1]["question"]))
    rows: list[Row] = []
    wanted = {"right": HALUEVAL_RIGHT, "hallucinated": HALUEVAL_HALLUCINATED}
    taken = dict.fromkeys(wanted, 0)
    for number, item in items:
        kind = "right" if taken["right"] < wanted["right"] else "hallucinated"
        if taken[kind] >= wanted[kind]:
            break
        if (number, kind) not in HALUEVAL_REVIEW:
            raise SystemExit(
                f"{HALUEVAL_FILE}:{number} ({kind} answer) has not been reviewed; "
                "read it and add its label (or None) to HALUEVAL_REVIEW"
            )
        label = HALUEVAL_REVIEW[number, kind]
        if label is None:
            continue
        answer = item["right_answer"] if kind == "right" else item["hallucinated_answer"]
        rows.append(
            Row(
                id=f"halueval-{number:03d}-{kind}",
                claim=_answer_claim(item["question"], answer),
                context=[item["knowledge"].strip()],
                label=label,
                source=f"HaluEval QA ({HALUEVAL_FILE}:{number}; {kind} answer)",
            )
        )
        taken[kind] += 1
    return sorted(rows, key=lambda row: row.id)


def build(data: Path) -> str:
    rows = wice_rows(data) + halueval_rows(data)
    return "".join(row.to_json() + "\n" for row in rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="the shared data folder")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="the file to write")
    parser.add_argument("--check", action="store_true", help="only compare with the file on disk")
    args = parser.parse_args(argv)
    text = build(args.data)
    if args.check:
        current = args.out.read_text(encoding="utf-8") if args.out.exists() else ""
        if current != text:
            print(f"{args.out}: out of date; rerun {Path(__file__).name}", file=sys.stderr)
            return 1
        print(f"{args.out}: up to date")
        return 0
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8", newline="\n")
    lines = text.count("\n")
    print(f"{args.out}: {lines} labelled claims, {len(text.encode('utf-8')):,} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())

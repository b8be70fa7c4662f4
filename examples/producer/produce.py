"""A toy RAG pipeline that writes the dataset RagaliQ Gate judges, with ragaliq.DatasetWriter.

Usage: python examples/producer/produce.py [--output rag_outputs.jsonl]

It answers the questions in questions.jsonl from the documents in docs/: keyword retrieval picks
the two paragraphs that share the most words with the question, and a template answers with the
best-matching sentence. No network, no model: swap `retrieve` and `answer` for your own pipeline
and keep the loop at the bottom, which is all the gate needs.

Each case is checked the moment it is added (the same rules as `ragaliq validate`), ids come
from questions.jsonl so that they are the same on every run, and the file is written atomically
when the `with` block ends.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

from ragaliq import DatasetWriter

HERE = Path(__file__).resolve().parent
WORD = re.compile(r"[a-z0-9]+")
STOP_WORDS = frozenset(
    "a an and are at be by can do does for how i in is it long much my of on or the to what "
    "which with you your".split()
)


def words(text: str) -> set[str]:
    """The content words of a text, with a plural's final s dropped (refunds -> refund)."""
    found = (w for w in WORD.findall(text.lower()) if w not in STOP_WORDS)
    return {w[:-1] if len(w) > 3 and w.endswith("s") else w for w in found}


def load_chunks(folder: Path) -> list[str]:
    """Every paragraph of every document, headings left out, in a stable order."""
    chunks = []
    for path in sorted(folder.glob("*.md")):
        for paragraph in path.read_text(encoding="utf-8").split("\n\n"):
            paragraph = paragraph.strip()
            if paragraph and not paragraph.startswith("#"):
                chunks.append(paragraph)
    return chunks


def retrieve(question: str, chunks: list[str], k: int = 2) -> list[str]:
    """The k chunks sharing the most words with the question (ties keep document order)."""
    wanted = words(question)
    scored = sorted(enumerate(chunks), key=lambda item: (-len(wanted & words(item[1])), item[0]))
    return [chunk for _, chunk in scored[:k]]


def answer(question: str, context: list[str]) -> str:
    """The sentence of the context that shares the most words with the question."""
    wanted = words(question)
    sentences = [s for chunk in context for s in re.split(r"(?<=\.)\s+", chunk) if s]
    if not sentences:
        return "I could not find that in the documentation."
    best = max(sentences, key=lambda s: len(wanted & words(s)))
    return f"According to the documentation: {best}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=Path, default=Path("rag_outputs.jsonl"))
    args = parser.parse_args()
    chunks = load_chunks(HERE / "docs")
    questions = [
        json.loads(line)
        for line in (HERE / "questions.jsonl").read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    with DatasetWriter(args.output) as writer:
        for item in questions:
            context = retrieve(item["question"], chunks)
            writer.add(
                id=item["id"],
                query=item["question"],
                context=context,
                response=answer(item["question"], context),
                tags=["producer-example"],
            )
    print(f"wrote {writer.count} cases to {args.output}")


if __name__ == "__main__":
    main()

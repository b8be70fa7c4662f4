"""A retrieval story: a library's help desk, labelled chunks and documents, and four pull requests.

A fresh repository holds the help desk's retrieval suite: for each question, the chunks its
retriever returns (ids and documents) and what the question should find, labelled by chunk for
the short help pages and by document for the two long manuals. Only the retrieval metrics are on,
so no judge is asked anything. main's retriever finds every relevant chunk, and its baseline is
recorded. Then, each a branch gated with ``ragaliq gate`` against main:

- a change that narrows retrieval to the first two chunks fails, and the comment names the case
  and the relevant chunk it lost;
- a change that only reorders chunks within k passes, and the comment shows the ranks that moved;
- a change that re-chunks the manuals is judged on the document labels, and no chunk is lost;
- a change that edits a case's labels is scored on main's labels, and shows its own as a proposal.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from ragaliq.report.markdown import escape_markdown
from tests.stories import main_with_baseline
from tests.stories import pull_request as gated

CONFIG = """\
dataset: retrieval.jsonl
judge:
  provider: auto
evaluators:
  faithfulness: {enabled: false}
  hallucination: {enabled: false}
  relevance: {enabled: false}
  hit_rate: {k: 5}
  recall_at_k: {k: 5}
  mrr: {k: 5}
  ndcg: {k: 5}
gate:
  max_drop: 0.05
"""

HELP = {
    "cards.md": (
        "Anyone who lives, works or studies in Alder County can have a card at no charge.",
        "Bring a photo ID and a letter with your address to any branch desk.",
        "A replacement for a lost card costs $2.",
    ),
    "loans.md": (
        "Books and audiobooks go home for three weeks.",
        "Films and board games go home for one week.",
        "You may renew an item twice online, unless another reader has reserved it.",
    ),
    "holds.md": (
        "Reserve a title from the catalogue and choose the branch that should keep it for you.",
        "A reserved item waits on the pickup shelf for five opening days.",
    ),
    "fees.md": (
        "Late returns cost 20 cents a day, up to the price of the item.",
        "Fees under $5 never block borrowing.",
    ),
    "wifi.md": (
        "The guest network needs no password; it asks you to accept the rules once a day.",
        "Members sign in to the faster network with their card number and PIN.",
    ),
}
MANUALS = {
    "rooms.md": (
        "Study rooms seat up to six and are booked online, up to two weeks ahead.",
        "A booking lasts two hours and can be extended at the desk if the room is free.",
        "Rooms that stay empty fifteen minutes past the start are released to walk-ins.",
        "Whiteboards and a screen with an HDMI cable are in every room.",
    ),
    "printing.md": (
        "Print from any library computer or send a file to print@alder.example.",
        "Black-and-white pages cost 10 cents and colour pages 50 cents.",
        "Pay at the release station with your card balance or coins.",
        "Scanning to e-mail or a USB stick is free.",
    ),
}


def chunk_ids(document: str, count: int) -> list[str]:
    return [f"{document.removesuffix('.md')}#{n}" for n in range(1, count + 1)]


TEXTS = {
    chunk_id: text
    for documents in (HELP, MANUALS)
    for document, sentences in documents.items()
    for chunk_id, text in zip(chunk_ids(document, len(sentences)), sentences, strict=True)
}
SOURCE = {chunk_id: chunk_id.split("#")[0] + ".md" for chunk_id in TEXTS}


def table(text: str) -> list[tuple[str, str, list[str], dict[str, int]]]:
    """Cases as rows: id | query | what main's retriever returns, best first | labels (id=grade)."""
    rows = []
    for line in text.strip().splitlines():
        case_id, query, ranking, labels = (cell.strip() for cell in line.split("|"))
        grades = {item: int(grade) for item, grade in (pair.split("=") for pair in labels.split())}
        rows.append((case_id, query, ranking.split(), grades))
    return rows


BY_CHUNK = table("""
who-gets-a-card | Who can get a library card?  | cards#1 wifi#2 cards#2 loans#1 fees#2 | cards#1=3 cards#2=1
lost-card       | What if I lose my card?      | cards#3 holds#2 loans#3 cards#1 fees#1 | cards#3=3 cards#1=1
loan-length     | How long can I keep a book?  | loans#1 fees#1 loans#3 holds#2 cards#1 | loans#1=3 loans#3=2
renewals        | Can I renew a film?          | loans#3 fees#2 loans#2 holds#1 wifi#1  | loans#3=2 loans#2=2
reserving       | How do I reserve a title?    | holds#1 loans#3 cards#2 holds#2 fees#1 | holds#1=2 holds#2=2
late-fees       | What does a late return cost? | fees#1 loans#1 fees#2 holds#2 wifi#1  | fees#1=3 fees#2=1
wifi-password   | What is the wifi password?   | wifi#1 cards#2 wifi#2 fees#2 loans#2   | wifi#1=3 wifi#2=2
pickup-shelf    | How long does a reserved book wait for me? | holds#2 loans#1 fees#1 holds#1 cards#3 | holds#2=3 holds#1=1
""")  # noqa: E501
BY_DOCUMENT = table("""
book-a-room | How do I book a study room?           | rooms#1 rooms#2 printing#1 rooms#3 loans#1     | rooms.md=3
room-screen | Is there a screen in the study rooms? | rooms#4 printing#4 rooms#1 wifi#2 cards#2      | rooms.md=2
print-price | How much does printing cost?          | printing#2 printing#3 rooms#4 fees#1 printing#1 | printing.md=3
scan        | Can I scan a document?                | printing#4 rooms#4 printing#1 wifi#1 cards#1   | printing.md=2
""")  # noqa: E501

Retriever = Callable[[str, list[str]], list[tuple[str, str, str]]]
"""A pull request's retriever: for a case, its chunks as (id, document, text), in rank order."""


def main_retriever(case_id: str, ranking: list[str]) -> list[tuple[str, str, str]]:
    return [(chunk_id, SOURCE[chunk_id], TEXTS[chunk_id]) for chunk_id in ranking]


def narrowed(case_id: str, ranking: list[str]) -> list[tuple[str, str, str]]:
    return main_retriever(case_id, ranking[:2])


SWAPPED = {"renewals", "reserving"}
"""Cases whose two relevant chunks (of the same grade) come in the other order."""


def reordered(case_id: str, ranking: list[str]) -> list[tuple[str, str, str]]:
    if case_id in SWAPPED:
        relevant = next(labels for id_, _, _, labels in BY_CHUNK if id_ == case_id)
        first, second = (ranking.index(chunk_id) for chunk_id in relevant)
        ranking = list(ranking)
        ranking[first], ranking[second] = ranking[second], ranking[first]
    return main_retriever(case_id, ranking)


def manuals_in_pairs(case_id: str, ranking: list[str]) -> list[tuple[str, str, str]]:
    """The manuals cut into chunks of two sentences, with new ids; the help pages as they were."""
    chunks: list[tuple[str, str, str]] = []
    seen: set[str] = set()
    for chunk_id in ranking:
        document = SOURCE[chunk_id]
        if document not in MANUALS:
            chunks.append((chunk_id, document, TEXTS[chunk_id]))
            continue
        part = (int(chunk_id.split("#")[1]) - 1) // 2
        new_id = f"{document}@{part}"
        if new_id not in seen:
            seen.add(new_id)
            pair = MANUALS[document][2 * part : 2 * part + 2]
            chunks.append((new_id, document, " ".join(pair)))
    return chunks


def write_suite(
    root: Path, retriever: Retriever, labels: dict[str, dict[str, int]] | None = None
) -> None:
    rows = []
    for cases, field in ((BY_CHUNK, "relevant_chunks"), (BY_DOCUMENT, "relevant_sources")):
        for case_id, query, ranking, relevant in cases:
            context = [
                {"id": chunk_id, "source": source, "text": text}
                for chunk_id, source, text in retriever(case_id, ranking)
            ]
            rows.append(
                {
                    "id": case_id,
                    "query": query,
                    "context": context,
                    field: (labels or {}).get(case_id, relevant),
                }
            )
    (root / "retrieval.jsonl").write_text(
        "".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8"
    )


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The help desk's repository: its suite and the baseline recorded on main."""
    root = tmp_path_factory.mktemp("help-desk")
    return main_with_baseline(
        root, CONFIG, lambda: write_suite(root, main_retriever), "Retrieval suite and its baseline"
    )


def pull_request(
    repo: Path,
    name: str,
    retriever: Retriever,
    labels: dict[str, dict[str, int]] | None = None,
) -> tuple[int, dict, str, str]:
    """Commit the retrieval a change produces on a branch off main and gate it."""
    return gated(repo, name, lambda: write_suite(repo, retriever, labels))


def test_mains_retriever_finds_every_relevant_chunk_and_no_judge_is_asked(repo):
    code, decision, output, comment = pull_request(repo, "unchanged", main_retriever)
    assert code == 0, output
    assert {name: e["head"] for name, e in decision["evaluators"].items()} == {
        "hit_rate": 1.0,
        "recall_at_k": 1.0,
        "mrr": 1.0,
        "ndcg": pytest.approx(decision["evaluators"]["ndcg"]["baseline"]),
    }
    assert decision["usage"]["calls"] == 0
    assert decision["lost_chunks"] == decision["moved_chunks"] == decision["found_chunks"] == []
    assert "Relevant chunks" not in comment


def test_narrowing_retrieval_fails_and_the_comment_names_the_lost_chunk(repo):
    code, decision, output, comment = pull_request(repo, "narrow", narrowed)
    assert code == 1, output
    assert any(f.startswith("recall_at_k: ") for f in decision["failures"]), decision["failures"]
    assert decision["evaluators"]["recall_at_k"]["status"] == "regressed"
    lost = {(c["case_id"], c["item"]) for c in decision["lost_chunks"]}
    assert lost == {
        ("who-gets-a-card", "cards#2"),
        ("lost-card", "cards#1"),
        ("loan-length", "loans#3"),
        ("renewals", "loans#2"),
        ("reserving", "holds#2"),
        ("late-fees", "fees#2"),
        ("wifi-password", "wifi#2"),
        ("pickup-shelf", "holds#1"),
    }
    worst = decision["lost_chunks"][0]
    assert (worst["case_id"], worst["item"], worst["relevance"]) == ("loan-length", "loans#3", 2)
    assert (worst["rank_before"], worst["rank_after"]) == (3, None)
    assert "#### Relevant chunks lost (8)" in comment
    assert "<code>loan-length</code> · How long can I keep a book? · 1 lost relevant chunk" in (
        comment
    )
    assert escape_markdown("chunk loans#3 (relevance 2): rank 3 → not retrieved") in comment
    assert "relevant chunks lost: 8 lost relevant chunks" in output


def test_a_reordering_within_k_passes_and_the_comment_shows_the_ranks_that_moved(repo):
    code, decision, output, comment = pull_request(repo, "reorder", reordered)
    assert code == 0, output
    assert decision["lost_chunks"] == []
    moved = {
        (c["case_id"], c["item"], c["rank_before"], c["rank_after"])
        for c in decision["moved_chunks"]
    }
    assert moved == {
        ("renewals", "loans#3", 1, 3),
        ("renewals", "loans#2", 3, 1),
        ("reserving", "holds#1", 1, 4),
        ("reserving", "holds#2", 4, 1),
    }
    assert {name: e["delta"] for name, e in decision["evaluators"].items()} == dict.fromkeys(
        ("hit_rate", "recall_at_k", "mrr", "ndcg"), 0.0
    )
    assert "#### Relevant chunks at another rank" in comment
    assert (
        "- **down**: " + escape_markdown("chunk loans#3 (relevance 2): rank 1 → rank 3") in comment
    )


def test_re_chunking_the_manuals_is_judged_on_the_document_labels_and_loses_nothing(repo):
    code, decision, output, comment = pull_request(repo, "rechunk", manuals_in_pairs)
    assert code == 0, output
    assert decision["lost_chunks"] == []
    assert decision["evaluators"]["recall_at_k"]["delta"] == 0
    assert decision["evaluators"]["hit_rate"]["delta"] == 0
    assert "Relevant chunks lost" not in comment
    assert not any("labelled id" in n for n in decision["notices"])


def test_edited_labels_are_scored_on_mains_and_shown_as_a_proposal(repo):
    edited = {"late-fees": {"fees#1": 3, "holds#1": 2}}  # a chunk the retriever never returns
    code, decision, output, comment = pull_request(repo, "relabel", main_retriever, edited)
    assert code == 0, output
    recall = decision["evaluators"]["recall_at_k"]
    assert (recall["head"], recall["delta"]) == (1.0, 0.0)  # on main's labels
    notices = [n for n in decision["notices"] if n.startswith("This change proposes new relevance")]
    assert len(notices) == 1, decision["notices"]
    assert "late-fees: relevant_chunks +holds#1, -fees#2" in notices[0]
    assert "until the change is merged and the baseline updated" in notices[0]
    assert escape_markdown("late-fees: relevant_chunks +holds#1, -fees#2") in comment

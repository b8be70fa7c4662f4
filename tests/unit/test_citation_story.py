"""A citation story: an allotment society's help bot, whose answers cite the chunks they draw on.

A fresh repository holds the bot's suite, judged by the offline judge with citation accuracy on:
one answer cites chunks by id (``[fees-1]``), one by number (``[2]``), and one cites nothing.
main's answers cite the right chunks, and its baseline is recorded. Then, each a branch gated
with ``ragaliq gate`` against main:

- a change whose answer credits a supported claim to the wrong chunk fails, and the comment lists
  the claim as miscited with the chunk it cites and the chunk that backs it;
- the answers that cite correctly are listed nowhere, and the answer that cites nothing is not
  scored by citation accuracy, with its reason.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragaliq.report.markdown import escape_markdown
from tests.stories import main_with_baseline
from tests.stories import pull_request as gated

CONFIG = """\
dataset: allotments.jsonl
judge:
  provider: auto
evaluators:
  relevance: {enabled: false}
  citation_accuracy: {threshold: 0.9}
"""

FEES = "A full plot costs 40 euros per season. A half plot costs 25 euros per season."
WATER = "The water taps run from April to October."
SHED = "The tool shed opens on Saturday mornings."


def suite(fee_answer: str) -> list[dict]:
    return [
        {
            "id": "plot-fee",
            "query": "How much is a plot, and when is there water?",
            "context": [
                {"id": "fees-1", "text": FEES},
                {"id": "water-1", "text": WATER},
                {"id": "shed-1", "text": SHED},
            ],
            "response": fee_answer,
        },
        {
            "id": "compost",
            "query": "Where is the compost?",
            "context": [
                "Compost bins stand behind the north gate.",
                "Members may take two barrows of compost a month.",
            ],
            "response": (
                "Compost bins stand behind the north gate [1]. Members may take two barrows of "
                "compost a month [2]."
            ),
        },
        {
            "id": "bonfires",
            "query": "May I light a bonfire on my plot?",
            "context": ["Bonfires are never allowed on the plots.", "Green waste goes to bins."],
            "response": "Bonfires are never allowed on the plots.",
        },
    ]


CITED_RIGHT = "A full plot costs 40 euros per season [fees-1]. The water taps run from April to October [water-1]."  # noqa: E501
CITED_WRONG = "A full plot costs 40 euros per season [water-1]. The water taps run from April to October [water-1]."  # noqa: E501


def write_suite(root: Path, fee_answer: str) -> None:
    (root / "allotments.jsonl").write_text(
        "".join(json.dumps(row) + "\n" for row in suite(fee_answer)), encoding="utf-8"
    )


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The society's repository: its suite and the baseline recorded on main."""
    root = tmp_path_factory.mktemp("allotments")
    return main_with_baseline(
        root, CONFIG, lambda: write_suite(root, CITED_RIGHT), "Help bot suite and its baseline"
    )


def pull_request(repo: Path, name: str, fee_answer: str) -> tuple[int, dict, str, str, dict]:
    """Gate the answers a change produces; also return each case's citation accuracy result."""
    code, decision, output, comment = gated(repo, name, lambda: write_suite(repo, fee_answer))
    report = json.loads((repo / ".ragaliq" / f"{name}.report.json").read_text(encoding="utf-8"))
    results = {case["id"]: case["results"]["citation_accuracy"] for case in report["cases"]}
    return code, decision, output, comment, results


@pytest.fixture(scope="module")
def unchanged(repo: Path) -> tuple[int, dict, str, str, dict]:
    return pull_request(repo, "unchanged", CITED_RIGHT)


@pytest.fixture(scope="module")
def wrong_chunk(repo: Path) -> tuple[int, dict, str, str, dict]:
    return pull_request(repo, "wrong-chunk", CITED_WRONG)


def test_answers_that_cite_the_chunks_they_draw_on_pass_and_list_nothing(unchanged):
    code, decision, output, comment, results = unchanged
    assert code == 0, output
    assert decision["evaluators"]["citation_accuracy"]["head"] == 1.0
    assert decision["miscited_claims"] == []
    assert "Miscited claims" not in comment
    assert results["plot-fee"]["score"] == results["compost"]["score"] == 1.0
    assert decision["usage"]["calls"] == 0


def test_a_claim_credited_to_the_wrong_chunk_is_listed_as_miscited_with_both_chunks(wrong_chunk):
    code, decision, output, comment, results = wrong_chunk
    assert code == 1, output
    accuracy = decision["evaluators"]["citation_accuracy"]
    assert accuracy["head"] == pytest.approx((0.5 + 1.0) / 2)  # the bonfire answer is not scored
    assert [
        (m["case_id"], m["claim"], m["cited"], m["backed_by"]) for m in decision["miscited_claims"]
    ] == [
        (
            "plot-fee",
            "A full plot costs 40 euros per season [water-1].",
            ["water-1"],
            ["fees-1"],
        )
    ]
    assert "#### Miscited claims (1)" in comment
    assert (
        escape_markdown(
            "A full plot costs 40 euros per season [water-1]. "
            "(cites chunk water-1; chunk fees-1 backs it)"
        )
        in comment
    )
    assert "miscited claims: 1 miscited claim" in output
    assert results["plot-fee"]["reasoning"] == (
        "1 of 2 cited claims are credited to chunks that do not back them."
    )
    assert decision["new_hallucinations"] == []  # the claim itself is still supported


def test_answers_that_cite_correctly_are_not_listed(wrong_chunk):
    _, decision, _, comment, results = wrong_chunk
    assert results["compost"]["score"] == 1.0
    assert results["compost"]["details"]["miscited"] == []
    assert {m["case_id"] for m in decision["miscited_claims"]} == {"plot-fee"}
    assert "<code>compost</code>" not in comment


def test_an_answer_that_cites_nothing_is_not_scored_for_its_citations(unchanged, wrong_chunk):
    for _, _, _, _, results in (unchanged, wrong_chunk):
        assert results["bonfires"]["status"] == "skipped"
        assert results["bonfires"]["score"] is None
        assert results["bonfires"]["reasoning"] == (
            "The response cites no retrieved chunk: no citation to check."
        )

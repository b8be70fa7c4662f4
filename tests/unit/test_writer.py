"""DatasetWriter: cases checked as a pipeline writes them, stable ids, an atomic file."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

import ragaliq
from ragaliq import DatasetWriter
from ragaliq.dataset import load_dataset
from ragaliq.errors import DatasetError
from tests.conftest import REPO_ROOT

CASE = {"query": "How long is the refund window?", "context": ["14 days."], "response": "14 days."}


def refused(path: Path, *adds: dict, **options) -> str:
    with pytest.raises(DatasetError) as info, DatasetWriter(path, **options) as writer:
        for add in adds:
            writer.add(**add)
    return str(info.value)


def test_the_writer_is_part_of_the_public_api():
    assert "DatasetWriter" in ragaliq.__all__


def test_cases_are_written_as_the_loader_reads_them(tmp_path):
    path = tmp_path / "rag_outputs.jsonl"
    with DatasetWriter(path) as writer:
        assert writer.add(id="refund", **CASE, expected_facts=["14 days"], tags=["billing"]) == (
            "refund"
        )
        writer.add(
            id="reset", query="Reset?", context="one chunk", response="Click.", metadata={"n": 1}
        )
    assert writer.count == 2
    first, second = load_dataset(path)
    assert (first.id, first.context, first.expected_facts, first.tags) == (
        "refund",
        ("14 days.",),
        ("14 days",),
        ("billing",),
    )
    assert (second.context, second.metadata) == (("one chunk",), {"n": 1})
    assert json.loads(path.read_text(encoding="utf-8").splitlines()[1]) == {
        "id": "reset",
        "query": "Reset?",
        "context": ["one chunk"],
        "response": "Click.",
        "metadata": {"n": 1},
    }


def test_an_id_left_out_is_derived_from_the_query_as_the_loader_does(tmp_path):
    path = tmp_path / "out.jsonl"
    with DatasetWriter(path) as writer:
        first = writer.add(**CASE)
        second = writer.add(**CASE)
    assert first.startswith("how-long-is-the-refund-window-")
    assert second == f"{first}-2"
    assert [c.id for c in load_dataset(path)] == [first, second]


def test_a_bad_case_names_its_line_and_field_and_nothing_is_written(tmp_path):
    path = tmp_path / "out.jsonl"
    path.write_text(json.dumps({**CASE, "id": "old", "query": "Old?"}) + "\n", encoding="utf-8")
    before = path.read_bytes()
    message = refused(path, {"id": "a", **CASE}, {"id": "b", **CASE, "query": 3})
    assert message == f"{path}:2: query: must be a string (got number 3)"
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["out.jsonl"]


def test_an_exception_in_the_pipeline_leaves_the_previous_file(tmp_path):
    path = tmp_path / "out.jsonl"
    path.write_text(json.dumps({**CASE, "id": "old", "query": "Old?"}) + "\n", encoding="utf-8")
    with pytest.raises(RuntimeError), DatasetWriter(path) as writer:
        writer.add(id="new", **CASE)
        raise RuntimeError("the retriever is down")
    assert load_dataset(path)[0].id == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["out.jsonl"]


def test_a_duplicate_id_is_refused_at_once(tmp_path):
    message = refused(tmp_path / "o.jsonl", {"id": "a", **CASE}, {"id": "a", **CASE})
    assert message == (
        f"{tmp_path / 'o.jsonl'}:2: id: duplicate id 'a' (first used on line 1); ids must be "
        "unique and stable"
    )


def test_a_lookalike_id_is_refused(tmp_path):
    message = refused(tmp_path / "o.jsonl", {"id": "a", **CASE}, {"id": "a\u200b", **CASE})
    assert "looks the same as id 'a' on line 1" in message


@pytest.mark.parametrize(
    ("case_id", "kind"),
    [
        ("b4fcbcba-3b53-4288-a1bb-f41934d5e301", "a random or time-based UUID"),  # version 4
        ("case-ca159fd0ea8b11f18b6402fc00000001", "a random or time-based UUID"),  # version 1
        ("01ARZ3NDEKTSV4RRFFQ69G5FAV", "a ULID"),
        ("run-2024-05-01T12:30:00", "a date and time"),
        ("case-1714566600", "a Unix timestamp"),
    ],
)
def test_an_id_that_looks_generated_per_run_is_refused(tmp_path, case_id, kind):
    message = refused(tmp_path / "o.jsonl", {"id": case_id, **CASE})
    assert message.startswith(
        f"{tmp_path / 'o.jsonl'}:1: id: '{case_id}' looks generated per run ({kind})"
    )
    assert "leave id out to derive one from the query" in message


@pytest.mark.parametrize(
    "case_id", ["refund-2024-05-01", str(uuid.uuid5(uuid.NAMESPACE_URL, "q")), "faq-17"]
)
def test_stable_looking_ids_are_fine(tmp_path, case_id):
    with DatasetWriter(tmp_path / "o.jsonl") as writer:
        assert writer.add(id=case_id, **CASE) == case_id


def test_generated_ids_are_allowed_when_asked(tmp_path):
    case_id = str(uuid.uuid4())
    with DatasetWriter(tmp_path / "o.jsonl", check_ids=False) as writer:
        writer.add(id=case_id, **CASE)
    assert load_dataset(tmp_path / "o.jsonl")[0].id == case_id


def test_an_id_that_changed_for_the_same_query_since_the_last_run_is_refused(tmp_path):
    path = tmp_path / "rag_outputs.jsonl"
    with DatasetWriter(path) as writer:
        writer.add(id="refund", **CASE)
    message = refused(path, {"id": "refund-window", **CASE})
    assert message == (
        f"{path}:1: id: 'refund-window' is new for this query, which had the id 'refund' in the "
        "rag_outputs.jsonl this run replaces; ids must stay the same from run to run, or the "
        "baseline loses the case (if you renamed it on purpose, delete the old file first)"
    )
    with DatasetWriter(path) as writer:  # the same id again is fine
        writer.add(id="refund", **CASE)


def test_metadata_json_cannot_hold_is_refused(tmp_path):
    message = refused(tmp_path / "o.jsonl", {"id": "a", **CASE, "metadata": {"when": object()}})
    assert message.startswith(f"{tmp_path / 'o.jsonl'}:1: metadata: holds a value JSON cannot hold")


def test_a_number_id_is_refused_with_the_python_fix(tmp_path):
    message = refused(tmp_path / "o.jsonl", {"id": 7, **CASE})
    assert message == (
        f"{tmp_path / 'o.jsonl'}:1: id: must be a string (got number 7); pass str(...) if that "
        "value is the case's name"
    )


def test_no_case_writes_nothing(tmp_path):
    with (
        pytest.raises(DatasetError, match="no case was added, so nothing was written"),
        DatasetWriter(tmp_path / "o.jsonl"),
    ):
        pass
    assert list(tmp_path.iterdir()) == []


def test_the_example_producer_writes_a_dataset_the_gate_runs(tmp_path, no_api_key):
    script = REPO_ROOT / "examples/producer/produce.py"
    out = tmp_path / "rag_outputs.jsonl"
    env = {"PYTHONPATH": str(REPO_ROOT / "src"), "PATH": ""}
    for _ in range(2):  # a second run replaces the file with the same ids and bytes
        before = out.read_bytes() if out.exists() else None
        done = subprocess.run(
            [sys.executable, str(script), "--output", str(out)],
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout == f"wrote 9 cases to {out}\n"
        assert before is None or out.read_bytes() == before
    cases = load_dataset(out)
    assert [c.id for c in cases][:3] == ["refund-annual", "refund-monthly", "refund-timing"]
    assert all(c.context and c.response for c in cases)
    config = tmp_path / "ragaliq.yaml"
    config.write_text("dataset: rag_outputs.jsonl\njudge: {provider: offline, cache: false}\n")
    run = subprocess.run(
        [sys.executable, "-m", "ragaliq", "run", "--config", str(config)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert run.returncode in (0, 1), run.stderr
    assert "9 cases · 0 errors" in run.stdout


@pytest.mark.parametrize("response", ["", "  ", "\u200b"])
def test_a_case_without_an_answer_is_refused_with_the_writers_own_fix(tmp_path, response):
    path = tmp_path / "out.jsonl"
    message = refused(path, {**CASE, "response": response})
    assert message.startswith(f"{path}:1: response: missing or empty; ")
    assert "DatasetWriter(..., responses=False)" in message
    assert "enabled: false" not in message  # the writer reads no config
    assert not path.exists()


def test_retrieval_data_without_answers_is_written_when_the_writer_is_told_so(tmp_path):
    path = tmp_path / "retrieval.jsonl"
    with DatasetWriter(path, responses=False) as writer:
        writer.add(id="a", query="Refund window?", context=["14 days."], expected_facts=["14 days"])
        writer.add(id="b", query="Reset?", context=["Click reset."], response="Click reset.")
    assert json.loads(path.read_text(encoding="utf-8").splitlines()[0])["response"] == ""
    config = ragaliq.config.parse_config(
        "evaluators:\n  faithfulness: {enabled: false}\n  hallucination: {enabled: false}\n"
        "  relevance: {enabled: false}\n  context_recall: {}\n"
    )
    from ragaliq.evaluators import response_judged_by

    cases = load_dataset(path, response_judged_by=response_judged_by(config.evaluators))
    assert [(c.id, c.response) for c in cases] == [("a", ""), ("b", "Click reset.")]

"""Chunks with ids and sources, and what each case's retrieval should find, in every format."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from ragaliq import DatasetWriter
from ragaliq.dataset import load_dataset, read_dataset
from ragaliq.errors import DatasetError
from ragaliq.models import ChunkRef, Labels, TestCase
from tests.conftest import write_jsonl

CHUNKS = [
    {"id": "tide#1", "source": "tide-tables.md", "text": "High tide at the pier is at 06:40."},
    {"id": "tide#2", "source": "tide-tables.md", "text": "Low tide follows six hours later."},
    {"id": "ferry#1", "source": "ferry.md", "text": "The ferry leaves on the hour."},
]
ROW = {"id": "tide", "query": "When is high tide?", "context": CHUNKS, "response": "At 06:40."}


def problems(path: Path) -> str:
    with pytest.raises(DatasetError) as info:
        load_dataset(path)
    return str(info.value)


def test_chunk_objects_give_texts_to_the_judges_and_ids_and_sources_beside_them(tmp_path):
    (case,) = load_dataset(write_jsonl(tmp_path / "d.jsonl", [ROW]))
    assert case.context == tuple(c["text"] for c in CHUNKS)
    assert case.chunk_refs == (
        ChunkRef(id="tide#1", source="tide-tables.md"),
        ChunkRef(id="tide#2", source="tide-tables.md"),
        ChunkRef(id="ferry#1", source="ferry.md"),
    )


def test_plain_chunks_and_objects_mix_and_a_case_without_ids_is_as_before(tmp_path):
    mixed = {**ROW, "context": ["A plain chunk.", {"id": "x", "text": "An object."}]}
    plain = {**ROW, "id": "plain", "context": ["A plain chunk."]}
    first, second = load_dataset(write_jsonl(tmp_path / "d.jsonl", [mixed, plain]))
    assert first.chunk_refs == (ChunkRef(), ChunkRef(id="x"))
    assert second.chunk_refs == () and second.labels is None
    as_before = TestCase(
        id="plain", query=ROW["query"], context=("A plain chunk.",), response="At 06:40."
    )
    assert second.input_hash == as_before.input_hash


def test_labels_as_a_list_are_relevant_and_as_a_map_are_graded(tmp_path):
    rows = [
        {**ROW, "relevant_chunks": ["tide#1", "tide#9"]},
        {**ROW, "id": "b", "relevant_sources": {"tide-tables.md": 3, "ferry.md": 0}},
        {**ROW, "id": "c", "relevant_chunks": "tide#2"},
    ]
    first, second, third = load_dataset(write_jsonl(tmp_path / "d.jsonl", rows))
    assert first.labels == Labels(level="chunk", grades={"tide#1": 1, "tide#9": 1})
    assert second.labels == Labels(level="source", grades={"tide-tables.md": 3, "ferry.md": 0})
    assert second.labels.relevant == {"tide-tables.md": 3}
    assert third.labels == Labels(level="chunk", grades={"tide#2": 1})


def test_an_empty_label_list_is_read_as_labels_that_name_nothing(tmp_path):
    (case,) = load_dataset(write_jsonl(tmp_path / "d.jsonl", [{**ROW, "relevant_chunks": []}]))
    assert case.labels == Labels(level="chunk", grades={})


@pytest.mark.parametrize(
    ("field", "value", "problem"),
    [
        ("relevant_chunks", {"tide#1": 4}, "'tide#1': the relevance must be a whole number from 0"),
        ("relevant_chunks", {"tide#1": "2"}, "(got string '2')"),
        ("relevant_chunks", {"tide#1": True}, "(got boolean True)"),
        ("relevant_chunks", {"tide#1": 1.5}, "(got number 1.5)"),
        ("relevant_chunks", ["tide#1", 7], "id 1 must be a string (got number 7)"),
        ("relevant_chunks", ["tide#1", "tide#1"], "id 1 'tide#1' comes twice"),
        ("relevant_sources", ["  "], "id 0 must not be blank"),
        ("relevant_sources", ["a\nb"], "id 0 must be one line"),
        ("relevant_sources", ["x" * 201], "id 0 is over 200 characters"),
        ("relevant_sources", 3, "must be a list of ids, or a mapping from id to its relevance"),
    ],
)
def test_a_malformed_label_is_an_error_naming_the_field(tmp_path, field, value, problem):
    path = write_jsonl(tmp_path / "d.jsonl", [{**ROW, field: value}])
    message = problems(path)
    assert message.startswith(f"{path}:1: {field}: ")
    assert problem in message


@pytest.mark.parametrize(
    ("chunk", "problem"),
    [
        ({"id": "a"}, "context: chunk 0: text: missing required field"),
        ({"id": 12, "text": "t"}, "context: chunk 0: id: must be a string (got number 12)"),
        ({"id": "", "text": "t"}, "context: chunk 0: id: must not be blank"),
        ({"text": "t", "rank": 1}, "context: chunk 0: rank: unknown key 'rank'"),
    ],
)
def test_a_malformed_chunk_object_is_an_error(tmp_path, chunk, problem):
    path = write_jsonl(tmp_path / "d.jsonl", [{**ROW, "context": [chunk]}])
    assert f"{path}:1: {problem}" in problems(path)


def test_a_case_names_one_kind_of_label(tmp_path):
    row = {**ROW, "relevant_chunks": ["tide#1"], "relevant_sources": ["tide-tables.md"]}
    path = write_jsonl(tmp_path / "d.jsonl", [row])
    assert problems(path) == (
        f"{path}:1: relevant_chunks, relevant_sources: a case is scored on one kind of label; "
        "keep relevant_sources to judge by document (it survives a change of chunking), or "
        "relevant_chunks to judge by chunk"
    )


def test_ids_and_labels_enter_the_input_hash():
    base = TestCase(id="a", query="q?", context=("one", "two"), response="r")
    with_ids = base.model_copy(update={"chunk_refs": (ChunkRef(id="1"), ChunkRef(id="2"))})
    other_ids = base.model_copy(update={"chunk_refs": (ChunkRef(id="2"), ChunkRef(id="1"))})
    labelled = with_ids.model_copy(update={"labels": Labels(level="chunk", grades={"1": 1})})
    graded = with_ids.model_copy(update={"labels": Labels(level="chunk", grades={"1": 2})})
    hashes = {c.input_hash for c in (base, with_ids, other_ids, labelled, graded)}
    assert len(hashes) == 5
    two = Labels(level="chunk", grades={"1": 1, "2": 3})
    reordered = Labels(level="chunk", grades={"2": 3, "1": 1})
    assert (
        with_ids.model_copy(update={"labels": two}).input_hash
        == with_ids.model_copy(update={"labels": reordered}).input_hash
    )


def test_chunk_refs_must_match_the_context():
    with pytest.raises(ValueError, match="chunk_refs: 1 id for 2 chunks of context"):
        TestCase(id="a", query="q", context=("x", "y"), response="r", chunk_refs=(ChunkRef(),))


def test_ragas_ids_are_the_chunks_ids_and_its_reference_ids_the_labels(tmp_path):
    row = {
        "user_input": ROW["query"],
        "retrieved_contexts": [c["text"] for c in CHUNKS],
        "retrieved_context_ids": [c["id"] for c in CHUNKS],
        "reference_context_ids": ["tide#1"],
        "response": "At 06:40.",
    }
    (case,) = load_dataset(write_jsonl(tmp_path / "r.jsonl", [row]))
    assert [r.id for r in case.chunk_refs] == ["tide#1", "tide#2", "ferry#1"]
    assert case.labels == Labels(level="chunk", grades={"tide#1": 1})
    assert case.metadata == {}


def test_ragas_ids_must_be_one_per_chunk(tmp_path):
    row = {
        "user_input": ROW["query"],
        "retrieved_contexts": ["a", "b"],
        "retrieved_context_ids": ["1"],
        "response": "r",
    }
    path = write_jsonl(tmp_path / "r.jsonl", [row])
    assert problems(path) == (
        f"{path}:1: retrieved_context_ids: 1 id for 2 retrieved_contexts; give one id per "
        "retrieved chunk, in the same order"
    )


def test_csv_reads_chunk_objects_and_labels(tmp_path):
    path = tmp_path / "d.csv"
    context = json.dumps(CHUNKS[:2])
    with path.open("w", encoding="utf-8", newline="") as out:
        table = csv.writer(out)
        table.writerow(["id", "query", "context", "response", "relevant_sources"])
        table.writerow(["tide", ROW["query"], context, "At 06:40.", '{"tide-tables.md": 2}'])
        table.writerow(["b", "Ferry?", context, "Hourly.", "ferry.md"])
    first, second = load_dataset(path)
    assert first.chunk_refs[1] == ChunkRef(id="tide#2", source="tide-tables.md")
    assert first.labels == Labels(level="source", grades={"tide-tables.md": 2})
    assert second.labels == Labels(level="source", grades={"ferry.md": 1})


def test_yaml_reads_graded_labels(tmp_path):
    path = tmp_path / "d.yaml"
    path.write_text(
        "cases:\n"
        "  - id: tide\n"
        "    query: When is high tide?\n"
        "    response: At 06:40.\n"
        "    context:\n"
        "      - {id: tide#1, source: tides, text: High tide is at 06:40.}\n"
        "    relevant_chunks: {tide#1: 3}\n",
        encoding="utf-8",
    )
    (case,) = load_dataset(path)
    assert case.labels == Labels(level="chunk", grades={"tide#1": 3})
    assert case.chunk_refs == (ChunkRef(id="tide#1", source="tides"),)


def test_a_notice_names_labels_that_match_no_retrieved_chunk_in_any_case(tmp_path):
    rows = [
        {**ROW, "relevant_chunks": ["tide#1", "tide#old"]},
        {**ROW, "id": "b", "relevant_chunks": {"ferry#1": 2, "gone#4": 0}},
        {**ROW, "id": "c", "relevant_chunks": ["tide#2"], "context": ["no ids here"]},
    ]
    dataset = read_dataset(write_jsonl(tmp_path / "d.jsonl", rows))
    assert dataset.info.with_labels == 3
    assert dataset.info.unmatched_labels == 1
    assert dataset.info.notices[-1] == (
        "1 labelled id (such as 'tide#old') matches no retrieved chunk in any case: either the "
        "retrieval no longer brings it, or its chunk's id or text changed and the labels may no "
        "longer fit the chunking (against a baseline, the gate says which). Label by document "
        "with relevant_sources (it survives a re-chunking), or give the chunks the ids the "
        "labels name."
    )
    fitting = read_dataset(write_jsonl(tmp_path / "f.jsonl", rows[1:]))
    assert fitting.info.unmatched_labels == 0
    assert not any("labelled id" in n for n in fitting.info.notices)


def test_the_writer_writes_chunk_objects_and_labels_that_read_back(tmp_path):
    path = tmp_path / "out.jsonl"
    with DatasetWriter(path) as writer:
        writer.add(
            id="tide",
            query=ROW["query"],
            context=CHUNKS,
            response="At 06:40.",
            relevant_chunks={"tide#1": 3, "tide#2": 1},
        )
        writer.add(
            id="ferry",
            query="Ferry?",
            context=["Hourly."],
            response="Hourly.",
            relevant_sources=["ferry.md"],
        )
    tide, ferry = load_dataset(path)
    assert tide.chunk_refs[0] == ChunkRef(id="tide#1", source="tide-tables.md")
    assert tide.labels == Labels(level="chunk", grades={"tide#1": 3, "tide#2": 1})
    assert ferry.chunk_refs == ()
    assert ferry.labels == Labels(level="source", grades={"ferry.md": 1})
    written = json.loads(path.read_text(encoding="utf-8").splitlines()[0])
    assert written["context"][0] == CHUNKS[0] | {}
    assert written["relevant_chunks"] == {"tide#1": 3, "tide#2": 1}


def test_the_writer_refuses_a_malformed_label_at_the_line_that_made_it(tmp_path):
    writer = DatasetWriter(tmp_path / "out.jsonl")
    with pytest.raises(DatasetError, match=r"out.jsonl:1: relevant_chunks: id 0 must not be blank"):
        writer.add(query="q?", context=["c"], response="r", relevant_chunks=[" "])
    writer.abort()


def test_a_case_dumps_as_the_dataset_record_that_reads_back_as_it(tmp_path):
    (case,) = load_dataset(
        write_jsonl(tmp_path / "d.jsonl", [{**ROW, "relevant_chunks": {"tide#1": 2}}])
    )
    dumped = case.model_dump(mode="json")
    assert dumped["context"] == CHUNKS and dumped["relevant_chunks"] == {"tide#1": 2}
    (again,) = load_dataset(write_jsonl(tmp_path / "again.jsonl", [dumped]))
    assert again == case
    plain = TestCase(id="a", query="q", context=("c",), response="r")
    assert set(plain.model_dump()) == {
        "id",
        "query",
        "context",
        "response",
        "expected_answer",
        "expected_facts",
        "tags",
        "metadata",
    }


# --- a retrieval that found nothing -------------------------------------------------------------

NOTHING_FOUND = {"id": "tide", "query": "When is high tide?", "context": []}


@pytest.mark.parametrize(
    "row",
    [
        {**NOTHING_FOUND, "relevant_chunks": ["tide#1", "tide#2"]},
        {**NOTHING_FOUND, "relevant_sources": {"tide-tables.md": 2}},
        {
            "user_input": "When is high tide?",
            "retrieved_contexts": [],
            "reference_context_ids": ["tide#1"],
        },
    ],
)
def test_an_empty_context_with_labels_is_a_retrieval_that_found_nothing(tmp_path, row):
    (case,) = load_dataset(write_jsonl(tmp_path / "d.jsonl", [row]), response_judged_by=None)
    assert case.context == () and case.chunk_refs == () and case.response == ""
    assert case.labels is not None and case.labels.relevant


def test_an_empty_context_cell_with_labels_is_read_from_csv_too(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text(
        'id,query,context,response,relevant_chunks\ntide,When is high tide?,,,"[""tide#1""]"\n',
        encoding="utf-8",
    )
    (case,) = load_dataset(path, response_judged_by=None)
    assert case.context == () and case.labels == Labels(level="chunk", grades={"tide#1": 1})


def test_labels_without_any_context_written_are_still_a_case_the_system_never_ran(tmp_path):
    row = {"id": "tide", "query": "When is high tide?", "relevant_chunks": ["tide#1"]}
    path = write_jsonl(tmp_path / "d.jsonl", [row])
    with pytest.raises(DatasetError) as info:
        load_dataset(path, response_judged_by=None)
    assert str(info.value).startswith(f"{path}:1: response, context: both missing or empty")


def test_the_writer_writes_a_retrieval_that_found_nothing_and_it_reads_back(tmp_path):
    path = tmp_path / "out.jsonl"
    with DatasetWriter(path, responses=False) as writer:
        writer.add(id="tide", query="When is high tide?", context=[], relevant_sources=["tide.md"])
    (case,) = load_dataset(path, response_judged_by=None)
    assert case.context == () and case.labels == Labels(level="source", grades={"tide.md": 1})


# --- ids that look alike --------------------------------------------------------------------------

FIX = "write an id the same way wherever the case uses it, in its chunks and in its labels"


@pytest.mark.parametrize(
    ("label", "shown"),
    [
        ("tide#1 ", "'tide#1 '"),  # a trailing space
        ("\u200btide#1", "'\\u200btide#1'"),  # a zero-width space
        ("tide#1\u202e", "'tide#1\\u202e'"),  # a bidi override
        ("\ufb01rst", None),  # a compatibility ligature, against the chunk id "first"
    ],
)
def test_a_label_that_looks_like_a_chunk_id_but_differs_is_refused(tmp_path, label, shown):
    chunks = [*CHUNKS, {"id": "first", "text": "The first chunk."}]
    path = write_jsonl(
        tmp_path / "d.jsonl", [{**ROW, "context": chunks, "relevant_chunks": [label]}]
    )
    earlier, place = ("'first'", "at chunk 3") if shown is None else ("'tide#1'", "at chunk 0")
    assert problems(path) == (
        f"{path}:1: relevant_chunks: id {shown or repr(label)} looks the same as id {earlier} "
        f"{place}: they differ only by invisible, compatibility or surrounding space characters; "
        f"{FIX}"
    )


def test_two_chunk_ids_or_sources_that_look_alike_are_refused_and_a_plain_repeat_is_not(tmp_path):
    repeated = [*CHUNKS, CHUNKS[0]]
    (case,) = load_dataset(write_jsonl(tmp_path / "ok.jsonl", [{**ROW, "context": repeated}]))
    assert case.chunk_refs[3] == case.chunk_refs[0]
    lookalikes = [
        CHUNKS[0],
        {"id": "tide#1\u00a0", "source": "tide-tables.md", "text": "Again."},
        {"id": "x", "source": " ferry.md", "text": "Ferry."},
        {"id": "y", "source": "ferry.md", "text": "Ferry again."},
    ]
    path = write_jsonl(tmp_path / "d.jsonl", [{**ROW, "context": lookalikes}])
    assert problems(path).splitlines() == [
        f"{path}:1: context: chunk 1: id: id 'tide#1\\u00a0' looks the same as id 'tide#1' at "
        f"chunk 0: they differ only by invisible, compatibility or surrounding space characters; "
        f"{FIX}",
        f"{path}:1: context: chunk 3: source: id 'ferry.md' looks the same as id ' ferry.md' at "
        f"chunk 2: they differ only by invisible, compatibility or surrounding space characters; "
        f"{FIX}",
    ]


def test_two_labels_that_look_alike_are_refused_and_ragas_ids_are_named_by_their_field(tmp_path):
    path = write_jsonl(
        tmp_path / "d.jsonl", [{**ROW, "relevant_sources": {"faq.md": 1, "faq.md\u200b": 2}}]
    )
    assert problems(path) == (
        f"{path}:1: relevant_sources: id 'faq.md\\u200b' looks the same as id 'faq.md' in "
        "relevant_sources: they differ only by invisible, compatibility or surrounding space "
        f"characters; {FIX}"
    )
    sample = {
        "user_input": "q?",
        "response": "a",
        "retrieved_contexts": ["one", "two"],
        "retrieved_context_ids": ["c1", "c2"],
        "reference_context_ids": ["c2 "],
    }
    path = write_jsonl(tmp_path / "r.jsonl", [sample])
    assert problems(path).startswith(
        f"{path}:1: reference_context_ids: id 'c2 ' looks the same as id 'c2' at chunk 1: "
    )


# --- a key given twice --------------------------------------------------------------------------


def test_a_label_map_that_gives_an_id_twice_is_refused_in_json_lines_json_and_csv(tmp_path):
    twice = '{"tide#1": 1, "tide#2": 2, "tide#1": 3}'
    line = json.dumps(ROW)[:-1] + f', "relevant_chunks": {twice}}}'
    jsonl = tmp_path / "d.jsonl"
    jsonl.write_text(line + "\n", encoding="utf-8")
    said = "relevant_chunks: the id 'tide#1' is given twice; keep one, with the relevance it has"
    assert problems(jsonl) == f"{jsonl}:1: {said}"
    document = tmp_path / "d.json"
    document.write_text('{"cases": [\n' + line + "\n]}", encoding="utf-8")
    assert problems(document) == f"{document}:2: {said}"
    table = tmp_path / "d.csv"
    with table.open("w", encoding="utf-8", newline="") as out:
        csv.writer(out).writerows(
            [
                ["id", "query", "context", "response", "relevant_chunks"],
                ["t", "q?", "c", "r", twice],
            ]
        )
    assert problems(table) == f"{table}:2: {said}"


def test_a_yaml_label_map_that_gives_an_id_twice_is_refused_as_yaml_refuses_any_key(tmp_path):
    path = tmp_path / "d.yaml"
    path.write_text(
        "cases:\n  - id: t\n    query: q?\n    context: [c]\n    response: r\n"
        "    relevant_chunks: {a: 1, a: 2}\n",
        encoding="utf-8",
    )
    assert "the key 'a' is given twice; keep one" in problems(path)


def test_a_case_that_gives_a_field_twice_is_refused(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text(
        '{"id": "t", "query": "q?", "context": ["c"], "response": "r", "query": "other?"}\n',
        encoding="utf-8",
    )
    assert problems(path) == f"{path}:1: query: the key 'query' is given twice; keep one"

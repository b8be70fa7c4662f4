"""The datasets teams already have: RAGAS, DeepEval and CSV, read like RagaliQ's own JSONL."""

from __future__ import annotations

import csv
import hashlib
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragaliq.cli import cli
from ragaliq.config import parse_config
from ragaliq.dataset import DatasetReader, load_dataset, read_dataset
from ragaliq.errors import DatasetError
from ragaliq.text.plain import is_blank
from tests.conftest import REPO_ROOT, write_jsonl

QUICKSTART = REPO_ROOT / "examples/quickstart/rag_outputs.jsonl"


def derived(query: str, slug: str) -> str:
    return f"{slug}-{hashlib.sha256(query.encode()).hexdigest()[:8]}"


REFUND = "can-i-get-a-refund-on-my-annual"


def rows() -> list[dict]:
    return [json.loads(line) for line in QUICKSTART.read_text(encoding="utf-8").splitlines()]


def problems(path: Path, **kwargs) -> str:
    with pytest.raises(DatasetError) as info:
        load_dataset(path, **kwargs)
    return str(info.value)


def ragas(row: dict) -> dict:
    return {
        "user_input": row["query"],
        "retrieved_contexts": row["context"],
        "response": row["response"],
        "reference": "A reference answer.",
    }


def ragas_legacy(row: dict) -> dict:
    return {
        "question": row["query"],
        "contexts": row["context"],
        "answer": row["response"],
        "ground_truth": "A reference answer.",
    }


def deepeval(row: dict) -> dict:
    """As DeepEval's `save_as("json")` writes a test case: every field, null when unset."""
    return {
        "input": row["query"],
        "actual_output": row["response"],
        "expected_output": "A reference answer.",
        "retrieval_context": row["context"],
        "context": None,
        "name": None,
        "comments": None,
        "source_file": None,
        "tools_called": None,
        "expected_tools": None,
        "additional_metadata": {"source": "faq"},
        "custom_column_key_values": None,
    }


def write_csv(path: Path, header: list[str], table: list[list[str]]) -> Path:
    with path.open("w", encoding="utf-8", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(header)
        writer.writerows(table)
    return path


# --- each shape --------------------------------------------------------------------------------


def test_ragas_jsonl_maps_its_fields_and_derives_ids(tmp_path):
    path = write_jsonl(tmp_path / "ragas.jsonl", [ragas(r) for r in rows()[:2]])
    dataset = read_dataset(path)
    first = dataset.cases[0]
    assert (first.query, first.context, first.response) == (
        rows()[0]["query"],
        tuple(rows()[0]["context"]),
        rows()[0]["response"],
    )
    assert first.expected_answer == "A reference answer."
    assert first.id == derived(first.query, REFUND)
    assert dataset.info.description == "JSON Lines, RAGAS fields"
    assert dataset.info.notices == (
        f"The dataset {path} was read as JSON Lines with RAGAS fields (user_input → query, "
        "retrieved_contexts → context, reference → expected_answer), detected from its name "
        "and fields.",
        "Its cases have no id, so each got one derived from its query (such as "
        f"'{first.id}'); the baseline matches cases by id, so a "
        "case whose query changes counts as a new case. Give each case an id to keep it matched.",
    )


def test_derived_ids_are_stable_and_a_repeated_query_gets_a_suffix(tmp_path):
    case = ragas(rows()[0])
    path = write_jsonl(tmp_path / "ragas.jsonl", [case, {**case, "response": "Other."}, case])
    ids = [c.id for c in load_dataset(path)]
    base = derived(case["user_input"], REFUND)
    assert ids == [base, f"{base}-2", f"{base}-3"]
    assert [c.id for c in load_dataset(path)] == ids


def test_an_id_given_in_a_ragas_row_is_kept(tmp_path):
    path = write_jsonl(tmp_path / "ragas.jsonl", [{**ragas(rows()[0]), "id": "refund"}])
    dataset = read_dataset(path)
    assert dataset.cases[0].id == "refund"
    assert len(dataset.info.notices) == 1  # the shape; no derived ids


def test_ragas_names_from_before_0_2(tmp_path):
    path = tmp_path / "ragas.json"
    path.write_text(json.dumps([ragas_legacy(r) for r in rows()[:3]], indent=2), "utf-8")
    dataset = read_dataset(path)
    assert dataset.info.shape == "RAGAS (names before 0.2)"
    assert [c.response for c in dataset.cases] == [r["response"] for r in rows()[:3]]
    assert dataset.cases[0].expected_answer == "A reference answer."


def test_ragas_fields_without_a_place_in_a_case_are_kept_in_metadata(tmp_path):
    row = {**ragas(rows()[0]), "reference_contexts": ["ideal"], "synthesizer_name": "single_hop"}
    (case,) = load_dataset(write_jsonl(tmp_path / "r.jsonl", [row]))
    assert case.metadata == {"reference_contexts": ["ideal"], "synthesizer_name": "single_hop"}


def test_deepeval_json_as_save_as_writes_it(tmp_path):
    path = tmp_path / "deepeval.json"
    path.write_text(json.dumps([deepeval(r) for r in rows()[:2]], indent=4), "utf-8")
    dataset = read_dataset(path)
    case = dataset.cases[0]
    assert case.query == rows()[0]["query"]
    assert case.response == rows()[0]["response"]
    assert case.context == tuple(rows()[0]["context"])
    assert case.expected_answer == "A reference answer."
    assert case.metadata == {"source": "faq"}
    assert dataset.info.description == "JSON, DeepEval fields"


def test_deepeval_context_joined_with_a_bar_is_split(tmp_path):
    row = {**deepeval(rows()[0]), "retrieval_context": "first chunk|second chunk"}
    (case,) = load_dataset(write_jsonl(tmp_path / "d.jsonl", [row]))
    assert case.context == ("first chunk", "second chunk")


def test_a_deepeval_golden_without_output_names_its_field(tmp_path):
    row = {**deepeval(rows()[0]), "actual_output": None}
    path = write_jsonl(tmp_path / "d.jsonl", [row])
    assert problems(path) == (
        f"{path}:1: actual_output: missing or empty; faithfulness, hallucination and relevance "
        "judge the RAG system's answer, so write it here (for retrieval data without answers, "
        "turn them off with enabled: false and judge context_precision or context_recall)"
    )


def test_expected_facts_are_read(tmp_path):
    row = {**rows()[0], "expected_facts": ["Refunds take 14 days.", "Annual plans only."]}
    (case,) = load_dataset(write_jsonl(tmp_path / "d.jsonl", [row]))
    assert case.expected_facts == ("Refunds take 14 days.", "Annual plans only.")


def test_a_blank_expected_fact_is_refused(tmp_path):
    path = write_jsonl(tmp_path / "d.jsonl", [{**rows()[0], "expected_facts": ["ok", " "]}])
    assert problems(path) == (
        f"{path}:1: expected_facts: fact 1 is blank; remove it or write the statement"
    )


def test_an_unknown_field_suggests_metadata(tmp_path):
    path = write_jsonl(tmp_path / "d.jsonl", [{**rows()[0], "retriever": "bm25"}])
    assert problems(path) == (
        f"{path}:1: retriever: unknown key 'retriever'; valid keys are context, expected_answer, "
        "expected_facts, id, metadata, query, relevant_chunks, relevant_sources, response, tags; "
        "keep data of your own under "
        "'metadata'"
    )


def test_a_misspelt_field_suggests_the_field(tmp_path):
    row = {k: v for k, v in rows()[0].items() if k != "response"}
    path = write_jsonl(tmp_path / "d.jsonl", [{**row, "respons": "x"}])
    assert f"{path}:1: respons: unknown key 'respons'; did you mean 'response'?" in problems(path)


def test_a_field_error_names_the_field_as_the_file_writes_it(tmp_path):
    path = write_jsonl(tmp_path / "d.jsonl", [{**ragas(rows()[0]), "user_input": 3}])
    assert problems(path) == f"{path}:1: user_input: must be a string (got number 3)"


def test_the_config_can_force_the_shape(tmp_path):
    path = write_jsonl(tmp_path / "d.jsonl", [ragas(rows()[0])])
    message = problems(path, dataset_format="deepeval")
    assert f"{path}:1: input: missing required field" in message
    assert "unknown key 'user_input'" in message


def test_dataset_format_is_a_config_field():
    assert parse_config("dataset_format: ragas\n").dataset_format == "ragas"
    with pytest.raises(Exception, match="dataset_format: must be one of"):
        parse_config("dataset_format: langsmith\n")


# --- CSV ------------------------------------------------------------------------------------------


def test_csv_with_a_json_list_of_chunks(tmp_path):
    header = ["id", "query", "context", "response", "tags", "metadata.source"]
    table = [
        ["a", "How, exactly?", json.dumps(["chunk one", "chunk, two"]), "Answer.", "x", "faq"],
        ["b", "Q2", "just one chunk", "Answer 2.", '["x", "y"]', ""],
    ]
    dataset = read_dataset(write_csv(tmp_path / "cases.csv", header, table))
    a, b = dataset.cases
    assert a.context == ("chunk one", "chunk, two")
    assert a.tags == ("x",)
    assert a.metadata == {"source": "faq"}
    assert b.context == ("just one chunk",)
    assert b.tags == ("x", "y")
    assert b.metadata == {}
    assert dataset.info.description == "CSV"


def test_csv_with_numbered_context_columns_and_a_cell_over_several_lines(tmp_path):
    header = ["id", "query", "context_1", "context_2", "context_10", "response"]
    table = [
        ["a", "q", "first", "second\nline", "tenth", "r"],
        ["b", "q", "", "", "", "r"],
    ]
    path = write_csv(tmp_path / "cases.csv", header, table)
    reader = DatasetReader(path)
    cases = list(reader)
    assert [line for line, _ in cases] == [2, 4]
    assert cases[0][1].context == ("first", "second\nline", "tenth")
    assert cases[1][1].context == ()


def test_csv_without_an_id_column_derives_ids(tmp_path):
    path = write_csv(tmp_path / "c.csv", ["query", "context", "response"], [["Q?", "c", "r"]])
    dataset = read_dataset(path)
    assert dataset.cases[0].id == derived("Q?", "q")
    assert dataset.info.derived_ids == 1


def test_csv_with_ragas_columns_as_pandas_writes_lists(tmp_path):
    header = ["user_input", "retrieved_contexts", "response", "reference"]
    path = write_csv(tmp_path / "r.csv", header, [["Q?", "['a', \"b's\"]", "R", ""]])
    (case,) = load_dataset(path)
    assert case.context == ("a", "b's")
    assert case.expected_answer is None


def test_csv_with_semicolons(tmp_path):
    path = tmp_path / "c.csv"
    path.write_text("id;query;context;response\na;q;c;r\n", encoding="utf-8")
    assert load_dataset(path)[0].context == ("c",)


def test_an_unknown_csv_column_is_reported_once(tmp_path):
    header = ["id", "query", "context", "response", "retriever"]
    path = write_csv(
        tmp_path / "c.csv", header, [[f"c{i}", "q", "c", "r", "bm25"] for i in range(5)]
    )
    assert problems(path) == (
        f"{path}:1: retriever: unknown column for RagaliQ fields; rename it metadata.retriever "
        "to keep it in the case's metadata"
    )


def test_a_csv_row_with_too_many_cells(tmp_path):
    path = tmp_path / "c.csv"
    path.write_text("id,query,context,response\na,q,c,r\nb,q,c,r,extra\n", encoding="utf-8")
    assert problems(path) == (
        f"{path}:3: the row has 5 cells and the header 4; quote cells that hold the delimiter, "
        'as in "a, b"'
    )


def test_a_csv_context_that_starts_like_a_list_but_is_not_one(tmp_path):
    path = write_csv(
        tmp_path / "c.csv", ["id", "query", "context", "response"], [["a", "q", "[oops", "r"]]
    )
    assert problems(path).startswith(f"{path}:2: context: starts with '[' but is not a JSON list")


def test_a_csv_given_to_the_jsonl_reader_says_what_it_is(tmp_path):
    path = tmp_path / "rag_outputs.jsonl"
    path.write_text("id,query,context,response\n" + "a,q,c,r\n" * 50, encoding="utf-8")
    assert problems(path) == (
        f"{path}:1: this looks like CSV (a header row: id, query, context, response), not JSON "
        "Lines; name the file .csv, or set dataset_format: csv in the config"
    )


def test_a_csv_named_jsonl_is_read_with_dataset_format_csv(tmp_path):
    path = tmp_path / "rag_outputs.jsonl"
    path.write_text("id,query,context,response\na,q,c,r\nb,q,c,r\n", encoding="utf-8")
    assert [c.id for c in load_dataset(path, dataset_format="csv")] == ["a", "b"]


def test_a_json_document_given_to_the_jsonl_reader_says_what_it_is(tmp_path):
    path = tmp_path / "rag_outputs.jsonl"
    path.write_text(json.dumps(rows()[:2], indent=2), encoding="utf-8")
    assert problems(path) == (
        f"{path}:1: this looks like one JSON document over several lines, not JSON Lines (one "
        "case per line); name the file .json, or write one case per line"
    )


# --- the same scores whatever the shape ---------------------------------------------------------


def _run(tmp_path: Path, dataset: Path, name: str) -> dict:
    config = tmp_path / f"{name}.yaml"
    config.write_text(
        f"dataset: {dataset.name}\njudge: {{provider: offline, cache: false}}\n", "utf-8"
    )
    out = tmp_path / f"{name}-report.json"
    result = CliRunner().invoke(cli, ["run", "--config", str(config), "-o", str(out)])
    assert result.exit_code in (0, 1), result.output
    return json.loads(out.read_text(encoding="utf-8"))


def _scores(report: dict) -> tuple[dict, dict]:
    summary = {name: s["score"] for name, s in report["summary"]["evaluators"].items()}
    # Matched by query: ids may be derived, and a reference answer is part of a case's input.
    per_case = {
        case["query"]: (case["status"], {n: r["score"] for n, r in case["results"].items()})
        for case in report["cases"]
    }
    return summary, per_case


def test_ragas_deepeval_and_csv_datasets_score_the_same_as_jsonl(tmp_path, no_api_key):
    source = rows()
    write_jsonl(tmp_path / "native.jsonl", source)
    write_jsonl(tmp_path / "ragas.jsonl", [ragas(r) for r in source])
    (tmp_path / "deepeval.json").write_text(json.dumps([deepeval(r) for r in source]), "utf-8")
    write_csv(
        tmp_path / "cases.csv",
        ["id", "query", "context", "response"],
        [[r["id"], r["query"], json.dumps(r["context"]), r["response"]] for r in source],
    )
    expected = _scores(_run(tmp_path, tmp_path / "native.jsonl", "native"))
    assert len(expected[1]) == len(source)
    for name in ("ragas.jsonl", "deepeval.json", "cases.csv"):
        assert _scores(_run(tmp_path, tmp_path / name, name.split(".")[0])) == expected, name


def test_the_run_says_how_the_dataset_was_read(tmp_path, no_api_key):
    write_jsonl(tmp_path / "ragas.jsonl", [ragas(r) for r in rows()[:2]])
    config = tmp_path / "ragaliq.yaml"
    config.write_text("dataset: ragas.jsonl\njudge: {provider: offline, cache: false}\n", "utf-8")
    for command in ("run", "validate"):
        result = CliRunner().invoke(cli, [command, "--config", str(config)])
        assert "notice: The dataset" in result.output, result.output
        assert "with RAGAS fields" in result.output
        assert "have no id, so each got one derived from its query" in result.output


# --- empty and missing fields, in every shape ---------------------------------------------------

GOLDEN_HEADER = [
    "input",
    "actual_output",
    "expected_output",
    "retrieval_context",
    "context",
    "name",
    "comments",
    "source_file",
    "tools_called",
    "expected_tools",
    "additional_metadata",
    "custom_column_key_values",
]
"""The columns DeepEval's `save_as("csv")` writes."""
UNANSWERED = (
    "actual_output, retrieval_context: both missing or empty, so the case holds nothing your RAG "
    "system produced (a DeepEval golden or a RAGAS sample before the system answered it); run the "
    "system on it and write its answer as actual_output and the chunks it retrieved as "
    "retrieval_context"
)


def test_deepeval_goldens_are_refused_alike_as_csv_and_as_json(tmp_path):
    golden = {**deepeval(rows()[0]), "actual_output": None, "retrieval_context": None}
    golden["context"] = ["The ideal context."]
    as_json = tmp_path / "goldens.json"
    as_json.write_text(json.dumps([golden]), "utf-8")
    cells = ["" if golden[c] is None else golden[c] for c in GOLDEN_HEADER]
    cells[GOLDEN_HEADER.index("context")] = "The ideal context."
    cells[GOLDEN_HEADER.index("additional_metadata")] = json.dumps(golden["additional_metadata"])
    as_csv = write_csv(tmp_path / "goldens.csv", GOLDEN_HEADER, [cells])
    assert problems(as_json) == f"{as_json}:1: {UNANSWERED}"
    assert problems(as_csv) == f"{as_csv}:2: {UNANSWERED}"
    # Also when only retrieval is judged: a golden holds no retrieval either.
    assert problems(as_csv, response_judged_by=None) == f"{as_csv}:2: {UNANSWERED}"


@pytest.mark.parametrize("response", ["", "  \n", None, "\u200b"])
def test_a_case_without_a_response_is_refused_while_an_evaluator_judges_one(tmp_path, response):
    path = write_jsonl(tmp_path / "d.jsonl", [{**rows()[0], "response": response}])
    assert problems(path, response_judged_by="faithfulness and relevance") == (
        f"{path}:1: response: missing or empty; faithfulness and relevance judge the RAG "
        "system's answer, so write it here (for retrieval data without answers, turn them off "
        "with enabled: false and judge context_precision or context_recall)"
    )
    dataset = read_dataset(path, response_judged_by=None)
    assert is_blank(dataset.cases[0].response)
    assert dataset.info.no_response == 1
    assert any("has no response (the first on line 1)" in n for n in dataset.info.notices)


@pytest.mark.parametrize(
    ("shape", "field"), [(None, "query"), (ragas, "user_input"), (deepeval, "input")]
)
@pytest.mark.parametrize("query", ["", "   ", "\u200b", " \u2060\ufeff"])
def test_a_blank_query_is_refused_in_every_shape(tmp_path, shape, field, query):
    row = {**rows()[0], "query": query}
    path = write_jsonl(tmp_path / "d.jsonl", [shape(row) if shape else row])
    assert problems(path) == (
        f"{path}:1: {field}: is blank; give the question the RAG system was asked"
    )
    table = write_csv(tmp_path / "d.csv", ["query", "context", "response"], [[query, "c", "r"]])
    assert "query: is blank" in problems(table)


def ragas_context_recall(row: dict) -> dict:
    """A RAGAS context-recall sample: the question, what retrieval brought, the reference."""
    return {
        "user_input": row["query"],
        "retrieved_contexts": row["context"],
        "reference": row["response"],
    }


def test_retrieval_data_without_responses_is_judged_by_the_retrieval_evaluators(
    tmp_path, no_api_key
):
    write_jsonl(tmp_path / "recall.jsonl", [ragas_context_recall(r) for r in rows()[:3]])
    config = tmp_path / "ragaliq.yaml"
    config.write_text(
        "dataset: recall.jsonl\njudge: {provider: offline, cache: false}\n"
        "evaluators:\n  faithfulness: {enabled: false}\n  hallucination: {enabled: false}\n"
        "  relevance: {enabled: false}\n  context_recall: {}\n  context_precision: {}\n",
        "utf-8",
    )
    validated = CliRunner().invoke(cli, ["validate", "--config", str(config)])
    assert validated.exit_code == 0, validated.output
    assert "notice: Its cases have no response (the first on line 1)" in validated.stderr
    report = tmp_path / "report.json"
    ran = CliRunner().invoke(cli, ["run", "--config", str(config), "-o", str(report)])
    assert ran.exit_code in (0, 1), ran.output
    summary = json.loads(report.read_text("utf-8"))["summary"]
    assert summary["errors"] == 0
    assert summary["evaluators"]["context_recall"]["judged"] == 3
    assert summary["evaluators"]["context_precision"]["judged"] == 3
    # The same file with the default evaluators: refused, saying why and what to do.
    config.write_text("dataset: recall.jsonl\njudge: {provider: offline}\n", "utf-8")
    refused = CliRunner().invoke(cli, ["validate", "--config", str(config)])
    assert refused.exit_code == 2
    assert "recall.jsonl:1: response: missing or empty; faithfulness, hallucination and " in (
        refused.stderr
    )


def test_deepeval_llmtestcase_model_dump_is_read_with_every_field(tmp_path):
    row = rows()[0]
    dumped = {  # LLMTestCase(...).model_dump(): every field, null when unset
        "input": row["query"],
        "actual_output": row["response"],
        "expected_output": None,
        "context": None,
        "retrieval_context": row["context"],
        "metadata": None,
        "tools_called": None,
        "comments": None,
        "expected_tools": None,
        "token_cost": 0.002,
        "completion_time": 1.5,
        "multimodal": False,
        "name": None,
        "tags": None,
        "mcp_servers": None,
        "mcp_tools_called": None,
        "mcp_resources_called": None,
        "mcp_prompts_called": None,
        "custom_column_key_values": None,
    }
    (case,) = load_dataset(write_jsonl(tmp_path / "d.jsonl", [dumped]))
    assert case.response == row["response"] and case.context == tuple(row["context"])
    assert case.tags == ()
    assert case.metadata == {"token_cost": 0.002, "completion_time": 1.5}


def test_deepeval_camel_case_as_model_dump_by_alias_writes_it(tmp_path):
    row = rows()[0]
    dumped = {
        "input": row["query"],
        "actualOutput": row["response"],
        "expectedOutput": "A reference answer.",
        "retrievalContext": row["context"],
        "toolsCalled": None,
        "tokenCost": None,
        "customColumnKeyValues": None,
        "metadata": {"source": "faq"},
    }
    dataset = read_dataset(write_jsonl(tmp_path / "d.jsonl", [dumped]))
    (case,) = dataset.cases
    assert dataset.info.shape == "DeepEval"
    assert case.response == row["response"] and case.context == tuple(row["context"])
    assert case.expected_answer == "A reference answer."
    assert case.metadata == {"source": "faq"}
    wrong = write_jsonl(tmp_path / "w.jsonl", [{**dumped, "actualOutput": 3}])
    assert problems(wrong) == f"{wrong}:1: actualOutput: must be a string (got number 3)"


def test_deepeval_context_without_retrieval_context_says_what_deepevals_context_is(tmp_path):
    row = {**deepeval(rows()[0]), "context": ["The ideal context."]}
    del row["retrieval_context"]
    path = write_jsonl(tmp_path / "d.jsonl", [row])
    assert problems(path) == (
        f"{path}:1: retrieval_context: missing required field; DeepEval's context is the ideal "
        "context (what retrieval should have found, kept in metadata), not what it found: write "
        "the chunks your retrieval returned as retrieval_context ([] when it found none)"
    )
    null = write_jsonl(tmp_path / "n.jsonl", [{**row, "context": None, "retrieval_context": None}])
    assert problems(null).endswith(
        "retrieval_context: must be a string or a list of chunks (got null); give the chunks "
        "your retrieval returned ([] when it found none)"
    )


def test_deepevals_source_marker_is_taken_off_the_chunk_and_its_source_kept(tmp_path):
    marked = [
        "deepeval_source=docs/refunds.md,deepeval_context=Annual plans can be refunded.",
        "A plain chunk.",
    ]
    row = {**deepeval(rows()[0]), "retrieval_context": marked}
    (case,) = load_dataset(write_jsonl(tmp_path / "d.jsonl", [row]))
    assert case.context == ("Annual plans can be refunded.", "A plain chunk.")
    assert case.metadata["retrieval_context_sources"] == ["docs/refunds.md", None]
    cells = [row["input"], row["actual_output"], "|".join(marked)]
    table = write_csv(tmp_path / "d.csv", ["input", "actual_output", "retrieval_context"], [cells])
    (from_csv,) = load_dataset(table)
    assert from_csv.context == case.context


# The dumps the current releases write of one case, every field included: DeepEval 4.3.1's
# `LLMTestCase.model_dump(mode="json")` (and with `by_alias=True`), RAGAS 0.4.3's
# `SingleTurnSample.model_dump(mode="json")` (`EvaluationDataset.to_jsonl` leaves the nulls out).
DEEPEVAL_4_3_DUMP = {
    "input": "How long do I have to return a bike?",
    "actual_output": "Within 30 days.",
    "expected_output": "30 days.",
    "context": ["Returns: 30 days."],
    "retrieval_context": ["Unused bikes may be returned within 30 days."],
    "metadata": None,
    "tools_called": None,
    "comments": None,
    "expected_tools": None,
    "token_cost": None,
    "input_token_count": None,
    "output_token_count": None,
    "completion_time": None,
    "flaky": False,
    "multimodal": False,
    "name": None,
    "tags": None,
    "mcp_servers": None,
    "mcp_tools_called": None,
    "mcp_resources_called": None,
    "mcp_prompts_called": None,
    "custom_column_key_values": None,
    "expectations": None,
    "expected_labels": None,
}
DEEPEVAL_4_3_DUMP_BY_ALIAS = {
    "input": "How long do I have to return a bike?",
    "actualOutput": "Within 30 days.",
    "expectedOutput": "30 days.",
    "context": ["Returns: 30 days."],
    "retrievalContext": ["Unused bikes may be returned within 30 days."],
    "metadata": None,
    "toolsCalled": None,
    "comments": None,
    "expectedTools": None,
    "tokenCost": None,
    "inputTokenCount": None,
    "outputTokenCount": None,
    "completionTime": None,
    "flaky": False,
    "multimodal": False,
    "name": None,
    "tags": None,
    "mcp_servers": None,
    "mcpToolsCalled": None,
    "mcpResourcesCalled": None,
    "mcpPromptsCalled": None,
    "customColumnKeyValues": None,
    "expectations": None,
    "expectedLabels": None,
}
RAGAS_0_4_DUMP = {
    "user_input": "How long do I have to return a bike?",
    "retrieved_contexts": ["Unused bikes may be returned within 30 days."],
    "reference_contexts": None,
    "retrieved_context_ids": None,
    "reference_context_ids": None,
    "response": "Within 30 days.",
    "multi_responses": None,
    "reference": "30 days.",
    "rubrics": None,
    "persona_name": None,
    "query_style": None,
    "query_length": None,
}


@pytest.mark.parametrize(
    ("dump", "shape"),
    [
        (DEEPEVAL_4_3_DUMP, "DeepEval"),
        (DEEPEVAL_4_3_DUMP_BY_ALIAS, "DeepEval"),
        (RAGAS_0_4_DUMP, "RAGAS"),
        ({k: v for k, v in RAGAS_0_4_DUMP.items() if v is not None}, "RAGAS"),
    ],
)
def test_every_field_the_current_releases_dump_is_read(tmp_path, dump, shape):
    path = tmp_path / "dump.jsonl"
    path.write_text(json.dumps(dump) + "\n", encoding="utf-8")
    dataset = read_dataset(path)
    assert shape in dataset.info.description
    (case,) = dataset.cases
    assert case.query == "How long do I have to return a bike?"
    assert case.context == ("Unused bikes may be returned within 30 days.",)
    assert case.response == "Within 30 days."
    assert case.expected_answer == "30 days."
    if shape == "DeepEval":
        assert case.metadata["context"] == ["Returns: 30 days."]

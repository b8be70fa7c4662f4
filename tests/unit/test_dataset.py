from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragaliq.dataset import MAX_FIELD_CHARS, load_dataset
from ragaliq.errors import DatasetError
from tests.conftest import write_jsonl

GOOD = {"id": "a", "query": "q?", "context": ["c1", "c2"], "response": "r."}


def problems(path: Path) -> str:
    with pytest.raises(DatasetError) as info:
        load_dataset(path)
    return str(info.value)


def test_jsonl_loads_cases(tmp_path):
    path = write_jsonl(tmp_path / "d.jsonl", [GOOD, {**GOOD, "id": "b", "tags": ["x"]}])
    cases = load_dataset(path)
    assert [c.id for c in cases] == ["a", "b"]
    assert cases[0].context == ("c1", "c2")
    assert cases[1].tags == ("x",)


def test_a_string_context_is_one_chunk(tmp_path):
    path = write_jsonl(tmp_path / "d.jsonl", [{**GOOD, "context": "one chunk. two sentences."}])
    assert load_dataset(path)[0].context == ("one chunk. two sentences.",)


def test_blank_lines_are_skipped_and_numbers_stay_true(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text(json.dumps(GOOD) + "\n\n" + json.dumps({"id": "b"}) + "\n", encoding="utf-8")
    message = problems(path)
    assert message.startswith(f"{path}:3: query: missing required field")


MISSING_RESPONSE = (
    "response: missing or empty; faithfulness, hallucination and relevance judge the RAG "
    "system's answer, so write it here (for retrieval data without answers, turn them off with "
    "enabled: false and judge context_precision or context_recall)"
)


def test_missing_field(tmp_path):
    path = write_jsonl(tmp_path / "d.jsonl", [{"id": "a", "query": "q", "response": "r"}])
    assert problems(path) == f"{path}:1: context: missing required field"
    path = write_jsonl(tmp_path / "d.jsonl", [{"id": "a", "query": "q", "context": ["c"]}])
    assert problems(path) == f"{path}:1: {MISSING_RESPONSE}"


def test_wrong_type(tmp_path):
    path = write_jsonl(tmp_path / "d.jsonl", [GOOD, {**GOOD, "id": "b", "response": 42}])
    assert problems(path) == f"{path}:2: response: must be a string (got number 42)"


def test_wrong_context_type(tmp_path):
    path = write_jsonl(tmp_path / "d.jsonl", [{**GOOD, "context": {"a": 1}}])
    assert "context: must be a string or a list of chunks (got mapping)" in problems(path)


def test_wrong_chunk_type(tmp_path):
    path = write_jsonl(tmp_path / "d.jsonl", [{**GOOD, "context": ["ok", 3]}])
    assert (
        "context: chunk 1 must be a string, or an object with text (and an id or a source) "
        "(got number 3)"
    ) in problems(path)


def test_duplicate_ids(tmp_path):
    path = write_jsonl(tmp_path / "d.jsonl", [GOOD, {**GOOD, "id": "b"}, GOOD])
    message = problems(path)
    assert message.startswith(f"{path}:3: id: duplicate id 'a' (first used on line 1)")


def test_empty_dataset(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text("\n\n", encoding="utf-8")
    assert "the dataset has no cases" in problems(path)


def test_non_utf8(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_bytes(json.dumps(GOOD).encode() + b"\n" + b'{"id": "caf\xe9"}\n')
    message = problems(path)
    assert message.startswith(f"{path}:2: not UTF-8 text (byte 0xe9")
    assert "re-save the file as UTF-8" in message


def test_invalid_json_line(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text(json.dumps(GOOD) + "\n{not json\n", encoding="utf-8")
    assert problems(path).startswith(f"{path}:2: invalid JSON")


def test_oversized_field(tmp_path):
    big = "x" * (MAX_FIELD_CHARS["response"] + 1)
    path = write_jsonl(tmp_path / "d.jsonl", [{**GOOD, "response": big}])
    assert problems(path) == (
        f"{path}:1: response: 100,001 characters is over the limit of 100,000; "
        "shorten it or split the case"
    )


def test_unknown_field_suggests(tmp_path):
    path = write_jsonl(tmp_path / "d.jsonl", [{**GOOD, "contexts": ["x"]}])
    assert "contexts: unknown key 'contexts'; did you mean 'context'?" in problems(path)


def test_a_case_must_be_an_object(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text('["a", "b"]\n', encoding="utf-8")
    assert "a case must be an object (got list)" in problems(path)


def test_every_problem_is_reported_before_anything_is_judged(tmp_path):
    rows = [{"id": "a"}, {**GOOD, "id": "b", "query": 1}, GOOD, GOOD]
    message = problems(write_jsonl(tmp_path / "d.jsonl", rows))
    assert ":1:" in message
    assert ":2:" in message
    assert ":4: id: duplicate" in message


def test_missing_file(tmp_path):
    assert "not found" in problems(tmp_path / "nope.jsonl")


def test_json_with_cases_list_and_line_numbers(tmp_path):
    path = tmp_path / "d.json"
    path.write_text(
        '{\n  "version": 1,\n  "cases": [\n    {"id": "a", "query": "q", "context": [], '
        '"response": "r"},\n    {"id": "b", "query": "q", "context": ["c"]}\n  ]\n}\n',
        encoding="utf-8",
    )
    assert problems(path) == f"{path}:5: {MISSING_RESPONSE}"


def test_json_list(tmp_path):
    path = tmp_path / "d.json"
    path.write_text(json.dumps([GOOD, {**GOOD, "id": "b"}], indent=2), encoding="utf-8")
    assert [c.id for c in load_dataset(path)] == ["a", "b"]


def test_yaml_with_line_numbers(tmp_path):
    path = tmp_path / "d.yaml"
    path.write_text(
        "cases:\n"
        "  - id: a\n    query: q\n    context: c\n    response: r\n"
        "  - id: b\n    query: q\n    context: [x]\n    response: 7\n",
        encoding="utf-8",
    )
    assert problems(path) == f"{path}:6: response: must be a string (got number 7)"


def test_a_number_id_is_refused_with_the_fix(tmp_path):
    path = write_jsonl(tmp_path / "d.jsonl", [{**GOOD, "id": 7}])
    assert problems(path) == (
        f"{path}:1: id: must be a string (got number 7); put the id in quotes so that it is "
        "read as written"
    )


def test_input_hash_is_stable_and_content_sensitive(tmp_path):
    path = write_jsonl(tmp_path / "d.jsonl", [GOOD, {**GOOD, "id": "b", "response": "other."}])
    a, b = load_dataset(path)
    assert a.input_hash == load_dataset(path)[0].input_hash
    assert a.input_hash != b.input_hash


def test_a_line_separator_inside_a_string_does_not_end_the_line(tmp_path):
    row = {**GOOD, "response": "first\u2028second\u2029third\x85fourth."}
    path = tmp_path / "d.jsonl"
    path.write_text(
        "\r\n".join(json.dumps({**row, "id": i}, ensure_ascii=False) for i in "ab") + "\r\n",
        encoding="utf-8",
    )
    cases = load_dataset(path)
    assert [c.id for c in cases] == ["a", "b"]
    assert cases[0].response == row["response"]


def test_a_lone_surrogate_escape_is_reported_at_its_line(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text(
        json.dumps(GOOD) + "\n" + json.dumps({**GOOD, "id": "b"}).replace("q?", "q\\ud800"),
        encoding="utf-8",
    )
    assert f"{path}:2: invalid JSON: has an unpaired surrogate escape" in problems(path)


@pytest.mark.parametrize("suffix", [".jsonl", ".json", ".yaml"])
def test_nesting_too_deep_for_the_parser_is_a_clear_error(tmp_path, suffix):
    path = tmp_path / f"d{suffix}"
    path.write_text("[" * 100_000 + "\n", encoding="utf-8")
    assert "nested too deeply to read" in problems(path)


def test_an_integer_too_long_to_convert_is_a_clear_error(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text(json.dumps(GOOD).replace('"a"', "9" * 5000, 1) + "\n", encoding="utf-8")
    assert f"{path}:1: invalid JSON: Exceeds the limit" in problems(path)


@pytest.mark.parametrize(
    ("case_id", "expected"),
    [("   ", "must not be blank"), ("a\nb", "must be one line"), ("a\tb", "must be one line")],
)
def test_a_case_id_is_one_visible_line(tmp_path, case_id, expected):
    path = write_jsonl(tmp_path / "d.jsonl", [{**GOOD, "id": case_id}])
    assert f"{path}:1: id: {expected}" in problems(path)


def test_a_yaml_case_with_a_key_given_twice_is_reported(tmp_path):
    path = tmp_path / "d.yaml"
    path.write_text("- id: a\n  query: q\n  query: r\n  context: [c]\n  response: s\n", "utf-8")
    assert f"{path}:3: invalid YAML: the key 'query' is given twice" in problems(path)


def test_old_mac_line_endings_separate_lines(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text(json.dumps(GOOD) + "\r" + json.dumps({**GOOD, "id": "b"}) + "\r", "utf-8")
    assert [c.id for c in load_dataset(path)] == ["a", "b"]


@pytest.mark.parametrize("separator", ["\u2028", "\u0085"])
def test_a_case_id_has_no_line_separators(tmp_path, separator):
    path = write_jsonl(tmp_path / "d.jsonl", [{**GOOD, "id": f"a{separator}b"}])
    assert f"{path}:1: id: must be one line" in problems(path)


def test_dataset_cases_are_read_again_each_time_and_found_by_id(tmp_path):
    from ragaliq.dataset import DatasetCases

    path = tmp_path / "d.jsonl"
    rows = [
        {"id": f"c{i}", "query": f"q{i}?", "context": ["ctx"], "response": "r."} for i in range(6)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    cases = DatasetCases.read(path)
    assert len(cases) == 6
    assert [c.id for c in cases] == [c.id for c in cases] == [f"c{i}" for i in range(6)]
    odd = cases.where(lambda c: int(c.id[1:]) % 2 == 1)
    assert [c.id for c in odd] == ["c1", "c3", "c5"]
    assert len(odd) == 3
    find = cases.by_id()
    found = [find(i) for i in ("c1", "c3", "c0", "c5", "nope", "c2")]
    assert [c.id if c else None for c in found] == ["c1", "c3", "c0", "c5", None, "c2"]

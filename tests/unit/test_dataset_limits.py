"""Hostile and oversized inputs: each one clear line and exit 2, within bounded memory."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from ragaliq._yaml import MAX_ALIAS_VALUES, MAX_DEPTH, load_yaml
from ragaliq.config import MAX_CONFIG_BYTES, load_config, parse_config
from ragaliq.dataset import (
    MAX_DOCUMENT_BYTES,
    MAX_LINE_BYTES,
    MAX_STREAM_BYTES,
    MAX_YAML_BYTES,
    DatasetReader,
    load_dataset,
)
from ragaliq.errors import ConfigError, DatasetError
from tests.conftest import REPO_ROOT, write_jsonl

GOOD = {"id": "a", "query": "q?", "context": ["c1"], "response": "r."}
ONE_GIB = 1024**3

BILLION_LAUGHS = "\n".join(
    ['a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    + [
        f"{name}: &{name} [{', '.join(['*' + prev] * 9)}]"
        for prev, name in zip("abcdefgh", "bcdefghi", strict=True)
    ]
    + ["cases: *i", ""]
)


def problems(path: Path) -> str:
    with pytest.raises(DatasetError) as info:
        load_dataset(path)
    return str(info.value)


def validate_in_a_gib(tmp_path: Path, dataset: str) -> subprocess.CompletedProcess[str]:
    """`ragaliq validate` in a child whose address space is capped at 1 GiB."""
    config = tmp_path / "ragaliq.yaml"
    config.write_text("judge: {provider: offline}\n", encoding="utf-8")

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (ONE_GIB, ONE_GIB))

    command = ["validate", "--config", str(config), "--dataset", dataset]
    return subprocess.run(
        [sys.executable, "-m", "ragaliq", *command],
        capture_output=True,
        text=True,
        preexec_fn=cap,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT / "src")},
        timeout=120,
        check=False,
    )


def one_line_exit_2(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


# --- YAML aliases, nesting and value kinds -------------------------------------------------------


def test_a_billion_laughs_dataset_is_refused_at_its_alias_within_a_gib(tmp_path):
    path = tmp_path / "laughs.yaml"
    path.write_text(BILLION_LAUGHS, encoding="utf-8")
    line = one_line_exit_2(validate_in_a_gib(tmp_path, str(path)))
    assert line == (
        f"error: {path}:6: invalid YAML: aliases (*name) repeat more than "
        f"{MAX_ALIAS_VALUES:,} values in all; write the values out, or use fewer aliases"
    )


def test_a_billion_laughs_config_is_refused_too():
    with pytest.raises(ConfigError, match=r"^ragaliq\.yaml:6: invalid YAML: aliases"):
        parse_config(BILLION_LAUGHS.replace("cases: *i", "judge: {pricing: *i}"))


def test_a_few_aliases_and_merge_keys_are_fine():
    data = load_yaml("base: &b {x: 1}\none: *b\ntwo: {<<: *b, y: 2}\n")
    assert data == {"base": {"x": 1}, "one": {"x": 1}, "two": {"x": 1, "y": 2}}


def test_an_alias_that_contains_itself_is_refused(tmp_path):
    path = tmp_path / "d.yaml"
    path.write_text("cases: &c [*c]\n", encoding="utf-8")
    assert problems(path) == (
        f"{path}:1: invalid YAML: an alias refers to a value that contains it"
    )


def test_nesting_is_limited_with_the_line(tmp_path):
    path = tmp_path / "d.yaml"
    deep = "[" * (MAX_DEPTH + 5) + "]" * (MAX_DEPTH + 5)
    path.write_text(f"cases:\n  - id: a\n    metadata: {{x: {deep}}}\n", encoding="utf-8")
    assert problems(path) == (
        f"{path}:3: invalid YAML: nested too deeply to read (more than {MAX_DEPTH} levels)"
    )


def test_nesting_through_aliases_is_limited_too():
    levels = ["l0: &l0 [x]"] + [f"l{i}: &l{i} [*l{i - 1}]" for i in range(1, MAX_DEPTH + 2)]
    with pytest.raises(yaml.YAMLError, match="once aliases are expanded"):
        load_yaml("\n".join(levels))


def test_dates_stay_the_text_written(tmp_path):
    path = tmp_path / "d.yaml"
    path.write_text(
        "- id: 2024-05-01\n"
        "  query: q\n  context: [c]\n  response: r\n"
        "  metadata: {released: 2024-05-01, at: 2001-12-14t21:59:43.10-05:00, "
        "tagged: !!timestamp 2020-1-1}\n",
        encoding="utf-8",
    )
    (case,) = load_dataset(path)
    assert case.id == "2024-05-01"
    assert case.metadata == {
        "released": "2024-05-01",
        "at": "2001-12-14t21:59:43.10-05:00",
        "tagged": "2020-1-1",
    }


def test_a_date_where_the_config_wants_a_number_is_one_line():
    with pytest.raises(ConfigError) as info:
        parse_config("judge: {timeout_s: 2024-05-01}\n")
    assert str(info.value) == (
        "ragaliq.yaml: judge.timeout_s: must be a number (got string '2024-05-01')"
    )


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("!!binary aGVsbG8=", "a !!binary value cannot be read here; write the value as text"),
        ("!!set {a, b}", "a !!set value cannot be read here; write a list instead"),
    ],
)
def test_values_json_cannot_hold_are_refused_at_their_line(tmp_path, value, problem):
    path = tmp_path / "d.yaml"
    path.write_text(
        f"- id: a\n  query: q\n  context: [c]\n  response: r\n  metadata: {{x: {value}}}\n",
        encoding="utf-8",
    )
    assert problems(path).startswith(f"{path}:5: invalid YAML: {problem}")


# --- ids as written -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("written", "read_as"),
    [
        ("010", "number 8"),
        ("0x1F", "number 31"),
        ("1.0e+400", "number inf"),
        (".nan", "number nan"),
        ("yes", "boolean True"),
        ("null", "null"),
    ],
)
def test_a_yaml_id_that_is_not_text_is_refused_with_the_quoted_fix(tmp_path, written, read_as):
    path = tmp_path / "d.yaml"
    path.write_text(
        f"cases:\n  - id: ok\n    query: q\n    context: [c]\n    response: r\n"
        f"  - id: {written}\n    query: q\n    context: [c]\n    response: r\n",
        encoding="utf-8",
    )
    assert problems(path) == (
        f"{path}:6: id: must be a string, but YAML reads {written} as {read_as}; quote it to "
        f'keep it as written: id: "{written}"'
    )


def test_quoted_yaml_ids_are_kept_as_written(tmp_path):
    path = tmp_path / "d.yaml"
    rows = "".join(
        f'- id: "{i}"\n  query: q{i}\n  context: [c]\n  response: r\n'
        for i in ("010", "0x1F", "1e400", "NaN")
    )
    path.write_text(rows, encoding="utf-8")
    assert [c.id for c in load_dataset(path)] == ["010", "0x1F", "1e400", "NaN"]


def test_unquoted_yaml_ids_that_yaml_reads_as_text_stay_as_written(tmp_path):
    path = tmp_path / "d.yaml"
    rows = "".join(
        f"- id: {i}\n  query: q{i}\n  context: [c]\n  response: r\n" for i in ("1e400", "NaN")
    )
    path.write_text(rows, encoding="utf-8")
    assert [c.id for c in load_dataset(path)] == ["1e400", "NaN"]


def test_a_case_repeated_through_an_alias_is_reported_at_the_alias(tmp_path):
    path = tmp_path / "d.yaml"
    path.write_text(
        "cases:\n  - &x {id: a, query: q, context: [], response: r}\n  - *x\n", encoding="utf-8"
    )
    assert problems(path) == (
        f"{path}:3: id: duplicate id 'a' (first used on line 2); ids must be unique and stable"
    )


@pytest.mark.parametrize(("raw", "read_as"), [("1e400", "number inf"), ("NaN", "number nan")])
def test_a_json_id_that_is_not_text_is_refused(tmp_path, raw, read_as):
    path = tmp_path / "d.jsonl"
    path.write_text(json.dumps(GOOD).replace('"a"', raw, 1) + "\n", encoding="utf-8")
    assert problems(path) == (
        f"{path}:1: id: must be a string (got {read_as}); put the id in quotes so that it is "
        "read as written"
    )


@pytest.mark.parametrize(
    ("first", "second", "shown"),
    [
        ("refund", "refund\u200b", "'refund\\u200b'"),
        ("refund", "refund ", "'refund '"),
        ("refund", " refund", "' refund'"),
        ("file", "\ufb01le", "'\ufb01le'"),
        ("refund", "\u202erefund", "'\\u202erefund'"),
        ("refund", "re\u00adfund", "'re\\u00adfund'"),
        ("caf\u00e9", "cafe\u0301", "'cafe\u0301'"),
    ],
)
def test_an_id_that_only_looks_like_an_earlier_one_is_refused(tmp_path, first, second, shown):
    rows = [{**GOOD, "id": first}, {**GOOD, "id": "other"}, {**GOOD, "id": second}]
    path = write_jsonl(tmp_path / "d.jsonl", rows)
    assert problems(path) == (
        f"{path}:3: id: id {shown} looks the same as id '{first}' on line 1: they differ only "
        "by invisible, compatibility or surrounding space characters; give each case an id of "
        "its own"
    )


def test_ids_that_differ_visibly_are_fine(tmp_path):
    rows = [{**GOOD, "id": i} for i in ("refund", "Refund", "refund-2", "r\u00e9fund")]
    assert len(load_dataset(write_jsonl(tmp_path / "d.jsonl", rows))) == 4


# --- files that are not regular, and sizes -----------------------------------------------------


def test_dev_zero_is_refused_before_reading_within_a_gib(tmp_path):
    line = one_line_exit_2(validate_in_a_gib(tmp_path, "/dev/zero"))
    assert line == (
        "error: /dev/zero: is not a regular file (a device, a pipe or a socket), so it is not "
        "read; name a file"
    )


def test_a_fifo_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "outputs.jsonl"
    os.mkfifo(fifo)
    assert "is not a regular file" in problems(fifo)


def test_a_folder_is_refused(tmp_path):
    folder = tmp_path / "outputs.jsonl"
    folder.mkdir()
    assert problems(folder) == f"{folder}: is a folder; name a file"


def test_a_folder_as_the_config_is_refused(tmp_path):
    with pytest.raises(ConfigError, match="is a folder; name a file"):
        load_config(tmp_path)


@pytest.mark.parametrize(
    ("suffix", "limit", "fix"),
    [
        (".jsonl", MAX_STREAM_BYTES, "judge a smaller suite"),
        (".csv", MAX_STREAM_BYTES, "judge a smaller suite"),
        (".json", MAX_DOCUMENT_BYTES, "write JSON Lines instead"),
        (".yaml", MAX_YAML_BYTES, "write JSON Lines instead"),
    ],
)
def test_a_dataset_over_its_size_limit_is_refused_before_reading(tmp_path, suffix, limit, fix):
    path = tmp_path / f"d{suffix}"
    with path.open("wb") as handle:
        handle.truncate(limit + 1)  # sparse: no disk space, no time
    message = problems(path)
    assert message.startswith(f"{path}: ")
    assert "is over the limit of" in message
    assert fix in message


def test_a_config_over_its_size_limit_is_refused(tmp_path):
    path = tmp_path / "ragaliq.yaml"
    path.write_text("# padding\n" * (MAX_CONFIG_BYTES // 10 + 1), encoding="utf-8")
    with pytest.raises(ConfigError, match=r"is over the limit of 1 MiB"):
        load_config(path)


def test_a_line_over_the_limit_is_one_problem_and_the_rest_is_read(tmp_path):
    path = tmp_path / "d.jsonl"
    with path.open("w", encoding="utf-8") as out:
        out.write(json.dumps(GOOD) + "\n")
        out.write('{"id": "b", "query": "' + "x" * MAX_LINE_BYTES + '"}\n')
        out.write(json.dumps({**GOOD, "id": "c", "response": 3}) + "\n")
    assert problems(path).splitlines() == [
        f"{path}:2: the line is over 8 MiB; each field of a case has a size limit (see "
        "docs/datasets.md), so shorten it or split the case",
        f"{path}:3: response: must be a string (got number 3)",
    ]


# --- streaming ------------------------------------------------------------------------------------


def test_the_reader_yields_cases_with_their_lines(tmp_path):
    path = tmp_path / "d.jsonl"
    path.write_text(json.dumps(GOOD) + "\n\n" + json.dumps({**GOOD, "id": "b"}) + "\n", "utf-8")
    reader = DatasetReader(path)
    assert [(line, case.id) for line, case in reader] == [(1, "a"), (3, "b")]
    assert reader.info.cases == 2
    assert reader.info.description == "JSON Lines"


def test_the_reader_stops_yielding_at_the_first_problem_and_raises_them_all(tmp_path):
    rows = [GOOD, {**GOOD, "id": "b", "query": 1}, {**GOOD, "id": "c"}, GOOD]
    reader = DatasetReader(write_jsonl(tmp_path / "d.jsonl", rows))
    seen = []
    with pytest.raises(DatasetError) as info:
        for _, case in reader:
            seen.append(case.id)
    assert seen == ["a"]
    assert str(info.value).splitlines() == [
        f"{tmp_path / 'd.jsonl'}:2: query: must be a string (got number 1)",
        f"{tmp_path / 'd.jsonl'}:4: id: duplicate id 'a' (first used on line 1); ids must be "
        "unique and stable",
    ]


def test_problems_past_the_twentieth_are_counted(tmp_path):
    rows = [{**GOOD, "id": f"c{i}", "response": i} for i in range(25)]
    lines = problems(write_jsonl(tmp_path / "d.jsonl", rows)).splitlines()
    assert len(lines) == 21
    assert lines[-1] == "... and 5 more problems"


def test_check_validates_without_keeping_cases(tmp_path):
    path = write_jsonl(tmp_path / "d.jsonl", [{**GOOD, "id": f"c{i}"} for i in range(3)])
    info = DatasetReader(path).check()
    assert (info.cases, info.container, info.shape) == (3, "jsonl", "RagaliQ")


def test_a_dataset_in_the_examples_reads_the_same_through_every_way_in():
    path = REPO_ROOT / "examples/quickstart/rag_outputs.jsonl"
    assert [c for _, c in DatasetReader(path)] == load_dataset(path)

"""The quick start's answer key says what the offline judge rates each seeded sentence."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from click.testing import CliRunner

from ragaliq.cli import cli

QUICKSTART = Path(__file__).resolve().parents[2] / "examples" / "quickstart"
ROW = re.compile(r"^\| `(?P<case>[a-z0-9-]+)` \|.*\| `(?P<verdict>[A-Z_]+)` \|$")


def answer_key() -> dict[str, str]:
    text = (QUICKSTART / "README.md").read_text(encoding="utf-8")
    return {m["case"]: m["verdict"] for m in map(ROW.match, text.splitlines()) if m}


def test_the_answer_key_matches_the_offline_judge(tmp_path):
    key = answer_key()
    assert len(key) == 6
    out = tmp_path / "report.json"
    result = CliRunner().invoke(
        cli,
        ["run", "--config", str(QUICKSTART / "ragaliq.yaml"), "-o", str(out)],
        env={"ANTHROPIC_API_KEY": ""},
    )
    assert result.exit_code in (0, 1), result.output
    flagged: dict[str, set[str]] = {}
    for case in json.loads(out.read_text(encoding="utf-8"))["cases"]:
        for claim in case["claims"]:
            if claim["verdict"] != "SUPPORTED":
                flagged.setdefault(case["id"], set()).add(claim["verdict"])
    assert flagged == {case: {verdict} for case, verdict in key.items()}


def gate(tmp_path, config: Path) -> tuple[int, str]:
    result = CliRunner().invoke(
        cli,
        [
            "gate",
            "--config",
            str(config),
            "--dataset",
            str(QUICKSTART / "rag_outputs_pr.jsonl"),
            "--comment-out",
            str(tmp_path / "comment.md"),
        ],
        env={"ANTHROPIC_API_KEY": ""},
    )
    return result.exit_code, result.output


def test_gating_the_example_change_is_what_the_quick_start_says(tmp_path):
    code, output = gate(tmp_path, QUICKSTART / "ragaliq.yaml")
    assert code == 1, output
    assert "2 newly hallucinated claims, 1 fixed" in output
    assert "2 new claims could not be checked offline" in output
    assert "failed: 2 newly hallucinated claims (gate.fail_on_new_hallucinations: true)" in output
    comment = (tmp_path / "comment.md").read_text("utf-8")
    assert "RagaliQ Gate failed" in comment
    assert "Newly hallucinated claims (2)" in comment
    assert "2 new claims could not be checked offline: left out of the scores" in comment
    assert "the owner gets an email reminder" in comment
    assert 'does not state "owner", "email", "reminder"' in comment
    assert "- why: " in comment and "(confidence" not in comment  # a heuristic's is no measure
    lenient = tmp_path / "ragaliq.yaml"
    text = (QUICKSTART / "ragaliq.yaml").read_text(encoding="utf-8")
    assert "fail_on_new_hallucinations: true" in text
    lenient.write_text(
        text.replace("fail_on_new_hallucinations: true", "fail_on_new_hallucinations: false"),
        encoding="utf-8",
    )
    (tmp_path / ".ragaliq").mkdir()
    shutil.copy(QUICKSTART / ".ragaliq" / "baseline.json", tmp_path / ".ragaliq" / "baseline.json")
    code, output = gate(tmp_path, lenient)
    assert code == 1, output  # the baseline recorded the stricter setting: no loosening
    assert "loosens the gate (fail_on_new_hallucinations true → false)" in output

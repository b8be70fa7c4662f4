"""The quick start's answer key says what the offline judge rates each seeded sentence."""

from __future__ import annotations

import json
import re
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

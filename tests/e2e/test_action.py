"""`ragaliq action` as a subprocess, with the environment a Docker action gets.

A real git repository plays the workspace: the baseline is committed on the base commit and the PR
changes the dataset. The judge is the fake Anthropic API (via ANTHROPIC_BASE_URL) and the PR lives
on the fake GitHub API (via GITHUB_API_URL); both are driven by the real SDK and the real PyGithub.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fakes.anthropic_server import FakeAnthropic
from tests.fakes.claude_sim import claude_like
from tests.fakes.github_server import FakeGitHub

REPO = "acme/rag-bot"
KEY = "sk-ant-api03-e2e-secret"
TOKEN = "ghs_test"
QUICKSTART = Path(__file__).resolve().parents[2] / "examples" / "quickstart"
CONFIG = """\
dataset: rag_outputs.jsonl
judge:
  provider: auto
  max_retries: 1
evaluators:
  faithfulness: {threshold: 0.7}
  hallucination: {threshold: 0.75}
  relevance: {threshold: 0.5}
gate:
  max_drop: 0.02
"""


def git(workspace: Path, *args: str) -> str:
    out = subprocess.run(
        ["git", "-C", str(workspace), *args], capture_output=True, text=True, check=True
    )
    return out.stdout.strip()


def cases() -> list[dict]:
    lines = (QUICKSTART / "rag_outputs.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def write_dataset(workspace: Path, rows: list[dict]) -> None:
    (workspace / "rag_outputs.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8"
    )


def regress(rows: list[dict]) -> list[dict]:
    """Seed a regression: the storage case now states figures its context does not have."""
    out = []
    for row in rows:
        if row["id"] in {"storage-limits-by-plan", "restore-deleted-folder", "sso-setup"}:
            row = {**row, "response": row["response"] + " The limit doubles to 999 TB in 2031."}
        out.append(row)
    return out


class Action:
    def __init__(self, tmp: Path, anthropic: FakeAnthropic, github: FakeGitHub) -> None:
        self.tmp = tmp
        self.anthropic = anthropic
        self.github = github
        self.workspace = tmp / "workspace"
        self.workspace.mkdir()
        git(self.workspace, "init", "-q", "-b", "main")
        git(self.workspace, "config", "user.email", "ci@example.com")
        git(self.workspace, "config", "user.name", "CI")
        (self.workspace / "ragaliq.yaml").write_text(CONFIG, encoding="utf-8")
        write_dataset(self.workspace, cases())
        self.runs = 0

    def commit(self, message: str) -> str:
        git(self.workspace, "add", "-A")
        git(self.workspace, "commit", "-q", "-m", message)
        return git(self.workspace, "rev-parse", "HEAD")

    def run_unchanged_pull(self, number: int, **inputs: str) -> tuple[int, str, dict, str]:
        """Commit main, open pull request ``number`` on it with no change, and run the gate."""
        base = self.commit("main")
        self.github.add_pull(REPO, number, base_sha=base, head_sha=base)
        return self.run(event=pr_event(number, base, base), event_name="pull_request", **inputs)

    def run(self, *, event: dict, event_name: str, **inputs: str) -> tuple[int, str, dict, str]:
        self.runs += 1
        run_dir = self.tmp / f"run{self.runs}"
        run_dir.mkdir()
        (run_dir / "event.json").write_text(json.dumps(event), encoding="utf-8")
        env = {
            "PATH": os.environ["PATH"],
            "HOME": str(self.tmp),
            "GITHUB_ACTIONS": "true",
            "CI": "true",
            "GITHUB_WORKSPACE": str(self.workspace),
            "GITHUB_EVENT_PATH": str(run_dir / "event.json"),
            "GITHUB_EVENT_NAME": event_name,
            "GITHUB_REPOSITORY": REPO,
            "GITHUB_API_URL": self.github.base_url,
            "GITHUB_SERVER_URL": "https://github.example",
            "GITHUB_RUN_ID": "4242",
            "GITHUB_SHA": git(self.workspace, "rev-parse", "HEAD"),
            "GITHUB_OUTPUT": str(run_dir / "output"),
            "GITHUB_STEP_SUMMARY": str(run_dir / "summary.md"),
            "ANTHROPIC_BASE_URL": self.anthropic.base_url,
            "INPUT_CONFIG": "ragaliq.yaml",
            "INPUT_DATASET": "",
            "INPUT_BASELINE": "",
            "INPUT_MODE": "gate",
            "INPUT_ANTHROPIC-API-KEY": KEY,
            "INPUT_GITHUB-TOKEN": TOKEN,
            "INPUT_COMMENT": "upsert",
            "INPUT_COMMENT-ID": "default",
            "INPUT_HTML-REPORT": "",
        }
        for name, value in inputs.items():
            env[f"INPUT_{name.upper().replace('_', '-')}"] = value
        (run_dir / "output").touch()
        (run_dir / "summary.md").touch()
        proc = subprocess.run(
            [sys.executable, "-m", "ragaliq", "action"],
            cwd=self.workspace,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        return (
            proc.returncode,
            proc.stdout + proc.stderr,
            parse_outputs((run_dir / "output").read_text(encoding="utf-8")),
            (run_dir / "summary.md").read_text(encoding="utf-8"),
        )


def parse_outputs(text: str) -> dict[str, str]:
    outputs: dict[str, str] = {}
    lines = iter(text.splitlines())
    for line in lines:
        name, _, delimiter = line.partition("<<")
        value = []
        for inner in lines:
            if inner == delimiter:
                break
            value.append(inner)
        outputs[name] = "\n".join(value)
    return outputs


def pr_event(number: int, base: str, head: str, head_repo: str = REPO) -> dict:
    return {
        "action": "synchronize",
        "number": number,
        "pull_request": {
            "number": number,
            "base": {"sha": base, "ref": "main", "repo": {"full_name": REPO}},
            "head": {"sha": head, "ref": "feature", "repo": {"full_name": head_repo}},
        },
    }


@pytest.fixture
def setup(tmp_path):
    if shutil.which("git") is None:
        pytest.skip("git is needed to play the workspace")
    with FakeAnthropic(claude_like()) as anthropic, FakeGitHub(token=TOKEN) as github:
        yield Action(tmp_path, anthropic, github)


def record_baseline_on_main(action: Action) -> str:
    action.commit("main: the RAG outputs")
    code, log, outputs, summary = action.run(
        event={"ref": "refs/heads/main"},
        event_name="push",
        mode="update-baseline",
        html_report="main-report.html",
    )
    assert code == 0, log
    baseline = action.workspace / ".ragaliq" / "baseline.json"
    # Paths in outputs are relative to the workspace: a Docker action mounts it elsewhere.
    assert outputs["baseline-path"] == ".ragaliq/baseline.json"
    assert outputs["report-path"] == ".ragaliq/report.json"
    assert outputs["html-report-path"] == "main-report.html"
    assert "storage-limits-by-plan" in (action.workspace / "main-report.html").read_text()
    assert json.loads((action.workspace / ".ragaliq" / "decision.json").read_text())["passed"]
    assert json.loads(baseline.read_text())["provenance"]["judge_provider"] == "anthropic"
    assert "Baseline recorded" in log
    assert summary.strip()
    for produced in (".ragaliq/report.json", ".ragaliq/decision.json", "main-report.html"):
        (action.workspace / produced).unlink()
    return action.commit("main: record the baseline")


def test_the_gate_on_a_pull_request_end_to_end(setup):
    action = setup
    base = record_baseline_on_main(action)
    write_dataset(action.workspace, regress(cases()))
    head = action.commit("feature: a prompt change that makes things up")
    action.github.add_pull(REPO, 7, base_sha=base, head_sha=head)

    code, log, outputs, summary = action.run(
        event=pr_event(7, base, head), event_name="pull_request", html_report="out/report.html"
    )
    assert code == 1, log
    assert outputs["html-report-path"] == "out/report.html"
    html = action.workspace / outputs["html-report-path"]
    assert "999 TB" in html.read_text(encoding="utf-8")
    assert outputs["passed"] == "false"
    assert int(outputs["new-hallucinations"]) == 3
    assert set(json.loads(outputs["scores"])) == {"faithfulness", "hallucination", "relevance"}
    assert (action.workspace / outputs["report-path"]).is_file()
    decision = json.loads((action.workspace / ".ragaliq" / "decision.json").read_text())
    assert decision["passed"] is False
    assert len(decision["new_hallucinations"]) == 3
    comments = action.github.comments(REPO, 7)
    assert len(comments) == 1
    body = comments[0].body
    assert body.splitlines()[0] == "<!-- ragaliq:comment id=default -->"
    assert "999 TB" in body
    assert outputs["comment-url"].endswith(f"#issuecomment-{comments[0].id}")
    assert "999 TB" in summary
    assert f"::add-mask::{KEY}" in log
    assert log.count(KEY) == 1  # only in the mask command
    assert KEY not in body + summary
    assert 1 <= log.count("::error ") <= 10

    # The author fixes the PR: the same comment is edited, and the gate passes.
    write_dataset(action.workspace, cases())
    head2 = action.commit("feature: fix the prompt")
    code, log, outputs, _ = action.run(event=pr_event(7, base, head2), event_name="pull_request")
    assert code == 0, log
    assert outputs["passed"] == "true"
    assert outputs["new-hallucinations"] == "0"
    comments = action.github.comments(REPO, 7)
    assert len(comments) == 1
    assert "999 TB" not in comments[0].body
    assert "::error " not in log


def test_a_fork_pr_without_write_access_still_gets_a_summary(setup):
    action = setup
    base = record_baseline_on_main(action)
    write_dataset(action.workspace, regress(cases()))
    head = action.commit("fork: change")
    action.github.add_pull(REPO, 8, base_sha=base, head_sha=head, head_repo="someone/rag-bot")
    action.github.fail("POST", r"/issues/8/comments$", 403)
    code, log, outputs, summary = action.run(
        event=pr_event(8, base, head, "someone/rag-bot"), event_name="pull_request"
    )
    assert code == 1, log
    assert "Traceback" not in log
    assert "::notice title=No PR comment::" in log
    assert "read-only" in log
    assert outputs["comment-url"] == ""
    assert "999 TB" in summary
    assert action.github.comments(REPO, 8) == []


def test_a_pr_that_edits_the_baseline_is_compared_with_the_base_version(setup):
    action = setup
    base = record_baseline_on_main(action)
    write_dataset(action.workspace, regress(cases()))
    baseline = action.workspace / ".ragaliq" / "baseline.json"
    data = json.loads(baseline.read_text())
    data["thresholds"] = {k: 0.0 for k in data["thresholds"]}
    baseline.write_text(json.dumps(data), encoding="utf-8")
    head = action.commit("feature: lower the bar")
    action.github.add_pull(REPO, 9, base_sha=base, head_sha=head)
    code, log, _, _ = action.run(event=pr_event(9, base, head), event_name="pull_request")
    assert code == 1, log
    assert "This change edits .ragaliq/baseline.json" in log


def test_the_first_run_without_a_baseline_applies_thresholds_only(setup):
    action = setup
    code, log, _, _ = action.run_unchanged_pull(3)
    assert code == 0, log
    assert "No baseline yet" in log
    assert "No baseline yet" in action.github.comments(REPO, 3)[0].body


def test_a_missing_key_skips_the_gate_by_default(setup):
    action = setup
    code, log, outputs, summary = action.run_unchanged_pull(4, anthropic_api_key="")
    assert code == 0, log
    assert "gate is skipped" in log
    assert outputs["passed"] == "true"
    assert "skipped" in summary
    assert action.anthropic.requests == []


def test_a_bad_key_fails_with_one_clear_error(setup):
    action = setup
    action.anthropic.api_key = "sk-ant-the-real-one"
    code, log, _, _ = action.run_unchanged_pull(5)
    assert code == 2, log
    assert "::error title=RagaliQ Gate::" in log
    assert "401" in log
    assert "Traceback" not in log


def test_a_bad_comment_id_or_html_path_fails_before_any_judge_call(setup):
    action = setup
    code, log, _, _ = action.run_unchanged_pull(6, comment_id="bad id!")
    assert code == 2, log
    assert "::error title=RagaliQ Gate::" in log
    (action.workspace / "blocker").write_text("x", encoding="utf-8")
    code, log, _, _ = action.run_unchanged_pull(7, html_report="blocker/r.html")
    assert code == 2, log
    assert "blocker/r.html: cannot be written" in log
    assert "Traceback" not in log
    assert action.anthropic.requests == []

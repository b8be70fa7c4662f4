"""A workspace for `ragaliq action` run as a subprocess, with the environment a Docker action gets.

A real git repository plays the repository: the baseline is committed on the base commit and the
PR changes the dataset. The judge is the fake Anthropic API (via the anthropic-base-url input: a
gate ignores ANTHROPIC_BASE_URL in the environment, which an earlier step can set) and the PR lives
on the fake GitHub API (via GITHUB_API_URL); both are driven by the real SDK and PyGithub.

A pull request's run plays the two zones of the workflows ``ragaliq init`` writes, job by job:

1. **produce** (untrusted): the PR's checkout (``Action.workspace``) has written its dataset; it
   is zipped and uploaded to the fake GitHub as the run's artifact ``ragaliq-dataset``;
2. **gate** (trusted): a fresh clone checked out at the base commit (``Action.last``) runs the
   action with ``artifact: ragaliq-dataset``.

With ``trust_pr_code="true"`` the gate runs in the PR's own checkout instead, as one job.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from tests.fakes.anthropic_server import FakeAnthropic
from tests.fakes.github_server import FakeGitHub
from tests.unit.report.html_pages import page_text

REPO = "acme/rag-bot"
KEY = "sk-ant-api03-e2e-secret"
TOKEN = "ghs_test"
RUN_ID = 4242
MAIN = "RagaliQ Gate (main)"
"""The status main's branch protection requires: the gate's, judged against main's bar."""
ARTIFACT = "ragaliq-dataset"
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


REGRESSED = 12
"""How many cases :func:`regress` breaks: enough for the drop to be told from noise."""


def regress(rows: list[dict]) -> list[dict]:
    """Seed a regression that a 20-case suite can resolve: most answers now state a figure
    their context does not have."""
    out = []
    for i, row in enumerate(rows):
        if i < REGRESSED:
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
        (self.workspace / ".ragaliq").mkdir()
        (self.workspace / ".ragaliq" / ".gitignore").write_text("cache.sqlite*\n", encoding="utf-8")
        write_dataset(self.workspace, cases())
        self.runs = 0
        self.last = self.workspace
        """Where the last run ran: its results (``.ragaliq/decision.json``, ...) are there."""

    def commit(self, message: str) -> str:
        git(self.workspace, "add", "-A")
        git(self.workspace, "commit", "-q", "-m", message)
        return git(self.workspace, "rev-parse", "HEAD")

    def run_unchanged_pull(self, number: int, **inputs: str) -> tuple[int, str, dict, str]:
        """Record main's baseline (once), open pull request ``number`` on it with no change,
        and run the gate."""
        if not (self.workspace / ".ragaliq" / "baseline.json").exists():
            record_baseline_on_main(self)
        base = git(self.workspace, "rev-parse", "HEAD")
        self.github.add_pull(REPO, number, base_sha=base, head_sha=base)
        return self.run(event=pr_event(number, base, base), event_name="pull_request", **inputs)

    def produce(self, head_sha: str, *, run_id: int = RUN_ID, archive: bytes | None = None) -> None:
        """The untrusted zone: upload the PR's dataset (or ``archive``) as the run's artifact."""
        if archive is None:
            archive = zip_files(
                {"rag_outputs.jsonl": (self.workspace / "rag_outputs.jsonl").read_bytes()}
            )
        self.github.add_artifact(REPO, run_id, ARTIFACT, archive, head_sha=head_sha)

    def trusted_checkout(self, base_sha: str | None) -> Path:
        """A fresh runner's workspace: a clone at ``base_sha``, or nothing checked out."""
        workspace = self.tmp / f"gate{self.runs}"
        if base_sha is None:
            workspace.mkdir()
            return workspace
        subprocess.run(
            ["git", "clone", "-q", "--no-checkout", str(self.workspace), str(workspace)],
            check=True,
            capture_output=True,
        )
        git(workspace, "checkout", "-q", "--detach", base_sha)
        return workspace

    def run(
        self,
        *,
        event: dict,
        event_name: str,
        env: dict[str, str] | None = None,
        workspace: Path | None = None,
        archive: bytes | None = None,
        **inputs: str,
    ) -> tuple[int, str, dict, str]:
        """Run the action; ``env`` is what the job adds to the environment (``$GITHUB_ENV``).

        A pull request's gate runs in a trusted checkout of its base (or ``workspace``) with the
        dataset as an artifact (``archive``, else the PR's dataset zipped), unless
        ``trust_pr_code="true"``: then it runs in the PR's own checkout. A review's run produces
        nothing: its gate finds the dataset a ``pull_request`` run handed over.
        """
        self.runs += 1
        pr = event.get("pull_request")
        run_id = RUN_ID + self.runs  # every workflow run has its own id, and its own artifacts
        if pr:
            self.github.add_run(REPO, run_id, event=event_name, head_sha=pr["head"]["sha"])
            # The event is GitHub's news of the pull request as it is now.
            self.github.push_to_pull(
                REPO, pr["number"], head_sha=pr["head"]["sha"], base_sha=pr["base"]["sha"]
            )
        if pr and inputs.get("trust_pr_code") != "true":
            if event_name == "pull_request":
                self.produce(pr["head"]["sha"], run_id=run_id, archive=archive)
            workspace = workspace or self.trusted_checkout(pr["base"]["sha"])
            inputs.setdefault("artifact", ARTIFACT)
        return self.invoke(
            workspace=workspace or self.workspace,
            event=event,
            event_name=event_name,
            run_id=run_id,
            env=env,
            inputs={f"INPUT_{k.upper().replace('_', '-')}": v for k, v in inputs.items()},
        )

    def invoke(
        self,
        *,
        workspace: Path,
        event: dict,
        event_name: str,
        run_id: int,
        env: dict[str, str] | None = None,
        inputs: dict[str, str],
        sha: str | None = None,
        ref_name: str = "",
        event_path: Path | None = None,
    ) -> tuple[int, str, dict, str]:
        """Run ``python -m ragaliq action`` in ``workspace`` as a Docker action runs it.

        ``inputs`` are ``INPUT_*`` variables over the defaults; ``env`` is what the job adds;
        ``sha`` and ``ref_name`` are the run's commit and branch (``GITHUB_SHA``,
        ``GITHUB_REF_NAME``), by default the workspace repository's ``HEAD``; ``event_path``
        is where the runner keeps the event file.
        """
        run_dir = Path(tempfile.mkdtemp(prefix=f"run{self.runs}-{run_id}-", dir=self.tmp))
        self.last = workspace
        event_file = event_path or run_dir / "event.json"
        event_file.parent.mkdir(parents=True, exist_ok=True)
        if not event_file.exists():  # a restored archive may have written one already
            event_file.write_text(json.dumps(event), encoding="utf-8")
        job_env = env or {}
        env = {
            "PATH": os.environ["PATH"],
            "HOME": str(self.tmp),
            "GITHUB_ACTIONS": "true",
            "CI": "true",
            "GITHUB_WORKSPACE": str(workspace),
            "GITHUB_EVENT_PATH": str(event_file),
            "GITHUB_EVENT_NAME": event_name,
            "GITHUB_REPOSITORY": REPO,
            "GITHUB_API_URL": self.github.base_url,
            "GITHUB_SERVER_URL": "https://github.example",
            "GITHUB_RUN_ID": str(run_id),
            "GITHUB_SHA": sha or git(self.workspace, "rev-parse", "HEAD"),
            "GITHUB_REF_NAME": ref_name,
            "GITHUB_OUTPUT": str(run_dir / "output"),
            "GITHUB_STEP_SUMMARY": str(run_dir / "summary.md"),
            "INPUT_CONFIG": "ragaliq.yaml",
            "INPUT_DATASET": "",
            "INPUT_BASELINE": "",
            "INPUT_MODE": "gate",
            "INPUT_ANTHROPIC-API-KEY": KEY,
            "INPUT_ANTHROPIC-BASE-URL": self.anthropic.base_url,
            "INPUT_GITHUB-TOKEN": TOKEN,
            "INPUT_COMMENT": "upsert",
            "INPUT_COMMENT-ID": "default",
            "INPUT_HTML-REPORT": ".ragaliq/report.html",  # action.yml's default
        }
        env.update(job_env)
        env.update(inputs)
        (run_dir / "output").touch()
        (run_dir / "summary.md").touch()
        proc = subprocess.run(
            [sys.executable, "-I", "-m", "ragaliq", "action"],
            cwd=workspace,
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


def zip_files(files: dict[str, bytes | str]) -> bytes:
    """A zip archive of ``files`` (name to content), as actions/upload-artifact makes one."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return buffer.getvalue()


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


def pr_event(
    number: int,
    base: str,
    head: str,
    head_repo: str = REPO,
    author: str = "someone",
    base_ref: str = "main",
) -> dict:
    return {
        "action": "synchronize",
        "number": number,
        "pull_request": {
            "number": number,
            "user": {"login": author},
            "base": {"sha": base, "ref": base_ref, "repo": {"full_name": REPO}},
            "head": {"sha": head, "ref": "feature", "repo": {"full_name": head_repo}},
        },
    }


def update_baseline_on_main(action: Action, **inputs: str) -> tuple[int, str, dict, str]:
    """The baseline workflow's run on a push to main (``mode: update-baseline``)."""
    return action.run(
        event={"ref": "refs/heads/main"}, event_name="push", mode="update-baseline", **inputs
    )


def record_baseline_on_main(action: Action) -> str:
    action.commit("main: the RAG outputs")
    code, log, outputs, summary = update_baseline_on_main(action, html_report="main-report.html")
    assert code == 0, log
    baseline = action.workspace / ".ragaliq" / "baseline.json"
    # Paths in outputs are relative to the workspace: a Docker action mounts it elsewhere.
    assert outputs["baseline-path"] == ".ragaliq/baseline.json"
    assert outputs["report-path"] == ".ragaliq/report.json"
    assert outputs["html-report-path"] == "main-report.html"
    assert "storage-limits-by-plan" in page_text(
        (action.workspace / "main-report.html").read_text()
    )
    assert json.loads((action.workspace / ".ragaliq" / "decision.json").read_text())["passed"]
    assert json.loads(baseline.read_text())["provenance"]["judge_provider"] == "anthropic"
    assert "Baseline recorded" in log
    assert summary.strip()
    for produced in (".ragaliq/report.json", ".ragaliq/decision.json", "main-report.html"):
        (action.workspace / produced).unlink()
    return action.commit("main: record the baseline")

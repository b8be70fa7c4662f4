"""The gate never runs where pull-request code ran; where a team says it may, nothing planted runs.

Played as an attacker would, with ``ragaliq action`` as a subprocess against the fake APIs:

- the single-job setup (the PR's pipeline before the gate, in the PR's checkout) is refused with
  one line naming the two-job workflow, and nothing planted in ``.git`` runs while it checks;
- with ``trust-pr-code: true`` the same plants stay inert, and variables an earlier step sets
  through ``$GITHUB_ENV`` are not obeyed;
- the artifact is data only: other files in it change nothing, unsafe archives are refused.
"""

from __future__ import annotations

import io
import shutil
import socket
import threading
import warnings
import zipfile
from pathlib import Path

import pytest

from tests.e2e.test_attacks import leaked
from tests.e2e.workspace import (
    ARTIFACT,
    KEY,
    MAIN,
    REPO,
    Action,
    cases,
    git,
    pr_event,
    record_baseline_on_main,
    regress,
    write_dataset,
    zip_files,
)

ONE_JOB = {"trust_pr_code": "true"}


def regressed_pull(action: Action, number: int = 80) -> dict:
    base = record_baseline_on_main(action)
    write_dataset(action.workspace, regress(cases()))
    head = action.commit("feature: a change that regresses")
    action.github.add_pull(REPO, number, base_sha=base, head_sha=head)
    return pr_event(number, base, head)


def planted_program(action: Action) -> tuple[Path, Path]:
    marker = action.tmp / "planted-program-ran"
    program = action.tmp / "planted.sh"
    program.write_text(f"#!/bin/sh\ntouch {marker}\nexit 0\n", encoding="utf-8")
    program.chmod(0o755)
    return program, marker


def assert_refused(action: Action, code: int, log: str, outputs: dict, number: int) -> None:
    assert code == 2, log
    assert "refuses to judge here" in log
    assert ".github/workflows/ragaliq.yml" in log and "trust-pr-code" in log
    assert outputs["passed"] == "false"
    assert "Traceback" not in log
    assert "could not judge" in action.github.comments(REPO, number)[0].body
    head = git(action.workspace, "rev-parse", "HEAD")
    assert [s.state for s in action.github.statuses(REPO, head, context=MAIN)][-1] == "error"


def test_the_gate_refuses_the_job_that_ran_the_pull_requests_code(setup):
    action = setup
    event = regressed_pull(action)
    judged_before = action.anthropic.count()
    code, log, outputs, _ = action.run(
        event=event, event_name="pull_request", workspace=action.workspace
    )
    assert_refused(action, code, log, outputs, 80)
    assert "not the pull request's base commit" in log
    assert action.anthropic.count() == judged_before  # the key was never used


def test_a_base_checkout_the_pipeline_changed_is_refused(setup):
    action = setup
    event = regressed_pull(action)
    workspace = action.trusted_checkout(event["pull_request"]["base"]["sha"])
    (workspace / "ragaliq.yaml").write_text("evaluators: {}\n", encoding="utf-8")
    code, log, outputs, _ = action.run(event=event, event_name="pull_request", workspace=workspace)
    assert_refused(action, code, log, outputs, 80)
    assert "files of the base commit were changed in the workspace (ragaliq.yaml)" in log


def test_a_base_checkout_with_files_the_pipeline_added_is_refused(setup):
    action = setup
    event = regressed_pull(action)
    workspace = action.trusted_checkout(event["pull_request"]["base"]["sha"])
    (workspace / "pr").mkdir()
    (workspace / "pr" / "sitecustomize.py").write_text("import os\n", encoding="utf-8")
    code, log, outputs, _ = action.run(event=event, event_name="pull_request", workspace=workspace)
    assert_refused(action, code, log, outputs, 80)
    assert (
        "files the base commit does not have were added to the workspace (pr/sitecustomize.py)"
        in log
    )


def test_the_gates_own_folder_in_a_base_checkout_is_no_change(setup):
    action = setup
    event = regressed_pull(action)
    workspace = action.trusted_checkout(event["pull_request"]["base"]["sha"])
    (workspace / ".ragaliq" / "old-comment.md").write_text("restored\n", encoding="utf-8")
    code, log, _, _ = action.run(event=event, event_name="pull_request", workspace=workspace)
    assert code == 1, log  # judged (and the regression fails), not refused
    assert "refuses to judge" not in log


def plant_in_git(action: Action, program: Path) -> None:
    """What a pipeline step can do to the checkout's .git before the gate reads it."""
    git(action.workspace, "config", "core.fsmonitor", str(program))
    git(action.workspace, "config", "core.hooksPath", str(program.parent))
    git(action.workspace, "config", "extensions.partialClone", "evil")
    git(action.workspace, "config", "remote.evil.url", f"ext::{program}")
    git(action.workspace, "config", "remote.evil.promisor", "true")


def test_nothing_planted_in_git_runs_while_the_gate_refuses(setup):
    action = setup
    event = regressed_pull(action)
    program, marker = planted_program(action)
    plant_in_git(action, program)
    code, log, outputs, _ = action.run(
        event=event, event_name="pull_request", workspace=action.workspace
    )
    assert_refused(action, code, log, outputs, 80)
    assert not marker.exists()


def test_with_trust_pr_code_planted_git_config_stays_inert_and_says_so(setup):
    action = setup
    event = regressed_pull(action)
    program, marker = planted_program(action)
    plant_in_git(action, program)
    code, log, _, summary = action.run(event=event, event_name="pull_request", **ONE_JOB)
    assert code == 1, log  # judged, and the regression fails
    assert not marker.exists()
    body = action.github.comments(REPO, 80)[0].body
    assert "trust-pr-code: true" in body and "not protected" in body
    assert leaked(action, log, summary) == []


def test_with_trust_pr_code_a_replace_ref_cannot_forge_the_base(setup):
    action = setup
    event = regressed_pull(action)
    base = event["pull_request"]["base"]["sha"]
    # The pipeline writes a base commit of its own: no baseline, every threshold at zero, and
    # tells git to read it in place of the real one.
    git(action.workspace, "checkout", "-q", "--detach", base)
    git(action.workspace, "rm", "-q", ".ragaliq/baseline.json")
    (action.workspace / "ragaliq.yaml").write_text("evaluators: {}\n", encoding="utf-8")
    forged = action.commit("forged base")
    git(action.workspace, "replace", base, forged)
    git(action.workspace, "checkout", "-q", event["pull_request"]["head"]["sha"])
    code, log, _, _ = action.run(event=event, event_name="pull_request", **ONE_JOB)
    assert code == 1, log
    assert "No baseline yet" not in log


def test_with_trust_pr_code_an_overwritten_base_object_stops_the_gate(setup):
    action = setup
    event = regressed_pull(action)
    base = event["pull_request"]["base"]["sha"]
    blob = git(action.workspace, "rev-parse", f"{base}:ragaliq.yaml")
    path = action.workspace / ".git" / "objects" / blob[:2] / blob[2:]
    import zlib

    forged = b"evaluators: {}\n"
    path.chmod(0o644)
    path.write_bytes(zlib.compress(b"blob %d\0" % len(forged) + forged))
    code, log, outputs, _ = action.run(event=event, event_name="pull_request", **ONE_JOB)
    assert code == 2, log
    assert "does not match its id" in log
    assert outputs["passed"] == "false"


class RecordingProxy:
    """A TCP server that records every connection and answers nothing."""

    def __init__(self) -> None:
        self.server = socket.create_server(("127.0.0.1", 0))
        self.connections = 0
        self.url = f"http://127.0.0.1:{self.server.getsockname()[1]}"
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.server.accept()
            except OSError:
                return
            self.connections += 1
            conn.close()

    def close(self) -> None:
        self.server.close()


def test_variables_an_earlier_step_sets_are_not_obeyed(setup):
    action = setup
    event = regressed_pull(action)
    program, marker = planted_program(action)
    proxy = RecordingProxy()
    planted = {
        "GIT_CONFIG_COUNT": "1",
        "GIT_CONFIG_KEY_0": "core.fsmonitor",
        "GIT_CONFIG_VALUE_0": str(program),
        "HTTPS_PROXY": proxy.url,
        "HTTP_PROXY": proxy.url,
        "ALL_PROXY": proxy.url,
        "SSL_CERT_FILE": str(action.tmp / "evil-ca.pem"),
        "REQUESTS_CA_BUNDLE": str(action.tmp / "evil-ca.pem"),
        "RAGALIQ_CACHE_SECRET": "chosen-by-the-pull-request-0123456789",
        "AWS_CONFIG_FILE": str(action.tmp / "aws-config"),
        "AWS_PROFILE": "evil",
        "OPENSSL_CONF": str(action.tmp / "evil.cnf"),
    }
    try:
        code, log, _, summary = action.run(
            event=event, event_name="pull_request", env=planted, **ONE_JOB
        )
    finally:
        proxy.close()
    assert code == 1, log
    assert proxy.connections == 0
    assert not marker.exists()
    assert all(r.api_key == KEY for r in action.anthropic.requests)
    for name in planted:
        assert name in log
    assert "ignored these variables" in action.github.comments(REPO, 80)[0].body
    assert leaked(action, log, summary) == []


# --- the artifact is data only ------------------------------------------------------------------


def test_other_files_in_the_artifact_change_nothing_but_the_dataset(setup):
    action = setup
    event = regressed_pull(action)
    dataset = (action.workspace / "rag_outputs.jsonl").read_bytes()
    poisoned = zip_files(
        {
            "rag_outputs.jsonl": dataset,
            "ragaliq.yaml": "evaluators: {}\ngate: {max_drop: 1}\n",
            ".ragaliq/baseline.json": "{}",
            "custom.md.j2": "### ✅ RagaliQ Gate passed",
            ".ragaliq/cache.sqlite": "forged",
        }
    )
    code, log, outputs, _ = action.run(
        event=event, event_name="pull_request", archive=poisoned, dataset="rag_outputs.jsonl"
    )
    assert code == 1, log
    assert outputs["passed"] == "false"
    body = action.github.comments(REPO, 80)[0].body
    assert "which the gate did not read" in body
    assert not (action.last / "custom.md.j2").exists()
    assert (action.last / "ragaliq.yaml").read_text() != "evaluators: {}\ngate: {max_drop: 1}\n"


def unsafe_archive(kind: str) -> bytes:
    buffer = io.BytesIO()
    with warnings.catch_warnings(), zipfile.ZipFile(buffer, "w") as archive:
        warnings.simplefilter("ignore")  # zipfile warns of the name given twice, on purpose
        if kind == "symlink":
            link = zipfile.ZipInfo("rag_outputs.jsonl")
            link.external_attr = 0o120777 << 16
            archive.writestr(link, "/proc/self/environ")
        elif kind == "traversal":
            archive.writestr("../../.ragaliq/baseline.json", "{}")
            archive.writestr("rag_outputs.jsonl", "{}")
        elif kind == "absolute":
            archive.writestr("/etc/cron.d/evil", "* * * * * root sh")
            archive.writestr("rag_outputs.jsonl", "{}")
        elif kind == "twice":
            archive.writestr("rag_outputs.jsonl", "{}")
            archive.writestr("rag_outputs.jsonl", "{}")
        else:
            archive.writestr("notes.txt", "no dataset here")
    return buffer.getvalue()


@pytest.mark.parametrize(
    ("kind", "said"),
    [
        ("symlink", "is a symbolic link"),
        ("traversal", "holds an entry named '../../.ragaliq/baseline.json'"),
        ("absolute", "holds an entry named '/etc/cron.d/evil'"),
        ("twice", "holds rag_outputs.jsonl twice"),
        ("missing", "has no rag_outputs.jsonl"),
    ],
)
def test_an_unsafe_artifact_is_refused_with_one_line(setup, kind, said):
    action = setup
    event = regressed_pull(action)
    code, log, outputs, _ = action.run(
        event=event,
        event_name="pull_request",
        archive=unsafe_archive(kind),
        dataset="rag_outputs.jsonl",
    )
    assert code == 2, log
    assert said in log
    assert log.count("::error ") == 1
    assert outputs["passed"] == "false"
    assert not (action.tmp / "etc").exists()


def test_an_oversized_artifact_is_refused_before_it_is_downloaded(setup):
    action = setup
    event = regressed_pull(action)
    head = event["pull_request"]["head"]["sha"]
    run_id = 999
    action.github.add_artifact(
        REPO,
        run_id,
        ARTIFACT,
        zip_files({"rag_outputs.jsonl": "{}"}),
        head_sha=head,
        size_in_bytes=3 * 1024**3,
    )
    workspace = action.trusted_checkout(event["pull_request"]["base"]["sha"])
    code, log, outputs, _ = action.invoke(
        workspace=workspace,
        event=event,
        event_name="pull_request",
        run_id=run_id,
        inputs={"INPUT_ARTIFACT": ARTIFACT},
    )
    assert code == 2, log
    assert outputs["passed"] == "false"
    assert "over the size limit" in log
    assert action.github.storage_requests == []


def test_the_download_carries_the_token_to_the_api_only(setup):
    action = setup
    event = regressed_pull(action)
    code, log, _, _ = action.run(event=event, event_name="pull_request")
    assert code == 1, log
    (download,) = action.github.storage_requests
    assert "authorization" not in download.headers  # storage is another host


def test_results_never_pass_through_a_symbolic_link(setup):
    action = setup
    event = regressed_pull(action)
    outside = action.tmp / "outside"
    outside.mkdir()
    # The pipeline, in the gate's own job, swaps the results folder for a link elsewhere.
    shutil.rmtree(action.workspace / ".ragaliq")
    (action.workspace / ".ragaliq").symlink_to(outside)
    code, log, outputs, _ = action.run(event=event, event_name="pull_request", **ONE_JOB)
    assert code == 2, log
    assert ".ragaliq is a symbolic link" in log
    assert outputs["passed"] == "false"
    assert list(outside.iterdir()) == []


def test_a_case_over_the_gates_budget_stops_the_gate_before_any_call(setup):
    action = setup
    base = record_baseline_on_main(action)
    rows = cases()
    # Within the dataset's limits: 100,000 tokens of context, and a response of 200 sentences,
    # whose claims are verified against that context in batches: about 1,000,000 tokens.
    rows[0] = {
        **rows[0],
        "context": [rows[0]["context"][0] + " Filler." * 50_000],
        "response": " ".join(f"Item {i} ships in {i} days." for i in range(200)),
    }
    write_dataset(action.workspace, rows)
    # The pull request also proposes a budget that would let it through.
    (action.workspace / "ragaliq.yaml").write_text(
        (action.workspace / "ragaliq.yaml").read_text()
        + "  budget: {case_tokens: 100000000, run_tokens: 100000000}\n",
        encoding="utf-8",
    )
    head = action.commit("feature: a huge context")
    action.github.add_pull(REPO, 85, base_sha=base, head_sha=head)
    judged_before = action.anthropic.count()
    code, log, outputs, _ = action.run(event=pr_event(85, base, head), event_name="pull_request")
    assert code == 2, log
    assert "over the gate's budget per case (250,000 tokens" in log
    assert rows[0]["id"] in log
    assert outputs["passed"] == "false"
    assert action.anthropic.count() == judged_before  # nothing was spent

"""The Jenkins, Buildkite and CircleCI examples (docs/any-ci.md), their shell commands played.

Each example's file is read as its CI reads it (the Jenkinsfile's ``sh`` steps, the YAML's
commands), and its commands run in order in a clone of a repository whose main branch has the
quick start's config and a committed baseline, on a change with the quick start's regressed
outputs, with the offline judge. Installing the package is the one command not run: the clone's
``.ragaliq-venv`` is the environment these tests run in.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from junitparser import Failure, JUnitXml
from prometheus_client.openmetrics.parser import text_string_to_metric_families

from tests.conftest import REPO_ROOT

EXAMPLES = REPO_ROOT / "examples"
QUICKSTART = EXAMPLES / "quickstart"
_SH = re.compile(r"\bsh\s+'((?:[^'\\]|\\.)*)'")


def jenkins_commands() -> list[str]:
    return _SH.findall((EXAMPLES / "Jenkinsfile").read_text(encoding="utf-8"))


def buildkite_commands() -> list[str]:
    pipeline = yaml.safe_load((EXAMPLES / "buildkite" / "pipeline.yml").read_text("utf-8"))
    commands: list[str] = []
    for step in pipeline["steps"]:
        command = step.get("command") or step.get("commands") or []
        commands += [command] if isinstance(command, str) else command
    return commands


def circleci_commands() -> list[str]:
    config = yaml.safe_load((EXAMPLES / "circleci" / "config.yml").read_text("utf-8"))
    commands: list[str] = []
    for step in config["jobs"]["ragaliq-gate"]["steps"]:
        run: Any = step.get("run") if isinstance(step, dict) else None
        if run is not None:
            commands.append(run if isinstance(run, str) else run["command"])
    return commands


EXAMPLE_COMMANDS = {
    "jenkins": jenkins_commands,
    "buildkite": buildkite_commands,
    "circleci": circleci_commands,
}


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", *args], cwd=cwd, capture_output=True, text=True, check=True, timeout=60
    )
    return done.stdout.strip()


def environment(home: Path) -> dict[str, str]:
    keep = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "TMPDIR")}
    return {
        **keep,
        "HOME": str(home),
        "GIT_AUTHOR_NAME": "CI",
        "GIT_AUTHOR_EMAIL": "ci@example.com",
        "GIT_COMMITTER_NAME": "CI",
        "GIT_COMMITTER_EMAIL": "ci@example.com",
    }


@pytest.fixture(scope="module")
def origin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A bare origin whose main has the quick start's config, outputs and committed baseline."""
    root = tmp_path_factory.mktemp("any-ci")
    main = root / "main"
    main.mkdir()
    env = environment(root)
    git(main, "init", "-q", "-b", "main")
    for name in ("ragaliq.yaml", "rag_outputs.jsonl"):
        shutil.copy(QUICKSTART / name, main / name)
    recorded = subprocess.run(
        [sys.executable, "-m", "ragaliq", "baseline", "record"],
        cwd=main,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert recorded.returncode == 0, recorded.stdout + recorded.stderr
    assert (main / ".ragaliq" / "baseline.json").is_file()
    subprocess.run(["git", "add", "-A"], cwd=main, env=env, check=True)
    subprocess.run(["git", "commit", "-q", "-m", "bar"], cwd=main, env=env, check=True)
    bare = root / "origin.git"
    git(root, "clone", "-q", "--bare", str(main), str(bare))
    return bare


def checkout_of_change(origin: Path, where: Path) -> Path:
    """The CI's checkout of a change that regressed the outputs, main not fetched yet."""
    job = where / "job"
    git(where, "clone", "-q", "--single-branch", "--branch", "main", str(origin), str(job))
    git(job, "checkout", "-q", "-b", "feature")
    shutil.copy(QUICKSTART / "rag_outputs_pr.jsonl", job / "rag_outputs.jsonl")
    git(job, "-c", "user.name=CI", "-c", "user.email=ci@example.com", "commit", "-qam", "change")
    git(job, "update-ref", "-d", "refs/remotes/origin/main")
    (job / ".ragaliq-venv").symlink_to(Path(sys.prefix), target_is_directory=True)
    return job


def play(commands: list[str], job: Path, env: dict[str, str]) -> list[int]:
    codes = []
    for command in commands:
        if "pip install" in command:
            continue
        done = subprocess.run(
            ["bash", "-eo", "pipefail", "-c", command],
            cwd=job,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        codes.append(done.returncode)
        if done.returncode:
            assert "ragaliq gate" in command, (command, done.stdout, done.stderr)
            break
    return codes


@pytest.mark.parametrize("ci", sorted(EXAMPLE_COMMANDS))
def test_each_example_gates_on_the_exit_code_and_leaves_the_junit_it_publishes(
    ci: str, origin: Path, tmp_path: Path
):
    commands = EXAMPLE_COMMANDS[ci]()
    assert any("pip install" in c for c in commands)
    assert any("ragaliq gate --base origin/main" in c for c in commands)
    job = checkout_of_change(origin, tmp_path)
    codes = play(commands, job, environment(tmp_path))
    assert codes[-1] == 1, "the regressed change fails the step that runs the gate"
    xml = JUnitXml.fromfile(str(job / ".ragaliq" / "junit.xml"))
    suites = {suite.name: {test.name: test for test in suite} for suite in xml}
    failed = [
        name
        for name, test in suites["cases"].items()
        if any(isinstance(r, Failure) and r.type == "new_hallucination" for r in test.result)
    ]
    assert failed
    assert suites["gate"]["gate"].result[0].type == "gate"
    metrics = (job / ".ragaliq" / "metrics.txt").read_text(encoding="utf-8")
    names = {family.name for family in text_string_to_metric_families(metrics)}
    assert {"ragaliq_evaluator_score", "ragaliq_judge_cost_usd"} <= names
    assert (job / ".ragaliq" / "report.html").is_file()
    assert (job / ".ragaliq" / "comment.md").is_file()


def test_an_unchanged_change_passes_every_example(origin: Path, tmp_path: Path):
    job = checkout_of_change(origin, tmp_path)
    git(job, "checkout", "-q", "main", "--", "rag_outputs.jsonl")
    for ci, commands in EXAMPLE_COMMANDS.items():
        codes = play(commands(), job, environment(tmp_path))
        assert codes and set(codes) == {0}, ci

"""``ragaliq validate`` reads who may set pipeline variables from a fake GitLab over real HTTP."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragaliq.cli import cli
from tests.conftest import write_jsonl
from tests.fakes.gitlab_server import FakeGitLab

PROJECT = "acme/rag-app"
ROW = {
    "id": "ok-0",
    "query": "Can annual plans be refunded?",
    "context": ["Annual plans can be refunded within 14 days of purchase."],
    "response": "Annual plans can be refunded within 14 days of purchase.",
}


@pytest.fixture
def fake() -> Iterator[FakeGitLab]:
    with FakeGitLab() as server:
        server.add_project(PROJECT)
        yield server
        assert server.errors == []


@pytest.fixture
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in (
        "CI_SERVER_URL",
        "CI_API_V4_URL",
        "CI_PROJECT_ID",
        "CI_PROJECT_PATH",
        "RAGALIQ_GITLAB_TOKEN",
    ):
        monkeypatch.delenv(name, raising=False)
    write_jsonl(tmp_path / "data.jsonl", [ROW])
    (tmp_path / ".gitlab-ci.yml").write_text("include: ragaliq.gitlab-ci.yml\n", encoding="utf-8")
    path = tmp_path / "ragaliq.yaml"
    path.write_text("dataset: data.jsonl\njudge: {provider: offline}\n", encoding="utf-8")
    return path


def validate(config: Path, env: dict[str, str], *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["validate", "--config", str(config), *args], env=env)
    return result.exit_code, result.output


def project_requests(fake: FakeGitLab) -> list[str]:
    return [r.path for r in fake.requests if r.path.endswith("acme%2Frag-app")]


def test_validate_warns_while_developers_may_set_pipeline_variables(fake, config):
    env = {**fake.env(), "CI_PROJECT_PATH": PROJECT, "RAGALIQ_GITLAB_TOKEN": fake.token}
    code, output = validate(config, env)
    assert code == 0, output
    assert "warning: anyone with the Developer role may set pipeline variables" in output
    assert "ci_pipeline_variables_minimum_override_role is developer" in output
    assert "Maintainer" in output and "no_one_allowed" in output
    assert project_requests(fake)


@pytest.mark.parametrize("role", ["maintainer", "no_one_allowed"])
def test_validate_is_silent_while_only_maintainers_may(fake, config, role):
    fake.set_project(PROJECT, ci_pipeline_variables_minimum_override_role=role)
    env = {"CI_API_V4_URL": fake.api_url, "RAGALIQ_GITLAB_TOKEN": fake.token}
    code, output = validate(config, env, "--gitlab-project", PROJECT)
    assert code == 0, output
    assert "pipeline variables" not in output and "warning" not in output
    assert project_requests(fake)  # read, and found fine


def test_validate_says_in_one_line_why_it_skipped_the_check_without_a_token(fake, config):
    env = {**fake.env(), "CI_PROJECT_PATH": PROJECT}
    code, output = validate(config, env)
    assert code == 0, output
    (line,) = [x for x in output.splitlines() if "pipeline variables" in x]
    assert line.startswith("skipped:") and "no token (RAGALIQ_GITLAB_TOKEN)" in line
    assert "project" not in line.split(":", 2)[2]
    assert fake.requests == []


def test_validate_says_which_project_is_missing(fake, config):
    env = {**fake.env(), "RAGALIQ_GITLAB_TOKEN": fake.token}
    code, output = validate(config, env)
    assert code == 0, output
    assert "skipped: who may set pipeline variables was not checked: no project" in output
    assert fake.requests == []


def test_a_rejected_token_is_a_warning_not_a_failure(fake, config):
    env = {**fake.env(), "CI_PROJECT_PATH": PROJECT, "RAGALIQ_GITLAB_TOKEN": "glpat-wrong"}
    code, output = validate(config, env)
    assert code == 0, output
    assert "warning: who may set pipeline variables could not be read" in output
    assert "401" in output and "glpat-wrong" not in output


def test_validate_asks_nothing_without_a_gitlab_ci_file(fake, config):
    (config.parent / ".gitlab-ci.yml").unlink()
    env = {**fake.env(), "CI_PROJECT_PATH": PROJECT, "RAGALIQ_GITLAB_TOKEN": fake.token}
    code, output = validate(config, env)
    assert code == 0, output
    assert "pipeline variables" not in output
    assert fake.requests == []

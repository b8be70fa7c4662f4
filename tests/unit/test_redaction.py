"""Secrets never leave: what is registered, and what is taken out of text."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from ragaliq.cli import cli
from ragaliq.redaction import (
    REDACTED,
    forget_secrets,
    looks_secret,
    redact,
    register_env_secrets,
    register_secret,
)


@pytest.fixture(autouse=True)
def clean_registry():
    forget_secrets()
    yield
    forget_secrets()


def test_a_registered_secret_and_its_json_form_are_redacted():
    register_secret('sk-ant-api03-"quoted"-secret')
    text = 'key sk-ant-api03-"quoted"-secret and {"k": "sk-ant-api03-\\"quoted\\"-secret"}'
    assert redact(text) == f'key {REDACTED} and {{"k": "{REDACTED}"}}'


def test_values_named_like_secrets_are_redacted_only_when_shaped_like_one():
    register_env_secrets(
        {
            "OPENAI_API_KEY": "sk-proj-AbCd1234EfGh5678",
            "PR_TOKEN": "RagaliQ Gate failed",  # words: a PR could blank out the comment
            "FAKE_SECRET": "hallucinations",  # one kind of character
            "HOME": "/root/some-long-home-folder-1234",  # not named like a secret
            "INPUT_GITHUB-TOKEN": "short",
        },
        names=("INPUT_GITHUB-TOKEN",),
    )
    text = "sk-proj-AbCd1234EfGh5678 RagaliQ Gate failed hallucinations /root/some-long-home"
    assert redact(text) == f"{REDACTED} RagaliQ Gate failed hallucinations /root/some-long-home"
    assert looks_secret("ghs_16C7e42F292c6912E7710c838347Ae178B4a")
    assert not looks_secret("correct horse battery staple")


def test_debug_tracebacks_are_redacted(tmp_path):
    secret = "ghp_Debug1234567890abcdefXYZ"
    config = tmp_path / "ragaliq.yaml"
    config.write_text(f"dataset: {secret}.jsonl\n", encoding="utf-8")
    result = CliRunner().invoke(
        cli, ["--debug", "validate", "--config", str(config)], env={"MY_TOKEN": secret}
    )
    assert result.exit_code == 2
    assert "Traceback" in result.stderr
    assert secret not in result.output and secret not in result.stderr

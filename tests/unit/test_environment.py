"""What a gate honours of the job's environment: variables an earlier step set are not obeyed."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from ragaliq.config import JudgeConfig
from ragaliq.environment import AWS_HONOURED, harden_action_environment, is_dropped_in_gate
from ragaliq.errors import ConfigError

PEM = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"

PLANTED = {
    "ANTHROPIC_BASE_URL": "http://evil.example",
    "ANTHROPIC_BEDROCK_BASE_URL": "http://evil.example",
    "HTTPS_PROXY": "http://evil.example:3128",
    "http_proxy": "http://evil.example:3128",
    "ALL_PROXY": "socks5://evil.example",
    "NO_PROXY": "*",
    "SSL_CERT_FILE": "/tmp/evil-ca.pem",
    "SSL_CERT_DIR": "/tmp/evil-ca",
    "REQUESTS_CA_BUNDLE": "/tmp/evil-ca.pem",
    "CURL_CA_BUNDLE": "/tmp/evil-ca.pem",
    "RAGALIQ_CACHE_SECRET": "chosen-by-the-attacker-0123456789",
    "AWS_CONFIG_FILE": "/tmp/aws-config",
    "AWS_SHARED_CREDENTIALS_FILE": "/tmp/aws-credentials",
    "AWS_PROFILE": "evil",
    "AWS_ENDPOINT_URL": "http://evil.example",
    "AWS_ENDPOINT_URL_BEDROCK_RUNTIME": "http://evil.example",
    "AWS_CA_BUNDLE": "/tmp/evil-ca.pem",
    "GIT_CONFIG_COUNT": "1",
    "GIT_CONFIG_KEY_0": "core.fsmonitor",
    "GIT_CONFIG_VALUE_0": "/tmp/evil.sh",
    "OPENSSL_CONF": "/tmp/evil.cnf",
    "SSLKEYLOGFILE": "/tmp/keys.log",
    "NETRC": "/tmp/netrc",
    "GOOGLE_EXTERNAL_ACCOUNT_ALLOW_EXECUTABLES": "1",
}
HONOURED = {
    "PATH": "/usr/bin:/bin",
    "AWS_ACCESS_KEY_ID": "AKIAEXAMPLEEXAMPLE",
    "AWS_SECRET_ACCESS_KEY": "secret/EXAMPLE/0123456789",
    "AWS_SESSION_TOKEN": "token",
    "AWS_REGION": "us-east-1",
    "GOOGLE_CLOUD_PROJECT": "my-project",
    "CLOUD_ML_REGION": "us-east5",
    "ANTHROPIC_API_KEY": "sk-ant-api03-key",
    "GITHUB_API_URL": "https://api.github.com",
}


def gate_env(**inputs: str) -> dict[str, str]:
    env = {**PLANTED, **HONOURED, "INPUT_MODE": "gate"}
    env.update({f"INPUT_{k.upper().replace('_', '-')}": v for k, v in inputs.items()})
    return env


def test_a_gate_drops_every_variable_an_earlier_step_could_turn_against_it(tmp_path):
    env = gate_env()
    hardening = harden_action_environment(env)
    assert not set(PLANTED) & set(env)
    assert {k: env[k] for k in HONOURED} == HONOURED
    assert hardening.dropped == tuple(sorted(PLANTED))
    assert hardening.problem is None
    (notice,) = hardening.notices
    for name in PLANTED:
        assert name in notice
    assert "evil" not in notice  # the notice names the variables, never their values
    home = Path(env["HOME"])
    assert home.is_dir() and not any(home.iterdir())


def test_the_workflows_inputs_stand_in_for_what_was_dropped(tmp_path):
    (tmp_path / "certs").mkdir()
    (tmp_path / "certs" / "corp.pem").write_text(PEM, encoding="utf-8")
    env = gate_env(
        https_proxy="http://proxy.corp:3128",
        cache_secret="s3cret-from-a-secret",
        ca_bundle="certs/corp.pem",
    )
    env["GITHUB_WORKSPACE"] = str(tmp_path)
    hardening = harden_action_environment(env)
    assert env["HTTPS_PROXY"] == env["https_proxy"] == "http://proxy.corp:3128"
    assert env["RAGALIQ_CACHE_SECRET"] == "s3cret-from-a-secret"
    copy = Path(env["SSL_CERT_FILE"])
    assert env["REQUESTS_CA_BUNDLE"] == str(copy)
    assert copy.read_text(encoding="utf-8") == PEM
    assert not copy.is_relative_to(tmp_path)  # a private copy, out of the workspace's reach
    assert set(hardening.taken_from_inputs) == {"https-proxy", "cache-secret", "ca-bundle"}


@pytest.mark.parametrize(
    ("make", "expected"),
    [
        (lambda ws: (ws / "ca.pem").symlink_to("/etc/ssl/certs/ca-certificates.crt"), "symbolic"),
        (lambda ws: (ws / "ca.pem").write_text("not a certificate"), "not a PEM bundle"),
        (lambda ws: None, "not in the workspace"),
    ],
)
def test_a_ca_bundle_input_that_is_not_a_plain_pem_file_in_the_workspace_stops_the_gate(
    tmp_path, make, expected
):
    make(tmp_path)
    env = gate_env(ca_bundle="ca.pem")
    env["GITHUB_WORKSPACE"] = str(tmp_path)
    hardening = harden_action_environment(env)
    assert hardening.problem is not None and expected in hardening.problem
    assert "SSL_CERT_FILE" not in env


def test_recording_the_baseline_on_main_honours_the_environment_but_never_openssls_config():
    env = {**PLANTED, **HONOURED, "INPUT_MODE": "update-baseline"}
    hardening = harden_action_environment(env)
    assert env["HTTPS_PROXY"] == PLANTED["HTTPS_PROXY"]
    assert "OPENSSL_CONF" not in env and "SSLKEYLOGFILE" not in env
    assert hardening.dropped == ("OPENSSL_CONF", "SSLKEYLOGFILE")


def test_only_plain_aws_values_are_honoured():
    for name in AWS_HONOURED:
        assert not is_dropped_in_gate(name)
    for name in ("AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_X"):
        assert is_dropped_in_gate(name)


def test_google_credentials_that_name_a_program_are_dropped(tmp_path):
    harmless = tmp_path / "sa.json"
    harmless.write_text(json.dumps({"type": "service_account", "project_id": "p"}))
    program = tmp_path / "exec.json"
    program.write_text(
        json.dumps(
            {
                "type": "external_account",
                "credential_source": {"executable": {"command": "/tmp/evil.sh"}},
            }
        )
    )
    assert not is_dropped_in_gate("GOOGLE_APPLICATION_CREDENTIALS", str(harmless))
    assert is_dropped_in_gate("GOOGLE_APPLICATION_CREDENTIALS", str(program))
    assert is_dropped_in_gate("GOOGLE_APPLICATION_CREDENTIALS", str(tmp_path / "missing.json"))


@pytest.fixture
def process_environment():
    """``os.environ`` as it was, put back after a test that hardens it for real."""
    saved = dict(os.environ)
    yield os.environ
    os.environ.clear()
    os.environ.update(saved)


def test_an_aws_credential_process_planted_by_an_earlier_step_never_runs(
    tmp_path, process_environment
):
    pytest.importorskip("botocore")
    from ragaliq.judges.platforms import bedrock_platform

    marker = tmp_path / "ran"
    program = tmp_path / "creds.sh"
    program.write_text(f"#!/bin/sh\ntouch {marker}\necho '{{\"Version\": 1}}'\n")
    program.chmod(0o755)
    config = tmp_path / "aws-config"
    config.write_text(f"[profile evil]\ncredential_process = {program}\nregion = us-east-1\n")
    for name in list(process_environment):
        if name.startswith("AWS_"):
            del process_environment[name]
    process_environment.update(
        {"AWS_CONFIG_FILE": str(config), "AWS_PROFILE": "evil", "INPUT_MODE": "gate"}
    )
    harden_action_environment(process_environment)
    with pytest.raises(ConfigError):
        bedrock_platform(JudgeConfig(provider="bedrock", region="us-east-1"), process_environment)
    assert not marker.exists()

"""Where the key goes: the judge's endpoint comes from trusted inputs only."""

from __future__ import annotations

from ragaliq.config import JudgeConfig
from ragaliq.judges.factory import build_judge, trusted_endpoint_env

KEY = "sk-ant-endpoint-test"
EVIL = "http://evil.example"


def test_a_gate_drops_an_endpoint_from_the_jobs_environment_and_says_so():
    env = {"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": EVIL, "PATH": "/bin"}
    judge_env, notices = trusted_endpoint_env(env, base_url="", gate=True)
    assert "ANTHROPIC_BASE_URL" not in judge_env
    assert judge_env["ANTHROPIC_API_KEY"] == KEY
    assert len(notices) == 1 and "ANTHROPIC_BASE_URL" in notices[0]
    assert EVIL not in notices[0]  # the notice names the variable, not where it pointed


def test_the_workflows_input_is_the_endpoint_in_every_mode():
    env = {"ANTHROPIC_BASE_URL": EVIL}
    for gate in (True, False):
        judge_env, _ = trusted_endpoint_env(env, base_url="http://gateway.internal", gate=gate)
        assert judge_env["ANTHROPIC_BASE_URL"] == "http://gateway.internal"


def test_outside_a_gate_the_environment_may_name_the_endpoint():
    judge_env, notices = trusted_endpoint_env({"ANTHROPIC_BASE_URL": EVIL}, base_url="", gate=False)
    assert judge_env["ANTHROPIC_BASE_URL"] == EVIL
    assert notices == ()


async def test_the_sdk_never_reads_the_endpoint_from_the_process_environment(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_BASE_URL", EVIL)  # what a PR's step left in $GITHUB_ENV
    judge_env, _ = trusted_endpoint_env({"ANTHROPIC_API_KEY": KEY}, base_url="", gate=True)
    choice = build_judge(JudgeConfig(cache=False), env=judge_env, cache_path=None)
    assert choice.claude is not None
    assert str(choice.claude.client.base_url).startswith("https://api.anthropic.com")
    assert choice.judge.info.endpoint is None
    await choice.judge.aclose()


async def test_the_configs_base_url_comes_first(monkeypatch):
    config = JudgeConfig(base_url="http://trusted.internal", cache=False)
    env = {"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": "http://input.internal"}
    choice = build_judge(config, env=env, cache_path=None)
    assert choice.judge.info.endpoint == "http://trusted.internal"
    await choice.judge.aclose()

"""Where the key goes: the judge's endpoint comes from trusted inputs only."""

from __future__ import annotations

from ragaliq.config import JudgeConfig
from ragaliq.environment import harden_action_environment
from ragaliq.judges.factory import build_judge

KEY = "sk-ant-endpoint-test"
EVIL = "http://evil.example"


async def test_the_sdk_never_reads_the_endpoint_from_the_process_environment(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_BASE_URL", EVIL)  # what a PR's step left in $GITHUB_ENV
    choice = build_judge(JudgeConfig(cache=False), env={"ANTHROPIC_API_KEY": KEY}, cache_path=None)
    assert choice.claude is not None
    assert str(choice.claude.client.base_url).startswith("https://api.anthropic.com")
    assert choice.judge.info.endpoint is None
    await choice.judge.aclose()


async def test_a_gates_judge_never_gets_an_endpoint_an_earlier_step_set():
    environ = {"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": EVIL, "INPUT_MODE": "gate"}
    harden_action_environment(environ)
    choice = build_judge(JudgeConfig(cache=False), env=environ, cache_path=None)
    assert choice.claude is not None
    assert str(choice.claude.client.base_url).startswith("https://api.anthropic.com")
    await choice.judge.aclose()


async def test_the_configs_base_url_comes_first():
    config = JudgeConfig(base_url="http://trusted.internal", cache=False)
    env = {"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": "http://input.internal"}
    choice = build_judge(config, env=env, cache_path=None)
    assert choice.judge.info.endpoint == "http://trusted.internal"
    await choice.judge.aclose()

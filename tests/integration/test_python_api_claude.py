"""The Python API judges with Claude over real HTTP, and keeps the key out of what it returns."""

from __future__ import annotations

from ragaliq import evaluate
from ragaliq.config import GateConfig
from tests.conftest import make_case
from tests.fakes.anthropic_server import Fault

KEY = "sk-ant-api03-Python_Api-0123456789abcdef"


def test_a_key_an_api_error_echoes_is_redacted_from_the_python_apis_results(
    tmp_path, monkeypatch, fake_anthropic
):
    monkeypatch.chdir(tmp_path)
    fake_anthropic.enqueue(Fault(400, message=f"invalid request for x-api-key {KEY}"))
    config = GateConfig.model_validate({"judge": {"provider": "claude", "max_retries": 0}})
    report = evaluate(
        [make_case()],
        config=config,
        env={"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": fake_anthropic.base_url},
    )
    shown = report.model_dump_json()
    assert len(fake_anthropic.requests) >= 1
    assert report.cases[0].status == "error"
    assert KEY not in shown
    assert "[redacted]" in (report.cases[0].error or "")


def test_a_session_keeps_claudes_verdicts_in_its_own_judge_cache(tmp_path, fake_anthropic):
    from ragaliq.testing import JudgeSession

    cache = tmp_path / "verdicts.sqlite"
    config = GateConfig.model_validate({"judge": {"provider": "claude", "cache": True}})
    env = {"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": fake_anthropic.base_url}
    first = JudgeSession(config=config, env=env, cache_path=cache)
    first.assert_quality(make_case(), faithfulness=0.5)
    calls = fake_anthropic.count()
    assert calls >= 1 and cache.is_file()
    # Another session on the same cache file judges the same case without a call.
    again = JudgeSession(config=config, env=env, cache_path=cache)
    again.assert_quality(make_case(), faithfulness=0.5)
    assert fake_anthropic.count() == calls
    assert again.usage.cache_hits == calls

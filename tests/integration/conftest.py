from __future__ import annotations

from collections.abc import Iterator

import pytest

from ragaliq.config import JudgeConfig
from ragaliq.judges.claude import ClaudeJudge
from tests.fakes.anthropic_server import FakeAnthropic
from tests.fakes.claude_sim import claude_like
from tests.fakes.sleeps import SleepLog
from tests.integration.chromium import Browser, find_browser

TEST_MODEL = "claude-sonnet-5-5"


@pytest.fixture
def fake_anthropic() -> Iterator[FakeAnthropic]:
    with FakeAnthropic(claude_like()) as fake:
        yield fake


@pytest.fixture
def sleeps() -> SleepLog:
    return SleepLog()


@pytest.fixture
def make_judge(fake_anthropic: FakeAnthropic, sleeps: SleepLog):
    judges: list[ClaudeJudge] = []

    def build(**config) -> ClaudeJudge:
        # The fake plays Anthropic's API, which honours the schema: no probing of the endpoint.
        values = {"model": TEST_MODEL, "max_retries": 3, "structured_output": "schema", **config}
        judge = ClaudeJudge(
            JudgeConfig.model_validate(values),
            api_key="sk-ant-test",
            base_url=fake_anthropic.base_url,
            sleep=sleeps.wait,
        )
        judges.append(judge)
        return judge

    return build


@pytest.fixture(scope="module")
def chromium() -> Iterator[Browser]:
    """One headless Chromium for a module's tests, 1280 px wide; skipped only without one."""
    found = find_browser()
    if found is None:
        pytest.skip(
            "no headless browser found: install Chromium (Debian: apt-get install chromium) "
            "or put chromium-browser or google-chrome on PATH"
        )
    with Browser(found, width=1280, height=1000) as browser:
        yield browser

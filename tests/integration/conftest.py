from __future__ import annotations

from collections.abc import Iterator

import pytest

from ragaliq.config import JudgeConfig
from ragaliq.judges.claude import ClaudeJudge
from tests.fakes.anthropic_server import FakeAnthropic
from tests.fakes.claude_sim import claude_like

TEST_MODEL = "claude-sonnet-5-5"


@pytest.fixture
def fake_anthropic() -> Iterator[FakeAnthropic]:
    with FakeAnthropic(claude_like()) as fake:
        yield fake


class SleepLog:
    """Records the delays the judge asks for and yields without waiting."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


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
            sleep=sleeps,
        )
        judges.append(judge)
        return judge

    return build

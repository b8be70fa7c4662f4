from __future__ import annotations

import shutil

import pytest

from tests.e2e.workspace import TOKEN, Action
from tests.fakes.anthropic_server import FakeAnthropic
from tests.fakes.claude_sim import claude_like
from tests.fakes.github_server import FakeGitHub


@pytest.fixture
def setup(tmp_path):
    if shutil.which("git") is None:
        pytest.skip("git is needed to play the workspace")
    with FakeAnthropic(claude_like()) as anthropic, FakeGitHub(token=TOKEN) as github:
        yield Action(tmp_path, anthropic, github)

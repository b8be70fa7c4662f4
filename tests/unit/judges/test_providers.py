"""The provider table: one row per ``judge.provider``, and what each builds, records and offers."""

from __future__ import annotations

import subprocess
import sys
from typing import get_args

import pytest

from ragaliq.config import JudgeConfig
from ragaliq.judges.factory import build_judge, describe_judge, has_credentials
from ragaliq.judges.providers import AUTO, PROVIDER_OF_RECORD, PROVIDERS, provider_for

KEY = {"ANTHROPIC_API_KEY": "sk-ant-test"}
AWS = {
    "AWS_ACCESS_KEY_ID": "AKIDFAKEEXAMPLE",
    "AWS_SECRET_ACCESS_KEY": "fake-secret-access-key",
    "AWS_REGION": "us-east-1",
}
GOOGLE = {"CLOUD_ML_REGION": "us-east5", "GOOGLE_CLOUD_PROJECT": "rag-evals"}


def test_every_config_provider_has_a_row_and_auto_is_the_only_one_without():
    in_config = set(get_args(JudgeConfig.model_fields["provider"].annotation))
    assert in_config == {*PROVIDERS, AUTO}


def test_reports_keep_their_names_and_map_back_to_the_config():
    recorded = {
        "offline": "offline",
        "anthropic": "claude",
        "cascade": "cascade",
        "bedrock": "bedrock",
        "vertex": "vertex",
    }
    assert PROVIDER_OF_RECORD.items() >= recorded.items()
    assert len(PROVIDER_OF_RECORD) == len(PROVIDERS)  # one recorded name per provider


def test_only_anthropics_api_has_batches():
    assert {name for name, p in PROVIDERS.items() if p.batches} == {"claude", "cascade"}
    platforms = {
        "offline": None,
        "claude": "anthropic",
        "bedrock": "bedrock",
        "vertex": "vertex",
        "cascade": "anthropic",
    }
    assert {name: p.platform for name, p in PROVIDERS.items()}.items() >= platforms.items()


@pytest.mark.parametrize("name", sorted(PROVIDERS))
def test_what_a_provider_is_described_as_is_what_its_row_records(name):
    config = JudgeConfig.model_validate({"provider": name})
    info = describe_judge(config, env={**KEY, **AWS, **GOOGLE})
    assert info.provider == PROVIDERS[name].recorded_as


@pytest.mark.parametrize("name", ["offline", "claude", "cascade", "bedrock"])
async def test_what_a_provider_builds_records_what_it_is_described_as(name, tmp_path):
    config = JudgeConfig.model_validate({"provider": name})
    env = {**KEY, **AWS}
    choice = build_judge(config, env=env, cache_path=tmp_path / "cache.sqlite")
    try:
        assert choice.judge.info.provider == PROVIDERS[name].recorded_as
        assert choice.judge.info == describe_judge(config, env=env)
    finally:
        await choice.judge.aclose()


def test_auto_is_claude_with_a_key_and_offline_without():
    config = JudgeConfig.model_validate({})
    assert provider_for(config, KEY).name == "claude"
    assert provider_for(config, {}).name == "offline"
    assert not has_credentials(config, {})
    assert has_credentials(config, KEY)


def test_the_table_loads_no_sdk_and_no_judge():
    code = (
        "import sys, ragaliq.judges.providers\n"
        "print('\\n'.join(m for m in sys.modules if m.startswith(('anthropic', 'ragaliq.judges'))))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert set(done.stdout.split()) == {
        "ragaliq.judges",
        "ragaliq.judges.platforms",
        "ragaliq.judges.providers",
    }

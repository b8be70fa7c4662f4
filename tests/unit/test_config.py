from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from ragaliq.config import GateConfig, config_json_schema, load_config, parse_config
from ragaliq.errors import ConfigError
from ragaliq.models import Verdict


def error_of(text: str) -> str:
    with pytest.raises(ConfigError) as info:
        parse_config(text, name="ragaliq.yaml")
    return str(info.value)


def test_threshold_out_of_range_reads_like_the_spec():
    message = error_of("evaluators:\n  faithfulness:\n    threshold: 1.7\n")
    assert message == (
        "ragaliq.yaml: evaluators.faithfulness.threshold: must be between 0 and 1 (got 1.7)"
    )


def test_unknown_key_suggests_the_nearest_valid_one():
    message = error_of("evaluators:\n  hallucination:\n    treshold: 0.8\n")
    assert message == (
        "ragaliq.yaml: evaluators.hallucination.treshold: unknown key 'treshold'; "
        "did you mean 'threshold'?"
    )


def test_unknown_top_level_key_suggests_too():
    assert "did you mean 'evaluators'?" in error_of("evaluator:\n  relevance: {}\n")


def test_unknown_key_far_from_any_lists_the_valid_ones():
    message = error_of("judge:\n  colour: blue\n")
    assert "unknown key 'colour'; valid keys are" in message
    assert "provider" in message


def test_wrong_type_names_the_type_and_value():
    message = error_of("judge:\n  concurrency: many\n")
    assert message == "ragaliq.yaml: judge.concurrency: must be a whole number (got string 'many')"


def test_bad_choice_lists_the_choices():
    message = error_of("evaluators:\n  faithfulness:\n    preset: lenient\n")
    assert (
        "evaluators.faithfulness.preset: must be one of 'standard', 'axion' or 'strict'" in message
    )
    assert "(got string 'lenient')" in message


def test_bad_verdict_name_in_verdict_scores():
    message = error_of("evaluators:\n  faithfulness:\n    verdict_scores:\n      MAYBE: 0.5\n")
    assert "evaluators.faithfulness.verdict_scores.MAYBE" in message
    assert "SUPPORTED" in message


def test_verdict_weight_range():
    message = error_of("evaluators:\n  faithfulness:\n    verdict_scores:\n      SUPPORTED: 1.5\n")
    assert (
        "evaluators.faithfulness.verdict_scores.SUPPORTED: must be at most 1 (got 1.5)" in message
    )


def test_concurrency_bounds():
    assert error_of("judge:\n  concurrency: 0\n").endswith(
        "judge.concurrency: must be >= 1 (got 0)"
    )


def test_invalid_yaml_gives_the_line():
    message = error_of("judge:\n  provider: [unclosed\n")
    assert message.startswith("ragaliq.yaml:")
    assert "invalid YAML" in message


def test_top_level_must_be_a_mapping():
    assert "must be a mapping" in error_of("- a\n- b\n")


def test_several_problems_are_all_reported():
    message = error_of("judge:\n  concurrency: 0\nevaluators:\n  relevance:\n    threshold: -1\n")
    assert len(message.splitlines()) == 2


def test_missing_file_says_how_to_fix(tmp_path: Path):
    with pytest.raises(ConfigError, match="not found"):
        load_config(tmp_path / "ragaliq.yaml")


def test_a_missing_file_names_the_option_of_the_edge_that_asked(tmp_path: Path):
    with pytest.raises(ConfigError) as cli:
        load_config(tmp_path / "nope.yaml")
    assert "pass --config with the right path" in str(cli.value)
    with pytest.raises(ConfigError) as plugin:
        load_config(tmp_path / "nope.yaml", named_by="--ragaliq-config")
    assert "pass --ragaliq-config with the right path" in str(plugin.value)
    assert "--config " not in str(plugin.value)


def test_empty_file_means_all_defaults():
    config = parse_config("")
    assert config.judge.provider == "auto"
    assert config.evaluators.faithfulness.threshold is None
    assert config.gate.on_error == "fail"


def test_valid_config_round_trip():
    config = parse_config(
        "dataset: out.jsonl\n"
        "evaluators:\n"
        "  faithfulness: {threshold: 0.9, preset: axion, verdict_scores: {NOT_ENOUGH_INFO: 0.2}}\n"
        "  relevance: {enabled: false}\n"
    )
    assert config.dataset == "out.jsonl"
    assert config.evaluators.faithfulness.verdict_scores == {Verdict.NOT_ENOUGH_INFO: 0.2}
    assert config.evaluators.relevance.enabled is False


def test_api_key_never_shows_in_repr():
    config = parse_config("judge:\n  api_key: sk-ant-secret-value\n")
    assert "sk-ant-secret-value" not in repr(config)
    assert "sk-ant-secret-value" not in config.model_dump_json()


def test_json_schema_is_valid_json_and_complete():
    schema = json.loads(config_json_schema())
    assert schema["title"] == "ragaliq.yaml"
    assert set(schema["properties"]) == set(GateConfig.model_fields)
    assert schema["additionalProperties"] is False


def test_nesting_too_deep_for_the_yaml_parser_is_a_clear_error():
    with pytest.raises(
        ConfigError, match=r"^ragaliq\.yaml:1: invalid YAML: nested too deeply to read \(more than"
    ):
        parse_config("[" * 100_000)


@pytest.mark.parametrize(
    "text",
    [
        "judge: sk-ant-api03-SECRET123\n",
        "judge: {api_key: 12345678901234}\n",
        "judge: {api_key: [sk-ant-api03-SECRET123]}\n",
        "gate: {fail_on_new_hallucinations: ghp_SECRET4567890abcdef}\n",
    ],
)
def test_a_value_that_may_be_a_secret_is_never_echoed(text):
    with pytest.raises(ConfigError) as info:
        parse_config(text)
    message = str(info.value)
    assert "SECRET" not in message
    assert "12345678901234" not in message
    assert message.startswith(("ragaliq.yaml: judge", "ragaliq.yaml: gate"))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("evaluators: {faithfulness: {threshold: true}}\n", "must be a number (got boolean True)"),
        ("evaluators: {faithfulness: {threshold: '0.7'}}\n", "must be a number (got string"),
        ("judge: {concurrency: true}\n", "must be a whole number (got boolean True)"),
        ("judge: {timeout_s: .inf}\n", "must be a finite number"),
        ("judge: {cache: 'yes'}\n", "must be true or false (got string 'yes')"),
    ],
)
def test_numbers_and_flags_are_not_coerced(text, expected):
    with pytest.raises(ConfigError, match=re.escape(expected)):
        parse_config(text)


def test_whole_numbers_are_fine_where_a_number_is_expected():
    config = parse_config("evaluators: {faithfulness: {threshold: 1}}\njudge: {timeout_s: 30}\n")
    assert config.evaluators.faithfulness.threshold == 1.0
    assert config.judge.timeout_s == 30.0


def test_at_least_one_evaluator_stays_enabled():
    text = "evaluators:\n" + "".join(
        f"  {name}: {{enabled: false}}\n" for name in ("faithfulness", "hallucination", "relevance")
    )
    with pytest.raises(ConfigError, match="evaluators: every evaluator is disabled"):
        parse_config(text)


def test_a_key_given_twice_is_reported_at_its_line():
    text = "judge:\n  provider: offline\n  provider: claude\n"
    with pytest.raises(ConfigError, match=r"^ragaliq\.yaml:3: invalid YAML: the key 'provider'"):
        parse_config(text)


@pytest.mark.parametrize("key", ["dataset", "baseline"])
def test_an_empty_file_name_is_an_error_not_a_folder(key):
    with pytest.raises(ConfigError, match=f"^ragaliq.yaml: {key}: must name a file"):
        parse_config(f'{key}: ""\n')


def test_yaml_merge_keys_still_work():
    text = (
        "evaluators:\n"
        "  faithfulness: &base {threshold: 0.7, max_drop: 0.1}\n"
        "  hallucination: {<<: *base, threshold: 0.8}\n"
    )
    config = parse_config(text)
    assert config.evaluators.hallucination.threshold == 0.8
    assert config.evaluators.hallucination.max_drop == 0.1


def test_axions_own_override_example_is_read_with_axions_verdict_names():
    config = parse_config(
        "evaluators:\n"
        "  faithfulness:\n"
        "    verdict_scores:\n"
        "      FULLY_SUPPORTED: 1.0\n"
        "      PARTIALLY_SUPPORTED: 0.75\n"
        "      NO_EVIDENCE: -0.5\n"
        "      CONTRADICTORY: -2.0\n"
    )
    assert config.evaluators.faithfulness.verdict_scores == {
        Verdict.SUPPORTED: 1.0,
        Verdict.PARTIALLY_SUPPORTED: 0.75,
        Verdict.NOT_ENOUGH_INFO: -0.5,
        Verdict.CONTRADICTED: -2.0,
    }


def test_a_verdict_weight_in_lower_case_is_the_verdict_but_two_names_for_one_is_an_error():
    config = parse_config("evaluators: {faithfulness: {verdict_scores: {contradicted: -1}}}\n")
    assert config.evaluators.faithfulness.verdict_scores == {Verdict.CONTRADICTED: -1.0}
    with pytest.raises(ConfigError) as caught:
        parse_config(
            "evaluators: {faithfulness: {verdict_scores: {CONTRADICTED: -1, CONTRADICTORY: -2}}}\n"
        )
    assert (
        "evaluators.faithfulness.verdict_scores: CONTRADICTED and CONTRADICTORY name the same "
        "verdict (CONTRADICTED); keep one" in str(caught.value)
    )


def test_a_verdict_weight_above_one_or_an_unknown_verdict_is_an_error():
    with pytest.raises(ConfigError) as caught:
        parse_config("evaluators: {faithfulness: {verdict_scores: {SUPPORTED: 2}}}\n")
    assert "must be at most 1" in str(caught.value)
    with pytest.raises(ConfigError) as caught:
        parse_config("evaluators: {faithfulness: {verdict_scores: {MOSTLY_TRUE: 0.5}}}\n")
    assert "MOSTLY_TRUE" in str(caught.value)


@pytest.mark.parametrize(
    "section",
    ["context_precision: {}", "context_precision:", "context_precision: {threshold: 0.5}"],
)
def test_writing_the_section_of_an_evaluator_that_is_off_by_default_turns_it_on(section):
    config = parse_config(f"evaluators:\n  {section}\n")
    assert config.evaluators.context_precision.enabled is True
    assert config.evaluators.context_recall.enabled is False  # not written: still off
    assert config.evaluators.faithfulness.enabled is True


def test_enabled_false_in_a_written_section_keeps_it_off():
    config = parse_config("evaluators:\n  context_recall: {enabled: false, threshold: 0.5}\n")
    assert config.evaluators.context_recall.enabled is False


def test_the_schema_shows_each_evaluators_effective_defaults():
    from ragaliq.evaluators import EVALUATORS

    schema = json.loads(config_json_schema())
    defs = schema["$defs"]

    def resolved(node: dict) -> dict:
        while "$ref" in node:
            node = defs[node["$ref"].rsplit("/", 1)[1]]
        return node

    sections = resolved(schema["properties"]["evaluators"])["properties"]
    for evaluator in EVALUATORS:
        options = resolved(sections[evaluator.name])["properties"]
        assert options["threshold"]["default"] == evaluator.default_threshold, evaluator.name
        # Writing a section turns its evaluator on, whatever its default when left out.
        assert options["enabled"]["default"] is True, evaluator.name
    for name in ("context_precision", "context_recall"):
        enabled = resolved(sections[name])["properties"]["enabled"]["description"]
        assert "off" in enabled and "enabled: false" in enabled, enabled
    assert GateConfig().evaluators.faithfulness.threshold is None  # the config itself unchanged

"""The pytest plugin, run in a pytester session as a team's own suite would use it."""

from __future__ import annotations

import json

import pytest

pytest_plugins = ["pytester"]

CONTEXT = ["Annual plans can be refunded within 14 days of purchase. Monthly plans are not."]
FAITHFUL = "Annual plans can be refunded within 14 days of purchase."
INVENTED = "Annual plans can be refunded within 90 days, and monthly plans within 7 days."


def case(case_id: str, response: str) -> dict:
    return {"id": case_id, "query": "Can I get a refund?", "context": CONTEXT, "response": response}


@pytest.fixture
def suite(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makefile(
        ".jsonl",
        rag_outputs="\n".join(
            json.dumps(c) for c in [case("good", FAITHFUL), case("bad", INVENTED)]
        ),
    )
    pytester.makefile(".yaml", ragaliq="judge: {provider: offline, cache: false}\n")
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    return pytester


def test_a_passing_and_a_failing_assertion_with_the_claims_behind_it(suite):
    suite.makepyfile(
        """
        import pytest

        @pytest.mark.ragaliq_dataset("rag_outputs.jsonl")
        def test_rag_quality(rag_case, assert_rag_quality):
            assert_rag_quality(rag_case, faithfulness=0.8, hallucination=0.9)
        """
    )
    result = suite.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*case 'bad': faithfulness*below the threshold 0.8*", "*90 days*"])
    result.stdout.fnmatch_lines(["*ragaliq: 2 cases judged (offline) · * judge calls*cache hits*"])


def failure_section(result: pytest.RunResult) -> str:
    """What pytest printed between FAILURES and the short summary."""
    out = result.stdout.str()
    return out.split("= FAILURES =")[1].split("short test summary")[0]


def test_a_failing_case_fails_on_the_default_thresholds_with_a_short_message(suite):
    suite.makepyfile(
        """
        import pytest

        @pytest.mark.ragaliq_dataset("rag_outputs.jsonl")
        def test_rag_quality(rag_case, assert_rag_quality):
            assert_rag_quality(rag_case)
        """
    )
    result = suite.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1)
    shown = failure_section(result)
    assert "case 'bad': faithfulness: 0.000 is below the threshold 0.7: 1 claim" in shown
    assert "hallucination: 0.000 is below the threshold 0.8" in shown
    assert "  - contradicted: Annual plans can be refunded within 90 days" in shown
    # No traceback: neither the library's frames nor the test's own source, nor a chain.
    assert "ragaliq/" not in shown and "exception" not in shown and "def check" not in shown
    assert len(shown.strip().splitlines()) < 15, shown


def test_the_markers_path_is_the_test_files_folders_from_any_directory(suite, monkeypatch):
    data = suite.mkdir("tests_rag")
    (suite.path / "rag_outputs.jsonl").rename(data / "cases.jsonl")
    (data / "test_rag.py").write_text(
        "import pytest\n\n"
        "@pytest.mark.ragaliq_dataset('cases.jsonl')\n"
        "def test_case(rag_case):\n"
        "    assert rag_case.id in {'good', 'bad'}\n\n"
        "def test_load(ragaliq_cases):\n"
        "    assert [c.id for c in ragaliq_cases('cases.jsonl')] == ['good', 'bad']\n",
        encoding="utf-8",
    )
    elsewhere = suite.mkdir("elsewhere")
    for cwd in (suite.path, data, elsewhere):
        monkeypatch.chdir(cwd)
        result = suite.runpytest("-p", "no:cacheprovider", str(data))
        result.assert_outcomes(passed=3)


def collection_error(suite: pytest.Pytester, dataset: str) -> pytest.RunResult:
    """A test marked with ``dataset``, run: one collection error, without library frames."""
    suite.makepyfile(
        test_marked=f"""
        import pytest

        @pytest.mark.ragaliq_dataset({dataset!r})
        def test_case(rag_case):
            pass
        """
    )
    result = suite.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    assert "site-packages" not in result.stdout.str() and "ragaliq/" not in result.stdout.str()
    return result


def test_a_wrong_marker_path_is_one_clear_collection_error(suite):
    result = collection_error(suite, "missing.jsonl")
    assert "--dataset" not in result.stdout.str()
    result.stdout.fnmatch_lines(
        [
            "*@pytest.mark.ragaliq_dataset: *missing.jsonl: not found; a relative path is read "
            "from the test file's folder*"
        ]
    )


def test_a_marker_path_written_from_the_root_says_where_the_file_is(suite):
    tests = suite.mkdir("tests_rag")
    (tests / "test_rag.py").write_text(
        "import pytest\n\n"
        "@pytest.mark.ragaliq_dataset('rag_outputs.jsonl')\n"
        "def test_case(rag_case):\n"
        "    pass\n",
        encoding="utf-8",
    )
    result = suite.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*write '../rag_outputs.jsonl'*"])


def test_a_missing_config_names_the_plugins_own_option_and_not_the_marker(suite):
    suite.makepyfile(
        """
        import pytest

        @pytest.mark.ragaliq_dataset("rag_outputs.jsonl")
        def test_case(rag_case):
            pass
        """
    )
    result = suite.runpytest("-p", "no:cacheprovider", "--ragaliq-config", "nope.yaml")
    result.assert_outcomes(errors=1)
    out = result.stdout.str()
    assert "--config " not in out and "@pytest.mark.ragaliq_dataset:" not in out
    result.stdout.fnmatch_lines(
        ["*ragaliq: nope.yaml: not found; *pass --ragaliq-config with the right path*"]
    )


def test_an_invalid_dataset_is_one_clear_collection_error(suite):
    (suite.path / "bad.jsonl").write_text(
        '{"id": "a", "query": "q", "response": "r"}\n', encoding="utf-8"
    )
    result = collection_error(suite, "bad.jsonl")
    result.stdout.fnmatch_lines(["*bad.jsonl:1: context: missing required field*"])


def test_the_budget_stops_the_spending_and_the_rest_skip(suite):
    suite.makeconftest(
        """
        import contextlib
        import pytest
        from ragaliq.judges import JudgeChoice, OfflineJudge
        from ragaliq.models import Usage

        class Priced(OfflineJudge):
            async def extract_claims(self, case):
                result = await super().extract_claims(case)
                return result.model_copy(update={"usage": Usage(calls=1, cost_usd=0.5)})

        @contextlib.asynccontextmanager
        async def priced(config, **_):
            yield JudgeChoice(judge=Priced())

        @pytest.fixture(scope="session", autouse=True)
        def _priced(ragaliq_judge):
            ragaliq_judge.open_judge = priced
        """
    )
    suite.makepyfile(
        """
        import pytest

        @pytest.mark.ragaliq_dataset("rag_outputs.jsonl")
        @pytest.mark.parametrize("round", [1, 2])
        def test_spend(rag_case, round, assert_rag_quality):
            assert_rag_quality(rag_case, faithfulness=0.0)
        """
    )
    result = suite.runpytest("-p", "no:cacheprovider", "--ragaliq-budget", "1.0")
    result.assert_outcomes(passed=2, skipped=2)
    result.stdout.fnmatch_lines(["*ragaliq: 2 cases judged*2 judge calls*$1.0000*"])


def test_cases_load_from_a_file_and_the_plugin_is_silent_unless_used(suite):
    suite.makepyfile(
        """
        def test_load(ragaliq_cases):
            assert [c.id for c in ragaliq_cases("rag_outputs.jsonl")] == ["good", "bad"]

        def test_unrelated():
            assert True
        """
    )
    result = suite.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)
    assert "ragaliq:" not in result.stdout.str()


def test_evaluate_judges_a_dataset_from_python_and_returns_the_report(tmp_path):
    from ragaliq import evaluate
    from ragaliq.config import GateConfig

    path = tmp_path / "cases.jsonl"
    path.write_text(
        "\n".join(json.dumps(c) for c in [case("good", FAITHFUL), case("bad", INVENTED)]),
        encoding="utf-8",
    )
    config = GateConfig.model_validate({"judge": {"provider": "offline", "cache": False}})
    report = evaluate(path, config=config, env={})
    assert [c.id for c in report.cases] == ["good", "bad"]
    faith = {c.id: c.results["faithfulness"].score for c in report.cases}
    assert faith["good"] == 1.0
    assert faith["bad"] is not None and faith["bad"] < 1.0
    assert report.summary.evaluators["faithfulness"].judged == 2


def test_a_bad_config_is_one_clear_error(suite):
    (suite.path / "ragaliq.yaml").write_text("judge: {provider: nope}\n", encoding="utf-8")
    suite.makepyfile(
        """
        def test_case(ragaliq_cases, assert_rag_quality):
            assert_rag_quality(ragaliq_cases("rag_outputs.jsonl")[0])
        """
    )
    result = suite.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    assert "site-packages" not in result.stdout.str() and "ragaliq/" not in result.stdout.str()
    result.stdout.fnmatch_lines(["*ragaliq: *ragaliq.yaml: judge.provider: must be one of*"])


def test_an_echoed_key_leaves_neither_the_output_nor_the_junit_report(suite, monkeypatch):
    key = "sk-ant-api03-Plugin_Echo-0123456789abcdef"
    monkeypatch.setenv("ANTHROPIC_API_KEY", key)
    suite.makepyfile(
        test_echo="""
        import os

        def test_an_api_error_that_echoes_the_key():
            key = os.environ["ANTHROPIC_API_KEY"]
            print("request failed for key", key)
            assert False, f"401: invalid x-api-key {key}"
        """
    )
    result = suite.runpytest_subprocess("-rA", "--junitxml=report.xml", "-o", "junit_logging=all")
    result.assert_outcomes(failed=1)
    text = result.stdout.str() + result.stderr.str()
    junit = (suite.path / "report.xml").read_text(encoding="utf-8")
    assert key not in text and key not in junit
    assert "invalid x-api-key [redacted]" in text
    assert "request failed for key [redacted]" in junit


def test_a_direct_assertion_shows_the_tests_own_line_and_not_the_librarys(suite):
    suite.makepyfile(
        f"""
        from ragaliq.models import TestCase
        from ragaliq.testing import assert_rag_quality, project_session

        CASE = TestCase(id="bad", query="Can I get a refund?", context={CONTEXT!r},
                        response={INVENTED!r})

        def test_the_function():
            assert_rag_quality(CASE, faithfulness=0.8)

        def test_a_session():
            project_session(root=__import__("pathlib").Path(".")).assert_quality(CASE)
        """
    )
    result = suite.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=2)
    shown = failure_section(result)
    assert shown.count("ragaliq.testing.QualityFailure: case 'bad': faithfulness: 0.000") == 2
    assert ">       assert_rag_quality(CASE, faithfulness=0.8)" in shown
    # The frames of assert_rag_quality and assert_quality are hidden, as an assert's would be.
    assert "session.assert_quality(case, **minimums)" not in shown
    assert "raise QualityFailure" not in shown

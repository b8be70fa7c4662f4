"""The action's inputs as GitHub's adapter reads them from a Docker action's environment."""

from __future__ import annotations

import pytest
import yaml

from ragaliq.forge import JobSettings
from ragaliq.github.event import HTML_REPORT_PATH, GitHubJob
from tests.conftest import REPO_ROOT


def settings(**inputs: str) -> JobSettings:
    env = {f"INPUT_{name.upper()}": value for name, value in inputs.items()}
    return GitHubJob.from_env({"GITHUB_WORKSPACE": "/work", **env}).settings


def test_the_html_report_is_written_beside_the_json_report_unless_turned_off():
    action = yaml.safe_load((REPO_ROOT / "action.yml").read_text(encoding="utf-8"))
    assert action["inputs"]["html-report"]["default"] == HTML_REPORT_PATH == ".ragaliq/report.html"
    # a runner always passes the default; a run without the input reads it the same way
    assert settings().html_report == HTML_REPORT_PATH
    assert settings(**{"html-report": HTML_REPORT_PATH}).html_report == HTML_REPORT_PATH
    assert settings(**{"html-report": "  "}).html_report == HTML_REPORT_PATH
    assert settings(**{"html-report": "out/report.html"}).html_report == "out/report.html"


@pytest.mark.parametrize("off", ["off", "OFF", " Off "])
def test_off_writes_no_html_report(off: str):
    assert settings(**{"html-report": off}).html_report == ""


def test_the_junit_metrics_and_markdown_reports_are_written_only_when_named():
    action = yaml.safe_load((REPO_ROOT / "action.yml").read_text(encoding="utf-8"))
    inputs = {"junit-report": "junit_report", "metrics-report": "metrics_report"}
    inputs["markdown-report"] = "markdown_report"
    for name, field in inputs.items():
        assert action["inputs"][name]["default"] == ""
        assert getattr(settings(), field) == ""
        assert getattr(settings(**{name: "off"}), field) == ""
        assert getattr(settings(**{name: f"out/{name}"}), field) == f"out/{name}"

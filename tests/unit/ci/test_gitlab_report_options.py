"""The GitLab job's report options: the files its template's `artifacts: reports:` name."""

from __future__ import annotations

import yaml

from ragaliq.action.gitlab import parse
from tests.conftest import REPO_ROOT

TEMPLATE = REPO_ROOT / "src" / "ragaliq" / "workflows" / "gitlab-ci.yml"


def test_the_gate_job_writes_by_default_the_reports_its_template_names():
    job = yaml.safe_load(TEMPLATE.read_text(encoding="utf-8"))["ragaliq-gate"]
    (line,) = [command for command in job["script"] if "ragaliq gitlab sweep" in command]
    options = parse(line.split("ragaliq gitlab ", 1)[1].split())
    reports = job["artifacts"]["reports"]
    assert (options.junit_report, options.metrics_report) == (
        reports["junit"],
        reports["metrics"],
    )
    assert options.markdown_report == ""


def test_a_report_is_turned_off_or_moved_on_the_jobs_own_line():
    options = parse(["sweep", "--junit-report", "off", "--metrics-report", "out/m.txt"])
    assert options.junit_report == "" and options.metrics_report == "out/m.txt"
    assert parse(["sweep", "--markdown-report", "out/c.md"]).markdown_report == "out/c.md"

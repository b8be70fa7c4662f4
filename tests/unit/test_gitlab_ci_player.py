"""The player of GitLab CI's rules (tests/fakes/gitlab_ci.py): each rule it encodes."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.gitlab_ci import (
    CiConfigError,
    CiProject,
    CiVariable,
    MergeRequestInfo,
    PipelineContext,
    PlannedJob,
    evaluate,
    load_config,
    plan_pipeline,
    run_job,
)

HEAD = "1" * 40
TARGET_TIP = "2" * 40
MERGE_BASE = "3" * 40
MERGE_COMMIT = "4" * 40
MAIN_SHA = "5" * 40

PARENT = CiProject(
    id=11,
    path="shop/search",
    variables=(
        CiVariable(key="LLM_KEY", value="sk-live-0123456789", protected=True, masked=True),
        CiVariable(key="LOG_LEVEL", value="info"),
    ),
)
FORK = CiProject(
    id=99,
    path="visitor/search",
    variables=(CiVariable(key="LOG_LEVEL", value="fork-debug"),),
)

EVERYWHERE = {"script": ["true"], "rules": [{"when": "always"}]}


def config(**jobs: Any) -> dict[str, Any]:
    return {"stages": ["build", "test", "deploy"], **jobs}


def branch(
    ref: str = "main", *, source: str = "push", project: CiProject = PARENT, **kw: Any
) -> PipelineContext:
    return PipelineContext(source=source, project=project, ref=ref, sha=MAIN_SHA, **kw)


def merge_request(
    *,
    source_project: CiProject = PARENT,
    target_project: CiProject = PARENT,
    run_in: CiProject = PARENT,
    merged: bool = False,
    **kw: Any,
) -> PipelineContext:
    mr = MergeRequestInfo(
        iid=7,
        title="Tweak the retriever",
        target_project=target_project,
        source_project=source_project,
        source_branch=kw.pop("source_branch", "tweak"),
        target_branch="main",
        source_sha=HEAD,
        target_sha=TARGET_TIP,
        diff_base_sha=MERGE_BASE,
    )
    return PipelineContext(
        source="merge_request_event",
        project=run_in,
        merge_request=mr,
        merge_commit_sha=MERGE_COMMIT if merged else None,
        **kw,
    )


# ---------------------------------------------------------------------- rules:if expressions


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ('$SOURCE == "push"', True),
        ("$SOURCE == 'push'", True),
        ('$SOURCE != "push"', False),
        ('"push" == $SOURCE', True),
        ("$SOURCE == $SAME", True),
        ("$SOURCE", True),
        ("$EMPTY", False),
        ("$MISSING", False),
        ("$MISSING == null", True),
        ("$EMPTY == null", False),
        ('$EMPTY == ""', True),
        ('$MISSING == ""', False),
        ("$EMPTY != null", True),
        ("$BRANCH =~ /^release\\/v[0-9]+$/", True),
        ("$BRANCH =~ /^RELEASE/", False),
        ("$BRANCH =~ /^RELEASE/i", True),
        ("$BRANCH !~ /^hotfix/", True),
        ("$MISSING =~ /x.*/", False),
        ("$MISSING !~ /x.*/", True),
        ("$BRANCH =~ $PATTERN", True),
        ('$SHORT =~ "release/v12"', True),
        ('$SOURCE == "push" && $BRANCH =~ /^release/', True),
        ('$SOURCE == "web" || $BRANCH =~ /^release/', True),
        ('$SOURCE == "web" || $SOURCE == "push" && $EMPTY', False),
        ('($SOURCE == "web" || $SOURCE == "push") && $BRANCH', True),
        ("$MISSING && $SOURCE || $BRANCH", True),
        ('$SOURCE == "web" || ($SOURCE == "push" && ($EMPTY || $BRANCH))', True),
    ],
)
def test_expressions_follow_gitlab(expression: str, expected: bool) -> None:
    values = {
        "SOURCE": "push",
        "SAME": "push",
        "EMPTY": "",
        "BRANCH": "release/v12",
        "PATTERN": "/^release/",
        "SHORT": "v12",
    }
    assert evaluate(expression, values) is expected


@pytest.mark.parametrize(
    "expression",
    [
        "$A ==",
        "== $A",
        "($A == 'x'",
        "$A == 'x')",
        "$A === 'x'",
        "$A =~ /./",
        "/x/ =~ $A",
        "/ab/",
        "",
    ],
)
def test_malformed_expressions_are_config_errors(expression: str) -> None:
    with pytest.raises(CiConfigError):
        evaluate(expression, {"A": "x"})


# ---------------------------------------------------------------------- which jobs run


def test_rules_first_match_decides_when() -> None:
    job = {
        "script": ["true"],
        "rules": [
            {"if": '$CI_PIPELINE_SOURCE == "schedule"', "when": "never"},
            {"if": "$CI_COMMIT_BRANCH == $CI_DEFAULT_BRANCH"},
            {"if": "$CI_COMMIT_BRANCH =~ /^feature/", "when": "manual"},
        ],
    }
    assert plan_pipeline(config(job=job), branch("main")).job("job").when == "on_success"
    assert plan_pipeline(config(job=job), branch("feature/x")).job("job").when == "manual"
    assert plan_pipeline(config(job=job), branch("main", source="schedule")).names == []
    assert plan_pipeline(config(job=job), branch("docs")).names == []


def test_a_job_without_rules_stays_out_of_merge_request_pipelines() -> None:
    plain = {"script": ["true"]}
    assert plan_pipeline(config(plain=plain), branch("feature")).names == ["plain"]
    assert plan_pipeline(config(plain=plain), merge_request()).names == []
    assert plan_pipeline(config(never={"script": ["true"], "when": "never"}), branch()).names == []


def test_workflow_rules_decide_whether_a_pipeline_exists() -> None:
    workflow = {
        "rules": [
            {"if": "$CI_COMMIT_TITLE =~ /-draft$/", "when": "never"},
            {"if": '$CI_PIPELINE_SOURCE == "merge_request_event"'},
            {"if": "$CI_COMMIT_BRANCH == $CI_DEFAULT_BRANCH", "variables": {"DEPLOY": "yes"}},
        ]
    }
    yaml = config(workflow=workflow, job=EVERYWHERE)
    main = plan_pipeline(yaml, branch("main"))
    assert main.created and main.job("job").variables["DEPLOY"] == "yes"
    assert plan_pipeline(yaml, merge_request()).created
    dropped = plan_pipeline(yaml, branch("feature"))
    assert (dropped.created, dropped.jobs) == (False, ())
    assert not plan_pipeline(yaml, branch("main", commit_message="wip-draft")).created


def test_jobs_come_in_stage_order_and_a_stage_must_exist() -> None:
    yaml = config(
        late={**EVERYWHERE, "stage": "deploy"},
        early={**EVERYWHERE, "stage": "build"},
        middle=EVERYWHERE,
        first={**EVERYWHERE, "stage": ".pre"},
    )
    assert plan_pipeline(yaml, branch()).names == ["first", "early", "middle", "late"]
    wrong = config(job={"script": ["true"], "stage": "gate", "rules": [{"when": "never"}]})
    with pytest.raises(CiConfigError, match="stage 'gate' does not exist"):
        plan_pipeline(wrong, branch())


@pytest.mark.parametrize(
    ("job", "message"),
    [
        ({"script": ["true"], "only": ["main"]}, "only is not played"),
        ({"script": ["true"], "rules": [{"changes": ["a"]}]}, "rules:changes"),
        ({"script": [{"echo a": "b"}], "rules": [{"when": "always"}]}, "string"),
        ({"script": ["true"], "parallel": {"matrix": []}}, "numeric parallel"),
        ({"trigger": "other/project"}, "trigger jobs"),
    ],
)
def test_what_the_player_does_not_play_says_so(job: dict[str, Any], message: str) -> None:
    with pytest.raises(CiConfigError, match=message):
        plan_pipeline(config(job=job), branch())


def test_numeric_parallel_makes_numbered_jobs() -> None:
    plan = plan_pipeline(config(shard={**EVERYWHERE, "parallel": 3}), branch())
    assert plan.names == ["shard 1/3", "shard 2/3", "shard 3/3"]
    assert plan.job("shard 2/3").variables["CI_NODE_INDEX"] == "2"
    assert plan.job("shard 2/3").variables["CI_NODE_TOTAL"] == "3"


# ---------------------------------------------------------------------- sources


@pytest.mark.parametrize("source", ["push", "schedule", "web", "api", "trigger", "pipeline"])
def test_each_branch_source_is_told_to_the_jobs(source: str) -> None:
    env = plan_pipeline(config(job=EVERYWHERE), branch("main", source=source)).job("job").variables
    assert env["CI_PIPELINE_SOURCE"] == source
    assert env["CI_COMMIT_BRANCH"] == env["CI_COMMIT_REF_NAME"] == "main"
    assert "CI_MERGE_REQUEST_IID" not in env
    assert ("CI_PIPELINE_TRIGGERED" in env) is (source == "trigger")


def test_a_tag_pipeline_has_a_tag_and_no_branch() -> None:
    tagged = replace(PARENT, protected_tags=("v*",))
    env = (
        plan_pipeline(config(job=EVERYWHERE), branch("v1.2", project=tagged, tag=True))
        .job("job")
        .variables
    )
    assert env["CI_COMMIT_TAG"] == "v1.2"
    assert "CI_COMMIT_BRANCH" not in env
    assert env["CI_COMMIT_REF_PROTECTED"] == "true"


def test_unknown_sources_and_mismatched_merge_requests_are_refused() -> None:
    with pytest.raises(CiConfigError, match="unknown pipeline source"):
        plan_pipeline(config(job=EVERYWHERE), branch(source="merge_request"))
    with pytest.raises(CiConfigError, match="merge request"):
        plan_pipeline(config(job=EVERYWHERE), replace(merge_request(), source="push"))


# ---------------------------------------------------------------------- merge request pipelines


def test_a_detached_merge_request_pipeline_builds_the_source_head() -> None:
    env = plan_pipeline(config(job=EVERYWHERE), merge_request()).job("job").variables
    assert env["CI_COMMIT_SHA"] == HEAD
    assert env["CI_MERGE_REQUEST_EVENT_TYPE"] == "detached"
    assert env["CI_MERGE_REQUEST_SOURCE_BRANCH_SHA"] == ""
    assert env["CI_MERGE_REQUEST_TARGET_BRANCH_SHA"] == ""
    assert env["CI_MERGE_REQUEST_DIFF_BASE_SHA"] == MERGE_BASE
    assert env["CI_COMMIT_REF_NAME"] == "tweak"
    assert "CI_COMMIT_BRANCH" not in env
    assert env["CI_COMMIT_BEFORE_SHA"] == "0" * 40
    assert env["CI_MERGE_REQUEST_IID"] == "7"
    assert env["CI_MERGE_REQUEST_TARGET_BRANCH_NAME"] == "main"
    assert env["CI_MERGE_REQUEST_TARGET_BRANCH_PROTECTED"] == "true"
    assert env["CI_MERGE_REQUEST_SOURCE_BRANCH_PROTECTED"] == "false"


def test_a_merged_results_pipeline_builds_a_merge_commit() -> None:
    env = plan_pipeline(config(job=EVERYWHERE), merge_request(merged=True)).job("job").variables
    assert env["CI_COMMIT_SHA"] == MERGE_COMMIT
    assert env["CI_MERGE_REQUEST_EVENT_TYPE"] == "merged_result"
    assert env["CI_MERGE_REQUEST_SOURCE_BRANCH_SHA"] == HEAD
    assert env["CI_MERGE_REQUEST_TARGET_BRANCH_SHA"] == TARGET_TIP
    assert env["CI_MERGE_REQUEST_DIFF_BASE_SHA"] == MERGE_BASE


# ---------------------------------------------------------------------- protected refs


def test_protected_variables_reach_only_protected_refs() -> None:
    yaml = config(job=EVERYWHERE)
    on_main = plan_pipeline(yaml, branch("main")).job("job").variables
    assert on_main["LLM_KEY"] == "sk-live-0123456789"
    assert on_main["CI_COMMIT_REF_PROTECTED"] == "true"
    on_feature = plan_pipeline(yaml, branch("feature")).job("job").variables
    assert "LLM_KEY" not in on_feature
    assert on_feature["CI_COMMIT_REF_PROTECTED"] == "false"
    assert on_feature["LOG_LEVEL"] == "info"
    # Every job of a protected pipeline gets it, not only the one that needs it.
    two = plan_pipeline(
        config(build=EVERYWHERE, deploy={**EVERYWHERE, "stage": "deploy"}), branch()
    )
    assert all("LLM_KEY" in job.variables for job in two.jobs)


def test_wildcard_protection() -> None:
    releases = replace(PARENT, protected_branches=("release/*",))
    assert (
        "LLM_KEY"
        in plan_pipeline(config(job=EVERYWHERE), branch("release/1", project=releases))
        .job("job")
        .variables
    )
    assert (
        "LLM_KEY"
        not in plan_pipeline(config(job=EVERYWHERE), branch("main", project=releases))
        .job("job")
        .variables
    )


def test_a_merge_request_pipeline_is_not_protected_even_toward_a_protected_branch() -> None:
    env = (
        plan_pipeline(config(job=EVERYWHERE), merge_request(source_branch="main"))
        .job("job")
        .variables
    )
    assert "LLM_KEY" not in env
    assert env["CI_COMMIT_REF_PROTECTED"] == "false"


def test_the_project_may_let_merge_request_pipelines_between_protected_branches_in() -> None:
    opened = replace(PARENT, protected_mr_pipelines=True, protected_branches=("main", "stable"))
    both: dict[str, Any] = {"source_project": opened, "target_project": opened, "run_in": opened}
    mr = merge_request(**both, source_branch="stable")
    assert "LLM_KEY" in plan_pipeline(config(job=EVERYWHERE), mr).job("job").variables
    unprotected_source = merge_request(**both, source_branch="tweak")
    assert (
        "LLM_KEY"
        not in plan_pipeline(config(job=EVERYWHERE), unprotected_source).job("job").variables
    )


# ---------------------------------------------------------------------- forks


def test_a_forks_own_pipeline_gets_the_forks_variables_only() -> None:
    env = (
        plan_pipeline(config(job=EVERYWHERE), merge_request(source_project=FORK, run_in=FORK))
        .job("job")
        .variables
    )
    assert env["LOG_LEVEL"] == "fork-debug"
    assert "LLM_KEY" not in env
    assert env["CI_PROJECT_ID"] == "99"
    assert env["CI_MERGE_REQUEST_PROJECT_ID"] == "11"
    assert env["CI_MERGE_REQUEST_SOURCE_PROJECT_ID"] == "99"


def test_a_fork_merge_request_run_in_the_parent_gets_its_unprotected_variables() -> None:
    opened = replace(PARENT, protected_mr_pipelines=True, protected_branches=("main", "tweak"))
    ctx = merge_request(source_project=FORK, target_project=opened, run_in=opened)
    env = plan_pipeline(config(job=EVERYWHERE), ctx).job("job").variables
    assert env["LOG_LEVEL"] == "info"
    assert env["CI_PROJECT_ID"] == "11"
    assert "LLM_KEY" not in env


# ---------------------------------------------------------------------- environments


SCOPED = replace(
    PARENT,
    variables=(
        CiVariable(
            key="LLM_KEY",
            value="sk-gate-0123456789",
            protected=True,
            masked=True,
            environment_scope="ragaliq",
        ),
        CiVariable(key="REVIEW_URL", value="review-any", environment_scope="review/*"),
        CiVariable(key="REVIEW_URL", value="review-one", environment_scope="review/one"),
        CiVariable(key="REVIEW_URL", value="everywhere"),
    ),
)


def test_a_scoped_variable_reaches_only_jobs_deploying_to_its_environment() -> None:
    yaml = config(
        build=EVERYWHERE,
        gate={**EVERYWHERE, "environment": "ragaliq"},
        other={**EVERYWHERE, "environment": {"name": "staging"}},
    )
    plan = plan_pipeline(yaml, branch(project=SCOPED))
    assert plan.job("gate").variables["LLM_KEY"] == "sk-gate-0123456789"
    assert plan.job("gate").variables["CI_ENVIRONMENT_NAME"] == "ragaliq"
    assert "LLM_KEY" not in plan.job("build").variables
    assert "LLM_KEY" not in plan.job("other").variables
    feature = plan_pipeline(yaml, branch("feature", project=SCOPED))
    assert "LLM_KEY" not in feature.job("gate").variables


def test_the_most_specific_scope_wins() -> None:
    yaml = config(
        one={**EVERYWHERE, "environment": "review/one"},
        two={**EVERYWHERE, "environment": "review/$CI_COMMIT_REF_SLUG"},
        plain=EVERYWHERE,
    )
    plan = plan_pipeline(yaml, branch("Feature_X", project=SCOPED))
    assert plan.job("one").variables["REVIEW_URL"] == "review-one"
    assert plan.job("two").environment == "review/feature-x"
    assert plan.job("two").variables["REVIEW_URL"] == "review-any"
    assert plan.job("plain").variables["REVIEW_URL"] == "everywhere"


def test_rules_do_not_see_environment_scoped_variables() -> None:
    job = {"script": ["true"], "environment": "ragaliq", "rules": [{"if": "$LLM_KEY"}]}
    assert plan_pipeline(config(gate=job), branch(project=SCOPED)).names == []


# ---------------------------------------------------------------------- precedence


def test_variable_precedence() -> None:
    leveled = replace(
        PARENT,
        instance_variables=(
            CiVariable(key="A", value="instance"),
            CiVariable(key="B", value="instance"),
        ),
        group_variables=(CiVariable(key="A", value="group"), CiVariable(key="C", value="group")),
        variables=(CiVariable(key="A", value="project"),),
    )
    yaml = {
        "variables": {
            "A": "yaml-global",
            "B": "yaml-global",
            "D": "yaml-global",
            "E": "yaml-global",
        },
        "job": {**EVERYWHERE, "variables": {"D": "yaml-job", "CI_COMMIT_REF_NAME": "yaml-job"}},
    }
    env = plan_pipeline(yaml, branch(project=leveled)).job("job").variables
    assert (env["A"], env["B"], env["C"], env["D"], env["E"]) == (
        "project",
        "instance",
        "group",
        "yaml-job",
        "yaml-global",
    )
    assert env["CI_COMMIT_REF_NAME"] == "yaml-job"


def test_a_job_may_drop_the_default_variables() -> None:
    yaml = {
        "variables": {"A": "1", "B": "2"},
        "empty": {**EVERYWHERE, "variables": {}},
        "none": {**EVERYWHERE, "inherit": {"variables": False}},
        "some": {**EVERYWHERE, "inherit": {"variables": ["B"]}},
        "all": EVERYWHERE,
    }
    plan = plan_pipeline(yaml, branch())
    assert [("A" in j.variables, "B" in j.variables) for j in plan.jobs] == [
        (False, False),
        (False, False),
        (False, True),
        (True, True),
    ]


def test_pipeline_variables_override_everything_a_project_sets() -> None:
    yaml = {"variables": {"INDEX_URL": "https://pypi.org/simple"}, "job": EVERYWHERE}
    ctx = branch(
        pipeline_variables={
            "LLM_KEY": "attacker",
            "INDEX_URL": "https://evil.example",
            "CI_COMMIT_SHA": "x",
        }
    )
    env = plan_pipeline(yaml, ctx).job("job").variables
    assert env["LLM_KEY"] == "attacker"
    assert env["INDEX_URL"] == "https://evil.example"
    assert env["CI_COMMIT_SHA"] == "x"
    rules = {"script": ["true"], "rules": [{"if": "$INDEX_URL =~ /evil/"}]}
    assert plan_pipeline(config(job=rules), ctx).names == ["job"]


@pytest.mark.parametrize(
    ("minimum", "level", "created"),
    [
        ("developer", 30, True),
        ("maintainer", 30, False),
        ("maintainer", 40, True),
        ("owner", 40, False),
        ("no_one_allowed", 50, False),
    ],
)
def test_who_may_set_pipeline_variables(minimum: str, level: int, created: bool) -> None:
    project = replace(PARENT, pipeline_variables_minimum_role=minimum)
    ctx = branch(project=project, pipeline_variables={"X": "1"}, user_access_level=level)
    plan = plan_pipeline(config(job=EVERYWHERE), ctx)
    assert plan.created is created
    assert plan.refusal == ("" if created else "Insufficient permissions to set pipeline variables")
    assert plan_pipeline(config(job=EVERYWHERE), replace(ctx, pipeline_variables={})).created


def test_expansion_raw_and_escaped_dollars() -> None:
    project = replace(PARENT, variables=(CiVariable(key="RAW", value="a$LOG_LEVEL", raw=True),))
    yaml = {
        "variables": {
            "URL": "$CI_API_V4_URL/projects/${CI_PROJECT_ID}",
            "PRICE": "$$5",
            "KEEP": {"value": "$CI_PROJECT_ID", "expand": False},
            "CHAIN": "$URL/x",
        },
        "job": EVERYWHERE,
    }
    env = (
        plan_pipeline(yaml, branch(project=project, server_url="http://127.0.0.1:1"))
        .job("job")
        .variables
    )
    assert env["URL"] == "http://127.0.0.1:1/api/v4/projects/11"
    assert env["CHAIN"] == "http://127.0.0.1:1/api/v4/projects/11/x"
    assert env["PRICE"] == "$5"
    assert env["KEEP"] == "$CI_PROJECT_ID"
    assert env["RAW"] == "a$LOG_LEVEL"


def test_predefined_job_variables() -> None:
    ctx = branch(
        server_url="http://127.0.0.1:8080", pipeline_id=4242, first_job_id=900, user="lead"
    )
    plan = plan_pipeline(config(a=EVERYWHERE, b=EVERYWHERE), ctx)
    a, b = plan.job("a").variables, plan.job("b").variables
    assert a["CI_SERVER_URL"] == "http://127.0.0.1:8080"
    assert a["CI_API_V4_URL"] == "http://127.0.0.1:8080/api/v4"
    assert (a["CI_SERVER_HOST"], a["CI_SERVER_PORT"]) == ("127.0.0.1", "8080")
    assert a["CI_PROJECT_ID"] == "11"
    assert a["CI_PROJECT_PATH"] == "shop/search"
    assert a["CI_PIPELINE_ID"] == b["CI_PIPELINE_ID"] == "4242"
    assert (a["CI_JOB_ID"], b["CI_JOB_ID"]) == ("900", "901")
    assert (a["CI_JOB_NAME"], a["CI_JOB_STAGE"]) == ("a", "test")
    assert a["CI_JOB_TOKEN"] != b["CI_JOB_TOKEN"]
    assert a["CI_JOB_TOKEN"] in plan.job("a").masked
    assert a["GITLAB_USER_LOGIN"] == "lead"
    assert a["CI_COMMIT_SHORT_SHA"] == MAIN_SHA[:8]


# ---------------------------------------------------------------------- reading the YAML


def test_extends_reference_default_and_local_include(tmp_path: Path) -> None:
    (tmp_path / "ci").mkdir()
    (tmp_path / "ci" / "gate.yml").write_text(
        ".gate-base:\n"
        "  stage: deploy\n"
        "  environment: ragaliq\n"
        "  variables: {MODE: gate, LEVEL: base}\n"
        ".setup:\n"
        "  script: [echo setup-1, echo setup-2]\n"
    )
    (tmp_path / ".gitlab-ci.yml").write_text(
        "include:\n"
        "  - local: /ci/gate.yml\n"
        "default:\n"
        "  before_script: [echo default-before]\n"
        ".hidden:\n"
        "  script: [echo never]\n"
        "gate:\n"
        "  extends: .gate-base\n"
        "  variables: {LEVEL: job}\n"
        "  rules: [{if: $CI_COMMIT_BRANCH == $CI_DEFAULT_BRANCH}]\n"
        "  script:\n"
        "    - !reference [.setup, script]\n"
        "    - echo run\n"
    )
    plan = plan_pipeline(load_config(tmp_path / ".gitlab-ci.yml"), branch())
    assert plan.names == ["gate"]
    gate = plan.job("gate")
    assert (gate.stage, gate.environment) == ("deploy", "ragaliq")
    assert (gate.variables["MODE"], gate.variables["LEVEL"]) == ("gate", "job")
    assert gate.script == ("echo setup-1", "echo setup-2", "echo run")
    assert gate.before_script == ("echo default-before",)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a:\n  extends: .missing\n  script: [x]\n", "extends unknown job"),
        (".a:\n  extends: .b\n.b:\n  extends: .a\nc:\n  extends: .a\n  script: [x]\n", "circular"),
        ("include: {remote: 'https://example.com/x.yml'}\n", "only local files"),
        ("include: /x.yml\n", "no folder"),
        ("- a\n", "mapping"),
        ("a:\n  script: !reference [.nope, script]\n", "no such key"),
    ],
)
def test_bad_configurations(text: str, message: str) -> None:
    with pytest.raises(CiConfigError, match=message):
        load_config(text)


# ---------------------------------------------------------------------- running a job


def planned(script: list[str], project: CiProject = PARENT, **job: Any) -> PlannedJob:
    yaml = config(job={"script": script, "rules": [{"when": "always"}], **job})
    return plan_pipeline(yaml, branch(project=project)).job("job")


def test_run_job_uses_exactly_the_jobs_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RUNNER_HOST_SECRET", "host-only")
    job = planned(["env | sort > env.txt", 'echo "dir=$CI_PROJECT_DIR"'])
    result = run_job(job, tmp_path)
    assert result.passed
    seen = dict(
        line.split("=", 1)
        for line in (tmp_path / "env.txt").read_text().splitlines()
        if "=" in line
    )
    assert "RUNNER_HOST_SECRET" not in seen
    assert seen["LLM_KEY"] == "sk-live-0123456789"
    assert seen["CI_PIPELINE_SOURCE"] == "push"
    assert seen["CI_PROJECT_DIR"] == str(tmp_path)
    assert {k: v for k, v in seen.items() if k in job.variables} == {
        k: v for k, v in result.environment.items() if k in job.variables
    }
    assert f"dir={tmp_path}" in result.log


def test_run_job_stops_at_the_first_failure_and_masks_secrets(tmp_path: Path) -> None:
    job = planned(['echo "key is $LLM_KEY"', "false", "echo unreachable"])
    result = run_job(job, tmp_path)
    assert result.exit_code == 1
    assert '$ echo "key is $LLM_KEY"' in result.log
    assert "key is [MASKED]" in result.log
    assert "sk-live-0123456789" not in result.log
    assert "unreachable" not in result.log
    # pipefail: a pipeline fails when any of its commands does.
    piped = run_job(planned(["false | true", "echo after-pipe"]), tmp_path)
    assert piped.exit_code == 1 and "after-pipe" not in piped.log
    assert run_job(planned(["true | cat", "echo after-pipe"]), tmp_path).passed


def test_after_script_runs_apart_and_cannot_fail_the_job(tmp_path: Path) -> None:
    job = planned(
        ["export ONLY_IN_SCRIPT=1", "echo main"],
        before_script=["echo before"],
        after_script=['echo "status=$CI_JOB_STATUS only=${ONLY_IN_SCRIPT:-unset}"', "false"],
    )
    result = run_job(job, tmp_path)
    assert result.passed
    assert result.log.index("before") < result.log.index("main")
    assert "status=success only=unset" in result.log


def test_file_variables_are_paths_outside_the_folder(tmp_path: Path) -> None:
    project = replace(PARENT, variables=(CiVariable(key="CONFIG_FILE", value="a: 1\n", file=True),))
    job = planned(['cp "$CONFIG_FILE" copy.yml', 'echo "$CONFIG_FILE"'], project=project)
    result = run_job(job, tmp_path)
    assert result.passed
    assert (tmp_path / "copy.yml").read_text() == "a: 1\n"
    assert not result.environment["CONFIG_FILE"].startswith(str(tmp_path))


def test_a_job_that_runs_too_long_is_stopped(tmp_path: Path) -> None:
    result = run_job(planned(["sleep 30"]), tmp_path, timeout=0.5)
    assert result.exit_code == 124
    assert "timed out" in result.log

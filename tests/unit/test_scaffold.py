from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from ragaliq.cli import cli
from ragaliq.config import GateConfig, parse_config
from ragaliq.dataset import load_dataset
from ragaliq.errors import ConfigError
from ragaliq.evaluators import EVALUATORS, build_evaluators
from ragaliq.github.event import HTML_REPORT_PATH
from ragaliq.inputs import load_inputs
from ragaliq.scaffold import (
    ACTION_REF,
    Release,
    ScaffoldFile,
    pin_release,
    scaffold_files,
    write_scaffold,
)
from tests.conftest import REPO_ROOT, console_tool

WORKFLOWS = [
    ".github/workflows/ragaliq.yml",
    ".github/workflows/ragaliq-forks.yml",
    ".github/workflows/ragaliq-baseline.yml",
    ".github/workflows/ragaliq-follow.yml",
]
NAMES = ["ragaliq.yaml", "rag_outputs.jsonl", *WORKFLOWS, ".ragaliq/.gitignore"]
EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "workflows"
ANSWERS = "${{ steps.ragaliq.outputs.answers-artifact || 'ragaliq-answers-unused' }}"
PINNED = re.compile(r"^[\w.-]+/[\w./-]+@[0-9a-f]{40}$")
RELEASE = Release(
    tag="v1.4.2",
    commit="9f" * 20,
    image="ghcr.io/ragaliq/ragaliq-gate@sha256:" + "0c" * 32,
)


def _text(root: Path, name: str) -> str:
    return (root / name).read_text(encoding="utf-8")


def _uncomment_options(text: str) -> str:
    """Turn the commented-out optional settings (`# key: value`) into real ones."""
    return re.sub(r"(?m)^(\s*)# (?=\s*[a-z_][\w-]*:)", r"\1", text)


def test_scaffold_files_are_the_three_files_under_root(tmp_path):
    files = scaffold_files(tmp_path)
    assert [f.path for f in files] == [tmp_path / name for name in NAMES]
    assert all(isinstance(f, ScaffoldFile) and f.text.endswith("\n") for f in files)


def test_write_scaffold_writes_every_file(tmp_path):
    written = write_scaffold(tmp_path)
    assert written == [tmp_path / name for name in NAMES]
    for file in scaffold_files(tmp_path):
        assert file.path.read_text(encoding="utf-8") == file.text
    assert not [p for p in tmp_path.rglob("*.tmp")], "no temporary files are left behind"


def test_write_scaffold_refuses_existing_files_and_writes_nothing(tmp_path):
    (tmp_path / "ragaliq.yaml").write_text("mine: true\n", encoding="utf-8")
    workflow = tmp_path / ".github/workflows/ragaliq.yml"
    workflow.parent.mkdir(parents=True)
    workflow.write_text("name: mine\n", encoding="utf-8")

    with pytest.raises(ConfigError) as info:
        write_scaffold(tmp_path)

    message = str(info.value)
    assert str(tmp_path / "ragaliq.yaml") in message
    assert str(workflow) in message
    assert "rag_outputs.jsonl" not in message
    assert "use --force to overwrite" in message
    assert _text(tmp_path, "ragaliq.yaml") == "mine: true\n"
    assert workflow.read_text(encoding="utf-8") == "name: mine\n"
    assert not (tmp_path / "rag_outputs.jsonl").exists()


def test_write_scaffold_with_force_overwrites(tmp_path):
    (tmp_path / "ragaliq.yaml").write_text("mine: true\n", encoding="utf-8")
    (tmp_path / "rag_outputs.jsonl").write_text("{}\n", encoding="utf-8")

    written = write_scaffold(tmp_path, force=True)

    assert written == [tmp_path / name for name in NAMES]
    for file in scaffold_files(tmp_path):
        assert file.path.read_text(encoding="utf-8") == file.text


def test_write_scaffold_refuses_a_folder_in_the_way_even_with_force(tmp_path):
    (tmp_path / "rag_outputs.jsonl").mkdir()
    with pytest.raises(ConfigError, match="a folder is in the way"):
        write_scaffold(tmp_path, force=True)
    assert not (tmp_path / "ragaliq.yaml").exists()


# --- ragaliq.yaml ------------------------------------------------------------------------------


def test_config_validates_and_shows_the_defaults(tmp_path):
    write_scaffold(tmp_path)
    config = parse_config(_text(tmp_path, "ragaliq.yaml"))
    assert config.dataset == "rag_outputs.jsonl"

    defaults = GateConfig(
        dataset="rag_outputs.jsonl",
        judge={"provider": "offline"},
        gate={"fail_on_new_hallucinations": True},
        baselines={"store": "branch"},
    )
    # Everything but the evaluators' thresholds, which the file spells out, the judge, which
    # starts offline, new hallucinations, which fail a new team's gate, and the baselines, kept
    # off main on a data branch, is at its default.
    assert config.model_dump(exclude={"evaluators"}) == defaults.model_dump(exclude={"evaluators"})
    without_thresholds = {
        name: {k: v for k, v in section.items() if k != "threshold"}
        for name, section in config.evaluators.model_dump().items()
    }
    assert without_thresholds == {
        name: {k: v for k, v in section.items() if k != "threshold"}
        for name, section in defaults.evaluators.model_dump().items()
    }
    # ... and each threshold is the evaluator's own default.
    assert [(e.name, e.threshold) for e in build_evaluators(config.evaluators)] == [
        (e.name, e.threshold) for e in build_evaluators(defaults.evaluators)
    ]


def test_config_commented_options_are_valid_settings(tmp_path):
    text = scaffold_files(tmp_path)[0].text
    enabled = _uncomment_options(text)
    assert enabled != text
    config = parse_config(enabled)
    assert config.judge.budget_usd == 5.0
    assert config.judge.base_url is not None
    assert "my-model" in config.judge.pricing
    assert config.evaluators.hallucination.min_confidence is None  # the default, written out
    assert config.evaluators.faithfulness.preset == "standard"
    assert config.evaluators.faithfulness.max_drop == 0.05
    # every evaluator of the registry has its section, the ones off by default commented out
    assert {name for name, options in config.evaluators.sections() if options.enabled} == {
        e.name for e in EVALUATORS
    }
    assert config.templates.comment is not None
    assert config.templates.summary is not None
    # the settings by which retrieval and citations fail the gate, each written switched off
    assert config.gate.fail_on_lost_chunks is True
    assert config.gate.fail_on_miscited_claims is True
    for option in ("fail_on_lost_chunks", "fail_on_miscited_claims"):
        assert f"  # {option}: true\n" in text


def test_config_has_every_section_and_names_the_schema(tmp_path):
    text = scaffold_files(tmp_path)[0].text
    data = yaml.safe_load(text)
    assert set(data) == {"dataset", "baseline", "baselines", "judge", "evaluators", "gate"}
    assert set(data["evaluators"]) == {"faithfulness", "hallucination", "relevance"}
    assert "# templates:" in text
    assert "ragaliq schema > ragaliq.schema.json" in text
    assert "api_key:" not in text, "the key belongs in the environment, not in the file"


# --- rag_outputs.jsonl ---------------------------------------------------------------------------


def test_dataset_loads_and_validates_with_the_config(tmp_path):
    write_scaffold(tmp_path)
    cases = load_dataset(tmp_path / "rag_outputs.jsonl")
    assert len(cases) == 1
    case = cases[0]
    assert case.id and case.query and case.response
    assert case.has_context
    inputs = load_inputs(tmp_path / "ragaliq.yaml", None)
    assert inputs.dataset_path == tmp_path / "rag_outputs.jsonl"
    assert list(inputs.cases) == cases


def test_scaffold_passes_validate_and_run_with_the_offline_judge(tmp_path, no_api_key):
    write_scaffold(tmp_path)
    runner = CliRunner()
    config = str(tmp_path / "ragaliq.yaml")
    validated = runner.invoke(cli, ["validate", "--config", config])
    assert validated.exit_code == 0, validated.output
    ran = runner.invoke(cli, ["run", "--config", config])
    assert ran.exit_code == 0, ran.output
    assert "offline" in ran.output


# --- .github/workflows/ragaliq.yml ---------------------------------------------------------------


def _workflow(tmp_path: Path) -> tuple[Path, dict]:
    write_scaffold(tmp_path)
    path = tmp_path / ".github/workflows/ragaliq.yml"
    return path, yaml.safe_load(path.read_text(encoding="utf-8"))


def _steps_using(job: dict, prefix: str) -> list[dict]:
    return [step for step in job["steps"] if step.get("uses", "").startswith(prefix)]


def test_every_workflow_has_least_privilege_and_pinned_actions(tmp_path):
    write_scaffold(tmp_path)
    for name in WORKFLOWS:
        workflow = yaml.safe_load(_text(tmp_path, name))
        assert workflow["permissions"] == {}, name
        for job in workflow["jobs"].values():
            uses = [step["uses"] for step in job["steps"] if "uses" in step]
            gate = [u for u in uses if u.startswith("ragaliq/ragaliq-gate@")]
            assert set(gate) <= {ACTION_REF}, name
            assert all(PINNED.match(u) for u in uses if u not in gate), uses
            for step in _steps_using(job, "actions/checkout@"):
                assert step["with"]["persist-credentials"] is False


def test_pull_requests_run_in_two_zones(tmp_path):
    _, workflow = _workflow(tmp_path)
    assert "pull_request" in workflow[True]  # PyYAML reads the `on` key as a boolean
    produce, gate = workflow["jobs"]["produce"], workflow["jobs"]["gate"]
    # The untrusted zone: the PR's code, no secrets, read-only, data out as an artifact; never
    # on a review, which must not run the PR's code again (nor let it read the review).
    assert produce["if"] == (
        "github.event_name == 'pull_request' && "
        "(github.event.action != 'edited' || github.event.changes.base != null)"
    )
    assert produce["permissions"] == {"contents": "read"}
    assert "secrets." not in yaml.safe_dump(produce)
    (upload,) = _steps_using(produce, "actions/upload-artifact@")
    assert upload["with"]["name"] == "ragaliq-dataset"
    assert upload["with"]["path"] == "rag_outputs.jsonl"
    # The trusted zone: after produce, on its own runner, at the base commit, with the key.
    assert gate["needs"] == "produce"
    assert "head.repo.full_name == github.repository" in gate["if"]
    assert gate["permissions"] == {
        "contents": "read",
        "actions": "read",
        "pull-requests": "write",
        "statuses": "write",
    }
    (checkout,) = _steps_using(gate, "actions/checkout@")
    assert checkout["with"]["ref"] == "${{ github.event.pull_request.base.sha }}"
    assert not [s for s in gate["steps"] if "run" in s], "the gate job runs no code of its own"
    assert not _steps_using(gate, "actions/cache"), "nothing a pull request saved is unpacked"
    (action,) = _steps_using(gate, "ragaliq/ragaliq-gate@")
    assert action["with"]["artifact"] == upload["with"]["name"]
    assert action["with"]["dataset"] == upload["with"]["path"]
    uploads = {s["with"]["name"]: s for s in _steps_using(gate, "actions/upload-artifact@")}
    assert set(uploads) == {ANSWERS, "ragaliq-report"}
    assert uploads[ANSWERS]["with"] == {
        "name": ANSWERS,
        "path": ".ragaliq/answers.jsonl",
        "if-no-files-found": "ignore",
        "retention-days": 7,
    }
    # The job's own check is not the one to require: its name says which status is.
    assert "require that, not this job" in gate["name"]
    assert action["with"]["anthropic-api-key"] == "${{ secrets.ANTHROPIC_API_KEY }}"
    assert action["with"]["config"] == "ragaliq.yaml"


def test_both_gate_jobs_upload_the_html_report_the_action_writes(tmp_path):
    write_scaffold(tmp_path)
    action = yaml.safe_load((REPO_ROOT / "action.yml").read_text(encoding="utf-8"))
    written = action["inputs"]["html-report"]["default"]
    assert written == HTML_REPORT_PATH
    for name in WORKFLOWS[:2]:
        gate = yaml.safe_load(_text(tmp_path, name))["jobs"]["gate"]
        (step,) = _steps_using(gate, "ragaliq/ragaliq-gate@")
        assert "html-report" not in step["with"], "the gate writes the report where it uploads it"
        (report,) = [
            s
            for s in _steps_using(gate, "actions/upload-artifact@")
            if s["with"]["name"] == "ragaliq-report"
        ]
        # after the gate, even when it failed; never on a cancelled run
        assert gate["steps"].index(report) > gate["steps"].index(step)
        assert report["if"] == "${{ !cancelled() }}"
        assert report["with"]["path"] == written
        # a pull request nobody judged has no report, and that is no second error
        assert report["with"]["if-no-files-found"] == "ignore"


def test_a_forks_review_job_runs_nothing(tmp_path):
    _, workflow = _workflow(tmp_path)
    review = workflow["jobs"]["review"]
    assert "pull_request_review" in review["if"] and "!= github.repository" in review["if"]
    assert review["permissions"] == {}
    (step,) = review["steps"]
    assert set(step) == {"name", "run"} and step["run"].startswith("echo ")
    assert "${{" not in step["run"]


def test_forks_are_gated_on_workflow_run_with_nothing_checked_out(tmp_path):
    write_scaffold(tmp_path)
    workflow = yaml.safe_load(_text(tmp_path, ".github/workflows/ragaliq-forks.yml"))
    produced_by = yaml.safe_load(_text(tmp_path, ".github/workflows/ragaliq.yml"))["name"]
    assert workflow[True] == {"workflow_run": {"workflows": [produced_by], "types": ["completed"]}}
    (job,) = workflow["jobs"].values()
    assert "head_repository.full_name != github.repository" in job["if"]
    assert "workflow_run.event == 'pull_request'" in job["if"]
    assert job["permissions"]["statuses"] == "write"
    assert not _steps_using(job, "actions/checkout@")
    assert not [s for s in job["steps"] if "run" in s]
    (action,) = _steps_using(job, "ragaliq/ragaliq-gate@")
    assert action["with"]["artifact"] == "ragaliq-dataset"


def test_a_release_pins_the_action_by_its_commit_and_the_package_by_its_version(tmp_path):
    write_scaffold(tmp_path, release=RELEASE)
    for name in WORKFLOWS:
        text = _text(tmp_path, name)
        assert "ragaliq-gate@main" not in text, name
        lines = [
            line
            for line in text.splitlines()
            if line.lstrip().startswith("uses: ragaliq/ragaliq-gate@")
        ]
        assert lines, name
        assert all(
            line.endswith(f"uses: ragaliq/ragaliq-gate@{'9f' * 20} # v1.4.2") for line in lines
        )
        for job in yaml.safe_load(text)["jobs"].values():
            for step in _steps_using(job, "ragaliq/ragaliq-gate@"):
                assert PINNED.match(step["uses"]), step
    for name in (".github/workflows/ragaliq.yml", ".github/workflows/ragaliq-baseline.yml"):
        assert 'install --quiet "ragaliq-gate==1.4.2"' in _text(tmp_path, name)
    # Everything else is the template, word for word.
    unreleased = {f.path: f.text for f in scaffold_files(tmp_path)}
    for file in scaffold_files(tmp_path, release=RELEASE):
        assert file.text == pin_release(unreleased[file.path], RELEASE)
    assert (
        pin_release(unreleased[tmp_path / WORKFLOWS[0]], None)
        == unreleased[tmp_path / WORKFLOWS[0]]
    )


def test_a_release_runs_its_own_image_on_gitlab_unless_told_another(tmp_path):
    (pipeline,) = [
        f for f in scaffold_files(tmp_path, ci="gitlab", release=RELEASE) if f.path.suffix == ".yml"
    ]
    assert f"image: {RELEASE.image}" in pipeline.text
    other = "registry.example.com/ragaliq@sha256:" + "11" * 32
    (mine,) = [
        f
        for f in scaffold_files(tmp_path, ci="gitlab", image=other, release=RELEASE)
        if f.path.suffix == ".yml"
    ]
    assert RELEASE.image not in mine.text
    assert other in mine.text


@pytest.mark.parametrize("release", [None, RELEASE], ids=["main", "release"])
def test_workflow_passes_actionlint(tmp_path, release):
    actionlint = console_tool("actionlint")
    if actionlint is None:
        pytest.skip("actionlint is not installed (it comes with the project's `lint` extra)")
    write_scaffold(tmp_path, release=release)
    shellcheck = [] if console_tool("shellcheck") else ["-shellcheck="]
    result = subprocess.run(
        [actionlint, *shellcheck, "-no-color", *(str(tmp_path / w) for w in WORKFLOWS)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_workflow_matches_githubs_workflow_schema(tmp_path):
    check_jsonschema = console_tool("check-jsonschema")
    assert check_jsonschema is not None, "check-jsonschema comes with the project's `dev` extra"
    write_scaffold(tmp_path)
    result = subprocess.run(
        [
            check_jsonschema,
            "--builtin-schema",
            "vendor.github-workflows",
            *(str(tmp_path / w) for w in WORKFLOWS),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_gitignore_keeps_every_local_result_out_of_git(tmp_path):
    if shutil.which("git") is None:
        pytest.skip("git is needed to ask git what it ignores")
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    write_scaffold(tmp_path)
    local = tmp_path / ".ragaliq"
    results = (
        "baseline.json",
        "cache.sqlite",
        "comment.md",
        "decision.json",
        "report.html",
        "report.json",
    )
    for name in results:
        (local / name).write_text("{}", encoding="utf-8")
    ignored = subprocess.run(
        [
            "git",
            "-C",
            str(tmp_path),
            "check-ignore",
            "--no-index",
            *(str(p) for p in local.iterdir()),
        ],
        capture_output=True,
        text=True,
        check=False,
    ).stdout.split()
    assert sorted(Path(p).name for p in ignored) == list(results)


def test_the_example_workflows_are_what_init_writes(tmp_path):
    write_scaffold(tmp_path)
    for workflow in WORKFLOWS:
        written = (tmp_path / workflow).read_text(encoding="utf-8")
        example = EXAMPLES / Path(workflow).name
        assert example.read_text(encoding="utf-8") == written, (
            f"{example} is stale: copy it from `ragaliq init --dir <empty folder>`"
        )


def test_the_baseline_workflow_records_on_main_and_keeps_it_off_main(tmp_path):
    write_scaffold(tmp_path)
    path = tmp_path / ".github/workflows/ragaliq-baseline.yml"
    workflow = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert workflow[True] == {"push": {"branches": ["main"]}}  # a dispatched run never counts
    assert workflow["permissions"] == {}
    (job,) = workflow["jobs"].values()
    assert job["permissions"] == {"contents": "write", "actions": "read"}
    record, store = _steps_using(job, "ragaliq/ragaliq-gate@")
    assert record["with"]["mode"] == "update-baseline"
    assert record["with"]["dataset"] == "rag_outputs.jsonl"  # as the gates find it
    assert store["with"]["mode"] == "store-baseline"
    proof, answers = _steps_using(job, "actions/upload-artifact@")
    assert answers["with"]["name"] == "ragaliq-answers"  # gates find them by this run's id
    assert "concurrency" not in workflow  # every push records: a group cancels waiting runs
    assert proof["with"]["name"] == "ragaliq-baseline-${{ steps.ragaliq.outputs.baseline-digest }}"
    assert proof["with"]["path"] == "${{ steps.ragaliq.outputs.baseline-path }}"
    assert job["steps"].index(record) < job["steps"].index(proof) < job["steps"].index(store)
    assert not _steps_using(job, "actions/cache"), "the job holding the key unpacks no cache"
    # Nothing pushes: no git push, no token handed to a script.
    scripts = " ".join(s.get("run", "") for s in job["steps"])
    assert "git push" not in scripts and "github.token" not in yaml.safe_dump(job)


def test_no_job_that_holds_the_key_restores_a_cache_or_pushes(tmp_path):
    write_scaffold(tmp_path)
    for name in WORKFLOWS:
        workflow = yaml.safe_load(_text(tmp_path, name))
        for job_name, job in workflow["jobs"].items():
            text = yaml.safe_dump(job)
            if "secrets." in text:
                assert not _steps_using(job, "actions/cache"), (name, job_name)
            assert "git push" not in text, (name, job_name)


@pytest.mark.parametrize("env", [{}, {"ANTHROPIC_API_KEY": "sk-ant-test"}], ids=["no key", "key"])
def test_a_pull_request_main_and_a_laptop_judge_alike_until_the_team_switches(tmp_path, env):
    from ragaliq.judges.factory import build_judge, has_credentials
    from ragaliq.offline import OfflineJudge

    write_scaffold(tmp_path)
    judge = parse_config(_text(tmp_path, "ragaliq.yaml")).judge
    # The action neither skips a pull request nor refuses to record the baseline for want of a
    # key, and judges as `ragaliq gate` does on a laptop, key or not.
    assert has_credentials(judge, env)
    assert isinstance(build_judge(judge, env=env, cache_path=None).judge, OfflineJudge)


def test_the_sharded_example_judges_in_the_trusted_zone_only():
    workflow = yaml.safe_load((EXAMPLES / "ragaliq-sharded.yml").read_text(encoding="utf-8"))
    produce, judge, gate = (workflow["jobs"][name] for name in ("produce", "judge", "gate"))
    assert "secrets." not in yaml.safe_dump(produce)
    assert produce["permissions"] == {"contents": "read"}
    for job in (judge, gate):
        (checkout,) = _steps_using(job, "actions/checkout@")
        assert checkout["with"]["ref"] == "${{ github.event.pull_request.base.sha }}"
        assert "head.repo.full_name == github.repository" in job["if"]
    assert "secrets.ANTHROPIC_API_KEY" in yaml.safe_dump(judge)
    assert judge["needs"] == "produce" and gate["needs"] == "judge"
    # Each shard is held to the gate's budget and hands its report's digest to the gate, which
    # merges only reports with those digests (code in produce may upload any artifact).
    shards = judge["strategy"]["matrix"]["shard"]
    assert int(workflow["env"]["SHARDS"]) == len(shards)
    assert set(judge["outputs"]) == {f"sha256-{n}" for n in shards}
    assert "--gate-budget" in yaml.safe_dump(judge)
    scripts = [step.get("run", "") for step in gate["steps"]]
    check = next(i for i, run in enumerate(scripts) if "sha256sum --strict --check" in run)
    merge = next(i for i, run in enumerate(scripts) if "ragaliq merge" in run)
    assert check < merge
    assert "needs.judge.outputs" in yaml.safe_dump(gate["steps"][check])
    assert gate["permissions"]["statuses"] == "write"
    status = gate["steps"][-1]
    assert status["if"] == "${{ always() }}" and "RagaliQ Gate" in status["run"]


def test_validate_warns_when_the_forks_workflow_follows_a_workflow_that_does_not_exist(
    tmp_path, no_api_key
):
    write_scaffold(tmp_path)
    runner = CliRunner()
    config = str(tmp_path / "ragaliq.yaml")
    quiet = runner.invoke(cli, ["validate", "--config", config])
    assert quiet.exit_code == 0 and "warning" not in quiet.stderr
    workflow = tmp_path / ".github/workflows/ragaliq.yml"
    workflow.write_text(
        workflow.read_text(encoding="utf-8").replace("name: ragaliq\n", "name: rag checks\n"),
        encoding="utf-8",
    )
    renamed = runner.invoke(cli, ["validate", "--config", config])
    assert renamed.exit_code == 0
    assert (
        "warning: .github/workflows/ragaliq-forks.yml follows the workflow 'ragaliq', which no "
        "workflow in .github/workflows is named: pull requests from forks would never be gated"
    ) in renamed.stderr

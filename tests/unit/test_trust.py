"""The trust boundary: repository paths, where files are read from, what a change may tighten."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragaliq.baseline import Baseline, write_baseline
from ragaliq.cli import Collaborators, cli
from ragaliq.config import GateConfig, JudgeConfig, parse_config
from ragaliq.errors import ConfigError, RepositoryError
from ragaliq.evaluators import build_evaluators
from ragaliq.models import JudgeInfo, RunReport
from ragaliq.repository import CommitMissingError, GitCommit, WorkTree, repo_path
from ragaliq.runner import run_suite
from ragaliq.trust import (
    Floor,
    hold_to_baseline,
    judge_of_baseline,
    keep_baseline_evaluators,
    read_bar,
    tighten,
)
from tests.baselines import record_baseline
from tests.conftest import make_case, write_jsonl
from tests.fakes.judge import FakeJudge, Opener

QUICKSTART = Path(__file__).resolve().parents[2] / "examples" / "quickstart"


@pytest.mark.parametrize(
    ("raw", "folder", "expected"),
    [
        ("baseline.json", "", "baseline.json"),
        ("./a/b.json", "conf", "conf/a/b.json"),
        ("../shared/t.j2", "conf", "shared/t.j2"),
        ("a//b/./c", "", "a/b/c"),
    ],
)
def test_repository_paths_are_normalised_inside_the_repository(raw, folder, expected):
    assert repo_path(raw, folder=folder, what="x") == expected


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("/proc/self/environ", "not a path inside the repository"),
        ("~/.ssh/id_rsa", "not a path inside the repository"),
        ("../../etc/passwd", "leads out of the repository"),
        ("a\\b", "backslash"),
        ("a\x00b", "NUL"),
        ("  ", "empty"),
        (".", "names a folder"),
    ],
)
def test_paths_outside_the_repository_are_refused(raw, message):
    with pytest.raises(ConfigError, match=message):
        repo_path(raw, folder="conf", what="templates.comment")


def test_the_working_tree_refuses_links_folders_and_special_files(tmp_path):
    tree = WorkTree(tmp_path)
    (tmp_path / "real.txt").write_text("x", encoding="utf-8")
    (tmp_path / "link.txt").symlink_to(tmp_path / "real.txt")
    (tmp_path / "linked").symlink_to(tmp_path)
    (tmp_path / "folder").mkdir()
    os.mkfifo(tmp_path / "fifo")
    assert tree.read("real.txt", limit=10, what="t") == b"x"
    assert tree.read("absent.txt", limit=10, what="t") is None
    with pytest.raises(RepositoryError, match=r"link\.txt is a symbolic link"):
        tree.read("link.txt", limit=10, what="t")
    with pytest.raises(RepositoryError, match="linked is a symbolic link"):
        tree.read("linked/real.txt", limit=10, what="t")
    with pytest.raises(RepositoryError, match="is a folder"):
        tree.read("folder", limit=10, what="t")
    with pytest.raises(RepositoryError, match="not a regular file"):
        tree.read("fifo", limit=10, what="t")
    (tmp_path / "big.txt").write_text("x" * 11, encoding="utf-8")
    with pytest.raises(RepositoryError, match="over the size limit"):
        tree.read("big.txt", limit=10, what="t")


def git(root: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(root), *args], capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


@pytest.fixture
def repo(tmp_path):
    if shutil.which("git") is None:
        pytest.skip("git is needed for a repository")
    git(tmp_path, "init", "-q", "-b", "main")
    git(tmp_path, "config", "user.email", "ci@example.com")
    git(tmp_path, "config", "user.name", "CI")
    return tmp_path


def commit(root: Path, message: str = "c") -> str:
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", message)
    return git(root, "rev-parse", "HEAD")


def test_a_commit_is_read_with_git_and_a_link_in_it_is_refused(repo):
    (repo / "ragaliq.yaml").write_text("gate: {max_drop: 0.01}\n", encoding="utf-8")
    (repo / "link.json").symlink_to("ragaliq.yaml")
    sha = commit(repo)
    (repo / "ragaliq.yaml").write_text("gate: {max_drop: 0.5}\n", encoding="utf-8")
    at = GitCommit(repo, sha)
    assert at.read("ragaliq.yaml", limit=100, what="config") == b"gate: {max_drop: 0.01}\n"
    assert at.read("absent.yaml", limit=100, what="config") is None
    with pytest.raises(RepositoryError, match="symbolic link at the commit"):
        at.read("link.json", limit=100, what="baseline")
    with pytest.raises(CommitMissingError):
        GitCommit(repo, "f" * 40).read("ragaliq.yaml", limit=100, what="config")


def config(text: str) -> GateConfig:
    return parse_config(text, name="ragaliq.yaml")


def test_a_change_may_tighten_the_bar_at_once():
    trusted = config("evaluators:\n  relevance: {enabled: false}\ngate: {max_drop: 0.05}\n")
    proposed = config(
        "evaluators:\n  faithfulness: {threshold: 0.9}\n  hallucination: {min_confidence: 0.6}\n"
        "gate: {max_drop: 0.01, fail_on_new_hallucinations: true, on_missing_cases: fail}\n"
    )
    merged, notices = tighten(trusted, proposed)
    assert merged.evaluators.faithfulness.threshold == 0.9
    assert merged.evaluators.relevance.enabled is True
    assert merged.evaluators.hallucination.min_confidence == 0.6
    assert merged.gate.max_drop == 0.01
    assert merged.gate.fail_on_new_hallucinations is True
    (said,) = notices
    assert "faithfulness threshold 0.7 → 0.9" in said
    assert "turns on relevance" in said


@pytest.mark.parametrize("option", ["fail_on_lost_chunks", "fail_on_miscited_claims"])
def test_a_change_may_turn_on_failing_on_retrieval_and_citations_never_off(option):
    off, on = config(f"gate: {{{option}: false}}\n"), config(f"gate: {{{option}: true}}\n")
    merged, notices = tighten(off, on)
    assert getattr(merged.gate, option) is True
    assert f"tightens the gate ({option} false → true)" in notices[0]
    merged, notices = tighten(on, off)
    assert getattr(merged.gate, option) is True
    assert f"gate.{option} true → false" in notices[0]


def test_everything_else_a_change_proposes_waits_for_the_merge():
    trusted = config("judge: {model: claude-a}\nevaluators:\n  faithfulness: {threshold: 0.8}\n")
    proposed = config(
        "judge: {model: claude-b, base_url: 'http://evil.example', api_key: sk-ant-proposed-key}\n"
        "evaluators:\n  faithfulness: {threshold: 0.5, verdict_scores: {CONTRADICTED: 1}}\n"
        "gate: {max_drop: 0.5, on_error: ignore}\ntemplates: {comment: t.md.j2}\n"
    )
    merged, notices = tighten(trusted, proposed)
    assert merged == trusted
    (said,) = notices
    for change in (
        "judge.model claude-a → claude-b",
        "judge.base_url unset → http://evil.example",
        "judge.api_key (changed)",
        "faithfulness threshold 0.8 → 0.5",
        "faithfulness.verdict_scores",
        "max_drop 0.05 → 0.5",
        "on_error fail → ignore",
        "templates.comment unset → t.md.j2",
    ):
        assert change in said
    assert "sk-ant-proposed-key" not in said


def test_the_local_gate_reads_the_bar_at_the_merge_base(repo):
    shutil.copy(QUICKSTART / "rag_outputs.jsonl", repo / "rag_outputs.jsonl")
    (repo / "ragaliq.yaml").write_text(
        "dataset: rag_outputs.jsonl\njudge: {provider: offline}\n"
        "evaluators:\n  faithfulness: {threshold: 0.95}\n",
        encoding="utf-8",
    )
    runner = CliRunner()
    recorded = runner.invoke(cli, ["baseline", "record", "--config", str(repo / "ragaliq.yaml")])
    assert recorded.exit_code == 0, recorded.output
    commit(repo, "main")
    git(repo, "checkout", "-q", "-b", "feature")
    (repo / "ragaliq.yaml").write_text(
        "dataset: rag_outputs.jsonl\njudge: {provider: offline}\n"
        "evaluators:\n  faithfulness: {threshold: 0.1}\n",
        encoding="utf-8",
    )
    (repo / ".ragaliq" / "baseline.json").unlink()  # the working tree, read with --base none
    args = ["gate", "--config", str(repo / "ragaliq.yaml"), "--comment-out", str(repo / "c.md")]
    at_base = runner.invoke(cli, args)
    assert at_base.exit_code == 1, at_base.output
    assert "faithfulness threshold 0.95 → 0.1" in at_base.output
    worktree = runner.invoke(cli, [*args, "--base", "none"])
    assert worktree.exit_code == 0, worktree.output
    named = runner.invoke(cli, [*args, "--base", "main"])
    assert named.exit_code == 1, named.output
    assert "faithfulness threshold 0.95 → 0.1" in named.output
    unknown = runner.invoke(cli, [*args, "--base", "no-such-branch"])
    assert unknown.exit_code == 2
    assert "--base no-such-branch: not a commit" in unknown.stderr


def test_an_explicit_baseline_that_does_not_exist_is_an_error(tmp_path):
    shutil.copy(QUICKSTART / "rag_outputs.jsonl", tmp_path / "rag_outputs.jsonl")
    (tmp_path / "ragaliq.yaml").write_text(
        "dataset: rag_outputs.jsonl\njudge: {provider: offline}\n", encoding="utf-8"
    )
    work = WorkTree(tmp_path)
    with pytest.raises(Exception, match=r"baselin\.json: not found .*a typo"):
        read_bar(
            trusted=work,
            proposal=work,
            config_file="ragaliq.yaml",
            baseline_file=".ragaliq/baselin.json",
        )
    bar = read_bar(trusted=work, proposal=work, config_file="ragaliq.yaml")
    assert bar.baseline is None  # the config's baseline, not recorded yet
    result = CliRunner().invoke(
        cli,
        [
            "gate",
            "--config",
            str(tmp_path / "ragaliq.yaml"),
            "--baseline",
            str(tmp_path / ".ragaliq" / "baselin.json"),
        ],
    )
    assert result.exit_code == 2
    assert "not found" in result.stderr
    assert json.dumps("No baseline yet")[1:-1] not in result.output


@pytest.mark.parametrize(
    ("cache_path", "message"),
    [
        ("/tmp/cache.sqlite", "is not a path inside the repository"),
        ("~/cache.sqlite", "is not a path inside the repository"),
        ("../../cache.sqlite", "leads out of the repository"),
    ],
)
def test_a_judge_cache_outside_the_repository_is_refused(tmp_path, cache_path, message):
    shutil.copy(QUICKSTART / "rag_outputs.jsonl", tmp_path / "rag_outputs.jsonl")
    (tmp_path / "ragaliq.yaml").write_text(
        f"dataset: rag_outputs.jsonl\njudge: {{cache_path: '{cache_path}'}}\n", encoding="utf-8"
    )
    result = CliRunner().invoke(
        cli, ["run", "--config", str(tmp_path / "ragaliq.yaml")], env={"ANTHROPIC_API_KEY": ""}
    )
    assert result.exit_code == 2
    assert f"judge.cache_path: {cache_path!r} {message}" in result.stderr


# --- the bar at its edges ----------------------------------------------------------------------


def test_raising_a_min_confidence_already_set_tightens_at_once_and_lowering_it_waits():
    trusted = config("evaluators:\n  hallucination: {min_confidence: 0.6}\n")
    raised, notices = tighten(
        trusted, config("evaluators:\n  hallucination: {min_confidence: 0.7}\n")
    )
    assert raised.evaluators.hallucination.min_confidence == 0.7
    assert "hallucination min_confidence 0.6 → 0.7" in notices[0]
    assert "tightens the gate" in notices[0]
    lowered, notices = tighten(
        trusted, config("evaluators:\n  hallucination: {min_confidence: 0.5}\n")
    )
    assert lowered.evaluators.hallucination.min_confidence == 0.6
    assert "hallucination.min_confidence 0.6 → 0.5" in notices[0]
    assert "apply once it is merged" in notices[0]


def test_a_proposal_equal_to_the_bar_says_nothing():
    trusted = config(
        "evaluators:\n  hallucination: {min_confidence: 0.6}\ngate: {max_drop: 0.05}\n"
    )
    assert tighten(trusted, trusted) == (trusted, [])
    assert tighten(trusted, None) == (trusted, [])


async def report_judged_by(provider: str, model: str) -> RunReport:
    report = await run_suite(
        [make_case()], judge=FakeJudge(), evaluators=build_evaluators(GateConfig().evaluators)
    )
    judge = JudgeInfo(provider=provider, model=model, prompt_version="p1")
    return report.model_copy(update={"judge": judge})


async def baseline_judged_by(provider: str, model: str) -> Baseline:
    return record_baseline(await report_judged_by(provider, model))


async def test_a_run_compared_with_a_baseline_is_judged_by_the_baseline_judge():
    baseline = await baseline_judged_by("anthropic", "claude-a")
    judge = JudgeConfig(provider="claude", model="claude-b", base_url="https://proxy.example")
    chosen, notice = judge_of_baseline(judge, baseline)
    assert (chosen.provider, chosen.model) == ("claude", "claude-a")
    assert chosen.base_url == "https://proxy.example"  # the endpoint stays the trusted config's
    assert notice is not None and "judged by claude/claude-a, so this run is too" in notice
    # Already the baseline's judge: nothing to say.
    assert judge_of_baseline(chosen, baseline) == (chosen, None)
    # No baseline: the config's judge.
    assert judge_of_baseline(judge, None) == (judge, None)


async def test_a_baseline_judged_offline_keeps_the_run_offline():
    baseline = await baseline_judged_by("offline", "heuristic-v9")
    chosen, notice = judge_of_baseline(JudgeConfig(provider="claude", model="claude-b"), baseline)
    assert chosen.provider == "offline"
    assert chosen.model == "claude-b"  # the offline judge has no model to choose
    assert notice is not None and "judged by the offline judge" in notice


async def test_auto_stays_auto_against_a_claude_baseline_but_takes_its_model():
    baseline = await baseline_judged_by("anthropic", "claude-a")
    chosen, _ = judge_of_baseline(JudgeConfig(provider="auto", model="claude-b"), baseline)
    assert (chosen.provider, chosen.model) == ("auto", "claude-a")


async def test_a_baseline_of_an_unknown_judge_leaves_the_config_judge():
    baseline = await baseline_judged_by("fake", "fake-1")
    judge = JudgeConfig(provider="claude", model="claude-b")
    assert judge_of_baseline(judge, baseline) == (judge, None)


def test_the_gate_opens_the_judge_the_baseline_was_recorded_with(tmp_path):
    report = asyncio.run(report_judged_by("anthropic", "claude-a"))
    write_jsonl(tmp_path / "data.jsonl", [make_case().model_dump(mode="json")])
    (tmp_path / ".ragaliq").mkdir()
    write_baseline(
        tmp_path / ".ragaliq" / "baseline.json", head=report.head, cases=iter(report.cases)
    )
    (tmp_path / "ragaliq.yaml").write_text(
        "dataset: data.jsonl\njudge: {provider: claude, model: claude-b, cache: false}\n",
        encoding="utf-8",
    )
    opener = Opener(FakeJudge())
    result = CliRunner().invoke(
        cli,
        [
            "gate",
            "--config",
            str(tmp_path / "ragaliq.yaml"),
            "--base",
            "none",
            "--comment-out",
            str(tmp_path / "comment.md"),
        ],
        obj=Collaborators(env={"ANTHROPIC_API_KEY": "sk-ant-test"}, open_judge=opener),
    )
    assert [(c.provider, c.model) for c in opener.opened] == [("claude", "claude-a")], result.output
    assert "so this run is too" in result.output


def test_a_proposal_that_tightens_and_loosens_is_told_apart_exactly():
    trusted = config(
        "judge: {model: claude-a}\n"
        "evaluators:\n  faithfulness: {max_drop: 0.05}\n  hallucination: {min_confidence: 0.6}\n"
    )
    proposed = config(
        "judge: {model: claude-b}\n"
        "evaluators:\n"
        "  faithfulness: {max_drop: 0.02, threshold: 0.6,"
        " verdict_scores: {CONTRADICTED: -2.0, NOT_ENOUGH_INFO: 0.25}}\n"
        "  hallucination: {min_confidence: 0.7}\n"
        "  relevance: {enabled: false}\n"
        "gate: {count_unstable: true, on_error: ignore}\n"
    )
    merged, notices = tighten(trusted, proposed)
    assert notices == [
        "This change tightens the gate (faithfulness max_drop 0.05 → 0.02; hallucination "
        "min_confidence 0.6 → 0.7; count_unstable false → true); the tighter setting applies now.",
        "This change proposes settings that apply once it is merged, since the bar comes from the "
        "base commit: faithfulness threshold 0.7 → 0.6; faithfulness.verdict_scores {} → "
        "{CONTRADICTED: -2, NOT_ENOUGH_INFO: 0.25}; turns off relevance; gate.on_error fail → "
        "ignore; judge.model claude-a → claude-b.",
    ]
    assert merged.evaluators.faithfulness.max_drop == 0.02
    assert merged.rules().drop_for("faithfulness") == 0.02
    assert merged.evaluators.faithfulness.threshold is None  # its default, 0.7
    assert merged.evaluators.faithfulness.verdict_scores == {}
    assert merged.evaluators.hallucination.min_confidence == 0.7
    assert merged.evaluators.relevance.enabled is True
    assert (merged.gate.count_unstable, merged.gate.on_error) == (True, "fail")
    assert merged.judge.model == "claude-a"


def test_a_proposal_that_unsets_a_setting_loosens_nothing_until_merged():
    trusted = config(
        "judge: {base_url: 'https://proxy.example'}\n"
        "evaluators:\n  hallucination: {min_confidence: 0.6}\n"
    )
    merged, notices = tighten(trusted, config("{}\n"))
    assert merged == trusted
    assert notices == [
        "This change proposes settings that apply once it is merged, since the bar comes from the "
        "base commit: hallucination.min_confidence 0.6 → unset; "
        "judge.base_url https://proxy.example → unset."
    ]


async def baseline_under(text: str) -> Baseline:
    """The baseline ``ragaliq baseline record`` records under the config ``text``."""
    recorded = config(text)
    report = await run_suite(
        [make_case()], judge=FakeJudge(), evaluators=build_evaluators(recorded.evaluators)
    )
    return record_baseline(report, policy=recorded.rules().recorded(report.head.evaluators))


def floor_under(text: str, baseline: Baseline | None) -> Floor:
    """The bar a run under the config ``text`` is held to against ``baseline``."""
    run = config(text)
    thresholds = {e.name: e.threshold for e in build_evaluators(run.evaluators)}
    return hold_to_baseline(thresholds, run.rules(), baseline)


async def test_a_threshold_equal_to_the_baseline_s_is_held_without_a_word():
    written = "evaluators:\n  faithfulness: {threshold: 0.8}\n"
    floor = floor_under(written, await baseline_under(written))
    assert floor.thresholds["faithfulness"] == 0.8
    assert floor.notices == ()


async def test_a_pr_that_raises_one_threshold_and_lowers_another_gets_the_stricter_of_each():
    baseline = await baseline_under("evaluators:\n  faithfulness: {threshold: 0.8}\n")
    floor = floor_under(
        "evaluators:\n  faithfulness: {threshold: 0.6}\n  relevance: {threshold: 0.9}\n",
        baseline,
    )
    assert floor.thresholds == {"faithfulness": 0.8, "hallucination": 0.8, "relevance": 0.9}
    assert floor.notices == (
        "This PR changes thresholds (faithfulness 0.8 → 0.6; relevance 0.7 → 0.9); until it is "
        "merged and the baseline updated, the stricter of the two applies.",
    )


async def test_a_pr_that_loosens_the_recorded_policy_is_held_to_it_and_told_so():
    baseline = await baseline_under(
        "evaluators:\n  faithfulness: {max_drop: 0.01}\ngate: {count_unstable: true}\n"
    )
    floor = floor_under("gate: {on_error: ignore}\n", baseline)
    assert floor.notices == (
        "This PR loosens the gate (on_error fail → ignore; count_unstable true → false; "
        "faithfulness max_drop 0.01 → 0.05); until it is merged and the baseline updated, the "
        "stricter setting applies.",
    )
    assert (floor.rules.on_error, floor.rules.count_unstable) == ("fail", True)
    assert floor.rules.drop_for("faithfulness") == 0.01
    assert floor.rules.drop_for("relevance") == 0.05


def test_without_a_baseline_the_run_s_own_bar_applies():
    thresholds = {"faithfulness": 0.6}
    floor = hold_to_baseline(thresholds, config("{}\n").rules(), None)
    assert floor == Floor(thresholds=thresholds, rules=config("{}\n").rules())


@pytest.mark.parametrize(
    ("off", "notice"),
    [
        (
            ["relevance"],
            "This PR turns off relevance; the baseline has it, so the gate still judges it until "
            "the PR is merged and the baseline updated.",
        ),
        (
            ["hallucination", "relevance"],
            "This PR turns off hallucination, relevance; the baseline has them, so the gate still "
            "judges them until the PR is merged and the baseline updated.",
        ),
    ],
)
async def test_evaluators_the_baseline_has_stay_on(off, notice):
    baseline = await baseline_under("{}\n")
    text = "evaluators:\n" + "".join(f"  {name}: {{enabled: false}}\n" for name in off)
    kept, notices = keep_baseline_evaluators(config(text), baseline)
    assert notices == (notice,)
    assert [name for name, e in kept.evaluators.sections() if e.enabled] == [
        "faithfulness",
        "hallucination",
        "relevance",
    ]
    assert keep_baseline_evaluators(config(text), None) == (config(text), ())


JUDGED_ALIKE = (
    "so this run is too, and the scores compare; the config's judge applies once the baseline "
    "is recorded with it on the base branch."
)


async def test_an_offline_config_against_a_claude_baseline_is_judged_by_claude():
    baseline = await baseline_judged_by("anthropic", "claude-a")
    chosen, notice = judge_of_baseline(JudgeConfig(provider="offline"), baseline)
    assert (chosen.provider, chosen.model) == ("claude", "claude-a")
    assert notice == f"The baseline was judged by claude/claude-a, {JUDGED_ALIKE}"


async def test_auto_against_an_offline_baseline_is_judged_offline():
    baseline = await baseline_judged_by("offline", "heuristic-v9")
    chosen, notice = judge_of_baseline(JudgeConfig(provider="auto"), baseline)
    assert chosen.provider == "offline"
    assert notice == f"The baseline was judged by the offline judge, {JUDGED_ALIKE}"


async def test_a_baseline_that_names_its_judge_as_a_config_does_is_judged_alike():
    baseline = await baseline_judged_by("claude", "claude-a")
    chosen, _ = judge_of_baseline(JudgeConfig(provider="bedrock", model="claude-b"), baseline)
    assert (chosen.provider, chosen.model) == ("claude", "claude-a")


@pytest.mark.parametrize(
    ("proposed", "shown"),
    [
        ("evaluators:\n  faithfulness: {max_drop: 0.03}\n", "0.03"),
        ("{}\n", "0.05"),  # unset: back to gate.max_drop
    ],
)
def test_a_pr_that_raises_an_evaluator_s_own_max_drop_waits_for_the_merge(proposed, shown):
    trusted = config("evaluators:\n  faithfulness: {max_drop: 0.02}\n")
    merged, notices = tighten(trusted, config(proposed))
    assert merged.rules().drop_for("faithfulness") == 0.02
    assert notices == [
        "This change proposes settings that apply once it is merged, since the bar comes from the "
        f"base commit: faithfulness max_drop 0.02 → {shown}."
    ]


def test_a_change_may_turn_confirmation_off_at_once_but_on_only_once_merged():
    on, off = config("gate: {}\n"), config("gate: {confirm_new_hallucinations: false}\n")
    merged, notices = tighten(on, off)
    assert merged.gate.confirm_new_hallucinations is False
    assert "confirm_new_hallucinations true → false" in notices[0]
    merged, notices = tighten(off, on)
    assert merged.gate.confirm_new_hallucinations is False
    assert "confirm_new_hallucinations" in notices[0]

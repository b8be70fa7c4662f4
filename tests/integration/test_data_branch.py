"""The baseline store on a data branch, written and read through the (fake) GitHub API, and the
bar read from the baseline workflow's run records: the store only a cache of what they show."""

from __future__ import annotations

import asyncio
import io
import tempfile
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from ragaliq.baseline import Origin, write_baseline
from ragaliq.ci.custody import RunRecordFinder
from ragaliq.config import BaselinesConfig, GateConfig
from ragaliq.errors import BaselineError, BaselineMissingError, BaselinePendingError, OutputError
from ragaliq.evaluators import build_evaluators
from ragaliq.forge import baseline_artifact
from ragaliq.github.baseline_runs import GitHubBaselineRuns
from ragaliq.github.client import GitHubApi
from ragaliq.github.data_branch import BranchBackend
from ragaliq.repository import WorkTree
from ragaliq.runner import run_suite
from ragaliq.store.finder import StoreFinder
from ragaliq.store.found import FoundBaseline
from ragaliq.store.layout import BaselineStore, baseline_digest
from tests.conftest import make_case
from tests.fakes.github_server import FakeGitHub
from tests.fakes.judge import FakeJudge

TOKEN = "ghs_store"
REPO = "acme/rag"
MAIN, PARENT = "1" * 40, "2" * 40
SETTINGS = BaselinesConfig(store="branch")


@pytest.fixture
def github() -> Iterator[FakeGitHub]:
    with FakeGitHub(token=TOKEN) as server:
        yield server


def backend(github: FakeGitHub, branch: str = "ragaliq-baselines") -> BranchBackend:
    return BranchBackend(api=api(github), branch=branch)


def api(github: FakeGitHub) -> GitHubApi:
    return GitHubApi(token=TOKEN, repository=REPO, api_url=github.base_url)


def recorded(commit: str, run_id: int | None, repository: str = REPO) -> bytes:
    report = asyncio.run(
        run_suite(
            [make_case()], judge=FakeJudge(), evaluators=build_evaluators(GateConfig().evaluators)
        )
    )
    origin = Origin(repository=repository, run_id=run_id) if run_id else None
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "baseline.json"
        write_baseline(
            path, head=report.head, cases=iter(report.cases), commit=commit, origin=origin
        )
        return path.read_bytes()


def test_the_store_is_created_written_and_read_through_the_api(github):
    store = BaselineStore(backend(github), keep=5)
    assert store.view() is None
    store.put(MAIN, b"the baseline", answers=b"the answers")
    assert set(github.branch_files(REPO, "ragaliq-baselines")) == {
        "index.json",
        f"baselines/{MAIN}.json.gz",
        f"answers/{MAIN}.jsonl.gz",
    }
    store.put(PARENT, b"another")
    view = store.view()
    assert view is not None and view.description.startswith("the branch ragaliq-baselines of")
    assert view.baseline(MAIN).data == b"the baseline"
    assert view.answers(MAIN) == b"the answers"


def test_a_write_that_loses_the_race_is_written_again_on_top(github):
    store = BaselineStore(backend(github), keep=5, sleep=lambda _: None)
    store.put(MAIN, b"first")
    racing = backend(github)
    original = racing.commit
    raced = []

    def commit_after_another(base, **change):
        if not raced:  # another baseline run moves the branch between our read and our write
            raced.append(github.write_branch(REPO, "ragaliq-baselines", {"other.txt": b"x"}))
        return original(base, **change)

    object.__setattr__(racing, "commit", commit_after_another)
    BaselineStore(racing, keep=5, sleep=lambda _: None).put(PARENT, b"second")
    files = github.branch_files(REPO, "ragaliq-baselines")
    assert "other.txt" in files and f"baselines/{PARENT}.json.gz" in files
    updates = github.requests_matching("PATCH", r"/git/refs/heads/ragaliq-baselines")
    assert len(updates) == 2 and updates[0].body["force"] is False


def test_a_protected_branch_refuses_and_says_how_to_fix_it(github):
    github.protect_branch(REPO, "main")
    with pytest.raises(OutputError) as caught:
        BaselineStore(backend(github, "main"), keep=5).put(MAIN, b"onto main")
    assert "Protected branch update failed" in str(caught.value)
    assert "do not protect it" in str(caught.value)
    assert github.branch_files(REPO, "main") == {}


def baseline_run(github: FakeGitHub, run_id: int, **run) -> None:
    values = {
        "head_sha": MAIN,
        "workflow": "ragaliq-baseline.yml",
        "event": "push",
        "head_branch": "main",
    } | run
    github.add_run(REPO, run_id, **values)


def records(github: FakeGitHub, branch: str = "main") -> GitHubBaselineRuns:
    return GitHubBaselineRuns(
        api=api(github),
        server_url="https://github.example",
        branch=branch,
        workflow="ragaliq-baseline.yml",
        trusted=WorkTree(Path(tempfile.mkdtemp())),
    )


def the_bar(github: FakeGitHub, store: BaselineStore | None = None) -> FoundBaseline:
    finder = RunRecordFinder(
        records=lambda settings: records(github),
        store=lambda settings: store or BaselineStore(backend(github), keep=5),
        commit=MAIN,
        branch="main",
        base=f"main@{MAIN[:7]}",
    )
    return finder.find(BaselinesConfig(store="branch", ancestors=0))


def artifact_of(data: bytes) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("baseline.json", data)
    return buffer.getvalue()


def test_a_baseline_its_push_run_recorded_is_the_bar_from_the_store_or_the_run(github):
    data = recorded(MAIN, 77)
    baseline_run(github, 77)
    name = baseline_artifact(baseline_digest(data))
    github.add_artifact(REPO, 77, name, artifact_of(data), head_sha=MAIN)
    found = the_bar(github)  # the store has no entry: read from the run
    assert found.commit == MAIN and "run 77's own artifact" in found.description
    BaselineStore(backend(github), keep=5).put(MAIN, data)
    found = the_bar(github)
    assert found.description.startswith(
        f"the baseline of main@{MAIN[:7]}, read from the branch ragaliq-baselines of {REPO}"
    )
    assert "recorded by run 77 of ragaliq-baseline.yml on a push to main" in found.description


@pytest.mark.parametrize(
    "run",
    [
        {"event": "pull_request"},
        {"event": "workflow_dispatch"},
        {"head_branch": "feature"},
        {"head_sha": PARENT},
        {"workflow": "ragaliq.yml"},
    ],
)
def test_a_baseline_from_any_other_run_is_refused(github, run):
    data = recorded(MAIN, 78)
    baseline_run(github, 78, **run)
    github.add_artifact(REPO, 78, baseline_artifact(baseline_digest(data)), artifact_of(data))
    BaselineStore(backend(github), keep=5).put(MAIN, data)
    with pytest.raises(BaselineMissingError, match=r"no baseline run of ragaliq-baseline\.yml"):
        the_bar(github)


def test_a_forged_file_naming_a_real_run_is_refused(github):
    genuine = recorded(MAIN, 79)
    baseline_run(github, 79)
    digest = baseline_digest(genuine)
    github.add_artifact(REPO, 79, baseline_artifact(digest), artifact_of(genuine))
    forged = genuine.replace(b'"faithfulness":1.0', b'"faithfulness":0.0')
    assert forged != genuine
    store = BaselineStore(backend(github), keep=5)
    store.put(MAIN, forged)
    with pytest.raises(BaselineError, match="is not the file run 79 recorded"):
        the_bar(github, store)


@pytest.mark.parametrize(
    ("origin", "said"), [(None, "names no run, not run 80"), (404, "names run 404, not run 80")]
)
def test_a_file_its_run_recorded_that_names_another_run_is_refused(github, origin, said):
    data = recorded(MAIN, origin)
    baseline_run(github, 80)
    github.add_artifact(REPO, 80, baseline_artifact(baseline_digest(data)), artifact_of(data))
    with pytest.raises(BaselineError, match=said):
        the_bar(github)


def test_an_earlier_attempts_baseline_is_never_the_bar(github):
    first = recorded(MAIN, 81)
    baseline_run(github, 81)
    github.add_artifact(REPO, 81, baseline_artifact(baseline_digest(first)), artifact_of(first))
    github.rerun(REPO, 81)  # the second attempt, still queued
    with pytest.raises(BaselinePendingError):
        the_bar(github)
    github.set_run(REPO, 81, status="completed", conclusion="success")  # uploaded nothing
    with pytest.raises(BaselineMissingError, match=r"run 81 \(attempt 2\).*showed no baseline"):
        the_bar(github)


def test_a_local_gate_takes_the_nearest_first_parent_ancestors_baseline_and_says_so(github):
    # main: ROOT <- PARENT <- MAIN; only ROOT has a baseline (MAIN's run is still going).
    root = "3" * 40
    repo_commits = {MAIN: [PARENT], PARENT: [root], root: []}
    data = recorded(root, 80)
    baseline_run(github, 80, head_sha=root)
    github.add_artifact(REPO, 80, baseline_artifact(baseline_digest(data)), b"", head_sha=root)
    BaselineStore(backend(github), keep=5).put(root, data)

    def finder(ancestors: int) -> StoreFinder:
        return StoreFinder(
            stores=lambda settings: (BaselineStore(backend(github), keep=5),),
            commit=MAIN,
            base=f"main@{MAIN[:7]}",
            parent_of=lambda sha: (repo_commits[sha] or [None])[0],
        )

    found = finder(2).find(BaselinesConfig(store="branch", ancestors=2))
    assert found is not None and found.commit == root
    assert found.description.startswith(
        f"the baseline of {root[:7]}, the first-parent ancestor of main@{MAIN[:7]} 2 commits back"
    )
    assert "a local gate has no run records" in found.description
    assert finder(1).find(BaselinesConfig(store="branch", ancestors=1)) is None


def test_a_baseline_stored_under_another_commit_is_refused(github):
    data = recorded(PARENT, 81)  # a genuine baseline of PARENT, copied to MAIN's place
    BaselineStore(backend(github), keep=5).put(MAIN, data)
    finder = StoreFinder(
        stores=lambda settings: (BaselineStore(backend(github), keep=5),),
        commit=MAIN,
        base=f"main@{MAIN[:7]}",
        parent_of=lambda sha: None,
    )
    with pytest.raises(BaselineError, match="it is not that commit's baseline"):
        finder.find(SETTINGS)

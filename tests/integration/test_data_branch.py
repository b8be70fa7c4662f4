"""The baseline store on a data branch, written and read through the (fake) GitHub API, and the
check of where each stored baseline came from."""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from ragaliq.baseline import Origin, parse_baseline, write_baseline
from ragaliq.config import BaselinesConfig, GateConfig
from ragaliq.errors import BaselineError, OutputError
from ragaliq.evaluators import build_evaluators
from ragaliq.github.data_branch import BranchBackend
from ragaliq.github.provenance import Provenance, baseline_artifact
from ragaliq.runner import run_suite
from ragaliq.store.finder import StoreFinder
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
    return BranchBackend(token=TOKEN, repository=REPO, api_url=github.base_url, branch=branch)


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


def verify(github: FakeGitHub, data: bytes, branch: str = "main") -> str:
    provenance = Provenance(token=TOKEN, repository=REPO, api_url=github.base_url)
    baseline = parse_baseline(data, source="stored")
    return provenance.verify(baseline, baseline_digest(data), SETTINGS, branch)


def test_a_baseline_its_push_run_recorded_is_trusted(github):
    data = recorded(MAIN, 77)
    baseline_run(github, 77)
    github.add_artifact(REPO, 77, baseline_artifact(baseline_digest(data)), b"", head_sha=MAIN)
    assert verify(github, data) == (
        "recorded by run 77 of ragaliq-baseline.yml on a push to main, which uploaded this "
        "file's digest"
    )


@pytest.mark.parametrize(
    ("run", "said"),
    [
        ({"event": "pull_request"}, "started by 'pull_request', not a push"),
        ({"event": "workflow_dispatch"}, "started by 'workflow_dispatch', not a push"),
        ({"head_branch": "feature"}, "it ran on 'feature', not main"),
        ({"head_sha": PARENT}, "not the baseline's commit"),
        ({"workflow": "ragaliq.yml"}, "it ran .github/workflows/ragaliq.yml"),
    ],
)
def test_a_baseline_from_any_other_run_is_refused(github, run, said):
    data = recorded(MAIN, 78)
    baseline_run(github, 78, **run)
    github.add_artifact(REPO, 78, baseline_artifact(baseline_digest(data)), b"", head_sha=MAIN)
    with pytest.raises(BaselineError, match=said):
        verify(github, data)


def test_a_forged_file_naming_a_real_run_is_refused(github):
    genuine = recorded(MAIN, 79)
    baseline_run(github, 79)
    github.add_artifact(REPO, 79, baseline_artifact(baseline_digest(genuine)), b"", head_sha=MAIN)
    forged = genuine.replace(b'"faithfulness":1.0', b'"faithfulness":0.0')
    assert forged != genuine
    with pytest.raises(BaselineError, match="uploaded no artifact ragaliq-baseline-"):
        verify(github, forged)
    with pytest.raises(BaselineError, match="names no run"):
        verify(github, recorded(MAIN, None))
    with pytest.raises(BaselineError, match="a run of eve/rag, not of acme/rag"):
        verify(github, recorded(MAIN, 79, repository="eve/rag"))
    with pytest.raises(BaselineError, match="run 404, which GitHub does not know"):
        verify(github, recorded(MAIN, 404))


def test_the_nearest_first_parent_ancestors_baseline_stands_in_and_says_so(github, tmp_path):
    # main: ROOT <- PARENT <- MAIN; only ROOT has a baseline (MAIN's run is still going).
    root = "3" * 40
    repo_commits = {MAIN: [PARENT], PARENT: [root], root: []}
    data = recorded(root, 80)
    baseline_run(github, 80, head_sha=root)
    github.add_artifact(REPO, 80, baseline_artifact(baseline_digest(data)), b"", head_sha=root)
    BaselineStore(backend(github), keep=5).put(root, data)
    provenance = Provenance(token=TOKEN, repository=REPO, api_url=github.base_url)

    def finder(ancestors: int) -> StoreFinder:
        return StoreFinder(
            stores=lambda settings: (BaselineStore(backend(github), keep=5),),
            commit=MAIN,
            base=f"main@{MAIN[:7]}",
            parent_of=lambda sha: (repo_commits[sha] or [None])[0],
            verify=lambda b, digest, settings: provenance.verify(b, digest, settings, "main"),
        )

    found = finder(2).find(BaselinesConfig(store="branch", ancestors=2))
    assert found is not None and found.commit == root
    assert found.description.startswith(
        f"the baseline of {root[:7]}, the first-parent ancestor of main@{MAIN[:7]} 2 commits back"
    )
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

"""The baseline workflow's push filters, read as GitHub reads them: whether a push of some changes
would have started a baseline run."""

from __future__ import annotations

import pytest
import yaml

from ragaliq.github.baseline_runs import run_phase
from ragaliq.github.push_filters import MAX_FILTERED_PATHS, PushFilters, pattern_matches


@pytest.mark.parametrize(
    ("pattern", "path", "matches"),
    [
        ("*.py", "app.py", True),
        ("*.py", "src/app.py", False),
        ("**.py", "src/app.py", True),
        ("src/**", "src/a/b/c.txt", True),
        ("src/*", "src/a/b.txt", False),
        ("docs/**/*.md", "docs/a/b.md", True),
        ("v2?.txt", "v.txt", True),
        ("v2?.txt", "v22.txt", False),
        ("v2+.txt", "v222.txt", True),
        ("v2+.txt", "v.txt", False),
        ("[ab].md", "b.md", True),
        ("[ab].md", "c.md", False),
        ("a\\*b", "a*b", True),
        ("a\\*b", "axb", False),
        ("file.md", "fileXmd", False),
    ],
)
def test_patterns_match_as_githubs_cheat_sheet_says(pattern, path, matches):
    assert pattern_matches(pattern, path) is matches


def filters(text: str) -> PushFilters:
    return PushFilters.of_workflow(yaml.safe_load(text))


def test_a_workflow_without_filters_runs_on_every_push_to_any_branch():
    for text in ("on: push", "on: [push, workflow_dispatch]", "on:\n  push:\n"):
        assert filters(text).starts("main", ["README.md"])
    assert not filters("on: [workflow_dispatch]").starts("main", ["a"])


def test_branch_filters_decide_by_name_and_tag_only_filters_start_no_branch_push():
    only_main = filters("on:\n  push:\n    branches: [main, 'release/**']\n")
    assert only_main.starts("main", ["a"]) and only_main.starts("release/1.2", ["a"])
    assert not only_main.starts("dev", ["a"])
    ignoring = filters("on:\n  push:\n    branches-ignore: ['wip/*']\n")
    assert ignoring.starts("main", ["a"]) and not ignoring.starts("wip/x", ["a"])
    assert not filters("on:\n  push:\n    tags: ['v*']\n").starts("main", ["a"])


def test_paths_start_a_run_when_one_changed_path_is_included():
    rule = filters("on:\n  push:\n    paths: ['src/**', '!src/docs/**', 'src/docs/keep.md']\n")
    assert rule.starts("main", ["README.md", "src/app.py"])
    assert not rule.starts("main", ["README.md", "src/docs/guide.md"])
    assert rule.starts("main", ["src/docs/keep.md"])  # a later pattern includes it again
    assert not rule.starts("main", [])


def test_paths_ignore_starts_a_run_unless_every_changed_path_is_ignored():
    rule = filters("on:\n  push:\n    paths-ignore: ['docs/**', '*.md']\n")
    assert not rule.starts("main", ["docs/a.txt", "README.md"])
    assert rule.starts("main", ["docs/a.txt", "src/app.py"])


def test_changes_that_cannot_all_be_listed_count_as_a_start_under_a_path_filter():
    rule = filters("on:\n  push:\n    paths: ['src/**']\n")
    assert rule.starts("main", None)
    many = [f"docs/{n}.md" for n in range(MAX_FILTERED_PATHS + 1)]
    assert rule.starts("main", many)
    assert not rule.starts("main", many[:MAX_FILTERED_PATHS])


@pytest.mark.parametrize(
    ("status", "conclusion", "phase"),
    [
        ("queued", "", "waiting"),
        ("waiting", "", "waiting"),
        ("requested", "", "waiting"),
        ("pending", "", "waiting"),
        ("action_required", "", "waiting"),
        ("in_progress", "", "running"),
        ("completed", "success", "succeeded"),
        ("completed", "failure", "failed"),
        ("completed", "startup_failure", "failed"),
        ("completed", "neutral", "failed"),
        ("completed", "stale", "failed"),
        ("completed", "some_new_conclusion", "failed"),
        ("completed", "cancelled", "cancelled"),
        ("completed", "timed_out", "timed_out"),
        ("completed", "skipped", "skipped"),
    ],
)
def test_every_github_run_status_and_conclusion_maps_to_one_phase(status, conclusion, phase):
    assert run_phase(status, conclusion) == phase

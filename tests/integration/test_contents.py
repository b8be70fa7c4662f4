"""ContentsAtCommit: a commit's files through the real PyGithub against FakeGitHub."""

from __future__ import annotations

from typing import Any

import pytest

from ragaliq.errors import RepositoryError
from ragaliq.github.client import GitHubApi
from ragaliq.github.contents import ContentsAtCommit
from tests.fakes.github_server import FakeGitHub

REPO = "octo-org/rag-app"
TOKEN = "ghs_s3cr3t_t0ken_value"
SHA = "0123456789abcdef0123456789abcdef01234567"


@pytest.fixture
def fake():
    with FakeGitHub(token=TOKEN) as server:
        yield server


def read(
    fake: FakeGitHub, path: str, *, limit: int = 10_000_000, token: str = TOKEN, **overrides: Any
) -> bytes | None:
    values: dict[str, Any] = {
        "api": GitHubApi(token=token, repository=REPO, api_url=fake.base_url),
        "sha": SHA,
        "sleep": lambda _: None,
        **overrides,
    }
    return ContentsAtCommit(**values).read(path, limit=limit, what="baseline")


def test_a_file_at_the_commit_is_read(fake: FakeGitHub) -> None:
    fake.add_file(REPO, ".ragaliq/baseline.json", '{"cases": ["héllo"]}\n', ref=SHA)
    fake.add_file(REPO, ".ragaliq/baseline.json", '{"cases": []}\n', ref="main")
    assert read(fake, ".ragaliq/baseline.json") == '{"cases": ["héllo"]}\n'.encode()
    (request, *_) = fake.requests_matching("GET", "/contents/")
    assert request.query["ref"] == [SHA]


def test_absent_only_once_the_commit_itself_is_readable(fake: FakeGitHub) -> None:
    fake.add_file(REPO, "present.txt", "x", ref=SHA)
    assert read(fake, "absent.txt") is None
    # A 404 for a commit the token cannot see (or that does not exist) is not "absent".
    with pytest.raises(RepositoryError, match=r"404.*contents: read"):
        read(fake, "absent.txt", sha="f" * 40)


def test_a_symbolic_link_is_refused_not_followed(fake: FakeGitHub) -> None:
    fake.add_file(REPO, "secrets.txt", "the target", ref=SHA)
    fake.add_file(REPO, ".ragaliq/baseline.json", "", ref=SHA, symlink_to="secrets.txt")
    with pytest.raises(RepositoryError, match="symbolic link"):
        read(fake, ".ragaliq/baseline.json")


def test_folders_and_files_over_the_limit_are_refused(fake: FakeGitHub) -> None:
    fake.add_file(REPO, "dir/a.txt", "a", ref=SHA)
    fake.add_file(REPO, "big.json", "x" * 100, ref=SHA)
    with pytest.raises(RepositoryError, match="is a folder"):
        read(fake, "dir")
    with pytest.raises(RepositoryError, match="over the size limit"):
        read(fake, "big.json", limit=10)


def test_a_file_over_a_megabyte_comes_through_the_blobs_api(fake: FakeGitHub) -> None:
    content = b"{" + b" " * (1024 * 1024 + 10) + b"}"
    fake.add_file(REPO, "big.json", content, ref=SHA)
    assert read(fake, "big.json") == content
    assert fake.requests_matching("GET", "/git/blobs/")


def test_5xx_answers_are_retried_then_reported(fake: FakeGitHub) -> None:
    fake.add_file(REPO, "f.txt", "content", ref=SHA)
    fake.fail("GET", "/contents/", 502, times=2)
    assert read(fake, "f.txt") == b"content"
    fake.fail("GET", "/contents/", 503, times=3)
    with pytest.raises(RepositoryError, match="503"):
        read(fake, "f.txt")


def test_a_bad_token_or_a_forbidden_read_says_how_to_fix_it(fake: FakeGitHub) -> None:
    with pytest.raises(RepositoryError, match="github-token") as excinfo:
        read(fake, "f.txt", token="ghp_not_valid_secret")
    assert "ghp_not_valid_secret" not in str(excinfo.value)
    fake.fail("GET", "/contents/", 403)
    with pytest.raises(RepositoryError, match=r"contents: read.*403"):
        read(fake, "f.txt")


def test_content_that_is_not_its_blob_is_refused(fake: FakeGitHub) -> None:
    fake.add_file(REPO, "ragaliq.yaml", "evaluators: {}\n", ref=SHA, blob_sha="f" * 40)
    with pytest.raises(RepositoryError, match="not its blob"):
        read(fake, "ragaliq.yaml")

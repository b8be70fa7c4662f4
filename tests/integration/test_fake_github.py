"""Self-test of tests/fakes/github_server.py driven by the real PyGithub over real HTTP."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import github
import pytest
import requests
from github import Auth, Github
from urllib3.util.retry import Retry

from tests.fakes.github_server import DEFAULT_BASE_SHA, DEFAULT_HEAD_SHA, FakeGitHub

REPO = "octo-org/rag-app"
PR = 42
HEAD = "0123456789abcdef0123456789abcdef01234567"
COMMENTS_PATH = rf"^/repos/{REPO}/issues/{PR}/comments$"


def make_client(fake: FakeGitHub, token: str = "ghs_test", **kwargs: Any) -> Github:
    return Github(
        base_url=fake.base_url,
        auth=Auth.Token(token),
        retry=kwargs.pop("retry", None),
        seconds_between_requests=0,
        seconds_between_writes=0,
        **kwargs,
    )


@pytest.fixture
def fake() -> Iterator[FakeGitHub]:
    with FakeGitHub() as server:
        server.add_pull(REPO, PR, head_sha=HEAD, head_ref="feature/x")
        yield server
        assert server.errors == []


@pytest.fixture
def gh(fake: FakeGitHub) -> Iterator[Github]:
    with make_client(fake) as client:
        yield client


def raw(fake: FakeGitHub, method: str, path: str, **kwargs: Any) -> requests.Response:
    headers = kwargs.pop("headers", {"Authorization": f"token {fake.token}"})
    with requests.Session() as session:
        return session.request(method, fake.base_url + path, headers=headers, timeout=5, **kwargs)


def test_get_repo_and_pull(fake: FakeGitHub, gh: Github) -> None:
    repo = gh.get_repo(REPO)
    assert repo.full_name == REPO
    assert repo.name == "rag-app"
    assert repo.owner.login == "octo-org"
    assert repo.default_branch == "main"
    assert repo.url == f"{fake.base_url}/repos/{REPO}"

    pull = repo.get_pull(PR)
    assert pull.number == PR
    assert pull.head.sha == HEAD
    assert pull.head.ref == "feature/x"
    assert pull.head.repo.full_name == REPO
    assert pull.base.sha == DEFAULT_BASE_SHA
    assert pull.base.ref == "main"
    assert pull.base.repo.full_name == REPO
    assert pull.state == "open"
    assert pull.user.login == "someone"
    assert pull.html_url == f"https://github.example/{REPO}/pull/{PR}"

    me = gh.get_user()
    assert me.login == "github-actions[bot]"
    assert me.type == "Bot"

    with pytest.raises(github.UnknownObjectException) as excinfo:
        repo.get_pull(999)
    assert excinfo.value.status == 404


def test_defaults_and_fork_head(fake: FakeGitHub, gh: Github) -> None:
    fake.add_pull(REPO, 7, head_repo="contributor/rag-app")
    pull = gh.get_repo(REPO).get_pull(7)
    assert pull.head.sha == DEFAULT_HEAD_SHA
    assert pull.head.repo.full_name == "contributor/rag-app"
    assert pull.base.repo.full_name == REPO


def _seed(fake: FakeGitHub, count: int) -> None:
    for i in range(count):
        fake.add_comment(REPO, PR, f"comment {i}", user=f"user{i % 3}")


def test_pagination_via_pull(fake: FakeGitHub, gh: Github) -> None:
    _seed(fake, 75)
    fake.requests.clear()
    pull = gh.get_repo(REPO).get_pull(PR)
    comments = list(pull.get_issue_comments())
    assert [c.body for c in comments] == [f"comment {i}" for i in range(75)]
    assert [c.id for c in comments] == list(range(1000, 1075))
    assert comments[1].user.login == "user1"
    assert comments[0].user.type == "User"

    pages = fake.requests_matching("GET", COMMENTS_PATH)
    assert len(pages) == 3
    assert [r.query.get("page", ["1"])[0] for r in pages] == ["1", "2", "3"]


def test_pagination_via_issue_with_per_page(fake: FakeGitHub) -> None:
    _seed(fake, 75)
    with make_client(fake, per_page=30) as client:
        issue = client.get_repo(REPO).get_issue(PR)
        assert issue.number == PR
        assert issue.pull_request is not None
        fake.requests.clear()
        bodies = [c.body for c in issue.get_comments()]
    assert bodies == [f"comment {i}" for i in range(75)]
    assert len(fake.requests_matching("GET", COMMENTS_PATH)) == 3

    fake.requests.clear()
    with make_client(fake, per_page=100) as client:
        assert len(list(client.get_repo(REPO).get_pull(PR).get_issue_comments())) == 75
    pages = fake.requests_matching("GET", COMMENTS_PATH)
    assert len(pages) == 1
    assert pages[0].query["per_page"] == ["100"]


def test_link_headers_match_github_format(fake: FakeGitHub) -> None:
    _seed(fake, 75)
    url = f"{fake.base_url}/repos/{REPO}/issues/{PR}/comments"

    first = raw(fake, "GET", f"/repos/{REPO}/issues/{PR}/comments?per_page=30")
    assert len(first.json()) == 30
    assert first.headers["link"] == (
        f'<{url}?per_page=30&page=2>; rel="next", <{url}?per_page=30&page=3>; rel="last"'
    )

    middle = raw(fake, "GET", f"/repos/{REPO}/issues/{PR}/comments?per_page=30&page=2")
    assert middle.json()[0]["body"] == "comment 30"
    assert middle.headers["link"] == (
        f'<{url}?per_page=30&page=1>; rel="prev", <{url}?per_page=30&page=3>; rel="next", '
        f'<{url}?per_page=30&page=3>; rel="last", <{url}?per_page=30&page=1>; rel="first"'
    )

    last = raw(fake, "GET", f"/repos/{REPO}/issues/{PR}/comments?per_page=30&page=3")
    assert len(last.json()) == 15
    assert last.headers["link"] == (
        f'<{url}?per_page=30&page=2>; rel="prev", <{url}?per_page=30&page=1>; rel="first"'
    )

    capped = raw(fake, "GET", f"/repos/{REPO}/issues/{PR}/comments?per_page=500")
    assert len(capped.json()) == 75
    assert "link" not in capped.headers

    default = raw(fake, "GET", f"/repos/{REPO}/issues/{PR}/comments")
    assert len(default.json()) == 30

    missing = raw(fake, "GET", f"/repos/{REPO}/issues/999/comments")
    assert missing.status_code == 404


def test_response_headers_and_shapes(fake: FakeGitHub) -> None:
    fake.add_comment(REPO, PR, "hello")
    response = raw(fake, "GET", f"/repos/{REPO}/issues/{PR}/comments")
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/json; charset=utf-8"
    assert int(response.headers["x-ratelimit-remaining"]) > 1000
    assert response.headers["x-ratelimit-limit"]
    assert response.headers["x-ratelimit-reset"].isdigit()
    assert response.headers["x-github-request-id"]
    (comment,) = response.json()
    assert comment["id"] == 1000
    assert comment["url"] == f"{fake.base_url}/repos/{REPO}/issues/comments/1000"
    assert comment["html_url"] == f"https://github.example/{REPO}/pull/{PR}#issuecomment-1000"
    assert comment["user"]["login"] == "someone"
    assert comment["created_at"].endswith("Z")
    assert comment["updated_at"].endswith("Z")

    unknown = raw(fake, "GET", "/definitely/not/an/endpoint")
    assert unknown.status_code == 404
    assert unknown.json()["message"] == "Not Found"
    assert "documentation_url" in unknown.json()
    assert unknown.headers["content-type"] == "application/json; charset=utf-8"


def test_create_then_edit_comment(fake: FakeGitHub, gh: Github) -> None:
    fake.add_comment(REPO, PR, "unrelated", user="reviewer")
    pull = gh.get_repo(REPO).get_pull(PR)

    created = pull.create_issue_comment("<!-- ragaliq -->\nfirst")
    assert created.id == 1001
    assert created.user.login == "github-actions[bot]"
    assert created.user.type == "Bot"
    assert created.html_url.endswith(f"/pull/{PR}#issuecomment-1001")
    post = fake.requests_matching("POST", COMMENTS_PATH)[-1]
    assert post.body == {"body": "<!-- ragaliq -->\nfirst"}
    assert post.headers["authorization"] == "token ghs_test"

    before = fake.comments(REPO, PR)[1]
    created.edit("<!-- ragaliq -->\nsecond")
    assert created.body == "<!-- ragaliq -->\nsecond"

    stored = fake.comments(REPO, PR)
    assert [c.body for c in stored] == ["unrelated", "<!-- ragaliq -->\nsecond"]
    assert [c.user_login for c in stored] == ["reviewer", "github-actions[bot]"]
    assert stored[1].id == 1001
    assert stored[1].created_at == before.created_at
    assert stored[1].updated_at > before.updated_at

    fetched = gh.get_repo(REPO).get_issue(PR).get_comment(1001)
    assert fetched.body == "<!-- ragaliq -->\nsecond"

    invalid = raw(fake, "POST", f"/repos/{REPO}/issues/{PR}/comments", json={"text": "x"})
    assert invalid.status_code == 422
    assert invalid.json()["status"] == "422"
    not_json = raw(fake, "PATCH", f"/repos/{REPO}/issues/comments/1001", data=b"{oops")
    assert not_json.status_code == 400
    assert len(fake.comments(REPO, PR)) == 2

    missing = raw(fake, "PATCH", f"/repos/{REPO}/issues/comments/999999", json={"body": "x"})
    assert missing.status_code == 404
    assert missing.json()["message"] == "Not Found"
    with pytest.raises(github.UnknownObjectException):
        gh.get_repo(REPO).get_issue(PR).get_comment(999999)


def test_contents_by_ref(fake: FakeGitHub, gh: Github) -> None:
    payload = b"\x00\x01binary\xffdata\n" * 50
    fake.add_file(REPO, ".ragaliq/baseline.json", payload, ref=HEAD)
    fake.add_file(REPO, "docs/read me.md", "héllo\n", ref="main")
    repo = gh.get_repo(REPO)

    content = repo.get_contents(".ragaliq/baseline.json", ref=HEAD)
    assert not isinstance(content, list)
    assert content.decoded_content == payload
    assert content.type == "file"
    assert content.encoding == "base64"
    assert content.path == ".ragaliq/baseline.json"
    assert content.name == "baseline.json"
    assert content.size == len(payload)
    assert len(content.sha) == 40

    text = repo.get_contents("docs/read me.md", ref="main")
    assert not isinstance(text, list)
    assert text.decoded_content.decode() == "héllo\n"

    listing = repo.get_contents("docs", ref="main")
    assert isinstance(listing, list)
    assert [(c.path, c.type) for c in listing] == [("docs/read me.md", "file")]

    with pytest.raises(github.UnknownObjectException) as excinfo:
        repo.get_contents(".ragaliq/baseline.json", ref="main")  # registered under HEAD only
    assert excinfo.value.status == 404
    with pytest.raises(github.UnknownObjectException):
        repo.get_contents("nope.txt", ref=HEAD)


def test_injected_403_on_post(fake: FakeGitHub, gh: Github) -> None:
    fake.fail("POST", r"/issues/\d+/comments$", 403)
    pull = gh.get_repo(REPO).get_pull(PR)
    with pytest.raises(github.GithubException) as excinfo:
        pull.create_issue_comment("nope")
    assert type(excinfo.value) is github.GithubException
    assert excinfo.value.status == 403
    assert excinfo.value.message == "Resource not accessible by integration"
    assert fake.comments(REPO, PR) == []

    # consumed: the next POST goes through
    assert pull.create_issue_comment("yes").body == "yes"
    assert [c.body for c in fake.comments(REPO, PR)] == ["yes"]


def test_injected_failures_custom_body_and_order(fake: FakeGitHub, gh: Github) -> None:
    fake.fail("PATCH", r"/issues/comments/", 422, body={"message": "Body is too long"})
    fake.fail("*", r"/issues/comments/", 404, times=2)
    created = gh.get_repo(REPO).get_pull(PR).create_issue_comment("x")
    with pytest.raises(github.GithubException) as first:
        created.edit("y")
    assert (first.value.status, first.value.message) == (422, "Body is too long")
    for _ in range(2):
        with pytest.raises(github.UnknownObjectException):
            created.edit("y")
    created.edit("z")
    assert fake.comments(REPO, PR)[0].body == "z"


def test_injected_502_without_retry(fake: FakeGitHub, gh: Github) -> None:
    repo = gh.get_repo(REPO)
    fake.fail("GET", rf"/pulls/{PR}$", 502)
    with pytest.raises(github.GithubException) as excinfo:
        repo.get_pull(PR)
    assert excinfo.value.status == 502
    assert excinfo.value.message == "Bad Gateway"
    assert len(fake.requests_matching("GET", rf"/pulls/{PR}$")) == 1
    assert repo.get_pull(PR).number == PR


def test_injected_502_with_retry_is_consumed_in_order(fake: FakeGitHub) -> None:
    retry = Retry(total=3, status_forcelist=[502], backoff_factor=0, raise_on_status=False)
    with make_client(fake, retry=retry) as client:
        repo = client.get_repo(REPO)
        fake.fail("GET", rf"/pulls/{PR}$", 502, times=2)
        assert repo.get_pull(PR).number == PR
    assert len(fake.requests_matching("GET", rf"/pulls/{PR}$")) == 3


def test_bad_credentials(fake: FakeGitHub) -> None:
    with (
        make_client(fake, token="wrong") as client,
        pytest.raises(github.BadCredentialsException) as excinfo,
    ):
        client.get_repo(REPO)
    assert excinfo.value.status == 401
    assert excinfo.value.data["message"] == "Bad credentials"

    assert raw(fake, "GET", "/user", headers={}).status_code == 401
    bearer = raw(fake, "GET", "/user", headers={"Authorization": "Bearer ghs_test"})
    assert bearer.status_code == 200
    assert bearer.json()["login"] == "github-actions[bot]"


def test_prefix_like_ghes() -> None:
    with FakeGitHub(prefix="/api/v3", token="ghs_other", login="ragaliq[bot]") as fake:
        fake.add_pull(REPO, PR)
        _seed(fake, 75)
        assert fake.base_url.endswith("/api/v3")
        with make_client(fake, token="ghs_other") as client:
            pull = client.get_repo(REPO).get_pull(PR)
            assert pull.url == f"{fake.base_url}/repos/{REPO}/pulls/{PR}"
            assert len(list(pull.get_issue_comments())) == 75
            assert pull.create_issue_comment("hi").user.login == "ragaliq[bot]"
        pages = fake.requests_matching("GET", COMMENTS_PATH)
        assert len(pages) == 3
        assert all(r.raw_path.startswith("/api/v3/") for r in pages)
        outside = requests.get(
            f"{fake.origin}/repos/{REPO}",
            headers={"Authorization": "token ghs_other"},
            timeout=5,
        )
        assert outside.status_code == 404


def test_subprocess_via_github_api_url(fake: FakeGitHub) -> None:
    script = (
        "import json, os, urllib.request\n"
        "req = urllib.request.Request(os.environ['GITHUB_API_URL'] + '/user',\n"
        "    headers={'Authorization': 'token ' + os.environ['GITHUB_TOKEN']})\n"
        "with urllib.request.urlopen(req, timeout=5) as r:\n"
        "    print(json.load(r)['login'])\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script],
        env={**fake.env(), "PATH": ""},
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    assert result.stdout.strip() == "github-actions[bot]"


def test_stdlib_client_error_body(fake: FakeGitHub) -> None:
    req = urllib.request.Request(f"{fake.base_url}/user", headers={"Authorization": "token x"})
    with pytest.raises(urllib.error.HTTPError) as excinfo:
        urllib.request.urlopen(req, timeout=5)
    with excinfo.value as err:
        assert err.code == 401
        assert json.loads(err.read()) == {
            "message": "Bad credentials",
            "documentation_url": "https://docs.github.com/rest",
        }


def test_start_stop_idempotent() -> None:
    fake = FakeGitHub()
    with pytest.raises(RuntimeError):
        _ = fake.base_url
    fake.start()
    assert fake.start() is fake
    assert fake.base_url.startswith("http://127.0.0.1:")
    fake.stop()
    fake.stop()
    assert fake.errors == []

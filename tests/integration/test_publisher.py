"""GitHubPublisher driven through the real PyGithub against FakeGitHub."""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from github import Auth, Github

from ragaliq.errors import CommentForbiddenError, PublishError
from ragaliq.github.comment import CommentPublisher, GitHubPublisher, PublishResult
from ragaliq.report.marker import comment_marker
from tests.fakes.github_server import HTML_BASE, FakeGitHub
from tests.fakes.sleeps import SleepLog

REPO = "octo-org/rag-app"
PR = 42
TOKEN = "ghs_s3cr3t_t0ken_value"
HEAD = "0123456789abcdef0123456789abcdef01234567"
BOT = "github-actions[bot]"
MARKER = comment_marker()
COMMENTS = rf"^/repos/{REPO}/issues/{PR}/comments$"
EDITS = r"^/repos/[^/]+/[^/]+/issues/comments/\d+$"


def body(text: str, marker: str = MARKER) -> str:
    return f"{marker}\n## RagaliQ Gate\n\n{text}\n"


@pytest.fixture
def fake() -> Iterator[FakeGitHub]:
    with FakeGitHub(token=TOKEN) as server:
        server.add_pull(REPO, PR, head_sha=HEAD)
        yield server
        assert server.errors == []


@pytest.fixture
def make_publisher(fake: FakeGitHub, sleeps: SleepLog) -> Iterator[Callable[..., GitHubPublisher]]:
    built: list[GitHubPublisher] = []

    def build(**overrides: Any) -> GitHubPublisher:
        values: dict[str, Any] = {
            "token": TOKEN,
            "repository": REPO,
            "pr_number": PR,
            "api_url": fake.base_url,
            "sleep": sleeps,
            **overrides,
        }
        publisher = GitHubPublisher(**values)
        built.append(publisher)
        return publisher

    yield build
    for publisher in built:
        publisher.close()


@pytest.fixture
def publisher(make_publisher: Callable[..., GitHubPublisher]) -> GitHubPublisher:
    return make_publisher()


def writes(fake: FakeGitHub) -> list[tuple[str, str]]:
    return [(r.method, r.path) for r in fake.requests if r.method in {"POST", "PATCH", "DELETE"}]


def test_first_upsert_creates_the_comment(fake: FakeGitHub, publisher: GitHubPublisher) -> None:
    fake.add_comment(REPO, PR, "LGTM", user="reviewer")

    result = publisher.upsert(body=body("first"), marker=MARKER)

    stored = fake.comments(REPO, PR)
    assert [(c.user_login, c.body) for c in stored] == [("reviewer", "LGTM"), (BOT, body("first"))]
    assert result == PublishResult(
        action="created",
        url=f"{HTML_BASE}/{REPO}/pull/{PR}#issuecomment-{stored[1].id}",
        comment_id=stored[1].id,
    )
    assert writes(fake) == [("POST", f"/repos/{REPO}/issues/{PR}/comments")]
    (post,) = fake.requests_matching("POST")
    assert post.body == {"body": body("first")}
    assert post.headers["authorization"] == f"token {TOKEN}"
    assert post.headers["user-agent"].startswith("ragaliq-gate/")


def test_changed_body_edits_the_same_comment(fake: FakeGitHub, publisher: GitHubPublisher) -> None:
    created = publisher.upsert(body=body("first"), marker=MARKER)

    updated = publisher.upsert(body=body("second"), marker=MARKER)

    assert updated == dataclasses.replace(created, action="updated")
    (stored,) = fake.comments(REPO, PR)
    assert (stored.id, stored.body) == (created.comment_id, body("second"))
    assert writes(fake)[-1] == ("PATCH", f"/repos/{REPO}/issues/comments/{created.comment_id}")


def test_same_body_is_unchanged_and_writes_nothing(
    fake: FakeGitHub, make_publisher: Callable[..., GitHubPublisher]
) -> None:
    make_publisher().upsert(body=body("first"), marker=MARKER)
    make_publisher().upsert(body=body("second"), marker=MARKER)
    fake.requests.clear()

    result = make_publisher().upsert(body=body("second"), marker=MARKER)

    assert result.action == "unchanged"
    assert writes(fake) == []
    assert [c.body for c in fake.comments(REPO, PR)] == [body("second")]
    assert result.comment_id == fake.comments(REPO, PR)[0].id


def test_every_page_is_read_to_find_our_comment(
    fake: FakeGitHub, publisher: GitHubPublisher
) -> None:
    for i in range(150):
        fake.add_comment(REPO, PR, f"discussion {i}", user=f"dev{i % 7}")
    ours = fake.add_comment(REPO, PR, body("old"), user=BOT)
    fake.add_comment(REPO, PR, "one more", user="dev1")

    result = publisher.upsert(body=body("new"), marker=MARKER)

    assert (result.action, result.comment_id) == ("updated", ours.id)
    stored = fake.comments(REPO, PR)
    assert len(stored) == 152
    assert [c.body for c in stored if c.user_login == BOT] == [body("new")]
    pages = fake.requests_matching("GET", COMMENTS)
    assert [(r.query["per_page"], r.query.get("page", ["1"])) for r in pages] == [
        (["100"], ["1"]),
        (["100"], ["2"]),
    ]
    assert writes(fake) == [("PATCH", f"/repos/{REPO}/issues/comments/{ours.id}")]


def test_our_marker_quoted_by_someone_else_is_left_alone(
    fake: FakeGitHub, publisher: GitHubPublisher
) -> None:
    quoted = fake.add_comment(REPO, PR, body("quoted by a reviewer"), user="reviewer")

    result = publisher.upsert(body=body("ours"), marker=MARKER)

    assert result.action == "created"
    assert result.comment_id != quoted.id
    stored = {c.id: (c.user_login, c.body) for c in fake.comments(REPO, PR)}
    assert stored == {
        quoted.id: ("reviewer", body("quoted by a reviewer")),
        result.comment_id: (BOT, body("ours")),
    }


def test_marker_must_be_the_whole_first_line(fake: FakeGitHub, publisher: GitHubPublisher) -> None:
    lookalike = fake.add_comment(REPO, PR, f"{MARKER} extra\nold", user=BOT)
    later_line = fake.add_comment(REPO, PR, f"intro\n{MARKER}\nold", user=BOT)

    result = publisher.upsert(body=body("ours"), marker=MARKER)

    assert result.action == "created"
    assert result.comment_id not in {lookalike.id, later_line.id}
    assert len(fake.comments(REPO, PR)) == 3


def test_newest_of_several_of_ours_is_edited(fake: FakeGitHub, publisher: GitHubPublisher) -> None:
    older = fake.add_comment(REPO, PR, body("older"), user=BOT)
    newer = fake.add_comment(REPO, PR, body("newer"), user=BOT)

    result = publisher.upsert(body=body("latest"), marker=MARKER)

    assert (result.action, result.comment_id) == ("updated", newer.id)
    stored = {c.id: c.body for c in fake.comments(REPO, PR)}
    assert stored == {older.id: body("older"), newer.id: body("latest")}


def test_a_comment_edited_in_the_browser_with_crlf_is_still_ours(
    fake: FakeGitHub, publisher: GitHubPublisher
) -> None:
    ours = fake.add_comment(REPO, PR, f"{MARKER}\r\nedited by hand\r\n", user=BOT)

    result = publisher.upsert(body=body("fresh"), marker=MARKER)

    assert (result.action, result.comment_id) == ("updated", ours.id)
    assert [c.body for c in fake.comments(REPO, PR)] == [body("fresh")]


def test_two_markers_keep_two_comments(fake: FakeGitHub, publisher: GitHubPublisher) -> None:
    unit, e2e = comment_marker("unit"), comment_marker("e2e")

    first = publisher.upsert(body=body("unit v1", unit), marker=unit)
    second = publisher.upsert(body=body("e2e v1", e2e), marker=e2e)
    again = publisher.upsert(body=body("unit v2", unit), marker=unit)

    assert (first.action, second.action, again.action) == ("created", "created", "updated")
    assert again.comment_id == first.comment_id != second.comment_id
    assert [c.body for c in fake.comments(REPO, PR)] == [body("unit v2", unit), body("e2e v1", e2e)]


@pytest.mark.parametrize(
    "text",
    [
        "## RagaliQ Gate\n\nno marker at all",
        f"\n{MARKER}\nmarker on the second line",
        f"  {MARKER}\nindented marker",
        f"{comment_marker('other')}\nanother comment's marker",
        "",
    ],
)
def test_a_body_without_its_marker_is_refused(
    fake: FakeGitHub, publisher: GitHubPublisher, text: str
) -> None:
    with pytest.raises(PublishError, match="lacks its marker"):
        publisher.upsert(body=text, marker=MARKER)
    assert fake.requests == []


@pytest.mark.parametrize("marker", ["", "  ", f"{MARKER}\nsecond line"])
def test_a_malformed_marker_is_a_programming_error(publisher: GitHubPublisher, marker: str) -> None:
    with pytest.raises(ValueError, match="one non-empty line"):
        publisher.upsert(body=f"{marker}\nbody", marker=marker)


def test_403_on_create_is_comment_forbidden(
    fake: FakeGitHub, publisher: GitHubPublisher, sleeps: SleepLog
) -> None:
    fake.fail("POST", COMMENTS, 403)

    with pytest.raises(CommentForbiddenError) as excinfo:
        publisher.upsert(body=body("x"), marker=MARKER)

    message = str(excinfo.value)
    assert isinstance(excinfo.value, PublishError)
    assert "cannot write comments" in message
    assert "fork" in message
    assert "Resource not accessible by integration" in message
    assert fake.comments(REPO, PR) == []
    assert len(fake.requests_matching("POST")) == 1
    assert sleeps.delays == []


def test_403_on_edit_is_comment_forbidden(fake: FakeGitHub, publisher: GitHubPublisher) -> None:
    ours = fake.add_comment(REPO, PR, body("old"), user=BOT)
    fake.fail("PATCH", EDITS, 403)

    with pytest.raises(CommentForbiddenError, match="cannot write comments"):
        publisher.upsert(body=body("new"), marker=MARKER)

    assert [(c.id, c.body) for c in fake.comments(REPO, PR)] == [(ours.id, body("old"))]


def test_rate_limit_is_not_mistaken_for_a_fork(
    fake: FakeGitHub, publisher: GitHubPublisher
) -> None:
    fake.fail("POST", COMMENTS, 403, body={"message": "API rate limit exceeded for installation."})

    with pytest.raises(PublishError, match="rate limit") as excinfo:
        publisher.upsert(body=body("x"), marker=MARKER)

    assert not isinstance(excinfo.value, CommentForbiddenError)


def test_502_twice_on_create_then_success(
    fake: FakeGitHub, publisher: GitHubPublisher, sleeps: SleepLog
) -> None:
    fake.fail("POST", COMMENTS, 502, times=2)

    result = publisher.upsert(body=body("x"), marker=MARKER)

    assert result.action == "created"
    assert [c.body for c in fake.comments(REPO, PR)] == [body("x")]
    assert sleeps.delays == [1.0, 2.0]
    assert len(fake.requests_matching("POST")) == 3
    assert len(fake.requests_matching("GET", COMMENTS)) == 3


def test_a_create_that_landed_despite_a_5xx_is_not_duplicated(
    fake: FakeGitHub, publisher: GitHubPublisher, sleeps: SleepLog
) -> None:
    fake.fail("POST", COMMENTS, 504)
    sleeps.hooks.append(lambda: fake.add_comment(REPO, PR, body("x"), user=BOT))

    result = publisher.upsert(body=body("x"), marker=MARKER)

    (stored,) = fake.comments(REPO, PR)
    assert (result.action, result.comment_id) == ("created", stored.id)
    assert stored.body == body("x")
    assert len(fake.requests_matching("POST")) == 1
    assert sleeps.delays == [1.0]


def test_a_comment_that_appeared_during_a_retried_create_is_edited(
    fake: FakeGitHub, publisher: GitHubPublisher, sleeps: SleepLog
) -> None:
    fake.fail("POST", COMMENTS, 503)
    sleeps.hooks.append(lambda: fake.add_comment(REPO, PR, body("another run"), user=BOT))

    result = publisher.upsert(body=body("x"), marker=MARKER)

    (stored,) = fake.comments(REPO, PR)
    assert (result.action, result.comment_id) == ("updated", stored.id)
    assert stored.body == body("x")
    assert len(fake.requests_matching("POST")) == 1


def test_502_twice_on_edit_then_success(
    fake: FakeGitHub, publisher: GitHubPublisher, sleeps: SleepLog
) -> None:
    ours = fake.add_comment(REPO, PR, body("old"), user=BOT)
    fake.fail("PATCH", EDITS, 502, times=2)

    result = publisher.upsert(body=body("new"), marker=MARKER)

    assert (result.action, result.comment_id) == ("updated", ours.id)
    assert [c.body for c in fake.comments(REPO, PR)] == [body("new")]
    assert sleeps.delays == [1.0, 2.0]
    assert len(fake.requests_matching("PATCH")) == 3


def test_5xx_while_listing_is_retried(
    fake: FakeGitHub, publisher: GitHubPublisher, sleeps: SleepLog
) -> None:
    for i in range(120):
        fake.add_comment(REPO, PR, f"c{i}")
    ours = fake.add_comment(REPO, PR, body("old"), user=BOT)
    fake.fail("GET", COMMENTS, 503)
    fake.fail("GET", COMMENTS, 500)

    result = publisher.upsert(body=body("new"), marker=MARKER)

    assert (result.action, result.comment_id) == ("updated", ours.id)
    assert len(fake.comments(REPO, PR)) == 121
    assert sleeps.delays == [1.0, 2.0]
    assert len(fake.requests_matching("POST")) == 0


def test_comment_deleted_before_the_edit_is_recreated(
    fake: FakeGitHub, publisher: GitHubPublisher
) -> None:
    ours = fake.add_comment(REPO, PR, body("old"), user=BOT)
    fake.fail("PATCH", rf"/issues/comments/{ours.id}$", 404)

    result = publisher.upsert(body=body("new"), marker=MARKER)

    assert result.action == "created"
    assert result.comment_id != ours.id
    assert [m for m, _ in writes(fake)] == ["PATCH", "POST"]


@pytest.mark.parametrize(("method", "path"), [("POST", COMMENTS), ("GET", COMMENTS)])
def test_5xx_on_every_attempt_gives_up(
    fake: FakeGitHub, publisher: GitHubPublisher, sleeps: SleepLog, method: str, path: str
) -> None:
    fake.fail(method, path, 500, times=10)

    with pytest.raises(PublishError, match="500") as excinfo:
        publisher.upsert(body=body("x"), marker=MARKER)

    assert "3 times" in str(excinfo.value)
    assert not isinstance(excinfo.value, CommentForbiddenError)
    assert len(fake.requests_matching(method, path)) == 3
    assert sleeps.delays == [1.0, 2.0]
    assert fake.comments(REPO, PR) == []


def test_max_attempts_bounds_the_retries(
    fake: FakeGitHub, make_publisher: Callable[..., GitHubPublisher], sleeps: SleepLog
) -> None:
    fake.fail("POST", COMMENTS, 502, times=10)

    with pytest.raises(PublishError, match="502"):
        make_publisher(max_attempts=1).upsert(body=body("x"), marker=MARKER)
    assert len(fake.requests_matching("POST")) == 1
    assert sleeps.delays == []

    with pytest.raises(PublishError, match="502"):
        make_publisher(max_attempts=5).upsert(body=body("x"), marker=MARKER)
    assert len(fake.requests_matching("POST")) == 6
    assert sleeps.delays == [1.0, 2.0, 4.0, 8.0]

    with pytest.raises(ValueError, match="max_attempts"):
        make_publisher(max_attempts=0)


def test_bad_token_names_the_input_and_hides_the_token(
    fake: FakeGitHub, make_publisher: Callable[..., GitHubPublisher], sleeps: SleepLog
) -> None:
    wrong = "ghp_wrong_but_secret_value"
    publisher = make_publisher(token=wrong)

    with pytest.raises(PublishError) as excinfo:
        publisher.upsert(body=body("x"), marker=MARKER)

    message = str(excinfo.value)
    assert "github-token" in message
    assert "401" in message
    assert wrong not in message
    assert wrong not in repr(publisher)
    assert TOKEN not in message
    assert sleeps.delays == []
    assert writes(fake) == []


def test_missing_pull_request(
    fake: FakeGitHub, make_publisher: Callable[..., GitHubPublisher]
) -> None:
    with pytest.raises(PublishError, match=rf"PR #999 was not found in {REPO}"):
        make_publisher(pr_number=999).upsert(body=body("x"), marker=MARKER)
    assert writes(fake) == []


def test_422_carries_githubs_message(fake: FakeGitHub, publisher: GitHubPublisher) -> None:
    fake.fail(
        "POST",
        COMMENTS,
        422,
        body={
            "message": "Validation Failed",
            "errors": [
                {
                    "resource": "IssueComment",
                    "code": "custom",
                    "field": "body",
                    "message": "body is too long (maximum is 65536 characters)",
                }
            ],
        },
    )

    with pytest.raises(PublishError, match=r"422.*body is too long \(maximum is 65536"):
        publisher.upsert(body=body("x" * 70_000), marker=MARKER)


def test_a_token_that_cannot_ask_who_it_is_edits_the_bots_marker_comment(
    fake: FakeGitHub, publisher: GitHubPublisher
) -> None:
    ours = fake.add_comment(REPO, PR, body("old"), user=BOT)
    fake.add_comment(REPO, PR, body("quoted"), user="reviewer")
    fake.fail("GET", "^/user$", 403)

    result = publisher.upsert(body=body("new"), marker=MARKER)

    assert (result.action, result.comment_id) == ("updated", ours.id)
    assert len(fake.requests_matching("GET", "^/user$")) == 1
    assert [c.body for c in fake.comments(REPO, PR)] == [body("new"), body("quoted")]


def test_the_actions_token_never_edits_another_bots_marker_comment(
    fake: FakeGitHub, publisher: GitHubPublisher
) -> None:
    impostor = fake.add_comment(REPO, PR, body("says passed"), user="evil-app[bot]")
    fake.fail("GET", "^/user$", 403)

    result = publisher.upsert(body=body("failed"), marker=MARKER)

    assert result.action == "created"
    stored = {c.id: (c.user_login, c.body) for c in fake.comments(REPO, PR)}
    assert stored[impostor.id] == ("evil-app[bot]", body("says passed"))
    assert stored[result.comment_id] == (BOT, body("failed"))


def test_the_tokens_own_login_is_used_when_it_can_be_asked(sleeps: SleepLog) -> None:
    with FakeGitHub(token=TOKEN, login="ragaliq-app[bot]") as fake:
        fake.add_pull(REPO, PR)
        actions_bot = fake.add_comment(REPO, PR, body("from the actions bot"), user=BOT)
        ours = fake.add_comment(REPO, PR, body("old"), user="ragaliq-app[bot]")
        with GitHubPublisher(
            token=TOKEN, repository=REPO, pr_number=PR, api_url=fake.base_url, sleep=sleeps
        ) as publisher:
            first = publisher.upsert(body=body("new"), marker=MARKER)
            second = publisher.upsert(body=body("newer"), marker=MARKER)

        assert (first.action, first.comment_id) == ("updated", ours.id)
        assert (second.action, second.comment_id) == ("updated", ours.id)
        stored = {c.id: c.body for c in fake.comments(REPO, PR)}
        assert stored == {actions_bot.id: body("from the actions bot"), ours.id: body("newer")}
        assert len(fake.requests_matching("GET", "^/user$")) == 1
        assert fake.errors == []


def test_ghes_api_prefix(sleeps: SleepLog) -> None:
    with FakeGitHub(token=TOKEN, prefix="/api/v3") as fake:
        fake.add_pull(REPO, PR)
        for i in range(130):
            fake.add_comment(REPO, PR, f"c{i}")
        with GitHubPublisher(
            token=TOKEN, repository=REPO, pr_number=PR, api_url=fake.base_url + "/", sleep=sleeps
        ) as publisher:
            created = publisher.upsert(body=body("v1"), marker=MARKER)
            updated = publisher.upsert(body=body("v2"), marker=MARKER)

        assert (created.action, updated.action) == ("created", "updated")
        assert created.comment_id == updated.comment_id
        assert fake.comments(REPO, PR)[-1].body == body("v2")
        assert fake.requests
        assert all(r.raw_path.startswith("/api/v3/") for r in fake.requests)
        assert fake.errors == []


def test_an_enterprise_url_builds_without_warnings() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        GitHubPublisher(
            token=TOKEN, repository=REPO, pr_number=PR, api_url="https://ghe.example/api/v3"
        ).close()
    assert caught == []


def test_unreachable_api_is_retried_then_reported(sleeps: SleepLog) -> None:
    with FakeGitHub(token=TOKEN) as gone:
        dead_url = gone.base_url
    with (
        GitHubPublisher(
            token=TOKEN, repository=REPO, pr_number=PR, api_url=dead_url, sleep=sleeps
        ) as publisher,
        pytest.raises(PublishError, match=r"could not reach the GitHub API at 127\.0\.0\.1"),
    ):
        publisher.upsert(body=body("x"), marker=MARKER)
    assert sleeps.delays == [1.0, 2.0]


@pytest.mark.parametrize(
    ("overrides", "match"),
    [
        ({"token": "  "}, "github-token"),
        ({"repository": "not-a-repo"}, "owner/name"),
        ({"pr_number": 0}, "positive integer"),
        ({"api_url": "ghe.example/api/v3"}, "GITHUB_API_URL"),
    ],
)
def test_unusable_settings_are_refused_up_front(
    make_publisher: Callable[..., GitHubPublisher], overrides: dict[str, Any], match: str
) -> None:
    with pytest.raises(PublishError, match=match):
        make_publisher(**overrides)


def test_injected_client_is_used_and_left_open(fake: FakeGitHub, sleeps: SleepLog) -> None:
    with Github(
        base_url=fake.base_url,
        auth=Auth.Token(TOKEN),
        retry=None,
        seconds_between_requests=0,
        seconds_between_writes=0,
    ) as client:
        with GitHubPublisher(
            token="unused", repository=REPO, pr_number=PR, github=client, sleep=sleeps
        ) as publisher:
            result = publisher.upsert(body=body("x"), marker=MARKER)
        assert result.action == "created"
        assert client.get_repo(REPO).get_pull(PR).number == PR


def test_publisher_satisfies_the_protocol_and_hides_the_token(publisher: GitHubPublisher) -> None:
    as_protocol: CommentPublisher = publisher
    assert callable(as_protocol.upsert)
    assert TOKEN not in repr(publisher)
    assert REPO in repr(publisher)
    result = PublishResult(action="created", url="u", comment_id=1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.action = "updated"  # type: ignore[misc]


def test_an_app_token_that_cannot_ask_who_it_is_edits_its_named_comment(sleeps: SleepLog) -> None:
    with FakeGitHub(token=TOKEN, login="ragaliq-app[bot]") as fake:
        fake.add_pull(REPO, PR)
        fake.add_comment(REPO, PR, body("a user quoting our marker"), user="reviewer")
        other_bot = fake.add_comment(REPO, PR, body("another bot's"), user="other-app[bot]")
        for _ in range(3):
            fake.fail("GET", "^/user$", 403)
            with GitHubPublisher(
                token=TOKEN,
                repository=REPO,
                pr_number=PR,
                api_url=fake.base_url,
                sleep=sleeps,
                bot_login="ragaliq-app[bot]",
            ) as publisher:
                publisher.upsert(body=body("run"), marker=MARKER)
        mine = [c for c in fake.comments(REPO, PR) if c.user_login == "ragaliq-app[bot]"]
        assert len(mine) == 1
        assert fake.comments(REPO, PR)[1].body == other_bot.body


def test_a_failing_who_am_i_stops_the_publish_instead_of_guessing(sleeps: SleepLog) -> None:
    with FakeGitHub(token=TOKEN, login="alice") as fake:
        fake.add_pull(REPO, PR)
        ours = fake.add_comment(REPO, PR, body("old"), user="alice")
        fake.fail("GET", "^/user$", 502, times=10)
        with (
            GitHubPublisher(
                token=TOKEN, repository=REPO, pr_number=PR, api_url=fake.base_url, sleep=sleeps
            ) as publisher,
            pytest.raises(PublishError, match="502"),
        ):
            publisher.upsert(body=body("new"), marker=MARKER)
        assert [c.id for c in fake.comments(REPO, PR)] == [ours.id]

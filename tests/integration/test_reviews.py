"""Reading acceptances from a pull request's reviews with the real PyGithub against the fake GitHub.

Which reviews count: every page of them, people only, at the head commit, approved or commented
(never dismissed, never a request for changes), by someone the base config lets accept. A login
GitHub does not know has no access; a team the token cannot read is named in the notes.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from ragaliq.ci.acceptances import acceptances_of
from ragaliq.errors import RepositoryError
from ragaliq.forge import Change
from ragaliq.github.client import GitHubApi
from ragaliq.github.commands import Workflow
from ragaliq.github.host import GitHubHost
from ragaliq.policy import GatePolicy
from tests.fakes.github_server import FakeGitHub

REPO = "octo-org/rag-app"
PR = 7
HEAD = "1" * 40
AUTHOR = "contributor"
CLAIM = "3f9a1c2b77e0d4aa"


@pytest.fixture
def fake() -> Iterator[FakeGitHub]:
    with FakeGitHub() as server:
        server.add_pull(REPO, PR, head_sha=HEAD, user=AUTHOR)
        yield server


def read(fake: FakeGitHub, **policy):
    host = GitHubHost(
        api=GitHubApi(token=fake.token, repository=REPO, api_url=fake.base_url, attempts=1),
        server_url="https://github.example",
        workspace=Path(tempfile.mkdtemp()),
        log=Workflow(output_file=None, summary_file=None),
    )
    change = Change(
        number=PR, base_sha="0" * 40, head_sha=HEAD, base_repo=REPO, head_repo=REPO, author=AUTHOR
    )
    return acceptances_of(host, change, GatePolicy.model_validate(policy))


def test_an_acceptance_on_the_second_page_of_reviews_counts(fake):
    for n in range(130):
        fake.add_review(REPO, PR, user=f"fan{n}", body="LGTM", commit_id=HEAD, state="COMMENTED")
    fake.set_permission(REPO, "lead", "maintain")
    fake.add_review(REPO, PR, user="lead", body=f"/ragaliq accept {CLAIM}", commit_id=HEAD)
    (accepted,), notes = read(fake)
    assert accepted.by == "lead" and accepted.claims == (CLAIM,) and accepted.commit == HEAD
    assert accepted.submitted_at is not None
    assert notes == ()
    pages = [r.query.get("page") for r in fake.requests_matching("GET", r"/pulls/7/reviews$")]
    assert pages == [["1"], ["2"]]


def test_a_bots_review_never_accepts_even_with_write_access(fake):
    fake.set_permission(REPO, "helper[bot]", "write")
    fake.set_permission(REPO, "release-app", "admin")
    fake.add_review(REPO, PR, user="helper[bot]", body="/ragaliq accept all", commit_id=HEAD)
    fake.add_review(
        REPO, PR, user="release-app", body="/ragaliq accept all", commit_id=HEAD, user_type="Bot"
    )
    accepted, notes = read(fake)
    assert accepted == ()
    assert len(notes) == 2
    assert all("by a bot or an app" in n for n in notes)


def test_a_login_github_does_not_know_has_no_access_and_the_gate_goes_on(fake):
    fake.set_permission(REPO, "ghost", None)  # a deleted account: the permission API answers 404
    fake.add_review(REPO, PR, user="ghost", body=f"/ragaliq accept {CLAIM}", commit_id=HEAD)
    accepted, (note,) = read(fake)
    assert accepted == ()
    assert "ghost" in note and "no access" in note


def test_another_failure_of_the_permission_api_fails_closed(fake):
    fake.add_review(REPO, PR, user="lead", body=f"/ragaliq accept {CLAIM}", commit_id=HEAD)
    fake.fail("GET", r"/collaborators/lead/permission", 403)
    with pytest.raises(RepositoryError):
        read(fake)


def test_dismissed_reviews_and_requests_for_changes_never_accept(fake):
    fake.set_permission(REPO, "lead", "admin")
    for state in ("DISMISSED", "CHANGES_REQUESTED", "PENDING"):
        fake.add_review(
            REPO, PR, user="lead", body="/ragaliq accept all", commit_id=HEAD, state=state
        )
    accepted, notes = read(fake)
    assert accepted == ()
    assert [n.split(": ", 1)[1] for n in notes] == [
        "it is dismissed.",
        "it is changes requested.",
        "it is pending.",
    ]


def test_a_team_member_accepts_when_the_token_can_read_the_team(fake):
    fake.add_team_member("octo-org", "rag-reviewers", "lead")
    fake.add_review(REPO, PR, user="lead", body="/ragaliq accept all", commit_id=HEAD)
    (accepted,), notes = read(fake, accept_from=["octo-org/rag-reviewers"])
    assert accepted.by == "lead" and accepted.claims == "all"
    assert notes == ()


def test_a_team_the_token_cannot_read_is_named_not_silently_refused(fake):
    # GitHub answers 404 both to a non-member and to a token that cannot see the team, which is
    # every GITHUB_TOKEN: the note says which token can.
    fake.add_review(REPO, PR, user="lead", body="/ragaliq accept all", commit_id=HEAD)
    accepted, (note,) = read(fake, accept_from=["octo-org/rag-reviewers", "someone-else"])
    assert accepted == ()
    assert "octo-org/rag-reviewers (GitHub answered 404)" in note
    assert "GITHUB_TOKEN cannot read an organisation's teams" in note
    assert "github-token" in note


def test_a_command_line_that_accepts_nothing_is_named(fake):
    fake.set_permission(REPO, "lead", "write")
    fake.add_review(
        REPO, PR, user="lead", body=f"/ragaliq accept {CLAIM} (not all)", commit_id=HEAD
    )
    accepted, (note,) = read(fake)
    assert accepted == ()
    assert "(not all)" in note and "accepts nothing" in note


def test_nobody_reads_no_review(fake):
    fake.add_review(REPO, PR, user="lead", body="/ragaliq accept all", commit_id=HEAD)
    assert read(fake, accept_from="nobody") == ((), ())
    assert fake.requests_matching("GET", r"/reviews") == []

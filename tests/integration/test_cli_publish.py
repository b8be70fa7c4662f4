from __future__ import annotations

from click.testing import CliRunner

from ragaliq.cli import cli
from tests.fakes.github_server import FakeGitHub

REPO = "acme/rag-bot"


def test_publish_creates_then_edits_the_comment(tmp_path):
    body = tmp_path / "comment.md"
    with FakeGitHub(token="ghs_write") as github:
        github.add_pull(REPO, 12)
        env = {
            "GITHUB_TOKEN": "ghs_write",
            "GITHUB_API_URL": github.base_url,
            "GITHUB_REPOSITORY": REPO,
        }
        body.write_text("<!-- ragaliq:comment id=nightly -->\nfirst\n", encoding="utf-8")
        args = ["publish", "--body", str(body), "--pr", "12", "--comment-id", "nightly"]
        first = CliRunner().invoke(cli, args, env=env)
        assert first.exit_code == 0, first.output
        assert "comment created" in first.output
        body.write_text("<!-- ragaliq:comment id=nightly -->\nsecond\n", encoding="utf-8")
        second = CliRunner().invoke(cli, args, env=env)
        assert "comment updated" in second.output
        comments = github.comments(REPO, 12)
        assert len(comments) == 1
        assert comments[0].body.endswith("second\n")


def test_publish_without_a_token_is_a_clear_error(tmp_path):
    body = tmp_path / "comment.md"
    body.write_text("<!-- ragaliq:comment id=default -->\nx\n", encoding="utf-8")
    result = CliRunner().invoke(
        cli,
        ["publish", "--body", str(body), "--pr", "1", "--repository", REPO],
        env={"GITHUB_TOKEN": ""},
    )
    assert result.exit_code == 2
    assert "set GITHUB_TOKEN" in result.stderr

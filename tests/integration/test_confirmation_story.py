"""A story: Claude gets one claim wrong once, and the gate asks again before it fails anyone.

A camping-gear rental desk gates its assistant's answers with Claude (a fake of Anthropic's API
answering as a careful judge would) and ``fail_on_new_hallucinations: true``. Its main branch has
a baseline. Then:

- a pull request rewords three answers faithfully, and the judge calls one of their claims
  unsupported the first time it sees it: the gate asks that claim again, the judge supports it,
  and the pull request passes with the claim listed as unstable, both verdicts shown;
- a pull request with one invented detail fails: the claim is asked again, held against the
  answer both times, and listed as newly hallucinated, confirmed; pushed again unchanged, it
  asks the judge nothing;
- a pull request that turns confirmation off in its own config is held to one verdict (off is
  stricter, so a pull request may do it at once), and the rewording fails on the flipped claim.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragaliq.cli import cli
from tests.fakes.anthropic_server import FakeAnthropic
from tests.fakes.claude_sim import blocks, claude_like, flipping_once, tasks_of
from tests.stories import git, new_repository

KEY = "sk-ant-api03-confirmation-story"
DESK = {
    "tent": (
        "What comes with the tent?",
        "The four-person tent comes with poles, pegs and a rain fly. It packs into a carry bag.",
        "The four-person tent comes with poles, pegs and a rain fly. It packs into a carry bag.",
    ),
    "stove": (
        "Which fuel does the stove use?",
        "The camping stove runs on butane cartridges. Cartridges are sold separately at the desk.",
        "The camping stove runs on butane cartridges. Cartridges are sold separately at the desk.",
    ),
    "booking": (
        "How do I book?",
        "Gear can be booked on the website. Bookings can be changed until the day before "
        "collection.",
        "Gear can be booked on the website. Bookings can be changed until the day before "
        "collection.",
    ),
    "hours": (
        "When is the desk open?",
        "The rental desk is open Tuesday to Sunday. It is closed on Mondays for maintenance.",
        "The rental desk is open Tuesday to Sunday.",
    ),
}
REWORDED = {
    "tent": "The four-person tent comes with a rain fly, poles and pegs. It packs into a carry "
    "bag.",
    "stove": "Cartridges are sold separately at the desk. The camping stove runs on butane "
    "cartridges.",
    "booking": "Bookings can be changed until the day before collection, and gear can be booked "
    "on the website.",
}
FLIPPED = "Cartridges are sold separately at the desk."
PACKS = "It packs into a carry bag."
TENT_AGAIN = (
    "It packs into a carry bag. The four-person tent comes with poles, a rain fly and pegs."
)
INVENTED = {"hours": "The rental desk is open Monday to Sunday."}
CONFIG = (
    "dataset: rag_outputs.jsonl\n"
    "judge:\n  provider: claude\n  model: claude-sonnet-5-5\n  max_retries: 1\n"
    "evaluators:\n  faithfulness: {threshold: 0.5}\n  hallucination: {threshold: 0.5}\n"
    "gate:\n  fail_on_new_hallucinations: true\n"
)


def write_answers(root: Path, changes: dict[str, str]) -> None:
    rows = [
        {"id": case, "query": query, "context": [context], "response": changes.get(case, answer)}
        for case, (query, context, answer) in DESK.items()
    ]
    (root / "rag_outputs.jsonl").write_text(
        "".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8"
    )


def ragaliq(fake: FakeAnthropic, *args: str) -> tuple[int, str]:
    env = {"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": fake.base_url}
    result = CliRunner().invoke(cli, list(args), env=env)
    return result.exit_code, result.output


@pytest.fixture(scope="module")
def fake() -> FakeAnthropic:
    with FakeAnthropic(claude_like()) as server:
        yield server


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory, fake: FakeAnthropic) -> Path:
    root = new_repository(tmp_path_factory.mktemp("desk"))
    (root / "ragaliq.yaml").write_text(CONFIG, encoding="utf-8")
    write_answers(root, {})
    code, output = ragaliq(fake, "baseline", "record", "--config", str(root / "ragaliq.yaml"))
    assert code == 0, output
    git(root, "add", "ragaliq.yaml", "rag_outputs.jsonl", ".ragaliq/baseline.json")
    git(root, "commit", "-q", "-m", "Answers and their baseline")
    return root


def gate(
    repo: Path, fake: FakeAnthropic, name: str, changes: dict[str, str], config: str = CONFIG
) -> tuple[int, dict, str, str]:
    git(repo, "checkout", "-q", "-B", name, "main")
    write_answers(repo, changes)
    (repo / "ragaliq.yaml").write_text(config, encoding="utf-8")
    git(repo, "commit", "-q", "--allow-empty", "-am", name)
    out = repo / ".ragaliq"
    try:
        code, output = ragaliq(
            fake,
            "gate",
            "--config",
            str(repo / "ragaliq.yaml"),
            "--decision-out",
            str(out / f"{name}.decision.json"),
            "--comment-out",
            str(out / f"{name}.comment.md"),
            "-o",
            str(out / f"{name}.report.json"),
        )
        assert (out / f"{name}.decision.json").exists(), output
        decision = json.loads((out / f"{name}.decision.json").read_text(encoding="utf-8"))
        comment = (out / f"{name}.comment.md").read_text(encoding="utf-8")
        return code, decision, output, comment
    finally:
        git(repo, "checkout", "-q", "main")


def test_a_verdict_flipped_once_is_unstable_and_passes(repo, fake):
    fake.responder, flipped = flipping_once(FLIPPED)
    code, decision, output, comment = gate(repo, fake, "reworded", REWORDED)
    assert flipped, "the judge was never asked about the claim"
    assert code == 0, output
    assert decision["new_hallucinations"] == []
    [unstable] = decision["unstable_claims"]
    assert (unstable["case_id"], unstable["claim"]) == ("stove", FLIPPED)
    assert unstable["verdicts"] == ["NOT_ENOUGH_INFO", "SUPPORTED"]
    hallucination = decision["evaluators"]["hallucination"]
    assert hallucination["head"] == 1.0 and hallucination["judge_score"] < 1.0  # scored supported
    assert "🎲 1 unstable" in comment
    assert (
        "Cartridges are sold separately at the desk. (not in the context; asked again: supported)"
        in comment
    )
    assert "unstable: 1 claim the judge's verdicts disagreed on when asked again" in output
    assert "1 claim that would fail the gate asked again to confirm" in output
    # The confirming call listed only the flagged claim.
    listed = [blocks(r.body).get("claims") for r in fake.requests if "verify" in tasks_of(r.body)]
    assert f"0. {FLIPPED}" in listed  # the confirming call lists the flagged claim alone


def test_an_invented_detail_fails_confirmed_and_an_unchanged_push_asks_nothing(repo, fake):
    fake.responder = claude_like()
    code, decision, output, _ = gate(repo, fake, "invented", INVENTED)
    assert code == 1, output
    [new] = decision["new_hallucinations"]
    assert new["case_id"] == "hours" and new["verdicts"] == ["CONTRADICTED", "CONTRADICTED"]
    assert decision["unstable_claims"] == []
    asked = fake.count()
    code, again, output, _ = gate(repo, fake, "invented", INVENTED)
    assert code == 1, output
    assert fake.count() == asked  # both answers were kept: no call, no new confirmation
    assert again["new_hallucinations"] == decision["new_hallucinations"]


def test_a_pull_request_may_turn_confirmation_off_and_is_held_to_one_verdict(repo, fake):
    fake.responder, flipped = flipping_once(PACKS)
    strict = CONFIG + "  confirm_new_hallucinations: false\n"
    code, decision, output, _ = gate(repo, fake, "strict", {"tent": TENT_AGAIN}, strict)
    assert flipped
    assert code == 1, output
    [new] = decision["new_hallucinations"]
    assert new["claim"] == PACKS and new["verdicts"] == []
    assert "tightens the gate" in output

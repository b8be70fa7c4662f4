"""Which open changes a sweep gates, and which a follower gates again, by their gate's status."""

from __future__ import annotations

import pytest

from ragaliq.ci.follow import StatusSeen, unjudged, waiting


def seen(state: str, said: str, *, reviewed_since: bool = False) -> StatusSeen:
    return StatusSeen(
        state=state, description=f"main@1a2b3c4: {said}", reviewed_since=reviewed_since
    )


@pytest.mark.parametrize(
    ("status", "swept", "followed"),
    [
        (None, True, False),
        (seen("pending", "waiting for the baseline: it is being recorded"), True, True),
        (seen("pending", "judging the pull request's RAG outputs"), True, False),
        (seen("error", "not judged: no baseline: run 9 ended failed"), True, True),
        (seen("error", "not judged: no dataset: no run handed over the artifact"), True, False),
        (seen("error", "not judged: the judge cannot be used"), False, False),
        (seen("failure", "2 new hallucinations"), False, False),
        (seen("success", "passed"), False, False),
        (seen("failure", "2 new hallucinations", reviewed_since=True), True, False),
    ],
)
def test_a_sweep_gates_every_change_without_a_standing_verdict(status, swept, followed):
    assert unjudged(status) is swept
    assert waiting(status) is followed

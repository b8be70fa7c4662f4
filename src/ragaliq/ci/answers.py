"""The signed judge answers a run of the action reuses, and the ones it leaves for the next.

A gate reads, as data and never onto its runner, the answers the run that recorded its bar kept
(beside the baseline in the store, or as that run's own artifact: every case unchanged since the
base costs no call), then those this pull request's own earlier gates uploaded, found by their
runs (``ragaliq-answers-pr<number>``); it writes the answers it used, less those the next run
will find with the baseline, for the workflow to upload. Each file is signed as a whole with a
key derived from the API key and checked before a row of it is read; all of them together are
bounded (:mod:`ragaliq.judges.answers`).
"""

from __future__ import annotations

from ragaliq._files import write_atomic
from ragaliq.ci.outputs import ResultFiles
from ragaliq.errors import RagaliqError
from ragaliq.forge import Change, Host
from ragaliq.judges.answers import AnswerRows
from ragaliq.store.found import FoundBaseline
from ragaliq.text.counts import plural

__all__ = ["BASELINE_ANSWERS", "answers_read", "gather_answers", "keep_answers"]

BASELINE_ANSWERS = "the baseline store"
"""Where answers read from the baseline store are said to come from (and are not copied on)."""


def gather_answers(
    answers: AnswerRows,
    *,
    baseline: FoundBaseline | None,
    host: Host,
    pr: Change | None,
) -> list[str]:
    """Load the signed answers a gate may reuse; they are read once the judge's key checks them.

    Those the run of the bar kept, then those of this pull request's earlier gates. Returned:
    what to log (answers only save calls: nothing here fails the gate).
    """
    notes: list[str] = []
    if baseline is not None:
        try:
            kept = baseline.answers()
        except RagaliqError as exc:
            kept, notes = None, [f"the baseline run's judge answers were not read: {exc}"]
        if kept:
            answers.load(kept, source=BASELINE_ANSWERS)
    if pr is not None:
        files, unread = host.answer_files(pr)
        for where, data in files:
            answers.load(data, source=where)
        notes += unread
    return notes


def answers_read(answers: AnswerRows) -> list[str]:
    """What the answers loaded gave, once checked: what to log after the run."""
    said = [
        f"{plural(count, 'judge answer')} read from {where}"
        for where, count in answers.taken.items()
    ]
    return [*said, *answers.warnings]


def keep_answers(answers: AnswerRows, outputs: ResultFiles, *, skip: tuple[str, ...] = ()) -> None:
    """Write the signed answers this run used where the workflow uploads them from."""
    data = answers.export(skip=skip)
    if data:
        write_atomic(outputs.answers, data.decode("utf-8"))

"""The signed judge answers a run of the action reuses, and the ones it leaves for the next.

A gate reads, as data and never onto its runner, the answers the baseline's run kept beside the
baseline (every case unchanged since the base costs no call), then those earlier gates uploaded
as the artifact ``ragaliq-answers``; it writes the answers it used, less those the next run will
find in the baseline store, for the workflow to upload. Each answer is signed with a key derived
from the API key, and checked before use (:mod:`ragaliq.judges.answers`).
"""

from __future__ import annotations

from ragaliq._files import write_atomic
from ragaliq.action.outputs import ResultFiles
from ragaliq.errors import RagaliqError
from ragaliq.github.remote import Remote
from ragaliq.judges.answers import AnswerRows
from ragaliq.store.found import FoundBaseline
from ragaliq.text.counts import plural

__all__ = ["BASELINE_ANSWERS", "gather_answers", "keep_answers"]

BASELINE_ANSWERS = "the baseline store"
"""Where answers read from the baseline store are said to come from (and are not copied on)."""


def gather_answers(
    answers: AnswerRows, *, baseline: FoundBaseline | None, remote: Remote
) -> list[str]:
    """Load the signed answers a gate may reuse.

    Those the baseline's run kept, then those of earlier gates' artifacts. Returned: what to
    log (answers only save calls: nothing here fails the gate).
    """
    notes: list[str] = []
    if baseline is not None:
        try:
            kept = baseline.answers()
        except RagaliqError as exc:
            kept, notes = None, [f"the baseline run's judge answers were not read: {exc}"]
        if kept:
            taken = answers.load(kept, source=BASELINE_ANSWERS)
            notes.append(f"{plural(taken, 'judge answer')} read from the baseline store")
    files, unread = remote.answer_files()
    for where, data in files:
        taken = answers.load(data, source=where)
        notes.append(f"{plural(taken, 'judge answer')} read from {where}")
    return [*notes, *unread]


def keep_answers(answers: AnswerRows, outputs: ResultFiles, *, skip: tuple[str, ...] = ()) -> None:
    """Write the signed answers this run used where the workflow uploads them from."""
    data = answers.export(skip=skip)
    if data:
        write_atomic(outputs.answers, data.decode("utf-8"))

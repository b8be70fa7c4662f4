"""Accepting flagged claims: a trusted reviewer's way out of a finding the gate got wrong.

A reviewer with write access accepts a newly hallucinated claim, or every newly hallucinated
claim of the pull request, by submitting a review of the pull request whose body holds a command::

    /ragaliq accept 3f9a1c2b77e0d4aa 0c1d2e3f4a5b6c7d    # these claims (the ids the comment shows)
    /ragaliq accept all                                    # every newly hallucinated claim

A review is GitHub's own record of who reviewed which commit (``commit_id``), so an acceptance
covers what was flagged at that head commit and nothing later: a new push with new claims needs a
new review. ``all`` accepts the claims listed as newly hallucinated, nothing else: a threshold, a
drop, a missing case, an error or an early stop still fails the gate. And ``all`` covers only the
claims the reviewer can have seen (:func:`bind_to_dataset`): those of the dataset judged, when it
was the one dataset the head commit had handed over before the review was submitted. Who may
accept is checked against the repository (``ragaliq.github.reviews``); the pull request's author
may not, unless the base config allows it. Nothing the pull request writes (its files, its
config, its artifact) is ever read for acceptances.

A claim's id (:func:`claim_id`) is 16 hex characters of a SHA-256 over its case id and its text
folded only by case, width, whitespace and a trailing full stop (:func:`claim_key`): every other
character is kept as written, so that claims in any script, with different signs, decimal
points, superscripts, ranges, currencies, units or separators never share one.

Locally, ``ragaliq gate --acceptances FILE`` reads the same records from a file, to try the flow.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Annotated, Literal, NamedTuple

import yaml
from pydantic import BaseModel, ConfigDict, StringConstraints, ValidationError

from ragaliq.errors import ConfigError
from ragaliq.evaluators._claims import ID_LENGTH, claim_id, claim_key

__all__ = [
    "ALL",
    "ID_LENGTH",
    "Acceptance",
    "Command",
    "bind_to_dataset",
    "claim_id",
    "claim_key",
    "parse_command",
    "read_acceptances",
]

ALL: Literal["all"] = "all"
COMMAND = re.compile(r"^\s*/ragaliq\s+accept\b(?P<what>[^\n]*)$", re.IGNORECASE | re.MULTILINE)
_ID = re.compile(rf"^[0-9a-f]{{{ID_LENGTH}}}$")
ClaimId = Annotated[
    str, StringConstraints(strip_whitespace=True, to_lower=True, pattern=_ID.pattern)
]
"""A claim's id as the comment shows it."""


class Acceptance(BaseModel):
    """One reviewer's acceptance of claims flagged at one commit."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    by: str
    """The reviewer's login."""
    commit: str | None = None
    """The head commit the review was of; None in a local file (then it covers any commit)."""
    claims: tuple[ClaimId, ...] | Literal["all"]
    """The ids of the accepted claims, or ``all`` for every newly hallucinated claim."""
    source: str = ""
    """Where it was given: the review's URL, or the file."""
    submitted_at: datetime | None = None
    """When the review was submitted; None in a local file."""

    def covers(self, claim: str) -> bool:
        """Whether this acceptance covers the claim with id ``claim``."""
        return self.claims == ALL or claim in self.claims


class Command(NamedTuple):
    """What the ``/ragaliq accept`` lines of a review's body say."""

    claims: tuple[str, ...] | Literal["all"]
    """The claim ids they accept, or ``all``; empty when no line could be read."""
    unread: tuple[str, ...] = ()
    """The lines that accept nothing: a word that is neither a claim id nor ``all`` on its own."""


def parse_command(body: str) -> Command | None:
    """What a review's body accepts; None when it holds no ``/ragaliq accept`` line.

    A line accepts only when each of its words is a claim id, or its one word is ``all``: a
    line such as ``/ragaliq accept 3f9a1c2b77e0d4aa (not all)`` accepts nothing, so that no
    aside is ever read as more than the reviewer meant.
    """
    ids: list[str] = []
    every = False
    unread: list[str] = []
    lines = list(COMMAND.finditer(body or ""))
    for match in lines:
        words = match.group("what").replace(",", " ").lower().split()
        if words == [ALL]:
            every = True
        elif words and all(_ID.match(w) for w in words):
            ids += words
        else:
            unread.append(match.group(0).strip())
    if not lines:
        return None
    return Command(claims=ALL if every else tuple(dict.fromkeys(ids)), unread=tuple(unread))


class _File(BaseModel):
    model_config = ConfigDict(extra="forbid")

    acceptances: list[Acceptance]


def read_acceptances(path: Path) -> tuple[Acceptance, ...]:
    """Acceptances from a YAML or JSON file: ``acceptances: [{by, claims: [ids] | all}]``.

    Raises:
        ConfigError: the file is missing or not in that shape.
    """
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        read = _File.model_validate(data)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot be read ({exc.strerror or exc})") from exc
    except (yaml.YAMLError, ValidationError) as exc:
        first = str(exc).splitlines()[0]
        raise ConfigError(
            f"{path}: not a list of acceptances ({first}); write "
            "`acceptances: [{by: <login>, claims: [<claim id>, ...]}]` or `claims: all`"
        ) from exc
    return tuple(a.model_copy(update={"source": str(path)}) for a in read.acceptances)


def covering(acceptances: Iterable[Acceptance], claim: str) -> Acceptance | None:
    """The first acceptance that covers the claim with id ``claim``."""
    return next((a for a in acceptances if a.covers(claim)), None)


def bind_to_dataset(
    acceptances: Iterable[Acceptance],
    *,
    handed_over: datetime | None,
    all_handed_over: Callable[[], Sequence[datetime]],
) -> tuple[tuple[Acceptance, ...], tuple[str, ...]]:
    """The acceptances that hold for the dataset judged, and a notice for each that does not.

    A review's ``all`` stands for the claims its reviewer saw flagged, so it holds only when the
    dataset judged was handed over (``handed_over``) before the review was submitted, and no
    other dataset of the head commit was (``all_handed_over``: when each was, the one judged
    included; asked only when needed). Otherwise new data produced at the same commit, after the
    review or beside the one it saw, would be covered by it. Named ids cover exactly those claims
    whatever dataset holds them, and a local file's acceptances have no time: both hold as given.
    """
    kept: list[Acceptance] = []
    notices: list[str] = []
    seen: Sequence[datetime] | None = None
    for acceptance in acceptances:
        if acceptance.claims != ALL or acceptance.submitted_at is None:
            kept.append(acceptance)
            continue
        submitted = acceptance.submitted_at
        why_not = None
        if handed_over is None:
            why_not = "the dataset judged was not handed over as an artifact, so when is unknown"
        elif handed_over >= submitted:  # the same second is not known to be before
            why_not = "the dataset judged was handed over after the review was submitted"
        else:
            seen = all_handed_over() if seen is None else seen
            before = sum(1 for at in seen if at < submitted)
            if before != 1:
                why_not = (
                    f"the head commit's runs had handed over {before} datasets by then, so "
                    "which claims it saw is not known"
                )
        if why_not is None:
            kept.append(acceptance)
            continue
        notices.append(
            f"The review by {acceptance.by} accepts all, which covers only the claims its "
            f"reviewer saw flagged, but {why_not}: it accepts nothing here. Name the claims by "
            "the ids the comment shows instead."
        )
    return tuple(kept), tuple(notices)

"""Accepting flagged claims: a trusted reviewer's way out of a finding the gate got wrong.

A reviewer with write access accepts a newly hallucinated claim, or every finding of the pull
request, by submitting a review of the pull request whose body holds a command::

    /ragaliq accept 3f9a1c2b 77e0d4aa    # these claims (the ids the comment shows)
    /ragaliq accept all                  # every finding at this commit

A review is GitHub's own record of who reviewed which commit (``commit_id``), so an acceptance
covers what was flagged at that head commit and nothing later: a new push with new claims needs a
new review. Who may accept is checked against the repository (``ragaliq.github.reviews``); the
pull request's author may not, unless the base config allows it. Nothing the pull request writes
(its files, its config, its artifact) is ever read for acceptances.

Locally, ``ragaliq gate --acceptances FILE`` reads the same records from a file, to try the flow.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError

from ragaliq.errors import ConfigError
from ragaliq.text.matching import normalise

__all__ = ["ALL", "Acceptance", "claim_id", "parse_command", "read_acceptances"]

ALL: Literal["all"] = "all"
COMMAND = re.compile(r"^\s*/ragaliq\s+accept\b(?P<what>[^\n]*)$", re.IGNORECASE | re.MULTILINE)
_ID = re.compile(r"^[0-9a-f]{8}$")


class Acceptance(BaseModel):
    """One reviewer's acceptance of claims flagged at one commit."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    by: str
    """The reviewer's login."""
    commit: str | None = None
    """The head commit the review was of; None in a local file (then it covers any commit)."""
    claims: tuple[str, ...] | Literal["all"]
    """The ids of the accepted claims, or ``all`` for every finding."""
    source: str = ""
    """Where it was given: the review's URL, or the file."""

    def covers(self, claim: str) -> bool:
        """Whether this acceptance covers the claim with id ``claim``."""
        return self.claims == ALL or claim in self.claims


def claim_id(case_id: str, claim: str) -> str:
    """The short id the comment shows for a claim of a case, stable across runs."""
    digest = hashlib.sha256(f"{case_id}\0{normalise(claim)}".encode()).hexdigest()
    return digest[:8]


def parse_command(body: str) -> tuple[str, ...] | Literal["all"] | None:
    """What a review's body accepts: claim ids, ``all``, or None when it holds no command."""
    found: list[str] = []
    for match in COMMAND.finditer(body or ""):
        words = match.group("what").split()
        if any(w.lower() == ALL for w in words):
            return ALL
        found += [w.lower() for w in words if _ID.match(w.lower())]
    return tuple(dict.fromkeys(found)) if found else None


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

"""Helpers shared by the claim-based evaluators, and the findings they list about claims."""

from __future__ import annotations

import hashlib
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict

from ragaliq.evaluators.findings import Before, Emit, Finding, FindingKind
from ragaliq.models import CLAIMS_DETAIL, UNCHECKED_DETAIL, CaseResult, ClaimVerdict, Verdict
from ragaliq.text.counts import plural, plural_is
from ragaliq.text.matching import unmatched

NO_CLAIMS_NOTE = "no_claims"
NOT_VERIFIABLE_NOTE = UNCHECKED_DETAIL


def checkable(verdicts: tuple[ClaimVerdict, ...]) -> tuple[ClaimVerdict, ...]:
    """The verdicts that count in a score: all but those the offline judge could not verify.

    A claim flagged ``not_verifiable_offline`` is neither credited nor held against a response:
    the offline judge found nothing in the context to ground it and nothing to fault it, and a
    score must not guess. Claude never sets the flag, so its scores are unchanged, and the
    evaluators keep their versions: only the offline judge's verdicts change, and its version
    (in every report's provenance) changes with them, so a baseline judged before is never
    compared silently.
    """
    return tuple(v for v in verdicts if v.verifiable)


def unchecked_details(verdicts: tuple[ClaimVerdict, ...]) -> dict[str, int]:
    """The claims a case made and, when some are, how many the judge could not check.

    The run's summary adds them up into the coverage beside each score over claims.
    """
    unchecked = sum(not v.verifiable for v in verdicts)
    details = {CLAIMS_DETAIL: len(verdicts)}
    if unchecked:
        details[UNCHECKED_DETAIL] = unchecked
    return details


def not_verifiable_note(count: int) -> str:
    """`` 2 claims not verifiable offline are left out.``, or nothing."""
    if not count:
        return ""
    verb = "is" if count == 1 else "are"
    return f" {plural(count, 'claim')} not verifiable offline {verb} left out."


def none_verifiable(count: int, word: str = "claim") -> str:
    """Why a case whose every claim is not verifiable offline has no score."""
    them = "it" if count == 1 else "them"
    return (
        f"{all_are(count, word)} not verifiable offline (the offline judge could neither ground "
        f"nor fault {them}), so the case has no score."
    )


def verdict_counts(verdicts: tuple[ClaimVerdict, ...]) -> str:
    """``3 supported, 1 contradicted, 2 not verifiable offline`` in a fixed verdict order."""
    counts = Counter(v.verdict for v in verdicts if v.verifiable)
    parts = [
        f"{counts[verdict]} {verdict.value.lower().replace('_', ' ')}"
        for verdict in Verdict
        if counts[verdict]
    ]
    unverifiable = len(verdicts) - sum(counts.values())
    if unverifiable:
        parts.append(f"{unverifiable} not verifiable offline")
    return ", ".join(parts)


def describe_claims(claims: Iterable[ClaimVerdict], label: Callable[[Verdict], str]) -> list[str]:
    """``contradicted: Refunds take 30 days. (the context says 14)``, one line per claim."""
    return [
        f"{label(c.verdict)}: {c.text}" + (f" ({c.reason})" if c.reason else "") for c in claims
    ]


def all_are(count: int, word: str) -> str:
    """``All 3 claims are``, or ``The one claim is``: the start of a sentence about every item."""
    return f"The one {word} is" if count == 1 else f"All {count:,} {word}s are"


def of_total_are(part: int, total: int, word: str) -> str:
    """``2 of 5 claims are``, ``1 of 1 claim is``: the start of a sentence about some items."""
    return f"{part:,} of {plural_is(total, word)}"


ID_LENGTH = 16
"""Hex characters of a claim id: 64 bits, so that no two claims of a suite share one."""


_FULL_STOPS = frozenset(".\u3002")
"""A full stop, and the ideographic one; a fullwidth or halfwidth form is folded to one first."""


def _width_folded(ch: str) -> str:
    """A fullwidth or halfwidth form as its usual character; any other character as it is."""
    decomposition = unicodedata.decomposition(ch)
    if decomposition.startswith(("<wide> ", "<narrow> ")):
        return chr(int(decomposition.split()[1], 16))
    return ch


def claim_key(text: str) -> str:
    """A claim's text as its id reads it: folded only where a reader sees no difference.

    Four folds, and no other: case (``str.casefold``), width (a fullwidth or halfwidth form is
    its usual character), whitespace (every run of whitespace is one space, none at either end)
    and one trailing full stop. Every other character is kept as written, so a sign, a decimal
    point, a superscript, a range's dash, a currency or a unit tells two claims apart: "10⁶" is
    not "106", ".5 bar" is not "5 bar", a minus sign is not a hyphen.
    """
    folded = "".join(_width_folded(ch) for ch in text).casefold()
    spaced = " ".join(folded.split())
    if spaced[-1:] in _FULL_STOPS:
        spaced = spaced[:-1].rstrip()
    return spaced


def claim_id(case_id: str, claim: str) -> str:
    """The id the comment shows for a claim of a case, stable across runs and re-spacings."""
    digest = hashlib.sha256(f"{case_id}\0{claim_key(claim)}".encode()).hexdigest()
    return digest[:ID_LENGTH]


class BaselineClaim(BaseModel):
    """A claim the hallucination evaluator held against a case when the baseline was recorded."""

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    text: str
    verdict: Verdict
    flags: tuple[str, ...] = ()


class ClaimChange(Finding):
    """A claim that became, or stopped being, hallucinated; or a needed fact lost."""

    noun: ClassVar[str] = "claim"

    claim: str
    verdict: str
    evidence: str | None = None
    reason: str = ""
    confidence: float = 1.0
    agreement: float | None = None
    """With ``judge.repeat``: the share of repetitions that gave the verdict; for a claim asked
    again to confirm it, the share of the two asks that held it against the response."""
    verdicts: tuple[str, ...] = ()
    """Each ask's verdict, in order, for a claim asked again to confirm it."""
    id: str = ""
    """The claim's short id, which a reviewer names to accept it (``/ragaliq accept <id>``)."""
    accepted_by: str | None = None
    """The reviewer who accepted this newly hallucinated claim at this commit, if one did."""

    @classmethod
    def of(cls, case: CaseResult, claim: ClaimVerdict | BaselineClaim) -> ClaimChange:
        """The entry of one claim of ``case``, as judged now or as the baseline kept it."""
        if isinstance(claim, BaselineClaim):
            return cls(
                case_id=case.id,
                query=case.query,
                claim=claim.text,
                verdict=claim.verdict.value,
                id=claim_id(case.id, claim.text),
            )
        return cls(
            case_id=case.id,
            query=case.query,
            id=claim_id(case.id, claim.text),
            claim=claim.text,
            verdict=claim.verdict.value,
            evidence=claim.evidence,
            reason=claim.reason,
            confidence=claim.confidence,
            agreement=claim.agreement,
            verdicts=tuple(v.value for v in claim.asked),
        )

    @property
    def headline(self) -> str:
        return self.verdict

    @property
    def text(self) -> str:
        return self.claim


class StillUnchecked(ClaimChange):
    """A claim the offline judge could not check now, nor when the baseline was recorded."""

    title: ClassVar[str] = "Still unchecked (unchecked on the baseline too, not new)"
    noun: ClassVar[str] = "claim still unchecked"
    weight: ClassVar[int] = 0

    @property
    def headline(self) -> str:
        return "still unchecked"


class UnverifiableClaims(FindingKind):
    """Claims the offline judge could neither ground nor fault, in cases judged anew.

    Listed apart, never as hallucinated. A claim the baseline's same case could not check
    either (in any matching form) is *still unchecked*, listed on its own and never as new,
    whatever else changed in its case; an unchanged case does not list its own again.
    """

    name: ClassVar[str] = "unverifiable"
    lists: ClassVar[Mapping[str, type[Finding]]] = {
        "unverifiable_claims": ClaimChange,
        "still_unchecked_claims": StillUnchecked,
    }
    kept: ClassVar[Any] = tuple[BaselineClaim, ...]

    @classmethod
    def keep(cls, case: CaseResult) -> tuple[BaselineClaim, ...] | None:
        claims = tuple(
            BaselineClaim(text=c.text, verdict=c.verdict, flags=c.flags)
            for c in case.claims
            if not c.verifiable
        )
        return claims or None

    def find(self, case: CaseResult, before: Before | None, *, first_run: bool, emit: Emit) -> None:
        if case.status != "ok" or (before is not None and before.input_hash == case.input_hash):
            return
        now: list[ClaimVerdict | BaselineClaim] = [c for c in case.claims if not c.verifiable]
        was: list[ClaimVerdict | BaselineClaim] = []
        if before is not None and before.status == "ok":
            was = list(before.kept or ())
        new = unmatched(now, was, text=_text_of)
        fresh = {id(claim) for claim in new}
        for claim in now:
            if id(claim) in fresh:
                emit("unverifiable_claims", ClaimChange.of(case, claim))
            else:
                emit("still_unchecked_claims", StillUnchecked.of(case, claim))


def _text_of(claim: ClaimVerdict | BaselineClaim) -> str:
    return claim.text

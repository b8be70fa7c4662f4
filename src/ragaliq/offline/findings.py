"""What the offline judge can hold against a claim: a finding that is true of its context.

The offline judge calls a claim hallucinated only on one of these findings, and its reason says
which, quoting what the claim and the context say, so that a reviewer can check it:

- ``figure``: a figure of the claim the context does not state in any unit or spelling (12V,
  12-volt and 12 volts are one figure; ninety days, 90 days and three months are one duration),
  contradicted when the closest context sentence states another figure of the same kind ("3
  hours" where it says "20 minutes") or other figures; or a number of things the closest
  sentence counts otherwise ("five lines" where it says "four lines"); of a JSON record, a
  figure it states nowhere (not the scale of a rating, nor hours the record's week gives);
- ``date``: a weekday or month where the closest context sentence names another; or one the
  context names nowhere, nor implies ("weekdays" names Wednesday), as a figure or a name it
  lacks;
- ``name``: a name the context, or the record, lacks (the first word of a sentence, a weekday or
  a month is not a name, and "California" is the "CA" the context writes);
- ``negation``: a negation the closest context sentence lacks, or the other way round (the
  reason quotes both, from the negation to the word it governs), or a requirement denied ("you
  do not need the receipt" against "must include the receipt");
- ``opposite``: a word replaced by its opposite (full and partial, free and paid; see
  :data:`~ragaliq.offline.opposites.OPPOSITES`);
- ``scope``: a scope widened ("worldwide" where the context names one country, "all" where it
  says "most", "unlimited" where it says "up to 5");
- ``roles``: two names, or two parties ("the tenant", "the landlord"), in swapped roles: in the
  reverse order, a passive that turns them round ("Acme was bought by Globex" against "Acme
  bought Globex"), or a journey the other way;
- ``record``: a field of a JSON record the claim contradicts (a flag, a figure, a value said
  otherwise: "paid WiFi" against ``"WiFi": "free"``, "the city of Dublin" against ``"city":
  "Cork"``), finds null, or a thing the record names nowhere.

A claim with no finding is SUPPORTED when the context backs it, and otherwise *not verifiable
offline*: the judge could neither ground it nor fault it (see :mod:`.judge`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from ragaliq.models import Verdict
from ragaliq.offline.context import Sentence
from ragaliq.offline.contrasts import opposite, swapped, widened
from ragaliq.offline.features import Analysis
from ragaliq.offline.negations import negation_change, requirement_flip
from ragaliq.text.quantities import Quantity

__all__ = ["FINDING_KINDS", "Finding", "FindingKind", "find"]

FindingKind = Literal["record", "negation", "opposite", "roles", "figure", "date", "scope", "name"]
FINDING_KINDS: tuple[FindingKind, ...] = (
    "record",
    "negation",
    "opposite",
    "roles",
    "figure",
    "date",
    "scope",
    "name",
)
"""Every kind of finding, in the order they are looked for."""
PARTIAL_COVERAGE = 0.5
"""Share of a claim's content words the context must hold for PARTIALLY_SUPPORTED, and the
closest sentence for a changed figure to read as contradicting it."""
MAX_SHOWN = 3


@dataclass(frozen=True, slots=True)
class Finding:
    """One thing the context plainly disagrees with, with a reason a reviewer can check."""

    kind: FindingKind
    verdict: Verdict
    reason: str
    evidence: str | None = None
    """The context text the reason rests on, when it is not the closest sentence."""


def find(a: Analysis) -> list[Finding]:
    """Every finding against a claim, the surest first (empty when there is none)."""
    found: list[Finding] = []
    for check in _CHECKS:
        finding = check(a)
        if finding is not None:
            found.append(finding)
    return found


def _record_contradicted(a: Analysis) -> Finding | None:
    if a.record is None or not a.record.contradicted:
        return None
    return Finding("record", Verdict.CONTRADICTED, _sentence(a.record.contradicted[0]) + ".")


def _record_gap(a: Analysis) -> Finding | None:
    record = a.record
    if record is None:
        return None
    if record.unknown:
        return Finding("record", Verdict.NOT_ENOUGH_INFO, _sentence(record.unknown[0]) + ".")
    if record.absent and a.context_cov < PARTIAL_COVERAGE:
        return Finding("record", Verdict.NOT_ENOUGH_INFO, _sentence(record.absent[0]) + ".")
    return None


def _negation(a: Analysis) -> Finding | None:
    if a.negation_flip and a.best is not None:
        change = negation_change(a.text, a.best.text)
        if change is not None:
            return Finding(
                "negation",
                Verdict.CONTRADICTED,
                f'The claim says "{change.claim}" where the closest context sentence says '
                f'"{change.context}".',
            )
    for sentence in _prose_sentences(a):
        flip = requirement_flip(a.whole, sentence.text) if a.whole is not None else None
        if flip is not None:
            return Finding(
                "negation",
                Verdict.CONTRADICTED,
                f'The claim says "{flip.claim}" where the context says "{flip.context}".',
                evidence=sentence.text,
            )
    return None


def _opposite(a: Analysis) -> Finding | None:
    for sentence in _prose_sentences(a):
        change = opposite(a.whole, sentence.text) if a.whole is not None else None
        if change is not None:
            return Finding(
                "opposite",
                Verdict.CONTRADICTED,
                f'The claim says "{change.claim}" where the context says "{change.context}".',
                evidence=sentence.text,
            )
    return None


def _roles(a: Analysis) -> Finding | None:
    for sentence in _prose_sentences(a):
        change = swapped(a.whole, sentence.text) if a.whole is not None else None
        if change is not None:
            return Finding(
                "roles",
                Verdict.CONTRADICTED,
                f'The claim swaps the roles the context gives: it says "{change.claim}" where '
                f'the context says "{change.context}".',
                evidence=sentence.text,
            )
    return None


def _figure(a: Analysis) -> Finding | None:
    """A figure of the claim the context states nowhere, in any unit or spelling.

    Contradicted when the closest sentence (holding most of the claim's words) states a figure
    of the same kind, or other figures the claim does not repeat; otherwise not in the context.
    """
    if a.record is not None:
        return _record_figure(a)
    miscount = _miscount(a)
    if miscount is not None or not a.novel_figures:
        return miscount
    best = a.best
    if best is not None and a.best_cov >= PARTIAL_COVERAGE:
        others = [q for q in best.quantities if not any(c.stated_by(q) for c in a.figures)]
        claimed = a.novel_figures[0]
        alike = [q for q in others if q.dimension is not None and q.dimension == claimed.dimension]
        if alike:
            return Finding(
                "figure",
                Verdict.CONTRADICTED,
                f"The claim says {_quote(claimed)} where the closest context sentence says "
                f"{_quotes(alike)}, and the context states {_quote(claimed)} nowhere.",
            )
        if others:
            return Finding(
                "figure",
                Verdict.CONTRADICTED,
                f"The closest context sentence states other figures ({_quotes(others)}); "
                f"{_quotes(a.novel_figures)} {_does(a.novel_figures)} not occur in the context.",
            )
    plural = len(a.novel_figures) > 1
    return Finding(
        "figure",
        Verdict.NOT_ENOUGH_INFO,
        f"The figure{'s' if plural else ''} {_quotes(a.novel_figures)} "
        f"{_does(a.novel_figures)} not occur in the context.",
    )


def _record_figure(a: Analysis) -> Finding | None:
    """A figure of a claim about a record that the record states nowhere.

    Not a figure the record's fields were read for (a field's value, how many items a list
    holds), not the scale of a rating ("out of 5"), and not a time of day or a number of days
    where the record gives opening hours (read as hours: ``17:0`` is "5 pm", a week of seven
    days is "daily").
    """
    assert a.record is not None
    novel = [
        q
        for q in a.novel_figures
        if q.key not in a.record.figures
        and not _OUT_OF.search(a.text, 0, q.start)
        and not (a.hours and q.dimension in _WEEK_DIMENSIONS)
    ]
    if not novel:
        return None
    return Finding(
        "figure",
        Verdict.NOT_ENOUGH_INFO,
        f"The figure{'s' if len(novel) > 1 else ''} {_quotes(novel)} {_does(novel)} not occur "
        "in the record.",
    )


_OUT_OF = re.compile(r"\bout of\s*$", re.IGNORECASE)
_WEEK_DIMENSIONS = frozenset(("clock", "time"))


def _quote(quantity: Quantity) -> str:
    return f'"{quantity.shown()}"'


def _quotes(quantities: list[Quantity]) -> str:
    return ", ".join(_quote(q) for q in quantities[:MAX_SHOWN])


def _does(quantities: list[Quantity]) -> str:
    return "does" if len(quantities) == 1 else "do"


def _miscount(a: Analysis) -> Finding | None:
    """A number of things the closest sentence counts otherwise ("three children", "two")."""
    if not a.miscounts or a.best_cov < PARTIAL_COVERAGE:
        return None
    said, other = a.miscounts[0]
    return Finding(
        "figure",
        Verdict.CONTRADICTED,
        f'The claim says "{said.written}" where the closest context sentence says '
        f'"{other.written}".',
    )


def _date(a: Analysis) -> Finding | None:
    """A weekday or month the claim names or implies where the closest sentence gives others.

    A day the context names nowhere, against a closest sentence that names a day of the same
    kind; or, when that sentence holds at least half of the claim's words (so that it is about
    the same thing), a weekday it does not name or imply among the weekdays it gives ("Monday to
    Sunday", or "daily", against "Tuesday to Sunday").
    """
    if a.record is not None or a.best is None:
        return None
    best = a.best
    for full, written in a.novel_dates:
        if any(_same_kind(d, full) and d != full for d in best.calendar):
            return _other_days(written, best)
    if a.novel_dates:
        named = ", ".join(f'"{written}"' for _, written in a.novel_dates)
        kinds = {"month" if full in _MONTHS else "day" for full, _ in a.novel_dates}
        noun = " or ".join(sorted(kinds)) if len(a.novel_dates) == 1 else "dates"
        verb = "does" if len(a.novel_dates) == 1 else "do"
        return Finding(
            "date", Verdict.NOT_ENOUGH_INFO, f"The {noun} {named} {verb} not occur in the context."
        )
    if a.best_cov < PARTIAL_COVERAGE:
        return None
    for full, written in a.days:
        if full in _MONTHS or full in best.days:
            continue  # months are dates of events; weekdays the days a thing holds on
        if any(d not in _MONTHS for d in best.days):
            return _other_days(written, best)
    return None


def _other_days(written: str, best: Sentence) -> Finding:
    return Finding(
        "date",
        Verdict.CONTRADICTED,
        f'The claim says "{written}", which the closest context sentence does not name: '
        f'"{best.text}"',
    )


_MONTHS = frozenset(
    "january february march april may june july august september october november december".split()
)


def _same_kind(a: str, b: str) -> bool:
    return (a in _MONTHS) == (b in _MONTHS)


def _scope(a: Analysis) -> Finding | None:
    for sentence in _prose_sentences(a):
        change = widened(a.whole, sentence.text) if a.whole is not None else None
        if change is not None:
            return Finding(
                "scope",
                Verdict.PARTIALLY_SUPPORTED,
                f'The claim widens what the context says: "{change.claim}" where the context '
                f'says "{change.context}".',
                evidence=sentence.text,
            )
    return None


def _name(a: Analysis) -> Finding | None:
    if not a.novel_names:
        return None
    verdict = (
        Verdict.PARTIALLY_SUPPORTED
        if a.context_cov >= PARTIAL_COVERAGE
        else Verdict.NOT_ENOUGH_INFO
    )
    return Finding("name", verdict, f"Names not found in the context: {', '.join(_name_words(a))}.")


def _name_words(a: Analysis) -> list[str]:
    """The claim's novel names as written (``Charles``, ``Babbage``), at most four."""
    written = [w for w in a.novel_words if w[:1].isupper() and w.lower() in a.novel_names]
    return (written or a.novel_names)[:4]


def _prose_sentences(a: Analysis) -> tuple[Sentence, ...]:
    """The context sentences a claim about prose is compared with: those holding half its words."""
    return () if a.record is not None else a.close


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:]


_CHECKS: tuple[Callable[[Analysis], Finding | None], ...] = (
    _record_contradicted,
    _negation,
    _opposite,
    _roles,
    _figure,
    _date,
    _scope,
    _name,
    _record_gap,
)

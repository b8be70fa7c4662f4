"""Structured records as context: a JSON object read as fields, not as a bag of words.

A RAG system that describes a product, a place or an account from a record (a JSON object in the
context) hallucinates in ways word overlap cannot see: it says "offers outdoor seating" when the
record says ``"OutdoorSeating": false``, or talks about a field the record leaves ``null``. A
record is read from its own keys and values, with no knowledge of one dataset's names
(:mod:`.record_fields`); this module checks a claim against it, field by field where the claim
names one (:mod:`.record_mentions`):

- **values**: a claim that mentions a key is checked against its value, with the claim's negation
  read from its clause: a flag (``false``, ``"no"``, ``"none"``), a ``null`` (the record does not
  say), a figure said beside the key's words ("a 4.5-star rating" against ``"stars": 4.0``, "a
  5-year warranty" against ``"warranty_years": 2``), or a value said otherwise: a name ("the
  city of Dublin" against ``"city": "Cork"``) or an opposite ("paid WiFi" against ``"WiFi":
  "free"``);
- **a key the record lacks**: a claim that the place "offers", "has" or "provides" something the
  record names nowhere (not in a key, not in a value) is unknown;
- **lists**: "three reviews" is checked against the length of a list whose key says "reviews";
- **weeks**: a value mapping day names to time ranges is checked by :mod:`.schedule`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import cached_property

from ragaliq.offline.record_fields import (
    NEAR_PREFIX,
    NULL_VALUES,
    TOKEN,
    Field,
    RecordFields,
    name_value,
    truth,
)
from ragaliq.offline.record_mentions import (
    CLAUSE,
    Token,
    clause_tokens,
    mentions,
    near_figure,
    negated_at,
    stated_otherwise,
)
from ragaliq.offline.schedule import check_week
from ragaliq.offline.work import Work
from ragaliq.text.words import STOPWORDS, figures, word_key

__all__ = ["Record", "RecordFindings", "parse_record"]

_UNSPECIFIED = re.compile(
    r"\b(?:not (?:specified|mentioned|listed|provided|stated|indicated|known)|unspecified|"
    r"unknown|no (?:information|mention|data|details?))\b",
    re.IGNORECASE,
)
_LIST_ITEM = re.compile(
    r",\s*+(?:and\s++|or\s++)?|(?<!\s)\s++(?:and|or|as well as)\s++", re.IGNORECASE
)
_LIST_LEAD = re.compile(
    r"^(?:(?:it|they|the \w+|this \w+)\s+)?(?:(?:also|does|do|not|n't)\s+)*"
    r"(?:offers?|provides?|has|have|features?|boasts?|accepts?|allows?|includes?|serves?)?\s*"
    r"(?:(?:a|an|the|free|complimentary|its|their|both|some|several|various)\s+)*",
    re.IGNORECASE,
)
_OFFERS = re.compile(
    r"\b(?:offers?|provides?|has|have|features?|boasts?|accepts?|includes?|serves?|allows?)\s+"
    r"(?:(?:a|an|the|free|complimentary|its|their|also|both)\s+)?"
    r"(?P<thing>[a-z][\w'-]*(?:\s+[a-z][\w'-]*)?)"
    r"(?=\s*(?:[,.;]|$)|\s+(?:and|or)\s+[\w'-]+\s*(?:[,.;]|$))",
    re.IGNORECASE,
)
"""A claim that the place has a thing (``offers delivery``, ``accepts cash and cards``); a word
before ``and`` that shares the next word's noun (``indoor and outdoor seating``) is left out."""
MAX_ITEM_WORDS = 2
"""A list item of at most this many content words is a thing (``delivery``, ``happy hour``)."""
_COUNT_WORDS = {
    w: i for i, w in enumerate("zero one two three four five six seven eight nine ten".split())
}
_COUNT = re.compile(
    r"\b(?P<n>\d+|one|two|three|four|five|six|seven|eight|nine|ten)\s+(?:\w+\s+)?(?P<noun>\w+)",
    re.IGNORECASE,
)


@dataclass
class RecordFindings:
    """What a record says about one claim; each entry is a sentence a person can read."""

    confirmed: list[str] = field(default_factory=list)
    contradicted: list[str] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)
    """Fields the claim talks about that the record leaves null."""
    absent: list[str] = field(default_factory=list)
    """Things the claim says the place has that the record names nowhere."""
    evidence: list[str] = field(default_factory=list)
    """Quotes from the record (``"OutdoorSeating": false``) behind the findings."""
    figures: list[str] = field(default_factory=list)
    """The claim's figures the record was read for: a field's figure, or how many items a list
    holds (``3`` in "three reviews")."""
    hours_agree: bool = False
    """Whether the record's opening hours agree with the times and days the claim gives."""
    uncertain: list[str] = field(default_factory=list)
    """What the record leaves open about the claim, which the offline judge neither grounds nor
    faults: hours a claim gives "weekends" that hold on one of the two days."""

    @property
    def empty(self) -> bool:
        return not (self.confirmed or self.contradicted or self.unknown or self.absent)


@dataclass(frozen=True)
class Record(RecordFields):
    """A JSON object from the context, read as fields, that a claim can be checked against."""

    @cached_property
    def key_words(self) -> frozenset[str]:
        """The word keys of the record's keys, each also run together (``wifi``, ``takeout``)."""
        keys = [f.key for f in self.fields] + [key for key, _, _ in self.lists]
        return frozenset(w for key in keys for w in (*key.words, key.joined))

    def check(self, claim: str, work: Work | None = None) -> RecordFindings:
        """The record's fields that the claim talks about, and whether they agree.

        ``work`` counts the fields, lists and weeks read.
        """
        work = work if work is not None else Work(len(claim))
        findings = RecordFindings()
        clauses = [c for c in CLAUSE.split(claim) if c and c.strip()]
        everywhere, visited = mentions(self.fields, clause_tokens(claim), self.lookup)
        work.spend(visited)
        named_children = {id(f.parent) for f, _ in everywhere if f.parent is not None}
        for clause in clauses:
            tokens = clause_tokens(clause)
            matched, visited = mentions(self.fields, tokens, self.lookup)
            work.spend(visited + len(self.weeks))
            children = {id(f.parent) for f, _ in matched if f.parent is not None}
            for found, (start, end) in matched:
                if isinstance(found.value, dict) and id(found.key) in children:
                    continue  # "street parking": the child says more than "parking"
                negated = negated_at(clause, start, end)
                if isinstance(found.value, dict) and (
                    (negated and id(found.key) in named_children)
                    or (not negated and not _offered(clause, found.key.name))
                ):
                    continue  # "no on-site parking, but street parking", "a nice atmosphere"
                self._check_field(found, clause, negated, findings, start=start, end=end)
            if matched:
                self._check_list_mates(clause, findings)
            self._check_offers(clause, findings)
            self._check_figures(clause, tokens, findings, work)
        for week in self.weeks:
            check_week(week, clauses, _noter(findings))
        self._check_counts(claim, findings, work)
        return findings

    def _check_field(
        self,
        found: Field,
        clause: str,
        negated: bool,
        findings: RecordFindings,
        *,
        start: int,
        end: int,
    ) -> None:
        state = truth(found.value, clause)
        name = found.key.name if found.parent is None else f"{found.key.name} {found.parent.name}"
        said = (
            None
            if negated
            else stated_otherwise(found.value, clause, (start, end), self.vocabulary)
        )
        if said is not None:
            findings.evidence.append(found.quote)
            if said.agrees:
                findings.confirmed.append(f"the record has {found.quote}")
            elif name_value(found.value) is not None:
                findings.contradicted.append(
                    f"the claim names {said.text} as the {name}, but the record has {found.quote}"
                )
            else:
                findings.contradicted.append(
                    f"the claim says {said.text} {name}, but the record has {found.quote}"
                )
            return
        if state is None:
            if found.key.words and found.key.words <= self.said:
                return  # the record's text talks about it: leave it to word overlap
            if (
                found.value is None
                or isinstance(found.value, dict)
                or (isinstance(found.value, str) and found.value.strip().lower() in NULL_VALUES)
            ):
                if _UNSPECIFIED.search(clause):
                    findings.confirmed.append(f"the record does not say anything about {name}")
                else:
                    findings.unknown.append(f"the record has a null field about {name}")
                    findings.evidence.append(found.quote)
            return
        findings.evidence.append(found.quote)
        says = "has no" if negated else "has"
        if state != negated:
            findings.confirmed.append(f"the record agrees that it {says} {name}")
        else:
            findings.contradicted.append(
                f"the claim says it {says} {name}, but the record has {found.quote}"
            )

    def _check_list_mates(self, clause: str, findings: RecordFindings) -> None:
        """Items listed beside a field of the record that the record names nowhere.

        "offers outdoor seating, takeout, and delivery" lists what the record has fields for; an
        item of that list with no key or value in the record ("delivery") is a field it lacks.
        """
        if _UNSPECIFIED.search(clause):
            return
        for item in _LIST_ITEM.split(clause):
            words = [
                w
                for w in TOKEN.findall(_LIST_LEAD.sub("", item.strip()))
                if w.lower() not in STOPWORDS and not w[0].isdigit()
            ]
            if not words or len(words) > MAX_ITEM_WORDS or not any(w.islower() for w in words):
                continue
            if any(self._names(word_key(w.lower()), w) for w in words):
                continue
            findings.absent.append(f"the record has no field about {' '.join(words)}")

    def _check_offers(self, clause: str, findings: RecordFindings) -> None:
        """Something the claim says the place has that the record names nowhere."""
        if _UNSPECIFIED.search(clause):
            return
        for match in _OFFERS.finditer(clause):
            words = [w for w in TOKEN.findall(match["thing"]) if w.lower() not in STOPWORDS]
            if not words or any(self._names(word_key(w.lower()), w) for w in words):
                continue
            thing = " ".join(words)
            if not any(thing in a for a in findings.absent):
                findings.absent.append(f"the record has no field about {thing}")

    def _names(self, key: str, word: str) -> bool:
        lower = word.lower()
        return (
            key in self.vocabulary
            or lower in self.vocabulary
            or lower.replace("-", "") in self.vocabulary
            or (len(key) >= NEAR_PREFIX and key[:NEAR_PREFIX] in self.prefixes)
        )

    def _check_figures(
        self, clause: str, tokens: list[Token], findings: RecordFindings, work: Work
    ) -> None:
        stated = figures(clause)
        if not stated:
            return
        for value in stated:
            if re.search(rf"\bout of\s+{re.escape(value)}\b", clause):
                continue  # the scale of a rating, not a figure of the record
            near = near_figure(value, tokens)
            ids, visited = self.lookup.find(near)
            work.spend(visited + len(ids))
            owners = [
                f
                for f in (self.fields[i] for i in ids)
                if isinstance(f.value, int | float)
                and not isinstance(f.value, bool)
                and f.key.words & near
            ]
            if not owners:
                continue
            findings.figures.append(value)
            if any(_same_number(f.value, value) for f in owners):
                findings.confirmed.append(f"the record has {owners[0].key.name} {value}")
                findings.evidence.append(owners[0].quote)
            elif (
                any(len(f.key.words) > 1 and f.key.words <= near for f in owners)
                or float(value) <= max(float(f.value) for f in owners) * 2
            ):
                shown = ", ".join(sorted({f"{f.value:g}" for f in owners}))
                findings.contradicted.append(
                    f"the claim says {owners[0].key.name} {value}, but the record has {shown}"
                )
                findings.evidence.append(owners[0].quote)

    def _check_counts(self, claim: str, findings: RecordFindings, work: Work) -> None:
        for match in _COUNT.finditer(claim):
            raw = match["n"].lower()
            count = int(raw) if raw.isdigit() else _COUNT_WORDS[raw]
            if not match["noun"].lower().endswith("s"):
                continue  # "one negative review" is about one of them, not how many there are
            noun = word_key(match["noun"].lower())
            ids, visited = self.list_lookup.find((noun,))
            work.spend(visited + len(ids))
            for key, length, _quote in (self.lists[i] for i in ids):
                if noun not in key.words:
                    continue
                findings.figures.append(str(count))
                before = claim[max(0, match.start() - 12) : match.start()].lower()
                if before.endswith("based on "):
                    findings.unknown.append(
                        f"the record does not say how many {key.name} a figure is based on"
                    )
                elif count == length:
                    findings.confirmed.append(f"the record lists {length} {key.name}")
                else:
                    findings.contradicted.append(
                        f"the claim counts {count} {key.name}, but the record lists {length}"
                    )


def _noter(findings: RecordFindings):  # type: ignore[no-untyped-def]
    def note(wrong: list[str], bad: str, good: str, quote: str, partial: bool = False) -> None:
        if quote:
            findings.evidence.append(quote)
        if partial:
            days = ", ".join(d.capitalize() for d in wrong)
            findings.uncertain.append(
                f"the claim gives both weekend days {good}, and the record's hours say {bad} "
                f"on {days}"
            )
            return
        if wrong:
            days = ", ".join(d.capitalize() for d in wrong if d)
            findings.contradicted.append(
                f"the record's hours say {bad}" + (f" on {days}" if days else "")
            )
        else:
            findings.confirmed.append(f"the record's hours agree ({good})")
            findings.hours_agree = True

    return note


def _offered(clause: str, name: str) -> bool:
    """Whether the clause says the thing itself is offered.

    "offers parking" and "parking is available" do; "a nice atmosphere" does not.
    """
    words = r"\s+".join(re.escape(w) for w in name.split()[-1:])
    return bool(
        re.search(
            rf"\b(?:offers?|provides?|has|have|features?|with)\s+(?:free\s+|ample\s+)?{words}",
            clause,
            re.IGNORECASE,
        )
        or re.search(rf"{words}\s+(?:is|are)\s+(?:also\s+)?available", clause, re.IGNORECASE)
    )


def _same_number(value: float, stated: str) -> bool:
    try:
        return abs(float(value) - float(stated)) < 1e-9
    except ValueError:
        return False


def parse_record(chunk: str) -> Record | None:
    """The record a context chunk holds, when the chunk is one JSON object."""
    text = chunk.strip()
    if not text.startswith("{"):
        return None
    try:
        data = json.loads(text)
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    return Record.read(data)

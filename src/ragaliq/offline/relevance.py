"""How well a response answers its query, read offline from the query's key terms.

The key terms are the words a question turns on ("refund", "annual", "Personal"), not the words
every question has ("how", "does", "tell me"). A response answers when it takes up most of them,
in its own words where they are near enough (a shared stem, a light synonym: "fit" for "install").
A question that asks for a quantity or a time ("how long", "how much", "when") is answered by a
figure, and a yes-or-no question by a leading "Yes" or "No", each counted as one more key term
when the response takes up a key term too (a figure about something else answers nothing).
A response that takes up most of the key terms scores 1.0; the reasoning names the terms it takes
up and the ones it leaves out, as the query writes them. A query with no key terms and no figure
to ask for ("What is it?", "How?") leaves nothing to look for: its answer is not rated (no score,
and the evaluator skips the case), never rated 1.0.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ragaliq.errors import JudgeError
from ragaliq.text.plain import is_blank
from ragaliq.text.words import content_tokens, drop_answer_word, numbers

__all__ = ["SATURATION", "Relevance", "inflection_bases", "rate_relevance"]

SATURATION = 0.6
"""Share of the query's key terms a response must take up to score 1.0: an answer rarely
repeats the whole question ("How long does installation take?" is answered by "about 30 minutes;
most people install it themselves")."""
NEAR_PREFIX = 5
"""Words sharing this many first letters are one term (``compatible``, ``compatibility``)."""
ASKING_WORDS = frozenset(
    """
    tell explain describe know please help find want like possible able happen mean give take
    make get go come put keep let seem anything something thing things way ways use
    """.split()
)
"""Words a question uses to ask, which no answer needs to repeat."""
_QUANTITY = re.compile(
    r"\bhow\s+(?:long|much|many|often|far|big|large|old|soon|fast)\b|\bwhen\b|\bwhat\s+time\b"
    r"|\bwhat\s+year\b|\bwhat\s+(?:is|are)\s+the\s+(?:price|cost|fee|limit)s?\b",
    re.IGNORECASE,
)
_QUANTITY_WORDS = frozenset("long much many often far big large old soon fast".split())
_YES_NO = re.compile(
    r"^\s*(?:is|are|was|were|do|does|did|can|could|will|would|should|has|have)\b", re.I
)


_DOUBLED = re.compile(r"([bdfgklmnprtvz])\1$")


def inflection_bases(word: str) -> frozenset[str]:
    """The forms ``word`` may be an inflection of: its plural or its tense taken off.

    "bikes" may be "bike", "returned" "return", "shipping" "ship" and "shipe", "batteries"
    "battery": a term is taken up when the query's word and a response's word share one. Only
    regular endings are taken off, never below three letters.
    """
    w = word.lower()
    forms = {w}
    for suffix, replacements in (
        ("ies", ("y",)),
        ("ied", ("y",)),
        ("es", ("", "e")),
        ("s", ("",)),
        ("ed", ("", "e")),
        ("ing", ("", "e")),
    ):
        if w.endswith(suffix) and not w.endswith("ss"):
            stem = w[: -len(suffix)]
            forms.update(stem + end for end in replacements)
            forms.add(_DOUBLED.sub(r"\1", stem))
    return frozenset(form for form in forms if len(form) >= 3)


@dataclass(frozen=True)
class Relevance:
    """A relevance score with the terms behind it; no score when there is nothing to look for."""

    score: float | None
    reasoning: str


def rate_relevance(query: str, response: str) -> Relevance:
    """The share of the query's key terms the response takes up, scaled to 0..1.

    A query without key terms or a figure to ask for gets no score, with the reason.

    Raises:
        JudgeError: the query is blank, so there is nothing to rate an answer against (any
            answer would score 1.0).
    """
    if is_blank(query):
        raise JudgeError("the case has no query, so the response's relevance cannot be rated")
    asks_quantity = bool(_QUANTITY.search(query))
    terms: dict[str, str] = {}
    for key, written in content_tokens(query):
        lower = written.lower()
        if lower in ASKING_WORDS or (asks_quantity and lower in _QUANTITY_WORDS):
            continue
        terms.setdefault(key, written if written[:1].isupper() else lower)
    if not terms and not asks_quantity:
        return Relevance(
            None,
            "The query has no key terms to look for (only words every question has), so the "
            "offline judge cannot rate how well the response answers it.",
        )
    tokens = content_tokens(drop_answer_word(response))
    said = {key for key, _ in tokens}
    prefixes = {key[:NEAR_PREFIX] for key in said if len(key) >= NEAR_PREFIX}
    bases = {base for _, written in tokens for base in inflection_bases(written)}
    taken = [
        word
        for key, word in terms.items()
        if key in said
        or (len(key) >= NEAR_PREFIX and key[:NEAR_PREFIX] in prefixes)
        or not bases.isdisjoint(inflection_bases(word))
    ]
    missing = [word for word in terms.values() if word not in taken]
    total = len(terms)
    found = len(taken)
    notes = []
    if asks_quantity:
        total += 1
        if numbers(response) and (taken or not terms):
            found += 1
            notes.append("gives the figure asked for")
        else:
            notes.append("gives no figure, which the question asks for")
    if _YES_NO.match(query) and drop_answer_word(response) != response and taken:
        total += 1
        found += 1
        notes.append("answers yes or no")
    score = round(min(1.0, found / (SATURATION * total)), 3) if total else 1.0
    reasoning = f"The response takes up {len(taken)} of the query's {len(terms)} key terms"
    if taken:
        reasoning += f" ({', '.join(taken[:8])})"
    if missing:
        reasoning += f"; not taken up: {', '.join(missing[:8])}"
    if notes:
        reasoning += "; it " + " and ".join(notes)
    return Relevance(score, reasoning + ".")

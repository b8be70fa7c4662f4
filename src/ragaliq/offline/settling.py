"""When the offline judge is sure of a SUPPORTED verdict, so that the cascade settles it offline.

The cascade keeps the offline judge's SUPPORTED verdicts flagged ``offline_confident`` and asks
Claude about every other claim. A verdict is flagged only where what grounds it can be shown: the
claim's words in its sentence, in its order, with nothing there that negates, conditions, hedges
or attributes it, its wording's reach and relation verbs written there too.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ragaliq.offline.features import Analysis
from ragaliq.offline.grounding import RELATIONS, SCOPES, ungrounded
from ragaliq.offline.spans import governs
from ragaliq.text.words import STOPWORDS, content_tokens, content_words, tokens

__all__ = ["as_its_sentence", "in_order", "record_lacks", "settled", "worded_as_evidence"]

_WORD = re.compile(r"[A-Za-z]+")
_COPULAS = frozenset("is are was were be been has have had".split())


def _states(text: str) -> bool:
    """Whether a claim says something of a thing rather than only naming one.

    Whether it has a content word in lower case or a copula: "Mike's Gym in Oostzaan" and "The
    Art Gallery of Ontario" have neither, "Solano Café is in Cork" has one. A name's fact is the
    question's ("which gym?"), which the offline judge does not read: a claim that only names is
    never settled offline.
    """
    return any(w.islower() and (w not in STOPWORDS or w in _COPULAS) for w in _WORD.findall(text))


_PRONOUN_SUBJECT = re.compile(
    r"\W*+(?:it|its|they|their|this|these|that|those|he|she|his|her)\b", re.IGNORECASE
)


def settled(a: Analysis, *, copied: bool = False, verbatim: bool = False) -> bool:
    """Whether a SUPPORTED verdict is one the offline judge is sure of (``offline_confident``).

    The cascade keeps such a verdict and asks Claude about every other claim. Not sure of: a
    claim whose subject is a pronoun ("This is the router's address": its words are grounded,
    not what it stands for), a claim about a record with a figure stated only in another field
    than the one the claim rests on ("$20" where the record's "20" is a closing hour), any claim
    :func:`worded_as_evidence` is not sure of, and any claim of prose that :func:`as_its_sentence`
    is not sure of, unless it is ``copied`` from its sentence with nothing there governing it.
    A claim the context states almost word for word (``verbatim``) is held to its wording and
    its sentence alone.
    """
    if not verbatim and (_PRONOUN_SUBJECT.match(a.text) or not a.figures_near):
        return False
    if not worded_as_evidence(a):
        return False
    return a.record is not None or copied or as_its_sentence(a)


def as_its_sentence(a: Analysis) -> bool:
    """Whether the sentence a claim rests on says it in its order, and says nothing that governs it.

    The claim's content words that sentence holds are there in the claim's order ("B is cheaper
    than A" against "A is cheaper than B" has all its words and not their order; nor has "the
    river flows from the sea to the lake" against "flows from the lake to the sea"); and no word
    the claim leaves out of the sentence negates, conditions, hedges or attributes
    (:mod:`.spans`: "not", "if", "only", "may", "said", "according"), since the offline judge
    cannot tell what such a word governs.
    """
    best = a.best
    if best is None:
        return False
    shared = set(best.sequence)
    if not in_order([w for w in content_words(a.text) if w in shared], best.sequence):
        return False
    left_out = set(best.raw) - set(tokens(a.text))
    return not any(governs(word) for word in left_out)


def in_order(words: Sequence[str], sequence: Sequence[str]) -> bool:
    """Whether ``words`` occur in ``sequence`` in their order (a repeated word once more)."""
    seen = dict.fromkeys(words)  # a word the claim repeats is looked for once
    wanted = list(seen)
    k = 0
    for word in sequence:
        if k < len(wanted) and word == wanted[k]:
            k += 1
    return k == len(wanted)


def worded_as_evidence(a: Analysis) -> bool:
    """Whether the claim's evidence says all that its wording adds to its grounded words.

    Not sure of: a claim that only names something ("The Art Gallery of Ontario", whose fact is
    the question's: :func:`_states`), one with a word of reach or comparison its evidence does
    not write ("both are Canadian", "was born first": :data:`.grounding.SCOPES`), and one whose
    relation verb its evidence does not state ("operates in Lyon on Mondays" where the context
    says the van "is there" on Mondays: :data:`.grounding.RELATIONS`).
    """
    if a.evidence is None or not _states(a.text):
        return False
    written = {w.lower() for w in _WORD.findall(a.text)}
    if not (written & SCOPES) <= a.evidence.surface:
        return False
    relations = [(k, w) for k, w in content_tokens(a.text) if w.lower() in RELATIONS]
    return not ungrounded(relations, evidence=a.evidence, names=(), figures=(), free=frozenset())


def record_lacks(a: Analysis) -> bool:
    """Whether a claim about a record uses a word, a name or a figure the record lacks.

    Such a claim is never settled offline with confidence ("is a pizzeria" of a record that
    names no pizzeria): the cascade asks Claude. The words a claim about a record may use
    without the record stating them (its address, its rating, its reviewers) are not lacking.
    """
    return a.record is not None and bool(a.ungrounded or a.novel_names or a.novel_figures)

"""A response's claims as the offline judge reads them.

Its sentences, less courtesy ("Happy to help!") and remarks about the sources themselves.
"""

from __future__ import annotations

import re

from ragaliq.text.words import (
    NEGATIONS,
    STOPWORDS,
    content_words,
    split_sentences,
)


def extract_sentence_claims(response: str) -> list[str]:
    """Claims of the response that state something (as ``split_sentences`` splits it).

    Left out, as the Claude judge's extraction leaves them out: questions, headings, code, list
    intros (ending in ``:``), a bare "Yes." or "No.", sentences that only make conversation
    (``Sure!``, ``I hope this helps.``), and statements about the exchange itself rather than the
    world: declining to answer (``Unable to answer based on the given passages.``) and saying what
    the sources lack (``The passages do not mention the price.``).
    """
    claims = []
    for sentence in split_sentences(response):
        if sentence.endswith(("?", ":")):
            continue
        if not content_words(sentence) or _is_courtesy(sentence) or _is_about_the_sources(sentence):
            continue
        claims.append(sentence)
    return claims


_COURTESY_WORDS = frozenset(
    """
    sure certainly absolutely course okay ok great glad happy hope help helps helpful thank
    thanks welcome let know feel free ask question questions anything else assist assistance
    pleasure luck best regards cheers hello hi hey
    """.split()
)


_DECLINES = re.compile(
    r"\b(?:unable|not able|cannot|can\s?not|can't)\s+(?:to\s+)?answer\b"
    r"|^\W*(?:\w+,?\s+)?unable to\b"
    r"|(?-i:\bI)(?:'m|\s+am)?\s+(?:\w+\s+){0,3}?"
    r"(?:unable|not able|cannot|can\s?not|can't|do not have|don't have)\b",
    re.IGNORECASE,
)
"""Declining to answer: the assistant speaking of itself, not a claim about the world."""


_SOURCES_WORDS = re.compile(
    r"\b(?:passages?|context|sources?|documents?|articles?|texts?|information|"
    r"(?:provided|given|structured) (?:data|details))\b",
    re.IGNORECASE,
)


_LACKS = re.compile(
    r"\b(?:(?:do|does|did)(?:\s+not|n't)\s+(?:explicitly\s+|specifically\s+|directly\s+)?"
    r"(?:provide|mention|contain|include|specify|say|state|give|address|discuss|offer|indicate|"
    r"cover|describe|list|tell)|(?:no|not any)\s+(?:specific\s+|further\s+|additional\s+)?"
    r"(?:information|mention|details?|data)|(?:not|isn't|is not|are not|aren't)\s+(?:mentioned|"
    r"specified|provided|stated|given|included|addressed|discussed|available))\b"
    r"|\bnot\b[^.;]{0,40}\b(?:mentioned|specified|listed|stated|given)\s+in\b",
    re.IGNORECASE,
)


def _is_about_the_sources(sentence: str) -> bool:
    """Whether a sentence declines to answer or says what the sources do not hold."""
    return bool(_DECLINES.search(sentence)) or bool(
        _SOURCES_WORDS.search(sentence) and _LACKS.search(sentence)
    )


def _is_courtesy(sentence: str) -> bool:
    """Whether every content word of a sentence is small talk (``Sure!``, ``Hope this helps``)."""
    words = [w for w in re.findall(r"[a-z']+", sentence.lower()) if w not in STOPWORDS | NEGATIONS]
    return all(w in _COURTESY_WORDS or w.rstrip("s") in _COURTESY_WORDS for w in words)

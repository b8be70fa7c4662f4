"""Words, sentences, numbers, names and negation, as the offline judge and the gate read them.

Deliberately small and dependency-free: a light suffix stemmer, a number normaliser, and the
claim splitter of :mod:`ragaliq.text.sentences` (tables, lists, code, quotes and clauses).
"""

from __future__ import annotations

import re
from functools import lru_cache

from ragaliq.text.lexicon import CALENDAR, CALENDAR_HINTS, IRREGULAR_FORMS
from ragaliq.text.quantities import DURATION_PHRASES, UNITS, format_value, quantities
from ragaliq.text.quantities import NUMBER_WORDS as NUMBER_VALUES
from ragaliq.text.sentences import split_context, split_sentences

__all__ = [
    "CALENDAR",
    "CALENDAR_HINTS",
    "CONDITIONAL_NEGATIONS",
    "IRREGULAR_FORMS",
    "NEGATIONS",
    "NEGATION_CUES",
    "STOPWORDS",
    "UNIT_WORDS",
    "calendar_words",
    "content_tokens",
    "content_words",
    "drop_answer_word",
    "figures",
    "is_negated",
    "names",
    "negated_words",
    "negation_count",
    "negation_scopes",
    "numbers",
    "split_context",
    "split_sentences",
    "starts_sentence",
    "stem",
    "tokens",
    "word_key",
]

STOPWORDS = frozenset(
    """
    a an the and or but if then else of to in on at by for with from into onto about as is are was
    were be been being am do does did doing have has had having this that these those it its it's
    they them their theirs he him his she her hers we us our ours you your yours i me my mine
    which who whom whose what when where why how there here so such than too very can could will
    would shall should may might must also just only any all each every some many much more most
    other another same own both either neither nor not no yes up down out over under again further
    once while during before after above below between through because until against among per via
    said says say according based following follows include includes including one's s t
    """.split()
)

NEGATIONS = frozenset(
    "not no never none nobody nothing neither nor cannot can't won't don't doesn't didn't isn't "
    "aren't wasn't weren't hasn't haven't hadn't shouldn't wouldn't couldn't without".split()
)

CONDITIONAL_NEGATIONS = frozenset(("unless",))
"""Words that negate a condition ("locked unless a code is entered" is "locked if no code is
entered"): a negation to count, never a word to drop."""
NEGATION_CUES = NEGATIONS | CONDITIONAL_NEGATIONS
"""Every word that negates what follows it."""

NUMBER_WORDS = {
    **{word: format_value(value) for word, value in NUMBER_VALUES.items()},
    "first": "1", "second": "2", "third": "3", "fourth": "4", "fifth": "5", "half": "0.5",
    "once": "1", "twice": "2",
}  # fmt: skip
"""Number words and ordinals, each read as the number it stands for."""

_PHRASES = (
    *DURATION_PHRASES,
    (r"\b(?:on|by)\s+(?:their|his|her|its|my|your|our)\s+own\b", "themselves"),
    (
        r"\bfree of charge\b|\bat no (?:extra |additional )?(?:cost|charge)\b|\bfor free\b"
        r"|\b(?:at\s+)?no (?:extra |additional )?charge\b|\bcosts? nothing\b",
        "free",
    ),
    (r"\b(?:take|takes|took|taken|taking)\s+place\b", "happen"),
)
"""Phrases read as the words a context would more likely use ("half an hour" is 30 minutes)."""
_PHRASE = re.compile(
    "|".join(f"(?P<p{i}>{pattern})" for i, (pattern, _) in enumerate(_PHRASES)), re.I
)
PHRASE_HINTS = ("half", "quarter", "own", "free", "charge", "cost", "nothing", "place")
"""A text that one of :data:`_PHRASES` can match holds one of these (in any case): a quick test
before the long pattern."""
SYNONYMS = (
    "install installation fit mount",
    "themselves himself herself itself yourself yourselves ourselves myself oneself",
    "buy purchase",
    "price cost fee",
    "begin start commence",
    "finish complete",
    "large big",
    "small little tiny",
    "fast quick rapid speedy",
    "need require",
    "use utilize utilise",
    "get obtain receive",
    "show display",
    "choose select pick",
    "allow let permit",
    "help assist",
    "customer client",
    "people person individual",
    "majority most",
    "shut close",
    "ambience ambiance atmosphere vibe decor",
    "kid child children",
    "buy purchase acquire",
    "ask request",
    "book reserve",
    "repair fix mend",
    "remove detach",
    "ship deliver dispatch",
    "leave depart",
    "work operate function",
    "stop cease halt",
    "speak talk",
    "hire employ recruit",
)
"""Words that stand for one another (light synonymy): each group reads as its first word."""
_WORD = re.compile(r"[A-Za-z][A-Za-z'\u2019-]*|\d+(?:[.,]\d+)*")


@lru_cache(maxsize=8192)
def _read_phrases(text: str) -> str:
    """``text`` with its phrases read as the context would say them.

    Cached: the words, the figures and the negations of one sentence are each read from it.
    """
    folded = text.casefold()
    if not any(hint in folded for hint in PHRASE_HINTS) or not _PHRASE.search(text):
        return text

    def replace(match: re.Match[str]) -> str:
        return _PHRASES[int(next(k for k, v in match.groupdict().items() if v)[1:])][1]

    return _PHRASE.sub(replace, text)


_ANSWER_WORD = re.compile(
    r"^\s*(?:yes|no|yeah|yep|nope|correct|indeed)\s*(?:[,.!;:\u2013\u2014]+|\s-)\s*", re.I
)


def drop_answer_word(text: str) -> str:
    """The claim without a leading "Yes," or "No.".

    That word answers the question: it is neither a claim about the context nor a negation of
    what follows ("No, monthly plans are refundable within 14 days").
    """
    match = _ANSWER_WORD.match(text)
    if match is None or match.end() >= len(text):
        return text
    rest = text[match.end() :]
    return rest[:1].upper() + rest[1:]


@lru_cache(maxsize=65536)
def word_key(word: str) -> str:
    """How a word is compared: its stem, or the stem of its synonym group's first word.

    An irregular form is read as its base form first ("sold" as "sell").
    """
    key = stem(IRREGULAR_FORMS.get(word, word))
    return _SYNONYM_KEYS.get(key, key)


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """A light, fast suffix stemmer: enough to match ``refunds``, ``refunded`` and ``refund``."""
    w = word.lower().replace("\u2019", "'")
    if w.endswith("'s"):
        w = w[:-2]
    if len(w) <= 3:
        return w
    for suffix, replacement, min_len in (
        ("ational", "ate", 8),
        ("ization", "ize", 8),
        ("iveness", "ive", 8),
        ("fulness", "ful", 8),
        ("ousness", "ous", 8),
        ("ements", "", 8),
        ("ement", "", 7),
        ("ments", "", 7),
        ("ment", "", 6),
        ("ies", "y", 5),
        ("sses", "ss", 5),
        ("ingly", "", 7),
        ("edly", "", 6),
        ("ing", "", 6),
        ("ed", "", 5),
        ("ly", "", 5),
        ("es", "", 5),
        ("s", "", 4),
    ):
        if w.endswith(suffix) and len(w) >= min_len and not w.endswith("ss"):
            w = w[: len(w) - len(suffix)] + replacement
            break
    if len(w) > 4 and w.endswith("e"):
        w = w[:-1]
    return w


def content_words(text: str) -> list[str]:
    """Stemmed words that carry meaning (no stopwords), numbers normalised, in order."""
    return list(_content_tokens(text)[0])


def content_tokens(text: str) -> list[tuple[str, str]]:
    """Like :func:`content_words`, each paired with the word as written (for reasons)."""
    keys, written = _content_tokens(text)
    return list(zip(keys, written, strict=True))


@lru_cache(maxsize=16384)
def _content_tokens(text: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The keys of a text's content words, in order, and the same words as written.

    Two flat tuples of strings rather than a pair per word: what the cache keeps is then two
    objects a sentence for the cycle collector to pass over, not one a word.
    """
    keys: list[str] = []
    written: list[str] = []
    for token in _WORD.findall(_read_phrases(text)):
        if (key := _token_key(token)) is not None:
            keys.append(key)
            written.append(token)
    return tuple(keys), tuple(written)


@lru_cache(maxsize=65536)
def _token_key(token: str) -> str | None:
    """A word's key as written (None for a stopword or a negation), read once per spelling."""
    lower = token.lower()
    if lower in STOPWORDS or lower in NEGATIONS:
        return None
    if lower in NUMBER_WORDS:
        return NUMBER_WORDS[lower]
    if token[0].isdigit():
        return _normalise_number(token)
    if lower in _UNIT_KEYS and (len(lower) > 1 or token in "VW"):
        return _UNIT_KEYS[lower]
    if lower in CALENDAR and (lower == CALENDAR[lower] or token[:1].isupper()):
        return CALENDAR[lower]
    return word_key(lower)


def numbers(text: str) -> set[str]:
    """The numbers a text states, normalised (``1,000`` → ``1000``, ``3.50`` → ``3.5``).

    Figures in digits or in words (``24V``, ``sixty days``), but not a bare "one", which is more
    often a pronoun than a count.
    """
    return {q.key for q in quantities(text) if not (q.in_words and q.unit is None and q.value == 1)}


def figures(text: str) -> set[str]:
    """The numbers a text writes in digits, normalised: the ones a reader checks."""
    return {q.key for q in quantities(text) if not q.in_words}


def _normalise_number(token: str) -> str:
    value = token.strip("$+%").lower()
    for suffix in ("st", "nd", "rd", "th"):
        if value.endswith(suffix):
            value = value[: -len(suffix)]
    value = value.replace(",", "")
    whole, _, fraction = value.partition(".")
    whole = whole.lstrip("0") or "0"
    fraction = fraction.rstrip("0")
    return f"{whole}.{fraction}" if fraction else whole


@lru_cache(maxsize=16384)
def is_negated(text: str) -> bool:
    """Whether a sentence contains a negation word (or "unless", which negates a condition).

    Cached: a context sentence is compared with each claim it may support, several ways.
    """
    text = _read_phrases(text)
    return (
        any(token.lower().replace("\u2019", "'") in NEGATION_CUES for token in _WORD.findall(text))
        or "n't" in text.lower()
    )


def negation_count(text: str) -> int:
    """How many negations a sentence holds ("does not work without it": two)."""
    cleaned = _NOT_A_NEGATION.sub(" ", _read_phrases(text))
    return sum(
        1
        for token in _WORD.findall(cleaned)
        if token.lower().replace("\u2019", "'") in NEGATION_CUES
        or token.lower().replace("\u2019", "'").endswith("n't")
    )


_NOT_A_NEGATION = re.compile(
    r"\b(?:no doubt|no wonder|no matter|not only|not just|no longer|no later|no more than|"
    r"no less|not until|nothing but)\b",
    re.IGNORECASE,
)
_SKIP_AFTER_CUE = frozenset(
    "be been being a an the any longer always yet so very too really currently".split()
)


def negated_words(text: str) -> frozenset[str]:
    """Content words (stemmed) that a negation governs: the next word that carries meaning.

    ``Monthly plans are not refundable`` negates ``refundabl``; ``need not worry`` negates
    ``worry``. Phrases such as ``not only`` or ``no doubt`` negate nothing.
    """
    if not _NEGATION_HINT.search(text):
        return frozenset()
    cleaned = _NOT_A_NEGATION.sub(" ", _read_phrases(text))
    words = [w.lower().replace("\u2019", "'") for w in _WORD.findall(cleaned)]
    found: set[str] = set()
    for i, word in enumerate(words):
        if word not in NEGATION_CUES and not word.endswith("n't"):
            continue
        for follower in words[i + 1 : i + 4]:
            if follower in _SKIP_AFTER_CUE or follower in STOPWORDS:
                continue
            if follower not in NEGATION_CUES:
                found.add(word_key(follower))
            break
    return frozenset(found)


_NEGATION_HINT = re.compile(
    r"(?=[ncwu])"  # where a negation can start: a quick test at every position
    r"(?:\b(?:not?|never|none|nobody|nothing|neither|nor|cannot|without|unless)\b|n['\u2019]t\b)",
    re.IGNORECASE,
)
"""A quick test for a text with no negation at all (most sentences), before reading it word
by word."""
NEGATION_SCOPE = 3
"""How many content words after a negation it may govern ("does not need an account")."""
_CLAUSE_END = re.compile(r"[,;:.!?]")


@lru_cache(maxsize=16384)
def negation_scopes(text: str) -> tuple[tuple[str, ...], ...]:
    """For each negation of a text, the word keys of the content words it may govern, in order.

    The next :data:`NEGATION_SCOPE` content words in its clause: "does not need an account"
    gives ``("need", "account")``. Phrases such as ``not only`` negate nothing.
    """
    if not _NEGATION_HINT.search(text):
        return ()
    cleaned = _NOT_A_NEGATION.sub(" ", _read_phrases(text))
    scopes = []
    for part in _CLAUSE_END.split(cleaned):
        words = [w.lower().replace("\u2019", "'") for w in _WORD.findall(part)]
        for i, word in enumerate(words):
            if word not in NEGATION_CUES and not word.endswith("n't"):
                continue
            following = [
                word_key(w)
                for w in words[i + 1 :]
                if w not in STOPWORDS and w not in NEGATION_CUES and not w.endswith("n't")
            ][:NEGATION_SCOPE]
            if following:
                scopes.append(tuple(following))
    return tuple(scopes)


def tokens(text: str) -> list[str]:
    """Every word and number of a text, lower-cased, stopwords kept: for verbatim matching."""
    if text.isascii():  # lower-cased at once: the same words, as no letter changes its length
        return _WORD.findall(text.lower())
    return [token.lower().replace("\u2019", "'") for token in _WORD.findall(text)]


_NAME_RUN = re.compile(
    r"(?<![\w'\u2019-])[A-Z][\w'\u2019-]*"
    r"(?:\s++(?:(?:of|de|la|du|von|van|the|and)\s++|&\s*+)?[A-Z][\w'\u2019-]*)*"
)
_OPENERS = '.!?:;"\u201c('
_DASHES = "-\u2013\u2014*\u2022"


def starts_sentence(text: str, index: int) -> bool:
    """Whether the word at ``index`` starts a sentence (or a quote, an aside or a list item).

    Only the spaces and the one character before the word are read, so asking about every word
    of a long text takes time linear in its length. A dash counts with a space after it ("Wine -
    Drinking a glass"), not inside a word ("US-led").
    """
    i = index
    while i > 0 and text[i - 1].isspace():
        i -= 1
    if i == 0 or text[i - 1] in _OPENERS:
        return True
    return i < index and text[i - 1] in _DASHES


_COMMON_CAPITALISED = frozenset(
    """
    god government fahrenheit celsius english autumn spring summer winter diy tv ok am pm mr mrs
    ms dr st
    """.split()
)
_CALENDAR_WORD = re.compile(
    r"(?<![\w'])(" + "|".join(sorted(CALENDAR, key=len, reverse=True)) + r")(?:(?<=day)s)?\b\.?",
    re.I,
)
"""A weekday or month, or a weekday in the plural ("closed on Mondays")."""
_CALENDAR_BEFORE_DASH = re.compile(
    r"(?<![\w'])(?:" + "|".join(sorted(CALENDAR, key=len, reverse=True)) + r")\.?-$", re.I
)
"""A weekday or month just before a hyphen: the start of a span such as ``Mon-Fri``."""
MAX_CALENDAR_CHARS = 11


def calendar_words(text: str) -> list[tuple[str, str]]:
    """The weekdays and months a text names (``Jan``, ``Mon.``): each full name, and as written.

    An abbreviation counts when capitalised (``Sat``, not "sat"); "May" not at the start of a
    sentence ("May I ..." asks).
    """
    lower = text.lower()
    if not any(hint in lower for hint in CALENDAR_HINTS):
        return []
    found = []
    for match in _CALENDAR_WORD.finditer(text):
        if not _after_calendar_dash(text, match.start()):
            continue  # "US-led", "non-May": a piece of a word, not a date
        word = match.group(1)
        full = CALENDAR[word.lower()]
        if word.lower() != full and not word[:1].isupper():
            continue
        if full == "may" and (not word[:1].isupper() or starts_sentence(text, match.start())):
            continue
        found.append((full, word))
    return found


def _after_calendar_dash(text: str, start: int) -> bool:
    """Whether a weekday or month at ``start`` stands alone or ends a span (``Mon-Fri``)."""
    if start == 0 or text[start - 1] != "-":
        return True
    return bool(_CALENDAR_BEFORE_DASH.search(text[max(0, start - MAX_CALENDAR_CHARS) : start]))


def names(text: str) -> list[str]:
    """Words of capitalised runs that are probably names (``Rand Paul``, ``South China Sea``).

    The first word of a sentence is never read as a name, whatever follows: it is capitalised
    because it starts the sentence, and is as often a verb ("Ship the blender back", "Click
    Settings") as a name. Weekdays and months are dates, not names: their abbreviations
    (``Sept``, ``Thurs``) and spans (``Mon-Fri``) too. Stopwords inside names are dropped, and a
    name with hyphens or digits counts by the letter runs of its capitalised pieces
    (``Vega-Orion``: ``vega``, ``orion``; ``COVID-related``: ``covid``).
    """
    found: list[str] = []
    for match in _NAME_RUN.finditer(text):
        parts = [p for p in re.split(r"\s+", match.group(0)) if p[:1].isupper()]
        if starts_sentence(text, match.start()):
            parts = parts[1:]
        for part in parts:
            lower = part.lower().replace("\u2019", "'")
            if lower.endswith("'s"):
                lower = lower[:-2]
            if lower in STOPWORDS or lower in NUMBER_WORDS or (part.isupper() and len(part) > 5):
                continue
            if lower.rstrip(".") in CALENDAR:
                continue
            pieces = [
                piece.lower()
                for k, hyphened in enumerate(part.split("-"))
                if k == 0 or hyphened[:1].isupper()  # "COVID-related", "Italian-style"
                for piece in re.findall(r"[A-Za-z]{2,}", hyphened)
            ]
            if len(pieces) > 1 and all(piece in CALENDAR for piece in pieces):
                continue  # a span of days or months: "Mon-Fri", "Jan-Mar"
            for piece in pieces:
                if piece not in STOPWORDS and piece not in _COMMON_CAPITALISED:
                    found.append(piece)
    return found


_SYNONYM_KEYS = {
    stem(word): stem(group.split()[0]) for group in SYNONYMS for word in group.split()[1:]
}
_UNIT_KEYS = {
    spelling: word_key(unit.name.split()[0].lower())
    for spelling, unit in UNITS.items()
    if spelling[0].isalpha()
}
"""Unit words, each read as its unit (``V``, ``volt`` and ``volts`` as ``volt``)."""


def _unit_words() -> dict[str, frozenset[str]]:
    found: dict[str, set[str]] = {}
    for spelling, key in _UNIT_KEYS.items():
        found.setdefault(UNITS[spelling].dimension, set()).add(key)
    return {dimension: frozenset(keys) for dimension, keys in found.items()}


UNIT_WORDS = _unit_words()
"""The word keys of units (``volt``, ``°f``), by what they measure (``power``, ``temperature``)."""

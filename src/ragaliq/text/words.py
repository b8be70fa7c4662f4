"""Words, sentences, numbers, names and negation, as the offline judge and the gate read them.

Deliberately small and dependency-free: a regex sentence splitter that knows abbreviations,
decimals and bullet lists, a light suffix stemmer, and a number normaliser.
"""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = [
    "NEGATIONS",
    "STOPWORDS",
    "content_tokens",
    "content_words",
    "figures",
    "is_negated",
    "names",
    "negated_words",
    "numbers",
    "split_sentences",
    "starts_sentence",
    "stem",
    "tokens",
]

ABBREVIATIONS = frozenset(
    """
    mr mrs ms dr prof sr jr st mt vs etc e.g i.e eg ie inc ltd co corp no nos fig figs approx
    dept est jan feb mar apr jun jul aug sep sept oct nov dec u.s u.k u.n a.m p.m ph.d vol vols
    cf al op ed min max avg gen col lt sgt capt rev hon gov sen rep ave blvd rd
    """.split()
)

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

NUMBER_WORDS = {
    "zero": "0", "one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6",
    "seven": "7", "eight": "8", "nine": "9", "ten": "10", "eleven": "11", "twelve": "12",
    "thirteen": "13", "fourteen": "14", "fifteen": "15", "sixteen": "16", "seventeen": "17",
    "eighteen": "18", "nineteen": "19", "twenty": "20", "thirty": "30", "forty": "40",
    "fifty": "50", "sixty": "60", "seventy": "70", "eighty": "80", "ninety": "90",
    "hundred": "100", "thousand": "1000", "million": "1000000", "billion": "1000000000",
    "first": "1", "second": "2", "third": "3", "fourth": "4", "fifth": "5", "half": "0.5",
    "once": "1", "twice": "2", "dozen": "12",
}  # fmt: skip

_BULLET = re.compile(r"^\s*(?:[-*\u2022\u2023\u25e6\u2043]|\d{1,3}[.)]|[a-z]\))\s+")
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"'\u201d\u2019)\]]*\s+|(?<=:)\s+(?=[A-Z])")
_WORD = re.compile(r"[A-Za-z][A-Za-z'\u2019-]*|\d+(?:[.,]\d+)*")
_NUMBER = re.compile(r"(?<![\w.])[-+]?\$?\d+(?:,\d{3})*(?:\.\d+)?(?:st|nd|rd|th)?%?(?![\w])")


def split_sentences(text: str) -> list[str]:
    """Split text into sentences; each bullet item and each paragraph line stands alone."""
    sentences: list[str] = []
    paragraph: list[str] = []

    def flush() -> None:
        if paragraph:
            sentences.extend(_split_paragraph(" ".join(paragraph)))
            paragraph.clear()

    for raw_line in text.splitlines():
        line = raw_line.strip()
        if not line:
            flush()
            continue
        bullet = _BULLET.match(line)
        if bullet or line.startswith("#"):
            flush()
            item = line[bullet.end() :] if bullet else line.lstrip("#").strip()
            sentences.extend(_split_paragraph(item))
        else:
            paragraph.append(line)
    flush()
    return [s for s in (s.strip() for s in sentences) if s]


def _split_paragraph(text: str) -> list[str]:
    parts: list[str] = []
    start = 0
    for match in _SENTENCE_END.finditer(text):
        candidate = text[start : match.start()].rstrip()
        if _ends_with_abbreviation(candidate):
            continue
        following = text[match.end() : match.end() + 1]
        if following and following.islower():
            continue  # "approx. five" or "e.g. the": no new sentence starts lower case
        parts.append(candidate)
        start = match.end()
    parts.append(text[start:].strip())
    return [p for p in parts if p]


def _ends_with_abbreviation(text: str) -> bool:
    last = text.rsplit(maxsplit=1)[-1] if text.strip() else ""
    token = last.lower().rstrip(".!?\"')").lstrip("(\"'")
    if not token:
        return False
    if token in ABBREVIATIONS:
        return True
    # single initials such as "J." in "J. R. R. Tolkien"
    return len(token) == 1 and token.isalpha() and last.endswith(".")


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
    out: list[str] = []
    for token in _WORD.findall(text):
        lower = token.lower()
        if lower in STOPWORDS or lower in NEGATIONS:
            continue
        if lower in NUMBER_WORDS:
            out.append(NUMBER_WORDS[lower])
        elif token[0].isdigit():
            out.append(_normalise_number(token))
        else:
            out.append(stem(lower))
    return out


def content_tokens(text: str) -> list[tuple[str, str]]:
    """Like :func:`content_words`, each paired with the word as written (for reasons)."""
    out: list[tuple[str, str]] = []
    for token in _WORD.findall(text):
        lower = token.lower()
        if lower in STOPWORDS or lower in NEGATIONS:
            continue
        if lower in NUMBER_WORDS:
            out.append((NUMBER_WORDS[lower], token))
        elif token[0].isdigit():
            out.append((_normalise_number(token), token))
        else:
            out.append((stem(lower), token))
    return out


def numbers(text: str) -> set[str]:
    """The numbers a text states, normalised (``1,000`` → ``1000``, ``3.50`` → ``3.5``)."""
    found = {_normalise_number(m.group(0)) for m in _NUMBER.finditer(text)}
    for token in _WORD.findall(text):
        lower = token.lower()
        if lower in NUMBER_WORDS and lower not in {"one", "first", "once", "second", "half"}:
            found.add(NUMBER_WORDS[lower])
    return found


def figures(text: str) -> set[str]:
    """The numbers a text writes in digits, normalised: the ones a reader checks."""
    return {_normalise_number(m.group(0)) for m in _NUMBER.finditer(text)}


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


def is_negated(text: str) -> bool:
    """Whether a sentence contains a negation word."""
    return (
        any(token.lower().replace("\u2019", "'") in NEGATIONS for token in _WORD.findall(text))
        or "n't" in text.lower()
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
    cleaned = _NOT_A_NEGATION.sub(" ", text)
    words = [w.lower().replace("\u2019", "'") for w in _WORD.findall(cleaned)]
    found: set[str] = set()
    for i, word in enumerate(words):
        if word not in NEGATIONS and not word.endswith("n't"):
            continue
        for follower in words[i + 1 : i + 4]:
            if follower in _SKIP_AFTER_CUE or follower in STOPWORDS:
                continue
            if follower not in NEGATIONS:
                found.add(stem(follower))
            break
    return frozenset(found)


def tokens(text: str) -> list[str]:
    """Every word and number of a text, lower-cased, stopwords kept: for verbatim matching."""
    return [token.lower().replace("\u2019", "'") for token in _WORD.findall(text)]


_NAME_RUN = re.compile(
    r"(?<![\w'\u2019-])[A-Z][\w'\u2019-]*(?:\s+(?:of|de|la|du|von|van|the|and|&)?\s*"
    r"[A-Z][\w'\u2019-]*)*"
)
_SENTENCE_START = re.compile(r"(?:^|[.!?:;\"\u201c(]\s*)$")


def starts_sentence(text: str, index: int) -> bool:
    """Whether the word at ``index`` starts a sentence (or a quote or an aside)."""
    return bool(_SENTENCE_START.search(text[:index]))


_COMMON_CAPITALISED = frozenset(
    """
    god government fahrenheit celsius english autumn spring summer winter diy tv ok am pm mr mrs
    ms dr st
    """.split()
)


def names(text: str) -> list[str]:
    """Words of capitalised runs that are probably names (``Rand Paul``, ``South China Sea``).

    A capitalised word that only starts the sentence (``However``, ``The``) is not a name; a
    run of capitalised words is one even at the start. Stopwords inside names are dropped, and a
    name with hyphens or digits counts by its letter runs (``US-led``: ``us``, ``led``).
    """
    found: list[str] = []
    for match in _NAME_RUN.finditer(text):
        parts = [p for p in re.split(r"\s+", match.group(0)) if p[:1].isupper()]
        at_start = starts_sentence(text, match.start())
        if at_start and len(parts) == 1:
            continue
        for part in parts:
            lower = part.lower().replace("\u2019", "'")
            if lower.endswith("'s"):
                lower = lower[:-2]
            if lower in STOPWORDS or lower in NUMBER_WORDS or (part.isupper() and len(part) > 5):
                continue
            for piece in re.findall(r"[a-z]{2,}", lower):
                if piece not in STOPWORDS and piece not in _COMMON_CAPITALISED:
                    found.append(piece)
    return found

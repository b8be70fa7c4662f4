"""Claims as a person would write them: sentences, table rows and list items, not code.

A response is read as Markdown-ish text, block by block:

- a fenced (```` ``` ````, ``~~~``) or indented code block is not a claim;
- a table is one claim per row, each cell with its column's header (``Plan: Pro; Price: $20``);
- a heading (``# Pricing``, a line that is only bold text) gives context and is not a claim;
- each list item stands alone, and a line break ends a claim when the line has no final
  punctuation (unless the next line starts in lower case, as a hard-wrapped sentence does);
- within a paragraph, sentences end at ``.``, ``!`` or ``?`` (not after an abbreviation, an
  initial or a decimal point; also with no space before the next sentence's capital, where
  passages were joined without one), and a sentence that ends inside a quote keeps its closing
  quote;
- a sentence joining independent statements with ``;`` or with ``, and`` / ``, but`` (a subject
  and a verb on each side) is split, so that a wrong figure is located in its own clause;
- a part that adds to a statement stands as a claim of its own (:func:`split_added`): a relative
  clause (``, which ...``, ``, who ...``, ``, where ...``), an inclusion or an addition (``,
  including ...``, ``, such as ...``, ``, plus ...``, ``, and also ...``, ``... as well as ...``,
  ``... along with ...``), a participle that adds a consequence (``, making ...``, ``, giving
  ...``) and an apposition after a name that ends a sentence (``..., a maker of bikes.``). Such a
  claim starts with :data:`CONTINUATION` ("… including a bag."): it goes on from the claim
  before it.

The context of a case is read the same way, except that code and headings are kept as text and
sentences are not split into clauses (:func:`split_context`).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator

from ragaliq.text.tables import is_table_start, table_rows

__all__ = [
    "ABBREVIATIONS",
    "CONTINUATION",
    "split_added",
    "split_clauses",
    "split_context",
    "split_sentences",
]

ABBREVIATIONS = frozenset(
    """
    mr mrs ms dr prof sr jr st mt vs etc e.g i.e eg ie inc ltd co corp nos fig figs approx
    dept est jan feb mar apr jun jul aug sep sept oct nov dec mon tue tues wed thu thur thurs fri
    sat sun u.s u.k u.n e.u a.m p.m ph.d vol vols cf al op ed min max avg gen col lt sgt capt rev
    hon gov sen rep ave blvd rd
    """.split()
)
"""Words that end in a full stop without ending a sentence. ``No.`` is one only before a number
(``No. 5``): ``No. The app is free.`` is an answer and a sentence."""

_BULLET = re.compile(r"^\s*(?:[-*+\u2022\u2023\u25e6\u2043]|\d{1,3}[.)]|[a-z]\))\s+")
_FENCE = re.compile(r"^\s*(```|~~~)")
_HEADING = re.compile(r"^\s{0,3}#{1,6}(?:\s+|$)")
_EMPHASIS_LINE = re.compile(r"^\s*+(\*\*|__)(?P<text>[^*_]+)\1\s*+:?\s*+$")
_FINAL = re.compile(r"[.!?:;][\"'\u201d\u2019)\]*_]*\s*$")
_CLOSERS = "\"'\u201d\u2019)]"
_SENTENCE_END = re.compile(
    r"(?<=[.!?])(?P<close>[\"'\u201d\u2019)\]]*)\s+|(?<=:)\s+(?=[A-Z])"
    r"|(?<=[a-z0-9]{2}[.!?])(?=[A-Z][a-z])|(?<=[)\"\u201d][.!?])(?=[A-Z][a-z])"
)
"""Where a sentence ends: at a stop and the space after it, at a colon before a capital, and at
a stop glued to the next sentence ("... in Vancouver.Kings of Leon is ...", "... in 1987.Hot Rod
is ...", where passages were joined without a space; not after an initial: "J.Smith")."""
_NUMBER_NEXT = re.compile(r"\s*+[#\d]")
_NEXT_WORD = re.compile(
    r"(?P<word>[A-Z][A-Za-z'\u2019-]*)(?P<dot>\.)?(?:\s++(?P<then>[A-Z][a-z]))?"
)
"""The word after an abbreviation: whether it ends in a full stop, and whether a capitalised
word follows it (``U.S. Postal Service``)."""
NEVER_FINAL = frozenset("vs e.g i.e eg ie cf al nos fig figs vol vols".split())
"""Abbreviations that never end a sentence: ``e.g.``, ``vs.``, ``fig.``."""
BEFORE_NAMES = frozenset(
    "mr mrs ms dr prof sr jr st mt gen col lt sgt capt rev hon gov sen rep".split()
)
"""Titles and the like, written before or beside a name (``Dr. Okafor``, ``Mt. Kenya``, ``St.
Ives``): they end a sentence only before a word that never starts a name (``... on Elm St. The
shop ...``), and so does a single initial (``C. S. Lewis``, but ``plan B. It ...``)."""
FUNCTION_STARTERS = frozenset(
    """
    the a an it its this that these those there they we you he she i if in on at for our your
    their his her my when while after before as all each every some most many yes please but
    and so then also however with what how why where who
    """.split()
)
"""Capitalised words that start a sentence and never a name."""
NAME_CONTINUATIONS = frozenset(
    """
    eastern pacific central mountain atlantic alaska hawaii standard daylight local et est edt
    pt pst pdt ct cst cdt mt mst mdt gmt utc bst cet cest ist aest
    monday tuesday wednesday thursday friday saturday sunday
    army navy air marine marines coast guard forces military department state senate
    house congress government court supreme district attorney embassy consulate open census
    bureau treasury postal customs border federal national olympic president secretary
    ambassador dollar dollars citizen citizens agency office space mint
    """.split()
)
"""Capitalised words that carry a name on past an abbreviation rather than start a sentence:
time zones and days after "a.m." (``9 a.m. Eastern``, ``5 p.m. Friday``), and the words that
name an institution after a place (``U.S. Army``, ``U.K. Treasury``)."""


def split_sentences(text: str) -> list[str]:
    """The claims a text makes, in order.

    Sentences (split at independent clauses), table rows with their headers and list items; code
    blocks and headings are left out.
    """
    return [part for block in _blocks(text, claims=True) for part in block]


def split_context(text: str) -> list[str]:
    """The sentences of a context chunk.

    Like :func:`split_sentences`, but code lines and headings are kept as text and sentences stay
    whole.
    """
    return [part for block in _blocks(text, claims=False) for part in block]


def _blocks(text: str, *, claims: bool) -> Iterator[list[str]]:
    lines = text.splitlines()
    paragraph: list[str] = []

    def flush() -> list[str]:
        joined = " ".join(paragraph)
        paragraph.clear()
        return _split_paragraph(joined, clauses=claims) if joined else []

    i = 0
    previous_blank = True
    while i < len(lines):
        raw = lines[i]
        line = raw.strip()
        if _FENCE.match(raw):
            yield flush()
            i += 1
            code: list[str] = []
            while i < len(lines) and not _FENCE.match(lines[i]):
                code.append(lines[i].strip())
                i += 1
            i += 1  # the closing fence
            if not claims:
                yield [c for c in code if c]
            previous_blank = True
            continue
        if not line:
            yield flush()
            previous_blank = True
            i += 1
            continue
        if claims and previous_blank and not paragraph and _is_indented_code(raw):
            code = []
            while i < len(lines) and (not lines[i].strip() or _is_indented_code(lines[i])):
                code.append(lines[i].strip())
                i += 1
            previous_blank = True
            continue
        previous_blank = False
        if is_table_start(lines, i):
            yield flush()
            rows, i = table_rows(lines, i)
            yield rows
            continue
        bullet = _BULLET.match(raw)
        heading = _heading(line)
        if heading is not None:
            yield flush()
            if not claims:
                yield [heading]
            i += 1
            continue
        if bullet:
            yield flush()
            paragraph.append(raw[bullet.end() :].strip())
        else:
            paragraph.append(line)
        following = lines[i + 1].strip() if i + 1 < len(lines) else ""
        if not _FINAL.search(line) and not following[:1].islower():
            yield flush()  # a line without final punctuation is a claim of its own
        i += 1
    yield flush()


def _is_indented_code(raw: str) -> bool:
    return (raw.startswith(("    ", "\t"))) and not _BULLET.match(raw)


def _heading(line: str) -> str | None:
    """The text of a heading line (``# Pricing``, ``**Pricing**``), or None."""
    if _HEADING.match(line):
        return _HEADING.sub("", line).strip().rstrip("#").strip() or None
    emphasis = _EMPHASIS_LINE.match(line)
    if emphasis and not re.search(r"[.!?]\s*$", emphasis["text"]):
        return emphasis["text"].strip()
    return None


def _split_paragraph(text: str, *, clauses: bool) -> list[str]:
    """The sentences of one paragraph (and their clauses), in time linear in its length."""
    parts: list[str] = []
    start = 0
    quoted = _Spans(_quoted_spans(text))
    for match in _SENTENCE_END.finditer(text):
        end = match.end("close") if match.group("close") is not None else match.start()
        if quoted.holds(end - 1 if match.group("close") else match.start()):
            continue  # a sentence inside a quote does not end the quoting sentence
        if _ends_with_abbreviation(text, start, end, match.end()):
            continue
        following = text[match.end() : match.end() + 1]
        if following and following.islower():
            continue  # "approx. five" or "e.g. the": no new sentence starts lower case
        parts.append(text[start:end].rstrip())
        start = match.end()
    parts.append(text[start:].strip())
    sentences = [p for p in parts if p]
    if not clauses:
        return sentences
    return [
        part
        for sentence in sentences
        for clause in split_clauses(sentence)
        for part in split_added(clause)
    ]


def _quoted_spans(text: str) -> list[tuple[int, int]]:
    """Where the text is inside double quotes (straight or curly), when they balance."""
    spans: list[tuple[int, int]] = []
    straight = [m.start() for m in re.finditer('"', text)]
    if len(straight) % 2 == 0:
        spans += [(straight[k], straight[k + 1]) for k in range(0, len(straight), 2)]
    opening: int | None = None
    for m in re.finditer("[\u201c\u201d]", text):
        if m.group(0) == "\u201c":
            opening = m.start()
        elif opening is not None:
            spans.append((opening, m.start()))
            opening = None
    return spans


class _Spans:
    """Open intervals, merged where they overlap: whether one holds a position, in log time."""

    def __init__(self, spans: list[tuple[int, int]]) -> None:
        merged: list[list[int]] = []
        for start, end in sorted(spans):
            if merged and start < merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], end)
            else:
                merged.append([start, end])
        self.starts = [start for start, _ in merged]
        self.ends = [end for _, end in merged]

    def holds(self, position: int) -> bool:
        """Whether ``start < position < end`` for some interval."""
        k = bisect.bisect_left(self.starts, position) - 1
        return k >= 0 and position < self.ends[k]


def _last_word(text: str, start: int, end: int) -> str:
    """The last whitespace-delimited word of ``text[start:end]`` (which ends in no space)."""
    i = end
    while i > start and not text[i - 1].isspace():
        i -= 1
    return text[i:end]


def _ends_with_abbreviation(text: str, start: int, end: int, rest: int) -> bool:
    """Whether the full stop at ``text[end - 1]`` ends an abbreviation rather than a sentence.

    After most abbreviations (``a.m.``, ``Inc.``, ``U.S.``, ``Sept.``) a capitalised word starts a
    new sentence, unless it carries a name on (:data:`NAME_CONTINUATIONS`: ``a.m. Eastern``,
    ``U.S. Army``), is itself an abbreviation (``Co. Ltd.``) or is followed by another capitalised
    word (``U.S. Postal Service``). A title or an initial (:data:`BEFORE_NAMES`) ends a sentence
    only before a word that never starts a name; ``e.g.`` and the like (:data:`NEVER_FINAL`)
    never do.
    """
    last = _last_word(text, start, end)
    token = last.lower().rstrip(".!?\"')").lstrip("(\"'")
    if not token:
        return False
    if token == "no":
        return bool(_NUMBER_NEXT.match(text, rest)) and last.endswith(".")
    initial = len(token) == 1 and token.isalpha()
    if not last.endswith(".") or not (initial or token in ABBREVIATIONS):
        return False
    if token in NEVER_FINAL:
        return True
    following = _NEXT_WORD.match(text, rest)
    if following is None:
        return True
    word = following["word"].lower()
    if initial or token in BEFORE_NAMES:
        return word not in FUNCTION_STARTERS
    return (
        word in NAME_CONTINUATIONS
        or (following["dot"] is not None and word in ABBREVIATIONS)
        or (following["then"] is not None and word not in FUNCTION_STARTERS)
    )


# Clauses -------------------------------------------------------------------------------------

_AUXILIARIES = frozenset(
    """
    is are was were be been am has have had do does did will would can could may might must
    shall should isn't aren't wasn't weren't hasn't haven't hadn't doesn't don't didn't won't
    wouldn't can't cannot couldn't shouldn't mustn't it's that's there's they're we're you're
    he's she's i'm they've we've i've
    """.split()
)
_VERBS = frozenset(
    """
    offer offers offered include includes included cost costs take takes took support supports
    supported provide provides provided allow allows allowed require requires required work works
    worked run runs ran open opens opened close closes closed make makes made give gives gave get
    gets got need needs needed use uses used come comes came go goes went say says said show shows
    showed contain contains contained accept accepts accepted become becomes became remain
    remains remained start starts started end ends ended charge charges charged last lasts lasted
    keep keeps kept let lets add adds added lose loses lost win wins won pay pays paid sell sells
    sold buy buys bought hold holds held lead leads led leave leaves left find finds found know
    knows knew see sees saw think thinks thought feel feels felt tell tells told ask asks asked
    try tries tried call calls called move moves moved live lives lived believe believes believed
    bring brings brought happen happens happened write writes wrote sit sits sat stand stands
    stood meet meets met set sets help helps helped play plays played grow grows grew rise rises
    rose fall falls fell stay stays stayed serve serves served reach reaches reached expire
    expires expired apply applies applied sync syncs synced store stores stored ship ships
    shipped join joins joined want wants wanted like likes liked love loves loved appear appears
    appeared seem seems seemed receive receives received report reports reported claim claims
    claimed announce announces announced plan plans planned launch launches launched die dies died
    lack lacks lacked feature features featured boast boasts boasted earn earns earned score
    scores scored vary varies varied range ranges ranged refund refunds refunded
    """.split()
)
_SUBJECT_START = frozenset(
    """
    i you he she it we they this that these those there the a an its their our his her my your
    each every all most some many no both either neither one another such
    """.split()
)
_NOT_SUBJECT = frozenset(
    """
    then also not to in on at by for with from into of as so than if when while because
    """.split()
)
_TOKEN = re.compile(r"[A-Za-z][A-Za-z'\u2019-]*|\d[\d.,]*+\w*|\$\d[\d.,]*")
_JOINERS = re.compile(r"(?<!\s)\s*+;\s++|,\s++(?=(?:and|but|yet|so)\s)")
"""Where clauses may join: a semicolon (with the spaces around it) or a comma before a joiner.
The spaces are taken whole and never given back, and a run of spaces is entered only at its
start, so a run of any length is read once."""
MIN_CLAUSE_WORDS = 3


def split_clauses(sentence: str) -> list[str]:
    """A sentence split into the independent clauses it joins.

    It splits where ``;`` or ``, and`` / ``, but`` / ``, yet`` / ``, so`` joins clauses that each
    have a subject and a verb of their own (``Refunds take 14 days, and the Business plan costs
    $12.``); lists (``Paris, London, and Rome``) and shared subjects (``It syncs files, and keeps
    versions``) stay whole. The sentence is read once, so the time is linear in its length.
    """
    words = _Words(sentence)
    pieces: list[str] = []
    start = 0
    for match in _JOINERS.finditer(sentence):
        first = words.index_at(start)
        begin = start
        if pieces and first < len(words.lower) and words.lower[first] in _JOINER_WORDS:
            first += 1  # "and the plan costs $12": the clause starts after its joiner
            begin = words.starts[first] if first < len(words.starts) else match.start()
        stop = words.index_at(match.start())
        after = words.index_at(match.end()) + (0 if ";" in match.group(0) else 1)
        if not words.is_clause(first, stop, first=not pieces) or not words.is_clause(
            after, len(words.lower), first=False
        ):
            continue
        pieces.append(sentence[begin : match.start()].strip())
        start = match.end()
    if not pieces:
        return [sentence]
    pieces.append(sentence[start:].strip())
    out = []
    for k, piece in enumerate(pieces):
        piece = piece.rstrip(",;").strip()
        if k < len(pieces) - 1 and not _FINAL.search(piece):
            piece += "."
        if k > 0:
            piece = _capitalise(piece)
        out.append(piece)
    return out


_JOINER_WORDS = frozenset(("and", "but", "yet", "so"))


class _Words:
    """A sentence's words with where each starts, and where the next verb is after each."""

    def __init__(self, sentence: str) -> None:
        found = list(_TOKEN.finditer(sentence))
        self.starts = [m.start() for m in found]
        self.upper = [m.group(0)[:1].isupper() for m in found]
        self.lower = [m.group(0).lower().replace("\u2019", "'") for m in found]
        self.next_verb = [len(found)] * (len(found) + 1)
        for k in range(len(found) - 1, -1, -1):
            self.next_verb[k] = k if _is_verb(self.lower[k]) else self.next_verb[k + 1]

    def index_at(self, position: int) -> int:
        """The first word that starts at or after ``position``."""
        return bisect.bisect_left(self.starts, position)

    def is_clause(self, i: int, j: int, *, first: bool) -> bool:
        """Whether words ``i`` to ``j`` read as a clause: a subject, a verb, some substance.

        After a joiner the subject must say so: a pronoun, a determiner (``the``, ``its``,
        ``all``) or a name; a bare noun may be the next item of a list (``cheese, and wine costs
        extra``).
        """
        if j - i < MIN_CLAUSE_WORDS:
            return False
        if self.lower[i] in _AUXILIARIES:
            return False  # a verb with no subject before it ("and is available on Team plans")
        verb = self.next_verb[i + 1]
        if verb >= j:
            return False  # no verb after a subject ("and keeps versions", "and Rome")
        if first:
            return True
        if self.lower[i] in _NOT_SUBJECT or verb - i > 4:
            return False
        return self.lower[i] in _SUBJECT_START or self.upper[i]


def _capitalise(piece: str) -> str:
    for word in ("and ", "but ", "yet ", "so "):
        if piece.lower().startswith(word):
            piece = piece[len(word) :]
    return piece[:1].upper() + piece[1:]


def _is_verb(word: str) -> bool:
    return word in _AUXILIARIES or word in _VERBS or word.endswith("n't")


# Added parts ---------------------------------------------------------------------------------

CONTINUATION = "\u2026 "
"""How a claim split off the one before it starts: "… including a bag."."""
_ADDED = re.compile(
    r",\s++(?=(?:which|who|whose|where|including|such as|especially|notably|plus|along with|"
    r"together with|and also|as well as|making|giving|offering|allowing|providing|letting|"
    r"adding|featuring|ensuring|keeping|bringing)\s)"
    r"|(?<!\s)\s++(?=(?:as well as|along with|together with)\s)",
    re.IGNORECASE,
)
_APPOSITION = re.compile(
    r"(?<=[A-Za-z0-9)])\s*+,\s++(?P<part>(?:a|an)\s++"
    r"(?:[^,;:()\s]|(?<=\d),(?=\d)|\s++(?=[^,;:()\s]))+?)\s*+"
    r"(?P<end>,(?=\s)|(?=[.!?]?[\"'\u201d)]*$))"
)
MAX_APPOSITION_WORDS = 12
MIN_HEAD_WORDS = 3
"""A statement must keep this many words for a part to be split off it."""


def split_added(clause: str) -> list[str]:
    """A clause with the parts that add to it split off, each a claim of its own.

    The first part stays as written, ending in a full stop; each added part starts with
    :data:`CONTINUATION` and keeps its own words ("… which gives it a range of 80 km."). Nothing
    is split inside quotes, and a part with no word of its own stays where it is.
    """
    if '"' in clause or "\u201c" in clause:
        return [clause]
    head, added = _split_apposition(clause)
    cuts = [m.start() for m in _ADDED.finditer(head)]
    pieces: list[str] = []
    start = 0
    for cut in cuts:
        words = len(_TOKEN.findall(head[start:cut]))
        if words >= MIN_HEAD_WORDS or (pieces and words):
            pieces.append(head[start:cut])
            start = cut
    pieces.append(head[start:])
    parts = [pieces[0].strip().rstrip(",;").strip()] + [
        p.strip().lstrip(",").strip() for p in pieces[1:]
    ]
    parts = [p for p in parts if p]
    if added is not None:
        parts.insert(1, added)
    if len(parts) == 1:
        return [clause]
    out = []
    for k, part in enumerate(parts):
        part = part.rstrip(",;").strip()
        if not _FINAL.search(part):
            part += "."
        out.append(part if k == 0 else CONTINUATION + part)
    return out


def _split_apposition(clause: str) -> tuple[str, str | None]:
    """The clause without the apposition after a name that ends it, and the apposition.

    "She joined Acme, a maker of bikes." is "She joined Acme." and "a maker of bikes"; a clause
    with no such apposition is returned with None. An apposition inside a clause ("Acme, a maker
    of bikes, hired her") stays where it is: the claim must read as the response writes it.
    """
    for match in _APPOSITION.finditer(clause):
        before = clause[: match.start()].split()
        if match["end"] == "," or len(before) < 2 or not before[-1][:1].isupper():
            continue  # after a name, not after the first word of the sentence
        part = match["part"]
        if len(part.split()) > MAX_APPOSITION_WORDS:
            continue
        head = clause[: match.start()] + clause[match.end() :]
        if len(_TOKEN.findall(head)) < MIN_HEAD_WORDS:
            continue
        return head, part
    return clause, None

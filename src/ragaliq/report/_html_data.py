r"""The HTML report's data: one compact record per case, and the totals gathered on the way.

A case record holds, by key: ``i`` the id, ``q`` the query, ``s`` the status when not ``ok``,
``x`` the error, ``r`` the rank (0 first: errors, new hallucinations, failing scores, unsupported
claims, the rest, skipped cases), ``c`` the claims, ``f`` the needed facts, ``k`` the chunk
ratings ``[relevant, reason, heuristic]``, ``e`` the evaluators' results in the order of
``rq-config``'s ``evaluators`` (``[score, passed, status, reasoning, baseline]``, ``null`` when
absent), and with the dataset ``p`` the response, ``t`` the context, ``a`` the expected answer, or
``n`` why the response is not shown. A claim or fact is ``[text, verdict, confidence, evidence,
reason, span, flags, agreement, new, accepted]``, trailing defaults left out (``confidence`` is
``null`` for a heuristic judge, whose figure measures nothing; ``accepted`` is the login of the
reviewer who accepted a newly hallucinated claim); ``verdict`` indexes
``rq-config``'s ``verdicts``; ``text`` is ``null`` when it is the response's text at ``span``. A
string that recurs may be written as an integer: its index in ``rq-totals``' ``strings``.

The records (``rq-cases``) are a JSON array, one record a line, deflated (zlib) and written in
base64 as they come. Nearly all of the data is text the page shows (claims, evidence, reasons,
queries: 14.6 of the 17.1 MB of the benchmark's ten thousand cases with five evaluators), so it
is packed rather than trimmed: at zlib's fastest level it takes a third of the room. The totals
(``rq-totals``) and the labels (``rq-config``) are plain JSON. In all of it ``<``, ``>``, ``&``,
U+2028 and U+2029 are written as ``\uXXXX`` escapes, and base64 has none of them, so no text can
end the script element it is in.
"""

from __future__ import annotations

import base64
import json
import zlib
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ragaliq.gate import GateDecision
from ragaliq.models import CaseResult, ClaimVerdict, ReportHead, Status, TestCase, Verdict
from ragaliq.report._locate import Span, locate_claims
from ragaliq.run_report import TextSink

__all__ = [
    "CASES_ELEMENT",
    "NOT_VERIFIABLE_OFFLINE",
    "PACK_FLUSH",
    "VERDICT_CODES",
    "script_json",
    "verdict_code",
    "write_cases",
]

NOT_VERIFIABLE_OFFLINE = "NOT_VERIFIABLE_OFFLINE"
"""The kind of a ``NOT_ENOUGH_INFO`` claim the offline judge could neither ground nor fault:
shown, counted and filtered apart from a judge's "not in the context"."""
VERDICT_CODES: tuple[str, ...] = (*(v.value for v in Verdict), NOT_VERIFIABLE_OFFLINE)
"""A claim's kind in the data is its index here: its verdict, or not verifiable offline."""


def verdict_code(claim: ClaimVerdict) -> int:
    """A claim's kind, as the page's data writes it (an index of :data:`VERDICT_CODES`)."""
    kind = claim.verdict.value if claim.verifiable else NOT_VERIFIABLE_OFFLINE
    return VERDICT_CODES.index(kind)


CASES_ELEMENT = '<script type="application/octet-stream" id="rq-cases">'
"""Where the packed case records start: not JSON, so not ``application/json``."""
PACK_FLUSH = 1 << 20
"""Bytes of case records after which the page has them all (a flush of the compressor)."""
_RESULT_STATUS: dict[Status, int] = {"ok": 0, "error": 1, "skipped": 2}
_SCRIPT_ESCAPES = {
    ord("<"): "\\u003c",
    ord(">"): "\\u003e",
    ord("&"): "\\u0026",
    0x2028: "\\u2028",
    0x2029: "\\u2029",
}


def script_json(value: Any) -> str:
    """Compact JSON that is safe inside a ``<script>`` element: no text in it can end it."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return text.translate(_SCRIPT_ESCAPES)


class _Packed:
    """Text written deflated (zlib, fastest level) and in base64, as it comes; then :meth:`close`.

    Holds the compressor's window and at most two bytes not yet in base64; every ``flush_every``
    bytes of text it flushes the compressor, so the page lags its cases by at most that much.
    """

    def __init__(self, out: TextSink, *, level: int = 1, flush_every: int = PACK_FLUSH) -> None:
        self._out = out
        self._compressor = zlib.compressobj(level)
        self._carry = b""
        self._flush_every = flush_every
        self._unflushed = 0

    def write(self, text: str) -> None:
        data = text.encode("utf-8")
        self._emit(self._compressor.compress(data))
        self._unflushed += len(data)
        if self._unflushed >= self._flush_every:
            self._emit(self._compressor.flush(zlib.Z_SYNC_FLUSH))
            self._unflushed = 0

    def close(self) -> None:
        self._emit(self._compressor.flush())
        if self._carry:
            self._out.write(base64.b64encode(self._carry).decode("ascii"))
            self._carry = b""

    def _emit(self, data: bytes) -> None:
        if not data:
            return
        data = self._carry + data
        whole = len(data) - len(data) % 3
        if whole:
            self._out.write(base64.b64encode(data[:whole]).decode("ascii"))
        self._carry = data[whole:]


class _Strings:
    """Strings that recur (reasons, reasonings, evidence), written whole twice, then by index.

    A string is written whole the first time; when it comes again it joins the table (written
    after the cases) and is written as its index from then on. Bounded: what it remembers of
    strings seen once is a set of hashes (a collision only interns a string early), and both
    have a cap.
    """

    def __init__(self, *, size: int = 50_000, seen: int = 200_000, longest: int = 240) -> None:
        self.table: dict[str, int] = {}
        self._seen: set[int] = set()
        self._size, self._seen_size, self._longest = size, seen, longest

    def ref(self, text: str) -> str | int:
        index = self.table.get(text)
        if index is not None:
            return index
        if len(text) < 12 or len(text) > self._longest or len(self.table) >= self._size:
            return text
        key = hash(text)
        if key in self._seen:
            index = self.table[text] = len(self.table)
            return index
        if len(self._seen) < self._seen_size:
            self._seen.add(key)
        return text


@dataclass(kw_only=True)
class _Totals:
    """What the page counts while the cases stream past."""

    cases: int = 0
    claims: int = 0
    facts: int = 0
    chunks: int = 0
    missing: int = 0
    """Cases whose response is not shown: not in the dataset, or changed since they were judged."""
    verdicts: Counter[int] = field(default_factory=Counter)
    """Claims by kind (an index of :data:`VERDICT_CODES`)."""
    unverifiable: int = 0
    """Claims the offline judge could neither ground nor fault."""


def _trim(record: list[Any]) -> list[Any]:
    """A positional record without its trailing absences (None, empty lists and strings)."""
    while record and record[-1] in (None, [], ""):
        record.pop()
    return record


def _verdict_record(
    claim: ClaimVerdict,
    strings: _Strings,
    *,
    confidence: bool,
    response: str | None = None,
    span: Span | None = None,
    new: bool = False,
    accepted_by: str | None = None,
) -> list[Any]:
    text: str | None = claim.text
    if span is not None and response is not None and response[span[0] : span[1]] == claim.text:
        text = None  # the response holds it: written once
    return _trim(
        [
            text,
            verdict_code(claim),
            claim.confidence if confidence else None,
            strings.ref(claim.evidence) if claim.evidence else None,
            strings.ref(claim.reason) if claim.reason else None,
            list(span) if span is not None else None,
            [strings.ref(flag) for flag in claim.flags],
            claim.agreement,
            1 if new else None,
            accepted_by,
        ]
    )


@dataclass(frozen=True, kw_only=True)
class _Judged:
    """The gate decision, looked up case by case."""

    evaluators: tuple[str, ...]
    new: Mapping[str, Mapping[str, str | None]]
    """By case id, its newly hallucinated claims' texts, each with the reviewer who accepted it."""
    regressed: Mapping[tuple[str, str], float]
    confidence: bool
    """Whether verdicts carry their confidence (:attr:`JudgeInfo.shows_confidence`)."""

    @classmethod
    def of(cls, head: ReportHead, decision: GateDecision | None) -> _Judged:
        new: dict[str, dict[str, str | None]] = {}
        regressed: dict[tuple[str, str], float] = {}
        if decision is not None:
            for change in decision.new_hallucinations:
                new.setdefault(change.case_id, {})[change.claim] = change.accepted_by
            regressed = {(r.case_id, r.evaluator): r.baseline for r in decision.regressed_cases}
        return cls(
            evaluators=tuple(head.summary.evaluators),
            new=new,
            regressed=regressed,
            confidence=head.judge.shows_confidence,
        )


def _rank(case: CaseResult, results: Sequence[list[Any] | None], new_count: int) -> int:
    """Where the case comes in the list, problems first.

    0 errors, 1 new hallucinations, 2 failing or dropped scores, 3 unsupported claims, 4 the
    rest, 5 skipped cases.
    """
    present = [r for r in results if r is not None]
    if case.status == "error" or any(r[2] == _RESULT_STATUS["error"] for r in present):
        return 0
    if new_count:
        return 1
    if any(r[1] == 0 or r[4] is not None for r in present):
        return 2
    if any(claim.verdict != Verdict.SUPPORTED for claim in case.claims):
        return 3
    return 5 if case.status == "skipped" else 4


def _dataset_part(
    case: CaseResult, dataset: Callable[[str], TestCase | None], record: dict[str, Any]
) -> str | None:
    """Add what the dataset shows of the case to its record; its response, if it is shown."""
    found = dataset(case.id)
    if found is None:
        record["n"] = 1
        return None
    if found.input_hash != case.input_hash:
        record["n"] = 2
        return None
    record["p"] = found.response
    if found.context:
        record["t"] = list(found.context)
    if found.expected_answer:
        record["a"] = found.expected_answer
    return found.response


def _results(case: CaseResult, judged: _Judged, strings: _Strings) -> list[list[Any] | None]:
    """The case's result per evaluator, in the page's order, with the baseline it dropped from."""
    results: list[list[Any] | None] = []
    for name in judged.evaluators:
        result = case.results.get(name)
        if result is None:
            results.append(None)
            continue
        results.append(
            [
                result.score,
                None if result.passed is None else int(result.passed),
                _RESULT_STATUS.get(result.status, 0),
                strings.ref(result.reasoning),
                judged.regressed.get((case.id, name)),
            ]
        )
    return results


def _case_record(
    case: CaseResult,
    *,
    judged: _Judged,
    dataset: Callable[[str], TestCase | None] | None,
    strings: _Strings,
    totals: _Totals,
) -> dict[str, Any]:
    record: dict[str, Any] = {"i": case.id, "q": case.query}
    if case.status != "ok":
        record["s"] = case.status
    if case.error:
        record["x"] = strings.ref(case.error)
    response = _dataset_part(case, dataset, record) if dataset is not None else None
    if dataset is not None and response is None:
        totals.missing += 1
    spans: Sequence[Span | None] = (
        locate_claims(response, [c.text for c in case.claims])
        if response is not None
        else [None] * len(case.claims)
    )
    new_texts = judged.new.get(case.id, {})
    new_count = 0
    claims = []
    for claim, span in zip(case.claims, spans, strict=True):
        new = claim.text in new_texts
        new_count += new
        claims.append(
            _verdict_record(
                claim,
                strings,
                confidence=judged.confidence,
                response=response,
                span=span,
                new=new,
                accepted_by=new_texts.get(claim.text),
            )
        )
        totals.verdicts[verdict_code(claim)] += 1
        totals.unverifiable += not claim.verifiable
    if claims:
        record["c"] = claims
    if case.facts:
        record["f"] = [
            _verdict_record(fact, strings, confidence=judged.confidence) for fact in case.facts
        ]
    if case.chunks:
        record["k"] = [
            _trim([1 if c.relevant else 0, strings.ref(c.reason), 1 if c.heuristic else None])
            for c in case.chunks
        ]
    results = _results(case, judged, strings)
    record["r"] = _rank(case, results, new_count)
    if any(r is not None for r in results):
        record["e"] = [None if r is None else _trim(r) for r in results]
    totals.cases += 1
    totals.claims += len(case.claims)
    totals.facts += len(case.facts)
    totals.chunks += len(case.chunks)
    return record


def write_cases(
    out: TextSink,
    *,
    head: ReportHead,
    cases: Iterable[CaseResult],
    decision: GateDecision | None,
    dataset: Callable[[str], TestCase | None] | None,
) -> None:
    """Write the cases' records (``rq-cases``) one at a time, then the totals (``rq-totals``).

    Holds one case at a time, plus a bounded table of repeated strings and the compressor's
    window.
    """
    judged = _Judged.of(head, decision)
    strings = _Strings()
    totals = _Totals()
    out.write(CASES_ELEMENT)
    packed = _Packed(out)
    packed.write("[")
    for case in cases:
        record = _case_record(case, judged=judged, dataset=dataset, strings=strings, totals=totals)
        packed.write(("\n" if totals.cases == 1 else ",\n") + script_json(record))
    packed.write("\n]")
    packed.close()
    out.write("</script>\n")
    summary = {
        "cases": totals.cases,
        "claims": totals.claims,
        "facts": totals.facts,
        "chunks": totals.chunks,
        "missing": totals.missing,
        "verdicts": [totals.verdicts[code] for code in range(len(VERDICT_CODES))],
        "unverifiable": totals.unverifiable,
        "strings": list(strings.table),
    }
    out.write('<script type="application/json" id="rq-totals">')
    out.write(script_json(summary))
    out.write("</script>\n")

"""Citation accuracy: whether the chunks a response cites for its claims are those that back them.

A response that cites its sources (``[2]``, ``[doc-7]``: :mod:`ragaliq.text.citations`) keeps
each claim's markers in the claim (the offline judge's claims are the response's sentences; Claude
is asked to end each claim with its sentence's markers), and the verification names the chunks
that back each claim. A cited claim is **miscited** when the judge checked it and none of the
chunks it cites backs it: a supported claim credited to the wrong chunk, or a claim no chunk
backs credited to one. A claim citing several chunks is correct when one of them backs it (a
sentence's markers cover every claim split from it). A chunk that was not retrieved backs
nothing: a claim citing only such chunks (an id the case's labels name, or another chunk of a
retrieved chunk's document, the part of its id before the last ``#``, ``:``, ``/``, ``-``, ``_``
or ``.``, as ``export#5`` beside a retrieved ``export#2``) is miscited whatever the judge says.
Otherwise a claim the judge could not check (not verifiable offline, or backed without the judge
naming a chunk) is neither: it is left out.

A miscited claim is *new* when the baseline's same case had no miscited claim matching it
(:mod:`ragaliq.text.matching`): what ``gate.fail_on_miscited_claims`` fails on.

The score is the share of the checked cited claims whose citations are correct. A response
that cites nothing is skipped, with the reason; nothing here asks the judge more than the claims
and their verdicts, which faithfulness and hallucination share.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Annotated, Any, ClassVar

from pydantic import AfterValidator, Strict

from ragaliq._fields import Flag
from ragaliq.evaluators._claims import all_are, claim_id, of_total_are
from ragaliq.evaluators.base import CaseJudgement, Evaluator, EvaluatorOptions, VerdictLabel
from ragaliq.evaluators.findings import Before, Emit, Finding, FindingKind
from ragaliq.evaluators.questions import EXTRACT, VERIFY, Question
from ragaliq.models import CaseResult, ClaimVerdict, EvaluationResult, TestCase, Verdict
from ragaliq.text.citations import CITATION_PATTERN, CitationReader, cited_chunks
from ragaliq.text.counts import plural
from ragaliq.text.matching import unmatched

__all__ = [
    "MISCITED",
    "NEW_SHOWN",
    "CitationAccuracyEvaluator",
    "CitationOptions",
    "MiscitedClaim",
    "MiscitedClaims",
]

MISCITED = "miscited"
"""The detail (and the list of findings) of the claims whose citations no chunk backs."""
_BACKING = (Verdict.SUPPORTED, Verdict.PARTIALLY_SUPPORTED)
NEW_SHOWN = 3
"""Newly miscited claims a failure of ``gate.fail_on_miscited_claims`` spells out."""


def _marker_pattern(value: str) -> str:
    try:
        compiled = re.compile(value)
    except re.error as exc:
        raise ValueError(
            f"is not a regular expression ({exc}); write one whose first group holds the "
            r"references, such as \[([^\]]+)\]"
        ) from exc
    if compiled.fullmatch(""):
        raise ValueError("matches the empty text, so every position would be a marker")
    return value


MarkerPattern = Annotated[str, Strict(), AfterValidator(_marker_pattern)]


class CitationOptions(EvaluatorOptions):
    """Citation accuracy: do the cited chunks back the claims (off unless written)."""

    enabled: Flag = False
    pattern: MarkerPattern = CITATION_PATTERN
    """What a citation marker looks like: a regular expression whose first group holds the
    references, separated by commas (the whole match when it has no group). A reference is a
    chunk's number in retrieval order, from 1, or a chunk's id; a marker that names neither
    (``[sic]``, ``[2019]``) is no citation."""


class MiscitedClaim(Finding):
    """A claim whose cited chunks do not back it, with the chunks that do."""

    title: ClassVar[str] = "Miscited claims"
    noun: ClassVar[str] = "miscited claim"

    id: str
    """The claim's short id."""
    claim: str
    verdict: str
    cited: tuple[str, ...]
    """The chunks the claim cites: their ids where the dataset names them, else their numbers."""
    backed_by: tuple[str, ...]
    """The chunks the judge found backing the claim; empty when none does."""
    new: bool = False
    """Whether the baseline's same case had no miscited claim matching it (False without a
    baseline)."""

    @property
    def headline(self) -> str:
        return MISCITED

    @property
    def text(self) -> str:
        return f"{self.claim} ({_sources(self.cited, self.backed_by)})"


def _sources(cited: Sequence[str], backed_by: Sequence[str]) -> str:
    """``cites chunk doc-9; chunk doc-3 backs it``, or ``cites chunk 2; no chunk backs it``."""

    def chunks(labels: Sequence[str]) -> str:
        return f"{'chunk' if len(labels) == 1 else 'chunks'} {', '.join(labels)}"

    verb = "backs" if len(backed_by) == 1 else "back"
    backing = f"{chunks(backed_by)} {verb} it" if backed_by else "no chunk backs it"
    return f"cites {chunks(cited)}; {backing}"


class MiscitedClaims(FindingKind):
    """The claims of this run credited to chunks that do not back them; which are new.

    The baseline keeps each case's miscited claims; a claim matching one of them is not new.
    """

    name: ClassVar[str] = MISCITED
    lists: ClassVar[Mapping[str, type[Finding]]] = {"miscited_claims": MiscitedClaim}
    kept: ClassVar[Any] = tuple[str, ...]

    def __init__(self) -> None:
        self.new: list[MiscitedClaim] = []
        """The newly miscited claims, the first :data:`NEW_SHOWN` of them."""
        self.new_total = 0

    @classmethod
    def keep(cls, case: CaseResult) -> tuple[str, ...] | None:
        return tuple(case.claims[i].text for i in _miscited(case)) or None

    def find(self, case: CaseResult, before: Before | None, *, first_run: bool, emit: Emit) -> None:
        if case.status != "ok":
            return
        miscited = _miscited(case)
        was = list(before.kept or ()) if before is not None and before.status == "ok" else []
        now = [case.claims[index].text for index in miscited]
        fresh = Counter([] if first_run else unmatched(now, was, text=str))
        for index, entry in miscited.items():
            claim = case.claims[index]
            new = fresh[claim.text] > 0
            fresh[claim.text] -= 1
            finding = MiscitedClaim(
                case_id=case.id,
                query=case.query,
                id=claim_id(case.id, claim.text),
                claim=claim.text,
                verdict=claim.verdict.value,
                cited=tuple(entry["cited"]),
                backed_by=tuple(entry["backed_by"]),
                new=new,
            )
            if new:
                self.new_total += 1
                if len(self.new) < NEW_SHOWN:
                    self.new.append(finding)
            emit("miscited_claims", finding)


def _miscited(case: CaseResult) -> dict[int, dict[str, Any]]:
    """The miscited claims of a case, by their index among its claims, with what they cite."""
    result = case.results.get(CitationAccuracyEvaluator.name)
    if result is None:
        return {}
    return {entry["claim"]: entry for entry in result.details.get(MISCITED, ())}


_SEPARATOR = re.compile(r"\s*[,;]\s*")
"""What separates the references of a marker, as :mod:`ragaliq.text.citations` reads them."""
_DOCUMENT = re.compile(r"(.*[^#:/_.-])[#:/_.-]+[^#:/_.-]+")


def document_of(chunk_id: str) -> str | None:
    """The part of a chunk id before its last separator (``export`` of ``export#2``), if any."""
    match = _DOCUMENT.fullmatch(chunk_id)
    return match.group(1) if match else None


def _label(case: TestCase, chunk: int) -> str:
    """A chunk as a finding names it: its id where the dataset names one, else its number."""
    refs = case.chunk_refs
    return (refs[chunk - 1].id if refs else None) or str(chunk)


def _checked(verdict: ClaimVerdict) -> bool:
    """Whether the judge said which chunks back the claim: it checked it, and named them if any.

    A claim not verifiable offline was not checked; a backed claim for which the judge named no
    chunk leaves its citations unknown.
    """
    return verdict.verifiable and (verdict.verdict not in _BACKING or bool(verdict.chunks))


class CitationAccuracyEvaluator(Evaluator[CitationOptions]):
    """The share of cited claims whose cited chunks back them."""

    name: ClassVar[str] = "citation_accuracy"
    version: ClassVar[str] = "1"
    default_threshold: ClassVar[float] = 0.8
    questions: ClassVar[tuple[Question[Any], ...]] = (EXTRACT, VERIFY)
    Options = CitationOptions
    findings = (MiscitedClaims,)

    def reader(self, case: TestCase) -> CitationReader:
        """How the case's citation markers are read, under this evaluator's pattern."""
        return CitationReader.of(
            chunks=len(case.context),
            ids=[ref.id for ref in case.chunk_refs],
            pattern=re.compile(self.settings.pattern),
        )

    @staticmethod
    def not_retrieved(case: TestCase, reader: CitationReader, text: str) -> tuple[str, ...]:
        """The chunks not retrieved that the markers of ``text`` name, by id, in order.

        Such a chunk is one the case's chunk labels name, or another chunk of a document a
        retrieved chunk comes from.
        """
        labels = case.labels
        known = set(labels.grades) if labels is not None and labels.level == "chunk" else set()
        documents = {document_of(chunk_id) for chunk_id in reader.by_id}
        named: list[str] = []
        for match in reader.pattern.finditer(text):
            references = match.group(1) if reader.pattern.groups else match.group(0)
            for reference in _SEPARATOR.split((references or "").strip()):
                if reference in reader.by_id or reference in named:
                    continue
                if reference in known or document_of(reference) in documents - {None}:
                    named.append(reference)
        return tuple(named)

    def describe_shortfall(self, case: CaseResult, *, label: VerdictLabel) -> list[str]:
        """The miscited claims, each with the chunks it cites and the chunks that back it."""
        result = case.results.get(self.name)
        entries = result.details.get(MISCITED, ()) if result is not None else ()
        return [
            f"{MISCITED}: {case.claims[entry['claim']].text} "
            f"({_sources(entry['cited'], entry['backed_by'])})"
            for entry in entries
        ]

    def evaluate(self, judgement: CaseJudgement) -> EvaluationResult:
        case = judgement.case
        reader = self.reader(case)
        cited = []
        for index, verdict in enumerate(judgement.verdicts or ()):
            chunks = cited_chunks(reader.find(verdict.text))
            gone = self.not_retrieved(case, reader, verdict.text)
            if chunks or gone:
                cited.append((index, verdict, chunks, gone))
        if not cited:
            if reader.find(case.response):
                return self.skipped(
                    "The response cites chunks, but none of its claims kept a citation marker, "
                    "so no citation could be checked."
                )
            return self.skipped("The response cites no retrieved chunk: no citation to check.")
        # A claim citing only chunks not retrieved is miscited whatever the judge says of it.
        checked = [entry for entry in cited if not entry[2] or _checked(entry[1])]
        if not checked:
            return self.skipped(
                f"{all_are(len(cited), 'cited claim')} unchecked (not verifiable offline, or "
                "backed without the judge naming a chunk), so the case has no score."
            )
        miscited = [
            {
                "claim": index,
                "cited": [_label(case, c) for c in chunks] + [f"{m} (not retrieved)" for m in gone],
                "backed_by": [_label(case, c) for c in verdict.chunks],
            }
            for index, verdict, chunks, gone in checked
            if not set(chunks) & set(verdict.chunks)
        ]
        unchecked = len(cited) - len(checked)
        reasoning = (
            f"{of_total_are(len(miscited), len(checked), 'cited claim')} credited to chunks that "
            "do not back them."
            if miscited
            else f"{all_are(len(checked), 'cited claim')} backed by a chunk they cite."
        )
        if unchecked:
            reasoning += f" {plural(unchecked, 'cited claim')} the judge could not check left out."
        details: dict[str, Any] = {"cited_claims": len(cited), "checked": len(checked)}
        return self.result(
            1.0 - len(miscited) / len(checked), reasoning, details | {MISCITED: miscited}
        )

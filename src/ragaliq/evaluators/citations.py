"""Citation accuracy: whether the chunks a response cites for its claims are those that back them.

A response that cites its sources (``[2]``, ``[doc-7]``: :mod:`ragaliq.text.citations`) keeps
each claim's markers in the claim (the offline judge's claims are the response's sentences; Claude
is asked to end each claim with its sentence's markers), and the verification names the chunks
that back each claim. A cited claim is **miscited** when the judge checked it and none of the
chunks it cites backs it: a supported claim credited to the wrong chunk, or a claim no chunk
backs credited to one. A claim citing several chunks is correct when one of them backs it (a
sentence's markers cover every claim split from it). A claim the judge could not check (not
verifiable offline, or backed without the judge naming a chunk) is neither: it is left out.

The score is the share of the checked cited claims whose citations are correct. A response
that cites nothing is skipped, with the reason; nothing here asks the judge more than the claims
and their verdicts, which faithfulness and hallucination share.
"""

from __future__ import annotations

import re
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

__all__ = [
    "MISCITED",
    "CitationAccuracyEvaluator",
    "CitationOptions",
    "MiscitedClaim",
    "MiscitedClaims",
]

MISCITED = "miscited"
"""The detail (and the list of findings) of the claims whose citations no chunk backs."""
_BACKING = (Verdict.SUPPORTED, Verdict.PARTIALLY_SUPPORTED)


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
    """The claims of this run credited to chunks that do not back them."""

    name: ClassVar[str] = MISCITED
    lists: ClassVar[Mapping[str, type[Finding]]] = {"miscited_claims": MiscitedClaim}

    def find(self, case: CaseResult, before: Before | None, *, first_run: bool, emit: Emit) -> None:
        result = case.results.get(CitationAccuracyEvaluator.name)
        if case.status != "ok" or result is None:
            return
        for entry in result.details.get(MISCITED, ()):
            claim = case.claims[entry["claim"]]
            emit(
                "miscited_claims",
                MiscitedClaim(
                    case_id=case.id,
                    query=case.query,
                    id=claim_id(case.id, claim.text),
                    claim=claim.text,
                    verdict=claim.verdict.value,
                    cited=tuple(entry["cited"]),
                    backed_by=tuple(entry["backed_by"]),
                ),
            )


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
        cited = [
            (index, verdict, chunks)
            for index, verdict in enumerate(judgement.verdicts or ())
            if (chunks := cited_chunks(reader.find(verdict.text)))
        ]
        if not cited:
            if reader.find(case.response):
                return self.skipped(
                    "The response cites chunks, but none of its claims kept a citation marker, "
                    "so no citation could be checked."
                )
            return self.skipped("The response cites no retrieved chunk: no citation to check.")
        checked = [(i, v, chunks) for i, v, chunks in cited if _checked(v)]
        if not checked:
            return self.skipped(
                f"{all_are(len(cited), 'cited claim')} unchecked (not verifiable offline, or "
                "backed without the judge naming a chunk), so the case has no score."
            )
        miscited = [
            {
                "claim": index,
                "cited": [_label(case, c) for c in chunks],
                "backed_by": [_label(case, c) for c in verdict.chunks],
            }
            for index, verdict, chunks in checked
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

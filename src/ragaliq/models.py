"""The data that flows through a run: test cases, claims, verdicts, results and the run report.

Every model here crosses a boundary (a file, the judge, the report), so each one is a pydantic model
that validates on the way in and serialises to plain JSON on the way out.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Iterator, Mapping
from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    field_validator,
    model_serializer,
    model_validator,
)

from ragaliq.text.counts import plural
from ragaliq.text.plain import is_blank

__all__ = [
    "CLAIMS_DETAIL",
    "NOT_SCORED",
    "NOT_VERIFIABLE",
    "SCHEMA_VERSION",
    "UNCHECKED_DETAIL",
    "VERDICT_SYNONYMS",
    "CasePlan",
    "CaseResult",
    "ChunkRating",
    "ChunkRatings",
    "ChunkRef",
    "ClaimVerdict",
    "ClaimsResult",
    "EvaluationResult",
    "EvaluatorInfo",
    "EvaluatorSummary",
    "JudgeInfo",
    "JudgeResult",
    "Labels",
    "Preflight",
    "Progress",
    "RelevanceResult",
    "ReportHead",
    "RunReport",
    "RunSummary",
    "Status",
    "SummaryBuilder",
    "TestCase",
    "Usage",
    "Verdict",
    "VerdictName",
    "VerificationResult",
    "coverage_of",
    "read_verdict",
]

SCHEMA_VERSION = 1
"""Version of the report and baseline JSON layout; bumped on any incompatible change."""

Status = Literal["ok", "error", "skipped"]

NOT_SCORED = "no case could be scored"
"""Why an evaluator without a mean fails, in the run's words and the gate's: every case was
skipped (nothing to score) or failed to judge."""

CLAIMS_DETAIL = "claims"
"""The detail of a result over claims (or needed facts) that says how many the case made."""
UNCHECKED_DETAIL = "not_verifiable"
"""The detail that says how many of them the judge could not check (not verifiable offline)."""
NOT_VERIFIABLE = "not_verifiable_offline"
"""Flag of a claim the offline judge could neither ground in the context nor fault (its verdict is
NOT_ENOUGH_INFO). Such a claim is left out of the faithfulness and hallucination scores (and
context recall's), and is never listed as hallucinated: it is shown apart, as "not verifiable
offline". No other judge sets it, so Claude's scoring is unchanged."""


class Verdict(StrEnum):
    """How far the context backs a claim."""

    SUPPORTED = "SUPPORTED"
    PARTIALLY_SUPPORTED = "PARTIALLY_SUPPORTED"
    NOT_ENOUGH_INFO = "NOT_ENOUGH_INFO"
    CONTRADICTED = "CONTRADICTED"


VERDICT_SYNONYMS: Mapping[str, Verdict] = {
    "FULLY_SUPPORTED": Verdict.SUPPORTED,
    "NO_EVIDENCE": Verdict.NOT_ENOUGH_INFO,
    "CONTRADICTORY": Verdict.CONTRADICTED,
}
"""Axion's names for the verdicts (its ``PARTIALLY_SUPPORTED`` is ours): documented synonyms."""
_WORD_JOINS = re.compile(r"[\s_-]+")
"""What may join the words of a verdict's name: ``PARTIALLY_SUPPORTED``, ``partially-supported``."""


def read_verdict(value: Any) -> Any:
    """A verdict as a judge or a person writes it: ours or Axion's name, in any letter case.

    Its words may be joined by underscores, hyphens or spaces: ``supported``,
    ``partially-supported``, ``Fully Supported`` and ``NO_EVIDENCE`` name a verdict exactly;
    anything else is returned as it is, for validation to refuse (a verdict is never guessed).
    """
    if isinstance(value, str):
        key = _WORD_JOINS.sub("_", value.strip().upper())
        if key in Verdict.__members__:
            return Verdict(key)
        if key in VERDICT_SYNONYMS:
            return VERDICT_SYNONYMS[key]
    return value


VerdictName = Annotated[Verdict, BeforeValidator(read_verdict)]
"""A verdict read from outside (a judge's reply, a config key, a label) by :func:`read_verdict`."""


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)


MAX_GRADE = 3
"""The highest graded relevance a label may give (0 not relevant, 1 relevant, up to 3)."""


class ChunkRef(_Frozen):
    """Who a retrieved chunk is: its id, and the document it was cut from, as the dataset says."""

    id: str | None = None
    """The chunk's id, matched against a case's ``relevant_chunks``."""
    source: str | None = None
    """The id of the document the chunk comes from, matched against ``relevant_sources``."""


class Labels(_Frozen):
    """What a case's retrieval should find: chunk ids or document ids, each with its relevance.

    Chunk ids match the retrieved chunks' ``id``; source ids match their ``source`` and survive
    a change of chunking. A label of grade 0 says the item is not relevant (as leaving it out
    does); the others are relevant, the higher the more.
    """

    level: Literal["chunk", "source"]
    """Whether the ids are chunks' (``relevant_chunks``) or documents' (``relevant_sources``)."""
    grades: dict[str, Annotated[int, Field(ge=0, le=MAX_GRADE)]]
    """Each labelled id and its graded relevance, in the order the dataset gives them."""

    @property
    def field(self) -> str:
        """The dataset field the labels come from."""
        return "relevant_chunks" if self.level == "chunk" else "relevant_sources"

    @property
    def relevant(self) -> dict[str, int]:
        """The labelled ids of grade 1 or more."""
        return {item: grade for item, grade in self.grades.items() if grade > 0}

    def ranked_items(self, retrieved: Iterable[ChunkRef]) -> list[str | None]:
        """The id each retrieved chunk stands for at this level, in rank order.

        A chunk without one (no id, or no source) stands for nothing, and so does a repeat of an
        id ranked higher: a duplicate counts once, where it first comes.
        """
        seen: set[str] = set()
        items: list[str | None] = []
        for chunk in retrieved:
            item = chunk.id if self.level == "chunk" else chunk.source
            if item is None or item in seen:
                items.append(None)
                continue
            seen.add(item)
            items.append(item)
        return items


class TestCase(_Frozen):
    """One RAG output to judge: what was asked, what was retrieved and what was answered."""

    __test__ = False  # not a pytest test class

    id: str
    """Unique and stable across runs; the comparison with the baseline matches cases by it."""
    query: str
    """The user's question."""
    context: tuple[str, ...]
    """The retrieved chunks the response should be grounded in."""
    response: str
    """The RAG system's answer."""
    expected_answer: str | None = None
    """A reference answer; its sentences are the facts retrieval must bring, when
    ``expected_facts`` is empty."""
    expected_facts: tuple[str, ...] = ()
    """Statements the context must hold for a good answer (context recall)."""
    tags: tuple[str, ...] = ()
    """Free labels for filtering."""
    metadata: dict[str, Any] = Field(default_factory=dict)
    """Anything else the pipeline wants to keep with the case."""
    chunk_refs: tuple[ChunkRef, ...] = ()
    """One per chunk of ``context``, in the same order, when the dataset names the chunks' ids
    or sources; empty when it names none."""
    labels: Labels | None = None
    """What retrieval should find (``relevant_chunks`` or ``relevant_sources``); None when the
    case names neither."""

    @model_serializer(mode="wrap")
    def _as_dataset_record(self, handler: SerializerFunctionWrapHandler) -> Any:
        """Dumped as a dataset writes the case: chunk ids in the chunks, labels by their field.

        A case without them dumps as it always did.
        """
        data = handler(self)
        if not isinstance(data, dict):
            return data
        refs, labels = data.pop("chunk_refs", ()), data.pop("labels", None)
        if refs:
            data["context"] = [
                {"text": text, **{k: v for k, v in ref.items() if v is not None}}
                for text, ref in zip(data["context"], refs, strict=True)
            ]
        if labels is not None and self.labels is not None:
            data[self.labels.field] = labels["grades"]
        return data

    @model_validator(mode="after")
    def _refs_match_context(self) -> TestCase:
        if self.chunk_refs and len(self.chunk_refs) != len(self.context):
            raise ValueError(
                f"chunk_refs: {plural(len(self.chunk_refs), 'id')} for "
                f"{plural(len(self.context), 'chunk')} of context; give one per chunk, in the "
                "same order"
            )
        return self

    @property
    def input_hash(self) -> str:
        """A sha256 over the parts the judges and evaluators read: equal hashes, unchanged case.

        Chunk ids and labels count only where a case has them, so that the hash of a case
        without them is what it always was.
        """
        parts: list[Any] = [self.query, list(self.context), self.response]
        if self.expected_facts or self.expected_answer:
            parts.append(list(self.needed_facts))
        if self.chunk_refs or self.labels is not None:
            parts.append([[ref.id, ref.source] for ref in self.chunk_refs])
            labels = self.labels
            parts.append(None if labels is None else [labels.level, sorted(labels.grades.items())])
        payload = json.dumps(parts, ensure_ascii=False, separators=(",", ":"))
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()

    @property
    def needed_facts(self) -> tuple[str, ...]:
        """What retrieval must bring: ``expected_facts``, else the reference answer's sentences."""
        if self.expected_facts:
            return self.expected_facts
        if self.expected_answer and not is_blank(self.expected_answer):
            from ragaliq.text.words import split_sentences  # models stay import-light

            return tuple(s for s in split_sentences(self.expected_answer) if not is_blank(s))
        return ()

    @property
    def has_context(self) -> bool:
        """Whether any chunk of the context has text in it."""
        return any(not is_blank(chunk) for chunk in self.context)


class Usage(BaseModel):
    """Judge calls, tokens and money spent; summed over a run."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    calls: int = 0
    """Requests sent to a judge's backend (cache hits are not calls)."""
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    """Input tokens served from the provider's prompt cache."""
    cache_write_tokens: int = 0
    """Input tokens written to the provider's prompt cache."""
    cache_hits: int = 0
    """Operations answered by the local judge cache without a call."""
    cost_usd: float = 0.0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            calls=self.calls + other.calls,
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cache_read_tokens=self.cache_read_tokens + other.cache_read_tokens,
            cache_write_tokens=self.cache_write_tokens + other.cache_write_tokens,
            cache_hits=self.cache_hits + other.cache_hits,
            cost_usd=round(self.cost_usd + other.cost_usd, 8),
        )


class Progress(_Frozen):
    """Where a run stands, reported after each case."""

    done: int
    total: int
    errors: int
    usage: Usage


class ClaimVerdict(_Frozen):
    """The judge's verdict on one claim of a response."""

    text: str
    """The claim, one self-contained fact."""
    verdict: Verdict
    evidence: str | None = None
    """A quote from the context that the verdict rests on."""
    chunks: tuple[int, ...] = ()
    """The chunks of the context that back the claim, by their number in retrieval order (from
    1), as the judge named them (the offline judge: the chunks that state the sentence its
    support rests on); empty when none does. Claude's reply is refused (and asked again) when it
    names a chunk the context lacks."""
    reason: str = ""
    """One sentence on why."""
    confidence: float = Field(default=1.0, ge=0.0, le=1.0)
    flags: tuple[str, ...] = ()
    """Markers: ``unverified_evidence`` (a quote not in the context), ``unstable``,
    ``not_verifiable_offline`` (:data:`NOT_VERIFIABLE`), ..."""
    agreement: float | None = None
    """With ``judge.repeat``: the share of repetitions that gave this verdict; for a claim
    confirmed before it failed the gate, the share of the two asks that held it against the
    response."""
    asked: tuple[Verdict, ...] = ()
    """Each ask's verdict, in order, for a claim asked again to confirm it (empty otherwise)."""

    @property
    def verifiable(self) -> bool:
        """False for a claim the offline judge could neither ground nor fault."""
        return NOT_VERIFIABLE not in self.flags


class JudgeResult(BaseModel):
    """What every judge operation returns besides its payload: what it cost."""

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    usage: Usage = Field(default_factory=Usage)


class ClaimsResult(JudgeResult):
    """The claims extracted from a response."""

    claims: tuple[str, ...]


class VerificationResult(JudgeResult):
    """One verdict per claim, in the claims' order; and one per needed fact, when asked."""

    verdicts: tuple[ClaimVerdict, ...]
    fact_verdicts: tuple[ClaimVerdict, ...] = ()
    """Verdicts on the facts retrieval had to bring (context recall), verified in the same call."""


class ChunkRating(_Frozen):
    """Whether one retrieved chunk is relevant to the query."""

    relevant: bool
    reason: str = ""
    heuristic: bool = False
    """True when a rule, not a language model, decided (the offline judge)."""


class ChunkRatings(JudgeResult):
    """One rating per retrieved chunk, in the retrieval's order."""

    ratings: tuple[ChunkRating, ...]


class RelevanceResult(JudgeResult):
    """How well a response answers its query."""

    score: float | None = Field(ge=0.0, le=1.0)
    """None when the judge cannot rate it (the offline judge, for a query with no key terms):
    the case is skipped, with the reasoning, never given a guessed score."""
    reasoning: str = ""


class EvaluationResult(_Frozen):
    """One evaluator's result on one case."""

    evaluator: str
    score: float | None = Field(ge=0.0, le=1.0)
    """None when the case could not be judged; an error is never a score."""
    passed: bool | None
    """Whether the score reaches the evaluator's threshold; None without a score."""
    status: Status = "ok"
    reasoning: str = ""
    details: dict[str, Any] = Field(default_factory=dict)
    flagged_claims: tuple[int, ...] | None = None
    """The claims this evaluator holds against the case (the hallucinated ones), by position in
    the case's claims; None for an evaluator that does not judge claims one by one."""


class CaseResult(_Frozen):
    """Everything the run learned about one case."""

    id: str
    input_hash: str
    status: Status
    query: str = ""
    """The query, kept so that reports and comments can show it without the dataset."""
    claims: tuple[ClaimVerdict, ...] = ()
    facts: tuple[ClaimVerdict, ...] = ()
    """Verdicts on the facts retrieval had to bring, when the case names any."""
    chunks: tuple[ChunkRating, ...] = ()
    """Ratings of the retrieved chunks, when an evaluator asked for them."""
    retrieved: tuple[ChunkRef, ...] = ()
    """The retrieved chunks' ids and sources in rank order, when the dataset names them."""
    retrieved_texts: tuple[str, ...] = ()
    """A short digest of each retrieved chunk's text, in rank order, when the dataset names the
    chunks: it tells a chunk whose text changed from one whose id did."""
    labels: Labels | None = None
    """What the case's retrieval should find, as the dataset labels it."""
    results: dict[str, EvaluationResult] = Field(default_factory=dict)
    error: str | None = None
    """Why the case could not be judged, when it could not."""

    def failing_evaluators(self) -> list[str]:
        """The evaluators whose score of this case is below their threshold."""
        return [name for name, result in self.results.items() if result.passed is False]


class JudgeInfo(_Frozen):
    """Which judge produced a report; part of a baseline's provenance."""

    provider: str
    model: str
    prompt_version: str
    heuristic: bool = False
    """True for the offline judge: its verdicts come from grounding rules, not a language model."""
    endpoint: str | None = None
    """Where the judge was reached: a custom base URL, or the cloud platform's region/project;
    None for Anthropic's own API."""
    structured_output: Literal["schema", "tool", "prompt"] | None = None
    """How the judge's replies were kept to their JSON shape (``judge.structured_output``): the
    JSON schema, one forced tool, or JSON asked for in the prompt; None for judges that are not
    language models."""

    @property
    def shows_confidence(self) -> bool:
        """Whether a reader is shown its verdicts' confidence.

        Not a heuristic judge's, whose figure is fixed per rule, not measured. The comment and
        the HTML report both ask here.
        """
        return not self.heuristic


class EvaluatorInfo(_Frozen):
    """An evaluator as configured for a run."""

    threshold: float = Field(ge=0.0, le=1.0)
    version: str
    options: dict[str, Any] = Field(default_factory=dict)


class EvaluatorSummary(_Frozen):
    """An evaluator's result over the whole run."""

    score: float | None
    """Mean over the cases it could judge; None when it judged none."""
    pass_rate: float | None
    """Share of judged cases whose own score reached the threshold."""
    passed: bool
    threshold: float
    judged: int = 0
    errors: int = 0
    claims: int | None = None
    """For a score over claims (or needed facts): how many the cases judged made; None for
    another score."""
    checked: int | None = None
    """How many of those claims the judge could check: all but those not verifiable offline."""

    @property
    def coverage(self) -> float | None:
        """The share of claims checked, beside a score over claims; None for another score."""
        return coverage_of(self.checked, self.claims)


def coverage_of(checked: int | None, claims: int | None) -> float | None:
    """The share of ``claims`` the judge checked; None for a score that is not over claims.

    A run that made no claims checked all of them.
    """
    if claims is None or checked is None:
        return None
    return checked / claims if claims else 1.0


class RunSummary(_Frozen):
    """Counts and per-evaluator results of a run."""

    cases: int
    errors: int
    evaluators: dict[str, EvaluatorSummary]

    @classmethod
    def of(cls, cases: Iterable[CaseResult], evaluators: Mapping[str, EvaluatorInfo]) -> RunSummary:
        """Per-evaluator means over the cases judged whole; a case with an error is left out.

        A case whose claims failed to judge is left out of every evaluator's mean, relevance's
        included, so that every mean is over the same cases.
        """
        builder = SummaryBuilder(evaluators)
        for case in cases:
            builder.add(case)
        return builder.summary()

    @property
    def shortfalls(self) -> tuple[str, ...]:
        """Each evaluator that does not pass, and why: below its threshold, or no score at all."""
        return tuple(
            f"{name}: {NOT_SCORED}"
            if summary.score is None
            else f"{name}: {summary.score:.3f} is below the threshold {summary.threshold:.2f}"
            for name, summary in self.evaluators.items()
            if not summary.passed
        )


class SummaryBuilder:
    """A run summary accumulated case by case, so that a streamed run never holds its cases."""

    def __init__(self, evaluators: Mapping[str, EvaluatorInfo]) -> None:
        self.evaluators = dict(evaluators)
        self.cases = 0
        self.errors = 0
        self._sums = dict.fromkeys(evaluators, 0.0)
        self._judged = dict.fromkeys(evaluators, 0)
        self._passing = dict.fromkeys(evaluators, 0)
        self._failed = dict.fromkeys(evaluators, 0)
        self._claims: dict[str, list[int]] = {}
        """Per evaluator over claims: the claims made and the claims not checked."""

    def add(self, case: CaseResult) -> None:
        """Count one case."""
        self.cases += 1
        self.errors += case.status == "error"
        for name in self.evaluators:
            result = case.results.get(name)
            if result is None:
                continue
            self._failed[name] += result.status == "error"
            if case.status == "ok" and result.status == "ok" and result.score is not None:
                self._sums[name] += result.score
                self._judged[name] += 1
                self._passing[name] += bool(result.passed)
            made = result.details.get(CLAIMS_DETAIL)
            if case.status == "ok" and result.status != "error" and isinstance(made, int):
                tally = self._claims.setdefault(name, [0, 0])
                tally[0] += made
                tally[1] += int(result.details.get(UNCHECKED_DETAIL, 0))

    def summary(self) -> RunSummary:
        """The summary of the cases counted so far."""
        summaries: dict[str, EvaluatorSummary] = {}
        for name, info in self.evaluators.items():
            judged = self._judged[name]
            score = round(self._sums[name] / judged, 6) if judged else None
            made, unchecked = self._claims.get(name, (None, 0))
            summaries[name] = EvaluatorSummary(
                score=score,
                pass_rate=round(self._passing[name] / judged, 6) if judged else None,
                passed=score is not None and score >= info.threshold,
                threshold=info.threshold,
                judged=judged,
                errors=self._failed[name],
                claims=made,
                checked=None if made is None else made - unchecked,
            )
        return RunSummary(cases=self.cases, errors=self.errors, evaluators=summaries)


class ReportHead(_Frozen):
    """Everything a run report says but its cases: what streamed readers and writers pass around."""

    schema_version: int = SCHEMA_VERSION
    judge: JudgeInfo
    evaluators: dict[str, EvaluatorInfo]
    summary: RunSummary
    usage: Usage
    notices: tuple[str, ...] = ()
    stopped_early: str | None = None
    shard: str | None = None


class RunReport(_Frozen):
    """The result of ``ragaliq run``: the input of the comparison and of every rendering."""

    schema_version: int = SCHEMA_VERSION
    judge: JudgeInfo
    evaluators: dict[str, EvaluatorInfo]
    summary: RunSummary
    usage: Usage
    cases: tuple[CaseResult, ...]
    notices: tuple[str, ...] = ()
    """Things the user should know about the run, e.g. that a heuristic judge was used."""
    stopped_early: str | None = None
    """Why the run stopped before judging every case (budget, unusable judge); None otherwise."""
    shard: str | None = None
    """``K/N`` when the run judged one shard of the dataset; None for a whole run."""

    @field_validator("schema_version")
    @classmethod
    def _supported(cls, value: int) -> int:
        if value != SCHEMA_VERSION:
            raise ValueError(
                f"schema_version {value} is not the supported {SCHEMA_VERSION}; produce the "
                "report again with this version of RagaliQ Gate"
            )
        return value

    @property
    def head(self) -> ReportHead:
        """The report without its cases."""
        return ReportHead.model_validate(self.model_dump(exclude={"cases"}))

    def iter_cases(self) -> Iterator[CaseResult]:
        """The cases in order (as a streamed report file gives them)."""
        return iter(self.cases)

    @model_validator(mode="after")
    def _summary_from_cases(self) -> RunReport:
        """The summary is always what the cases say: a summary edited by hand counts for nothing."""
        summary = RunSummary.of(self.cases, self.evaluators)
        if summary != self.summary:
            object.__setattr__(self, "summary", summary)  # frozen, but still being built here
        return self


class CasePlan(_Frozen):
    """What one case of a dry run would need."""

    case_id: str
    operations: int
    cache_hits: int
    calls: int


class Preflight(_Frozen):
    """The estimate of a whole run (``ragaliq run --dry-run``); nothing was called."""

    judge: JudgeInfo
    cases: tuple[CasePlan, ...]
    usage: Usage
    """Estimated calls, tokens and USD; ``cache_hits`` counts operations the cache answers."""
    notices: tuple[str, ...] = ()

"""How Claude is asked each question: one row per question, declared once.

A :class:`Wording` says everything judge-side about one
:class:`~ragaliq.evaluators.questions.Question`: the prompt sections it is asked with (files in
:mod:`ragaliq.judges.prompts`), the instruction that closes the user's turn, the pydantic model
its reply must validate against (its JSON schema is what ``judge.structured_output`` sends, by
name as a tool with ``tool``), what a valid reply must hold besides (``check``: one verdict per
claim, chunks that exist), how a reply becomes the answer (``read``) and the size of a typical
reply (for ``--dry-run`` estimates). Its version is a hash of all of that, so a change to one
question is a new version of that question alone: only its cached answers are asked again.

Which questions go in one call, and the text of a call, is :mod:`ragaliq.judges.calls`. Asking a
new question of Claude is a row here (with its reply model, which may be the answer itself) and
its prompt file. Nothing here loads the Anthropic SDK.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Generic, TypeVar

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from ragaliq.evaluators.questions import (
    CHUNKS,
    EXTRACT,
    FACTS,
    RELEVANCE,
    VERIFY,
    Answers,
    Question,
    Questions,
)
from ragaliq.judges.base import no_context_verdicts, verified_evidence
from ragaliq.judges.prompts import Prompts
from ragaliq.models import (
    ChunkRating,
    ChunkRatings,
    ClaimsResult,
    ClaimVerdict,
    RelevanceResult,
    TestCase,
    VerdictName,
    VerificationResult,
)
from ragaliq.text.citations import CitationReader

__all__ = [
    "PROMPT_VERSION",
    "WORDINGS",
    "ChunkItem",
    "ChunksReply",
    "ExtractReply",
    "InvalidReply",
    "RelevanceReply",
    "Shown",
    "VerdictItem",
    "VerifyReply",
    "Wording",
    "answered_without_judge",
    "cache_payload",
    "check_chunk_ids",
    "check_indices",
    "prompt_version",
    "wording_version",
]

R = TypeVar("R", bound=BaseModel)
A = TypeVar("A", bound=BaseModel)


class InvalidReply(Exception):
    """A reply that does not validate; its message is what the re-ask tells the model.

    ``shape`` is true when the reply is not of the schema's shape at all (not JSON, another
    object, no tool call): the sign of an endpoint that ignored how the reply was asked for.
    """

    def __init__(self, message: str, *, shape: bool = False) -> None:
        super().__init__(message)
        self.shape = shape


class _Reply(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ExtractReply(_Reply):
    claims: list[str] = Field(description="The atomic, self-contained factual claims, in order.")


def _none_as_empty(value: Any) -> Any:
    return "" if value is None else value


Note = Annotated[str, BeforeValidator(_none_as_empty)]
"""Free text a reply gives besides its answer (a quote, a reason): null, as open models write
"none", is the empty text. The schema still asks for a string."""


class VerdictItem(_Reply):
    index: int = Field(description="The item's number, exactly as given.")
    verdict: VerdictName = Field(description="How far the context backs it.")
    evidence: Note = Field(description="The shortest exact quote from the context, or ''.")
    """Null is the empty quote: it backs nothing."""
    chunks: list[int] = Field(description="The ids of the chunks that back it; [] if none does.")
    """Ids the context does not have make the reply invalid (it is asked again)."""
    reason: Note = Field(description="One short sentence explaining the verdict.")
    """Null is no reason given; the verdict stands on its own."""
    confidence: float = Field(ge=0.0, le=1.0, description="Confidence in the verdict, 0 to 1.")


class VerifyReply(_Reply):
    verdicts: list[VerdictItem] = Field(description="One entry per item, in order.")


class ChunkItem(_Reply):
    chunk: int = Field(description="The chunk's id, exactly as given.")
    relevant: bool = Field(description="Whether the chunk helps answer the query.")
    reason: Note = Field(description="One short sentence explaining the rating.")


class ChunksReply(_Reply):
    chunks: list[ChunkItem] = Field(description="One entry per chunk, in order.")


class RelevanceReply(_Reply):
    score: float = Field(ge=0.0, le=1.0, description="How well the response answers the query.")
    reasoning: Note = Field(description="One or two sentences.")


@dataclass(frozen=True, kw_only=True)
class Shown:
    """What one call shows for a question: the case, and the items it is asked about there."""

    case: TestCase
    items: tuple[str, ...] = ()
    """The claims (or needed facts) of this call, numbered from 0 in it."""


def cites_chunks(case: TestCase) -> bool:
    """Whether the response cites a retrieved chunk with a marker of the default form."""
    reader = CitationReader.of(chunks=len(case.context), ids=[r.id for r in case.chunk_refs])
    return bool(reader.find(case.response))


@dataclass(frozen=True, kw_only=True, eq=False)
class Wording(Generic[R, A]):
    """One question as Claude is asked it."""

    question: Question[A]
    prompt: tuple[str, ...]
    """The prompt sections (files in :mod:`ragaliq.judges.prompts`): the task, rules, examples.
    A section two questions name is shown once when they are asked together."""
    ask: str
    """The instruction that closes the user's turn."""
    reply: type[R]
    """The reply's model; its JSON schema is the structured output asked for."""
    read: Callable[[R, Shown], A]
    """The answer a valid reply gives."""
    tool: str
    """The one tool the reply is asked for as, with ``structured_output: tool``, when the question
    is asked alone."""
    reply_tokens: Callable[[TestCase, int], int]
    """A typical reply's output tokens, for the case and the number of items in the call."""
    check: Callable[[R, Shown], None] | None = None
    """Raises :class:`InvalidReply` for a reply that validates but cannot be read: a verdict
    missing for one claim, a chunk that does not exist."""
    join: Callable[[Sequence[A]], A] | None = None
    """For a question over items: its answers over several calls, as one answer in order."""
    cited: tuple[str, ...] = ()
    """Sections shown only for a case whose response cites its chunks (``[2]``, ``[doc-7]``):
    a case without citations is not asked to read them, nor pays for them."""

    def sections(self, case: TestCase) -> tuple[str, ...]:
        """The prompt sections shown for ``case``."""
        return self.prompt + self.cited if self.cited and cites_chunks(case) else self.prompt


def check_indices(items: Sequence[VerdictItem], count: int, noun: str) -> None:
    """Refuse verdicts that do not number the ``count`` items from 0, each once."""
    seen = [item.index for item in items]
    unknown = sorted({i for i in seen if not 0 <= i < count})
    if unknown:
        raise InvalidReply(
            f"unknown {noun} index {unknown[0]}; {noun}s are numbered 0 to {count - 1}"
        )
    doubled = _doubled(seen)
    if doubled:
        raise InvalidReply(f"{noun} {doubled[0]} has more than one verdict")
    missing = sorted(set(range(count)) - set(seen))
    if missing:
        shown = ", ".join(str(i) for i in missing[:10])
        raise InvalidReply(f"no verdict for {noun} {shown}; give one verdict for every {noun}")


def _doubled(ids: Sequence[int]) -> list[int]:
    """The ids given more than once, in order."""
    return sorted(i for i, times in Counter(ids).items() if times > 1)


def check_chunk_ids(ids: Sequence[int], count: int, where: str) -> None:
    """Refuse chunk ids the context does not have (chunks are numbered from 1)."""
    unknown = sorted({i for i in ids if not 1 <= i <= count})
    if unknown:
        raise InvalidReply(
            f"{where} names chunk {unknown[0]}, which does not exist; chunks are numbered "
            f"1 to {count}"
        )


def _verdict_check(noun: str) -> Callable[[VerifyReply, Shown], None]:
    def check(reply: VerifyReply, shown: Shown) -> None:
        check_indices(reply.verdicts, len(shown.items), noun)
        for item in reply.verdicts:
            where = f"the verdict for {noun} {item.index}"
            check_chunk_ids(item.chunks, len(shown.case.context), where)

    return check


def _read_verdicts(reply: VerifyReply, shown: Shown) -> VerificationResult:
    ordered = sorted(reply.verdicts, key=lambda item: item.index)
    verdicts = (
        ClaimVerdict(
            text=text,
            verdict=item.verdict,
            evidence=item.evidence.strip() or None,
            reason=item.reason,
            confidence=item.confidence,
            chunks=tuple(sorted(set(item.chunks))),
        )
        for text, item in zip(shown.items, ordered, strict=True)
    )
    return VerificationResult(
        verdicts=tuple(verified_evidence(v, shown.case.context) for v in verdicts)
    )


def _join_verdicts(parts: Sequence[VerificationResult]) -> VerificationResult:
    return VerificationResult(verdicts=tuple(v for part in parts for v in part.verdicts))


def _check_chunks(reply: ChunksReply, shown: Shown) -> None:
    count = len(shown.case.context)
    seen = [item.chunk for item in reply.chunks]
    check_chunk_ids(seen, count, "a rating")
    doubled = _doubled(seen)
    if doubled:
        raise InvalidReply(f"chunk {doubled[0]} is rated more than once")
    missing = sorted(set(range(1, count + 1)) - set(seen))
    if missing:
        shown_ids = ", ".join(str(i) for i in missing[:10])
        raise InvalidReply(f"no rating for chunk {shown_ids}; rate every chunk")


def _read_chunks(reply: ChunksReply, shown: Shown) -> ChunkRatings:
    ordered = sorted(reply.chunks, key=lambda item: item.chunk)
    return ChunkRatings(
        ratings=tuple(ChunkRating(relevant=item.relevant, reason=item.reason) for item in ordered)
    )


def _verdicts(
    question: Question[VerificationResult], prompt: str, *, ask: str, cited: tuple[str, ...] = ()
) -> Wording[VerifyReply, VerificationResult]:
    """A question over items, answered by a verdict for each: the verdict fields are shared."""
    noun = question.name.removeprefix("verify_").removesuffix("s")
    return Wording(
        question=question,
        prompt=(prompt, "verdicts.md"),
        ask=ask,
        reply=VerifyReply,
        read=_read_verdicts,
        check=_verdict_check(noun),
        join=_join_verdicts,
        tool=f"record_{noun}_verdicts",
        reply_tokens=lambda _, items: 75 * items + 10,
        cited=cited,
    )


WORDINGS: Mapping[str, Wording[Any, Any]] = {
    w.question.name: w
    for w in (
        Wording(
            question=EXTRACT,
            prompt=("extract_claims.md",),
            cited=("extract_citations.md",),
            ask="Extract the claims of the response.",
            reply=ExtractReply,
            read=lambda reply, _: ClaimsResult(
                claims=tuple(c.strip() for c in reply.claims if c.strip())
            ),
            tool="record_claims",
            reply_tokens=lambda case, _: len(case.response) // 4 + 20,
        ),
        _verdicts(
            VERIFY,
            "verify_claims.md",
            ask="Verify each claim against the context.",
            cited=("verify_citations.md",),
        ),
        Wording(
            question=RELEVANCE,
            prompt=("relevance.md",),
            ask="Rate how well the response answers the query.",
            reply=RelevanceReply,
            read=lambda reply, _: RelevanceResult(score=reply.score, reasoning=reply.reasoning),
            tool="record_relevance",
            reply_tokens=lambda _, __: 60,
        ),
        Wording(
            question=CHUNKS,
            prompt=("rate_chunks.md",),
            ask="Rate whether each chunk of the context is relevant to the query.",
            reply=ChunksReply,
            read=_read_chunks,
            check=_check_chunks,
            tool="record_chunk_ratings",
            reply_tokens=lambda case, _: 40 * len(case.context) + 10,
        ),
        _verdicts(FACTS, "verify_facts.md", ask="Check each fact against the context."),
    )
}
"""How Claude is asked every question, by question name."""


@functools.cache
def wording_version(question: Question[Any]) -> str:
    """A hash of how the question is asked: what it reads, its sections, its ask and reply model.

    A change to any of it is a new version of this question alone.
    """
    wording = WORDINGS[question.name]
    prompts = Prompts.load()
    material = [
        question.name,
        list(question.reads),
        prompts.system,
        [[name, prompts.sections[name]] for name in wording.prompt + wording.cited],
        wording.ask,
        wording.tool,
        wording.reply.model_json_schema(),
    ]
    return _digest(material)


@functools.cache
def prompt_version(*, together: bool = True) -> str:
    """The Claude judge's prompt version, recorded in every report: every question's version.

    ``together`` is the default way of asking (one call per part of the case read); asking each
    question in its own call (``judge.one_question_per_call``) is another version, so a baseline
    judged one way is never silently compared with a run judged the other.
    """
    prompts = Prompts.load()
    versions = [[name, wording_version(w.question)] for name, w in WORDINGS.items()]
    return _digest([prompts.system, prompts.compose, versions, "together" if together else "apart"])


def _digest(material: list[Any]) -> str:
    canonical = json.dumps(material, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:12]


PROMPT_VERSION = prompt_version()
"""The prompt version of the default way of asking."""


def cache_payload(
    question: Question[Any], case: TestCase, claims: Sequence[str] = (), *, sample: int = 0
) -> dict[str, Any]:
    """What a question's answer depends on (the cache's key): exactly what the question reads.

    The repetition (``sample``, ``judge.repeat``) counts only for a question over items, and only
    when given.
    """
    payload: dict[str, Any] = {}
    for part in question.reads:
        if part == "context":
            payload[part] = list(case.context)
        elif part in ("claims", "facts"):
            payload[part] = list(question.items(case, claims))
            if sample:
                payload["sample"] = sample
        else:
            payload[part] = case.query if part == "query" else case.response
    return payload


def answered_without_judge(
    questions: Questions, case: TestCase, claims: Sequence[str] = ()
) -> tuple[Answers, list[Question[Any]]]:
    """The answers known without asking any judge, and the questions left to ask.

    No item to verify is no verdict; items without a context are each NOT_ENOUGH_INFO (nothing
    can back them); a case without chunks has none to rate.
    """
    known: dict[str, BaseModel] = {}
    left: list[Question[Any]] = []
    for question in questions:
        items = question.items(case, claims)
        if question in (VERIFY, FACTS) and not items:
            known[question.name] = VerificationResult(verdicts=())
        elif question in (VERIFY, FACTS) and not case.has_context:
            known[question.name] = VerificationResult(verdicts=no_context_verdicts(items).verdicts)
        elif question is CHUNKS and not case.context:
            known[question.name] = ChunkRatings(ratings=())
        else:
            left.append(question)
    return Answers(found=known), left

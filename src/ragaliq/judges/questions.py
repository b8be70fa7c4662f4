"""The questions Claude is asked about a case, each declared once: one row per operation.

A :class:`Question` says everything judge-side about one operation of the
:class:`~ragaliq.judges.base.Judge` protocol: the prompt file that asks it, what of the case it
shows Claude (in XML-delimited blocks, the context first so that it can be prompt-cached), the
instruction that closes the turn, the pydantic model the reply must validate against (its JSON
schema is what ``judge.structured_output`` sends, by name as a tool with ``tool``), and the size
of a typical reply (for ``--dry-run`` estimates). The judge cache's key is what the question
shows: an answer depends on nothing else.

Asking a new question of Claude is one row here, its prompt file (listed in
:data:`~ragaliq.judges.prompts.PROMPT_FILES`) and the judge's method that turns the reply into a
result. Nothing here loads the Anthropic SDK.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Generic, Literal, TypeVar

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from ragaliq.judges.base import Operation
from ragaliq.judges.prompts import as_data
from ragaliq.models import TestCase, VerdictName

__all__ = [
    "CHUNKS",
    "EXTRACT",
    "QUESTIONS",
    "RELEVANCE",
    "VERIFY",
    "ChunkItem",
    "ChunksReply",
    "ExtractReply",
    "Part",
    "Question",
    "RelevanceReply",
    "VerdictItem",
    "VerifyReply",
    "cache_payload",
    "claim_batches",
    "context_text",
    "question_text",
    "text_block",
]

M = TypeVar("M", bound=BaseModel)
Part = Literal["query", "response", "claims"]
"""What a question shows of a case besides its context: each in its own block."""


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
    index: int = Field(description="The claim's number, exactly as given.")
    verdict: VerdictName = Field(description="How far the context backs the claim.")
    evidence: Note = Field(description="The shortest exact quote from the context, or ''.")
    """Null is the empty quote: it backs nothing."""
    reason: Note = Field(description="One short sentence explaining the verdict.")
    """Null is no reason given; the verdict stands on its own."""
    confidence: float = Field(ge=0.0, le=1.0, description="Confidence in the verdict, 0 to 1.")


class VerifyReply(_Reply):
    verdicts: list[VerdictItem] = Field(description="One entry per claim, in order.")


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
class Question(Generic[M]):
    """One operation as Claude is asked it."""

    operation: Operation
    label: str
    """The operation in messages: ``verify claims``."""
    prompt: str
    """The prompt file (in :mod:`ragaliq.judges.prompts`) with the task, rules and examples."""
    context: bool
    """Whether the case's context comes first, in its own (prompt-cached) block."""
    shows: tuple[Part, ...]
    """What else of the case the question shows, in this order. With ``claims``, the claims (and
    facts) are numbered in one list, and sent ``judge.claims_per_call`` at a time."""
    ask: str
    """The instruction that closes the user's turn."""
    reply: type[M]
    """The reply's model; its JSON schema is the structured output asked for."""
    tool: str
    """The one tool the reply is asked for as, with ``structured_output: tool``."""
    reply_tokens: Callable[[TestCase, int], int]
    """A typical reply's output tokens, for the case and the number of claims in the call."""

    @property
    def batched(self) -> bool:
        """Whether the claims are split into calls of ``judge.claims_per_call``."""
        return "claims" in self.shows


EXTRACT = Question(
    operation="extract_claims",
    label="extract claims",
    prompt="extract_claims.md",
    context=False,
    shows=("query", "response"),
    ask="Extract the claims of the response.",
    reply=ExtractReply,
    tool="record_claims",
    reply_tokens=lambda case, _: len(case.response) // 4 + 20,
)
VERIFY = Question(
    operation="verify_claims",
    label="verify claims",
    prompt="verify_claims.md",
    context=True,
    shows=("claims",),
    ask="Verify each claim against the context.",
    reply=VerifyReply,
    tool="record_verdicts",
    reply_tokens=lambda _, claims: 70 * claims + 10,
)
RELEVANCE = Question(
    operation="evaluate_relevance",
    label="rate relevance",
    prompt="relevance.md",
    context=False,
    shows=("query", "response"),
    ask="Rate how well the response answers the query.",
    reply=RelevanceReply,
    tool="record_relevance",
    reply_tokens=lambda _, __: 60,
)
CHUNKS = Question(
    operation="rate_chunks",
    label="rate chunks",
    prompt="rate_chunks.md",
    context=True,
    shows=("query",),
    ask="Rate whether each chunk of the context is relevant to the query.",
    reply=ChunksReply,
    tool="record_chunk_ratings",
    reply_tokens=lambda case, _: 40 * len(case.context) + 10,
)
QUESTIONS: Mapping[Operation, Question[Any]] = {
    q.operation: q for q in (EXTRACT, VERIFY, RELEVANCE, CHUNKS)
}
"""Every question, by the operation it answers."""


def text_block(text: str) -> dict[str, Any]:
    """One text block of a message."""
    return {"type": "text", "text": text}


def context_text(case: TestCase) -> str:
    """The case's context, chunk by chunk, each numbered from 1 and framed as data."""
    chunks = "\n".join(
        f'<chunk id="{i + 1}">{as_data(chunk)}</chunk>' for i, chunk in enumerate(case.context)
    )
    return f"<context>\n{chunks}\n</context>"


def question_text(question: Question[Any], case: TestCase, claims: Sequence[str] = ()) -> str:
    """The block after the context: what the question shows, framed as data, then its ask."""
    framed = "\n".join(_framed(part, case, claims) for part in question.shows)
    return f"{framed}\n\n{question.ask}"


def _framed(part: Part, case: TestCase, claims: Sequence[str]) -> str:
    if part == "claims":
        listing = "\n".join(f"{i}. {as_data(claim)}" for i, claim in enumerate(claims))
        return f"<claims>\n{listing}\n</claims>"
    return f"<{part}>{as_data(case.query if part == 'query' else case.response)}</{part}>"


def claim_batches(claims: Sequence[str], size: int) -> list[list[str]]:
    """The claims in calls of at most ``size`` (``judge.claims_per_call``), in order."""
    return [list(claims[start : start + size]) for start in range(0, len(claims), size)]


def cache_payload(
    operation: Operation,
    case: TestCase,
    claims: Sequence[str] = (),
    *,
    sample: int = 0,
    facts: Sequence[str] = (),
) -> dict[str, Any]:
    """What an operation's answer depends on (the cache's key): exactly what its question shows.

    The facts verified with the claims, and the repetition (``sample``), count only when given,
    so that keys without them stay as they were.
    """
    question = QUESTIONS[operation]
    payload: dict[str, Any] = {"context": list(case.context)} if question.context else {}
    for part in question.shows:
        if part != "claims":
            payload[part] = case.query if part == "query" else case.response
            continue
        payload["claims"] = list(claims)
        if facts:
            payload["facts"] = list(facts)
        if sample:
            payload["sample"] = sample
    return payload

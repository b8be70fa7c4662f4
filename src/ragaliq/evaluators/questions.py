"""The questions evaluators ask of the judge: each named once, with what of a case it reads.

A :class:`Question` is the seam between the evaluators and the judges. An evaluator declares the
questions it needs; the runner asks each one a case needs once, whatever evaluators share it;
every judge answers them through one method, ``ask`` (:class:`~ragaliq.judges.base.Judge`). What
a question reads of a case decides which call asks it: the judge asks the questions that read the
context together, and the ones that read only the query and the response together, so a case
costs two calls whatever evaluators are on. How Claude is asked a question (its prompt, the model
its reply must validate against) is the judge's: :mod:`ragaliq.judges.questions`.

Declared here, below the judges, so that an evaluator, and the gate that rescores with one, can
name its questions without loading any judge.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar

from pydantic import BaseModel

from ragaliq.models import (
    ChunkRatings,
    ClaimsResult,
    RelevanceResult,
    TestCase,
    Usage,
    VerificationResult,
)

__all__ = [
    "CHUNKS",
    "EXTRACT",
    "FACTS",
    "QUESTIONS",
    "RELEVANCE",
    "VERIFY",
    "Answers",
    "Part",
    "Question",
    "Questions",
]

A = TypeVar("A", bound=BaseModel)
Part = Literal["context", "query", "response", "claims", "facts"]
"""What a question reads of a case: the retrieved context, the query, the response, the claims
extracted from the response, or the facts the case says retrieval had to bring."""


@dataclass(frozen=True, kw_only=True, eq=False)
class Question(Generic[A]):
    """One thing an evaluator needs to know about a case, and what it reads to find it out."""

    name: str
    """Unique; how judges, caches and replies name it (``verify_claims``)."""
    reads: tuple[Part, ...]
    """What of the case the question reads. With ``claims`` or ``facts`` it is asked about each
    of them (its items), ``judge.claims_per_call`` at a time."""
    answer: type[A]
    """The model of its answer: what a judge gives, a cache keeps and an evaluator reads."""
    required: tuple[Literal["query", "response"], ...] = ()
    """What must not be blank for the question to be asked at all: an empty answer has no
    claims, and a blank query makes any answer look relevant. The evaluators that ask it cannot
    judge such a case (an error, never a score)."""

    @property
    def label(self) -> str:
        """The question in messages: ``verify claims``."""
        return self.name.replace("_", " ")

    @property
    def reads_context(self) -> bool:
        """Whether it reads the context: such questions are asked in one call, context first."""
        return "context" in self.reads

    def items(self, case: TestCase, claims: Sequence[str]) -> tuple[str, ...]:
        """What the question is asked about one by one: the claims, or the case's needed facts."""
        if "claims" in self.reads:
            return tuple(claims)
        if "facts" in self.reads:
            return case.needed_facts
        return ()


EXTRACT = Question(
    name="extract_claims", reads=("query", "response"), answer=ClaimsResult, required=("response",)
)
"""The claims the response makes, each one self-contained fact: asked first."""
VERIFY = Question(name="verify_claims", reads=("context", "claims"), answer=VerificationResult)
"""A verdict for each claim, with the chunks that back it: asked once the claims are known."""
RELEVANCE = Question(
    name="evaluate_relevance",
    reads=("query", "response"),
    answer=RelevanceResult,
    required=("response", "query"),
)
"""How well the response answers the query, from 0 to 1."""
CHUNKS = Question(
    name="rate_chunks", reads=("context", "query"), answer=ChunkRatings, required=("query",)
)
"""Whether each retrieved chunk helps answer the query."""
FACTS = Question(name="verify_facts", reads=("context", "facts"), answer=VerificationResult)
"""A verdict for each needed fact: whether the context holds what a good answer needs."""
Questions = Sequence[Question[Any]]
"""Questions asked together."""
QUESTIONS: Mapping[str, Question[Any]] = {
    q.name: q for q in (EXTRACT, VERIFY, RELEVANCE, CHUNKS, FACTS)
}
"""Every question, by name."""


@dataclass(frozen=True, kw_only=True)
class Answers:
    """What a judge answered about one case: each question's answer, or why it has none.

    A question the judge could not answer (an invalid reply asked twice, a failed request) is
    in ``failed`` with the reason; it never has a guessed answer.
    """

    found: Mapping[str, BaseModel] = field(default_factory=dict)
    """Each answered question's answer, by question name."""
    failed: Mapping[str, str] = field(default_factory=dict)
    """Why each unanswered question has no answer, by question name."""
    usage: Usage = field(default_factory=Usage)
    """What the answers cost, over every call they took."""

    def get(self, question: Question[A]) -> A | None:
        """The question's answer, or None (not asked, or failed)."""
        found = self.found.get(question.name)
        return found if isinstance(found, question.answer) else None

    def error(self, question: Question[Any]) -> str | None:
        """Why the question has no answer, when it failed."""
        return self.failed.get(question.name)

    def __add__(self, other: Answers) -> Answers:
        return Answers(
            found={**self.found, **other.found},
            failed={**self.failed, **other.failed},
            usage=self.usage + other.usage,
        )

    @classmethod
    def failing(cls, questions: Questions, reason: str, usage: Usage | None = None) -> Answers:
        """No answer to any of ``questions``, for one reason."""
        return cls(
            failed=dict.fromkeys((q.name for q in questions), reason), usage=usage or Usage()
        )

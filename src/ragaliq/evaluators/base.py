"""The ``Evaluator`` base class: one score per case from the judge's shared answers.

An evaluator owns everything about itself: its name and version, the questions it asks the judge
(:mod:`ragaliq.evaluators.questions`), its default threshold, its options, declared once as a
pydantic model (``Options``) that is at the same time its section of ``ragaliq.yaml``
(``evaluators.<name>``), what the report records, and what the gate compares, and the findings it
lists per case (``findings``). Adding an evaluator is one module and one line in the registry.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, TypeVar

from pydantic import BaseModel

from ragaliq._fields import Flag, Fraction, Section
from ragaliq.evaluators.findings import FindingKind
from ragaliq.evaluators.questions import CHUNKS, FACTS, RELEVANCE, VERIFY, Answers, Question
from ragaliq.models import (
    CaseResult,
    ChunkRating,
    ClaimVerdict,
    EvaluationResult,
    EvaluatorInfo,
    RelevanceResult,
    TestCase,
    Verdict,
)
from ragaliq.text.plain import is_blank

__all__ = ["CaseJudgement", "Evaluator", "EvaluatorOptions", "VerdictLabel"]

VerdictLabel = Callable[[Verdict], str]
"""How a verdict is named to the reader (the report's labels, which live above this layer)."""


class EvaluatorOptions(Section):
    """What every evaluator's section of ``ragaliq.yaml`` has; an evaluator adds its own options."""

    enabled: Flag = True
    threshold: Fraction | None = None
    """Minimum mean score; each evaluator has its own default."""
    max_drop: Fraction | None = None
    """Largest drop from the baseline tolerated; defaults to ``gate.max_drop``."""

    stricter_when_higher: ClassVar[frozenset[str]] = frozenset()
    """Options a pull request may raise at once, since a higher value is a stricter gate."""

    def scoring(self) -> dict[str, Any]:
        """The options that change scores, as the report records them."""
        return self.model_dump(mode="json", exclude={"enabled", "threshold", "max_drop"})


OptionsT = TypeVar("OptionsT", bound=EvaluatorOptions)
AnswerT = TypeVar("AnswerT", bound=BaseModel)


@dataclass(frozen=True, kw_only=True)
class CaseJudgement:
    """What the judge said about one case; every evaluator reads from this one record."""

    case: TestCase
    verdicts: tuple[ClaimVerdict, ...] | None = None
    """One verdict per claim, or None when no evaluator asked for claims."""
    facts: tuple[ClaimVerdict, ...] | None = None
    """One verdict per needed fact (``TestCase.needed_facts``), when an evaluator asked."""
    relevance: RelevanceResult | None = None
    chunks: tuple[ChunkRating, ...] | None = None
    """One rating per retrieved chunk, when an evaluator asked."""
    answers: Answers = field(default_factory=Answers)
    """Every answer the judge gave about the case, by question (the fields above are the
    answers of the built-in questions, read the way their evaluators need them)."""

    @classmethod
    def of(cls, case: TestCase, answers: Answers) -> CaseJudgement:
        """What the judge answered about ``case``, each built-in question's answer in its field."""
        verdicts, facts, chunks = answers.get(VERIFY), answers.get(FACTS), answers.get(CHUNKS)
        return cls(
            case=case,
            verdicts=verdicts.verdicts if verdicts is not None else None,
            facts=facts.verdicts if facts is not None else None,
            relevance=answers.get(RELEVANCE),
            chunks=chunks.ratings if chunks is not None else None,
            answers=answers,
        )

    def answer(self, question: Question[AnswerT]) -> AnswerT | None:
        """The judge's answer to ``question`` about the case, when it was asked and answered."""
        return self.answers.get(question)


class Evaluator(ABC, Generic[OptionsT]):
    """Turns a :class:`CaseJudgement` into an :class:`EvaluationResult`.

    Subclasses set the class variables, declare ``Options`` (their config section) and implement
    :meth:`evaluate`; the runner asks the judge only the ``questions`` some evaluator declares,
    each once per case.
    """

    name: ClassVar[str]
    version: ClassVar[str]
    """Bumped whenever scoring changes, so a changed score shows up as a changed evaluator."""
    default_threshold: ClassVar[float]
    questions: ClassVar[tuple[Question[Any], ...]] = ()
    """What it asks the judge about each case; none for an evaluator that asks nothing."""
    Options: ClassVar[type[EvaluatorOptions]] = EvaluatorOptions
    findings: ClassVar[tuple[type[FindingKind], ...]] = ()
    """The kinds of finding it lists per case (:mod:`ragaliq.evaluators.findings`)."""

    def __init__(self, options: OptionsT | None = None, /, **values: Any) -> None:
        """Build from an ``Options`` model, or from its fields as keywords (``threshold=0.8``).

        Raises:
            pydantic.ValidationError: a keyword is not an option or its value is invalid.
        """
        if options is None:
            options = self.Options.model_validate(values)  # type: ignore[assignment]
        self.settings: OptionsT = options  # type: ignore[assignment]
        self.threshold = self.threshold_of(self.settings)

    @classmethod
    def threshold_of(cls, options: EvaluatorOptions) -> float:
        """The threshold a config section sets: its own, else this evaluator's default."""
        return cls.default_threshold if options.threshold is None else options.threshold

    @classmethod
    def asks_judge(cls) -> bool:
        """Whether this evaluator asks the judge anything (the retrieval metrics do not)."""
        return bool(cls.questions)

    @classmethod
    def asks(cls, question: Question[Any]) -> bool:
        """Whether this evaluator asks the judge ``question``."""
        return question in cls.questions

    @classmethod
    def reads_response(cls) -> bool:
        """Whether this evaluator judges the case's response (its claims, or its relevance)."""
        return any("response" in q.reads for q in cls.questions)

    @classmethod
    def unjudgeable(cls, case: TestCase) -> str | None:
        """Why this evaluator cannot judge ``case`` at all: a field a question needs is blank.

        Such a case is an ``error`` for it, never a score: an empty answer has no claims and
        would score as perfectly faithful, and a blank query makes any answer look relevant.
        """
        required = {part for q in cls.questions for part in q.required}
        if "response" in required and is_blank(case.response):
            return "the case has no response to judge (an empty answer is never scored)"
        if "query" in required and is_blank(case.query):
            return "the case has no query to judge against"
        return None

    @property
    def options(self) -> dict[str, Any]:
        """Scoring options recorded in the report; empty for evaluators without any."""
        return self.settings.scoring()

    def info(self) -> EvaluatorInfo:
        """How this evaluator is configured, for the report."""
        return EvaluatorInfo(threshold=self.threshold, version=self.version, options=self.options)

    @abstractmethod
    def evaluate(self, judgement: CaseJudgement) -> EvaluationResult:
        """Score one case."""

    def describe_shortfall(self, case: CaseResult, *, label: VerdictLabel) -> list[str]:
        """What pulled this evaluator's score down on a judged case, one line per item.

        The claims, needed facts or chunks behind a low score, as a failing test shows them;
        empty when the score stands on nothing listable (relevance's single judgement, whose
        reasoning already says why).

        Args:
            case: The case's result, as the run report holds it.
            label: Names a verdict for the reader.
        """
        return []

    def result(
        self,
        score: float,
        reasoning: str,
        details: dict[str, Any] | None = None,
        *,
        flagged: tuple[int, ...] | None = None,
    ) -> EvaluationResult:
        """An ``ok`` result, passed when the score reaches the threshold."""
        score = round(min(1.0, max(0.0, score)), 6)
        return EvaluationResult(
            evaluator=self.name,
            score=score,
            passed=score >= self.threshold,
            reasoning=reasoning,
            details=details or {},
            flagged_claims=flagged,
        )

    def skipped(self, reason: str, details: dict[str, Any] | None = None) -> EvaluationResult:
        """A ``skipped`` result: the case gives this evaluator nothing to score (not 0, not 1)."""
        return EvaluationResult(
            evaluator=self.name,
            score=None,
            passed=None,
            status="skipped",
            reasoning=reason,
            details=details or {},
        )

    def error(self, reason: str) -> EvaluationResult:
        """An ``error`` result: the case could not be judged, so there is no score."""
        return EvaluationResult(
            evaluator=self.name, score=None, passed=None, status="error", reasoning=reason
        )

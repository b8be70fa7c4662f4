"""Asking a judge one question, as the tests of a single question do."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ragaliq.errors import JudgeResponseError
from ragaliq.evaluators.questions import Question


async def ask_one(
    judge: Any, question: Question[Any], case: Any, claims: Sequence[str] = ()
) -> Any:
    """The judge's answer to ``question`` (with what asking cost as its usage).

    Raises:
        JudgeResponseError: the judge has no answer to it, with the reason it gave.
    """
    answers = await judge.ask([question], case, claims=claims)
    answer = answers.get(question)
    if answer is None:
        reason = answers.error(question) or "no answer"
        raise JudgeResponseError(f"{question.label}: {reason}", usage=answers.usage)
    return answer.model_copy(update={"usage": answers.usage})

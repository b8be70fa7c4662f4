"""What a question would cost Claude, from the prompt's size, without sending it (``--dry-run``).

Token counts are estimated at four characters a token, output sizes from typical replies (each
question's ``reply_tokens``). A question that shows the claims costs one call per
``judge.claims_per_call`` of them, each carrying the system prompt, the task and the context again.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ragaliq.config import ModelPrice
from ragaliq.judges.pricing import cost_usd
from ragaliq.judges.prompts import Prompts
from ragaliq.judges.questions import Question, claim_batches, context_text, question_text
from ragaliq.models import TestCase, Usage

__all__ = ["CHARS_PER_TOKEN", "estimate_usage"]

CHARS_PER_TOKEN = 4


def estimate_usage(
    question: Question[Any],
    case: TestCase,
    claims: Sequence[str],
    *,
    prompts: Prompts,
    claims_per_call: int,
    price: ModelPrice,
) -> Usage:
    """The calls, tokens and USD of asking ``question`` about ``case`` (and its ``claims``)."""
    every_call = len(prompts.system) + 2 + len(prompts.tasks[question.prompt])
    if question.context:
        every_call += len(context_text(case))
    if question.batched:
        calls = claim_batches(claims, claims_per_call)
        shown = [len(question_text(question, case, batch)) for batch in calls]
        outputs = [question.reply_tokens(case, len(batch)) for batch in calls]
    else:
        shown = [len(question_text(question, case))]
        outputs = [question.reply_tokens(case, 0)]
    count = max(1, len(outputs))
    usage = Usage(
        calls=count,
        input_tokens=(every_call * count + sum(shown)) // CHARS_PER_TOKEN,
        output_tokens=sum(outputs),
    )
    return usage.model_copy(update={"cost_usd": cost_usd(usage, price)})

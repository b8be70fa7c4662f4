"""What asking Claude would cost, from the prompts' size, without sending anything (``--dry-run``).

Token counts are estimated at four characters a token, output sizes from typical replies (each
question's ``reply_tokens``). The calls are the ones the judge would send
(:func:`~ragaliq.judges.calls.plan_calls`): one per part of the case read, and one more for each
further ``judge.claims_per_call`` claims, each carrying the system prompt and the context again.
"""

from __future__ import annotations

from collections.abc import Sequence

from ragaliq.config import ModelPrice
from ragaliq.judges.calls import Call, asked_text, context_text, system_text
from ragaliq.judges.pricing import cost_usd
from ragaliq.judges.prompts import Prompts
from ragaliq.models import Usage

__all__ = ["CHARS_PER_TOKEN", "estimate_usage"]

CHARS_PER_TOKEN = 4


def estimate_usage(
    groups: Sequence[Sequence[Call]], *, prompts: Prompts, price: ModelPrice
) -> Usage:
    """The calls, tokens and USD of the planned calls."""
    calls = [call for group in groups for call in group]
    chars = sum(_chars(call, prompts) for call in calls)
    output = sum(
        wording.reply_tokens(shown.case, len(shown.items))
        for call in calls
        for wording, shown in call.asked
    )
    usage = Usage(calls=len(calls), input_tokens=chars // CHARS_PER_TOKEN, output_tokens=output)
    return usage.model_copy(update={"cost_usd": cost_usd(usage, price)})


def _chars(call: Call, prompts: Prompts) -> int:
    chars = len(system_text(prompts, call.wordings, call.case)) + len(asked_text(call))
    return chars + (len(context_text(call.case)) if call.reads_context else 0)

"""Structured replies: how a question's reply is asked for, and how it is read back.

A reply's JSON schema is sent the way ``judge.structured_output`` says: as the structured output
format (``schema``), as the one tool the model must call (``tool``), or in the prompt
(``prompt``). With ``auto`` on a custom endpoint all three are tried in turn. Every reply is then
validated against its question's model, however it was asked for; a reply that does not validate
is an :class:`InvalidReply` whose message is what the re-ask tells the model, and which says
whether the reply was of another shape altogether (the sign of an endpoint that ignored how it
was asked).
"""

from __future__ import annotations

import functools
import json
import re
from typing import Any, Literal, TypeVar

import anthropic
from anthropic.types import Message
from pydantic import BaseModel, ValidationError

from ragaliq.judges.questions import ChunksReply, Question, VerifyReply, text_block

__all__ = [
    "MODES",
    "PROMPT_FORMAT",
    "REASK",
    "InvalidReply",
    "Mode",
    "check_chunk_ids",
    "check_claim_indices",
    "fallback_notice",
    "modes_for",
    "parse_reply",
    "request_params",
]

Mode = Literal["schema", "tool", "prompt"]
MODES: tuple[Mode, ...] = ("schema", "tool", "prompt")
"""The ways of asking for structured replies, in the order ``auto`` tries them."""
PROMPT_FORMAT = (
    "Reply with one JSON object and nothing else (no prose before or after it). It must match "
    "this JSON schema exactly:\n{schema}"
)
"""Asks for the JSON in the prompt, for endpoints that honour neither a schema nor a tool."""
REASK = (
    "Your previous reply was rejected: {problem}. Reply again with one JSON object that matches "
    "the schema exactly."
)
_FENCE = re.compile(r"^```(?:json)?\s*\n(.*)\n```$", re.DOTALL)
_SHAPE_ERRORS = frozenset(
    {"missing", "extra_forbidden", "model_type", "model_attributes_type", "dict_type", "list_type"}
)
"""Validation errors that say a reply is not of the schema's shape at all (rather than a value
out of range): what an endpoint that ignores the schema gives."""
_MODE_NAMES: dict[Mode, str] = {"schema": "the JSON schema", "tool": "the forced tool"}
_MODE_HOW: dict[Mode, str] = {
    "schema": "with the JSON schema",
    "tool": "through one forced tool",
    "prompt": "as JSON in the prompt",
}

M = TypeVar("M", bound=BaseModel)


class InvalidReply(Exception):
    """A reply that does not validate; its message is what the re-ask tells the model.

    ``shape`` is true when the reply is not of the schema's shape at all (not JSON, another
    object, no tool call): the sign of an endpoint that ignored how the reply was asked for.
    """

    def __init__(self, message: str, *, shape: bool = False) -> None:
        super().__init__(message)
        self.shape = shape


def modes_for(setting: str, *, custom: bool) -> tuple[Mode, ...]:
    """The ways of asking a run may use: all three in turn with ``auto`` on a custom endpoint."""
    if setting == "auto":
        return MODES if custom else ("schema",)
    return (next(m for m in MODES if m == setting),)


def fallback_notice(platform: str, modes: tuple[Mode, ...], found: int) -> str:
    """What a run says when ``auto`` found that ``platform`` answers only ``modes[found]``."""
    skipped = " and ".join(_MODE_NAMES[m] for m in modes[:found])
    return (
        f"judge.structured_output auto: {platform} ignored {skipped}, so "
        f"replies were asked for {_MODE_HOW[modes[found]]} (and validated as ever); "
        f"set judge.structured_output: {modes[found]} to skip the probing."
    )


@functools.cache
def _schema(reply_model: type[BaseModel]) -> dict[str, Any]:
    return anthropic.transform_schema(reply_model)


def request_params(
    question: Question[Any],
    *,
    model: str,
    system: list[dict[str, Any]],
    blocks: list[dict[str, Any]],
    max_tokens: int,
    mode: Mode,
) -> dict[str, Any]:
    """One request; the last message is always the user's (never an assistant prefill)."""
    reply_model: type[BaseModel] = question.reply
    schema = _schema(reply_model)
    params: dict[str, Any] = {"model": model, "max_tokens": max_tokens, "system": system}
    if mode == "schema":
        params["output_config"] = {"format": {"type": "json_schema", "schema": schema}}
    elif mode == "tool":
        params["tools"] = [
            {
                "name": question.tool,
                "description": "Record your answer; call this exactly once.",
                "input_schema": schema,
            }
        ]
        params["tool_choice"] = {"type": "any"}  # with one tool: that tool, forced
    else:
        blocks = [*blocks, text_block(PROMPT_FORMAT.format(schema=json.dumps(schema)))]
    params["messages"] = [{"role": "user", "content": blocks}]
    return params


def parse_reply(message: Message, question: Question[M], mode: Mode) -> M:
    """The reply in ``message``, validated against the question's model.

    Raises:
        InvalidReply: a refusal, a reply cut off, or one that does not validate.
    """
    if message.stop_reason == "refusal":
        raise InvalidReply("the model refused to answer")
    if message.stop_reason == "max_tokens":
        raise InvalidReply("the reply was cut off at max_tokens; be more concise")
    if mode == "tool":
        calls = [block for block in message.content if block.type == "tool_use"]
        if not calls:
            raise InvalidReply(f"the reply did not call the tool {question.tool}", shape=True)
        if len(calls) > 1:
            raise InvalidReply(f"the reply called {len(calls)} tools; call exactly one, once")
        data: Any = calls[0].input
    else:
        text = "".join(block.text for block in message.content if block.type == "text").strip()
        if mode == "prompt":
            fenced = _FENCE.match(text)
            text = fenced.group(1).strip() if fenced else text
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InvalidReply(f"the reply is not valid JSON ({exc.msg})", shape=True) from exc
    if not isinstance(data, dict):
        raise InvalidReply("the reply is not a JSON object", shape=True)
    try:
        return question.reply.model_validate(data)
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
        first = errors[0]
        where = ".".join(str(p) for p in first["loc"]) or "reply"
        shape = any(error["type"] in _SHAPE_ERRORS for error in errors)
        raise InvalidReply(f"{where}: {first['msg']}", shape=shape) from exc


def check_claim_indices(reply: VerifyReply, count: int) -> None:
    """Refuse verdicts that do not number the ``count`` claims from 0, each once."""
    seen = [item.index for item in reply.verdicts]
    unknown = sorted({i for i in seen if not 0 <= i < count})
    if unknown:
        raise InvalidReply(
            f"unknown claim index {unknown[0]}; claims are numbered 0 to {count - 1}"
        )
    doubled = sorted({i for i in seen if seen.count(i) > 1})
    if doubled:
        raise InvalidReply(f"claim {doubled[0]} has more than one verdict")
    missing = sorted(set(range(count)) - set(seen))
    if missing:
        shown = ", ".join(str(i) for i in missing[:10])
        raise InvalidReply(f"no verdict for claim {shown}; give one verdict for every claim")


def check_chunk_ids(reply: ChunksReply, count: int) -> None:
    """Refuse ratings that do not rate the ``count`` chunks (numbered from 1), each once."""
    seen = [item.chunk for item in reply.chunks]
    unknown = sorted({i for i in seen if not 1 <= i <= count})
    if unknown:
        raise InvalidReply(f"unknown chunk id {unknown[0]}; chunks are numbered 1 to {count}")
    doubled = sorted({i for i in seen if seen.count(i) > 1})
    if doubled:
        raise InvalidReply(f"chunk {doubled[0]} is rated more than once")
    missing = sorted(set(range(1, count + 1)) - set(seen))
    if missing:
        shown = ", ".join(str(i) for i in missing[:10])
        raise InvalidReply(f"no rating for chunk {shown}; rate every chunk")

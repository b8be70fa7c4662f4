"""Structured replies: how a call's reply is asked for, and how it is read back.

A reply's JSON schema (one question's reply model, or one member per question when a call asks
several, :func:`~ragaliq.judges.calls.reply_model`) is sent the way ``judge.structured_output``
says: as the structured output format (``schema``), as the one tool the model must call
(``tool``), or in the prompt (``prompt``). With ``auto`` on a custom endpoint all three are tried
in turn. Every reply is then validated against its questions' models, however it was asked for,
each question's member on its own: a member that does not validate is an :class:`InvalidReply` of
that question alone (its message is what the re-ask tells the model), so the others' answers are
kept. A reply that is not of the schema's shape at all (not JSON, no tool call, none of the
members asked for) says so (the sign of an endpoint that ignored how it was asked).
"""

from __future__ import annotations

import functools
import json
import re
from typing import Any, Literal

import anthropic
from anthropic.types import Message
from pydantic import BaseModel, ValidationError

from ragaliq.judges.calls import reply_model, text_block, tool_name
from ragaliq.judges.questions import InvalidReply, Wording

__all__ = [
    "MODES",
    "PROMPT_FORMAT",
    "REASK",
    "InvalidReply",
    "Mode",
    "fallback_notice",
    "modes_for",
    "parse_replies",
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
    wordings: tuple[Wording[Any, Any], ...],
    *,
    model: str,
    system: list[dict[str, Any]],
    blocks: list[dict[str, Any]],
    max_tokens: int,
    mode: Mode,
) -> dict[str, Any]:
    """One request; the last message is always the user's (never an assistant prefill)."""
    schema = _schema(reply_model(wordings))
    params: dict[str, Any] = {"model": model, "max_tokens": max_tokens, "system": system}
    if mode == "schema":
        params["output_config"] = {"format": {"type": "json_schema", "schema": schema}}
    elif mode == "tool":
        params["tools"] = [
            {
                "name": tool_name(wordings),
                "description": "Record your answer; call this exactly once.",
                "input_schema": schema,
            }
        ]
        params["tool_choice"] = {"type": "any"}  # with one tool: that tool, forced
    else:
        blocks = [*blocks, text_block(PROMPT_FORMAT.format(schema=json.dumps(schema)))]
    params["messages"] = [{"role": "user", "content": blocks}]
    return params


Replies = dict[str, BaseModel]
"""Each question's validated reply, by question name."""


def parse_replies(
    message: Message, wordings: tuple[Wording[Any, Any], ...], mode: Mode
) -> tuple[Replies, dict[str, InvalidReply]]:
    """Each question's reply in ``message``, validated against its model; and the invalid ones.

    Raises:
        InvalidReply: the reply as a whole: a refusal, a reply cut off, one that is not a JSON
            object (or calls no tool), or, asking one question, one that does not validate.
    """
    data = _reply_object(message, tool_name(wordings), mode)
    if len(wordings) == 1:
        return {wordings[0].question.name: _validated(wordings[0].reply, data)}, {}
    if not any(w.question.name in data for w in wordings):
        names = ", ".join(w.question.name for w in wordings)
        raise InvalidReply(f"the reply has none of the members {names}", shape=True)
    replies: Replies = {}
    invalid: dict[str, InvalidReply] = {}
    for wording in wordings:
        name = wording.question.name
        if name not in data:
            invalid[name] = InvalidReply(f"the reply has no member {name}; answer every task")
            continue
        try:
            replies[name] = _validated(wording.reply, data[name], where=name)
        except InvalidReply as exc:
            invalid[name] = InvalidReply(str(exc))  # one member's values, not the reply's shape
    return replies, invalid


def _reply_object(message: Message, tool: str, mode: Mode) -> dict[str, Any]:
    if message.stop_reason == "refusal":
        raise InvalidReply("the model refused to answer")
    if message.stop_reason == "max_tokens":
        raise InvalidReply("the reply was cut off at max_tokens; be more concise")
    if mode == "tool":
        calls = [block for block in message.content if block.type == "tool_use"]
        if not calls:
            raise InvalidReply(f"the reply did not call the tool {tool}", shape=True)
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
    return data


def _validated(model: type[BaseModel], data: Any, where: str = "") -> BaseModel:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
        first = errors[0]
        path = ".".join(str(p) for p in (where, *first["loc"]) if p != "") or "reply"
        shape = any(error["type"] in _SHAPE_ERRORS for error in errors)
        raise InvalidReply(f"{path}: {first['msg']}", shape=shape) from exc

"""Responders that behave like the Anthropic-compatible servers open models run behind.

They answer what Claude would (`tests/fakes/claude_sim.py`) but honour structured output the way
each server does, so the judge's `structured_output` modes meet the servers' real quirks:

- `vllm_like`: honours `output_config` JSON schemas and forced tools;
- `llama_cpp_like`: drops the schema (the model writes prose) but honours one tool forced with
  `tool_choice: any`;
- `ollama_like`: ignores both and replies with text; a model asked in the prompt for JSON
  answers JSON, in a Markdown code fence.

Each also answers JSON when the prompt asks for it (a capable model follows the instruction).
"""

from __future__ import annotations

import json
from typing import Any

from ragaliq.judges.replies import PROMPT_FORMAT
from tests.fakes.anthropic_server import Reply, Responder, estimate_input_tokens
from tests.fakes.claude_sim import answer, request_text

__all__ = ["SERVERS", "llama_cpp_like", "ollama_like", "vllm_like"]

_ASKED_IN_PROMPT = PROMPT_FORMAT.split("{", 1)[0].strip()


def _responder(*, schema: bool, tools: tuple[str, ...], fence: bool) -> Responder:
    def respond(body: dict[str, Any]) -> Reply:
        output = answer(body)
        tool_list = body.get("tools") or []
        choice = (body.get("tool_choice") or {}).get("type")
        if schema and "output_config" in body:
            return _reply(body, text=json.dumps(output))
        if tool_list and choice in tools:
            block = {
                "type": "tool_use",
                "id": "toolu_fake_1",
                "name": tool_list[0]["name"],
                "input": output,
            }
            return Reply(
                content=[block],
                stop_reason="tool_use",
                input_tokens=estimate_input_tokens(body),
                output_tokens=len(json.dumps(output)) // 4 + 1,
            )
        if _ASKED_IN_PROMPT in request_text(body):
            text = json.dumps(output)
            return _reply(body, text=f"```json\n{text}\n```" if fence else text)
        return _reply(body, text=_prose(output))

    return respond


def _reply(body: dict[str, Any], *, text: str) -> Reply:
    return Reply(text=text, input_tokens=estimate_input_tokens(body))


def _prose(output: dict[str, Any]) -> str:
    """What a model writes when nothing holds it to a shape."""
    parts = [f"{key}: {value}" for key, value in output.items()]
    return "Sure! Here is my assessment.\n\n" + "\n".join(parts)


def vllm_like() -> Responder:
    return _responder(schema=True, tools=("any", "tool"), fence=False)


def llama_cpp_like() -> Responder:
    return _responder(schema=False, tools=("any",), fence=False)


def ollama_like() -> Responder:
    return _responder(schema=False, tools=(), fence=True)


SERVERS = {"vllm": vllm_like, "llama.cpp": llama_cpp_like, "ollama": ollama_like}

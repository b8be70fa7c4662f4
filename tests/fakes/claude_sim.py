"""A stand-in for Claude behind the fake Messages API: realistic structured replies.

It reads the request the way the real model would (which tasks the system prompt asks, the XML
blocks of query, response, context, claims and facts) and answers with the offline judge's
verdicts, so tests and benchmarks drive the real SDK with replies that have the right shape, one
verdict per claim, real quotes and the chunks they come from. A request that asks several tasks
at once (one ``## Task "<name>"`` section each) gets one member per task, each that task's own
answer.
"""

from __future__ import annotations

import html
import re
from collections.abc import Coroutine
from typing import Any, TypeVar, cast

from ragaliq.models import TestCase
from ragaliq.offline import OfflineJudge, extract_sentence_claims
from tests.fakes.anthropic_server import Responder, structured_responder

_BLOCK = re.compile(r"<(query|response|context|claims|facts)>(.*?)</\1>", re.DOTALL)
_CHUNK = re.compile(r'<chunk id="\d+">(.*?)</chunk>', re.DOTALL)
_ITEM = re.compile(r"^(\d+)\. (.*)$", re.MULTILINE)
_COMPOSED = re.compile(r'^## Task "(\w+)"$', re.MULTILINE)
SHORT = {
    "extract_claims": "extract",
    "verify_claims": "verify",
    "evaluate_relevance": "relevance",
    "rate_chunks": "chunks",
    "verify_facts": "facts",
}
"""The short name of each task, as tests name them."""


def request_text(body: dict[str, Any]) -> str:
    parts = []
    for message in body["messages"]:
        content = message["content"]
        if isinstance(content, str):
            parts.append(content)
        else:
            parts.extend(block.get("text", "") for block in content)
    return "\n".join(parts)


def system_text(body: dict[str, Any]) -> str:
    system = body.get("system", "")
    return system if isinstance(system, str) else "\n".join(b["text"] for b in system)


def tasks_of(body: dict[str, Any]) -> tuple[str, ...]:
    """The tasks one request asks, by short name, in the order it asks them."""
    system = system_text(body)
    composed = _COMPOSED.findall(system)
    if composed:
        return tuple(SHORT[name] for name in composed)
    if "Task: break the response" in system:
        return ("extract",)
    if "Task: verify" in system:
        return ("verify",)
    if "Task: check whether the context holds" in system:
        return ("facts",)
    if "Task: rate whether each retrieved chunk" in system:
        return ("chunks",)
    if "Task: rate" in system:
        return ("relevance",)
    raise AssertionError("unknown task")


def task_of(body: dict[str, Any]) -> str:
    """The one task a request asks, or its tasks joined by ``+`` when it asks several."""
    return "+".join(tasks_of(body))


def blocks(body: dict[str, Any]) -> dict[str, str]:
    return {name: html.unescape(text.strip()) for name, text in _BLOCK.findall(request_text(body))}


T = TypeVar("T")


def _run(coroutine: Coroutine[Any, Any, T]) -> T:
    """The result of one of the offline judge's coroutines, which never wait on anything: run to
    its end without an event loop (a loop for each answer costs more than the answer)."""
    try:
        coroutine.send(None)
    except StopIteration as done:
        return cast(T, done.value)
    coroutine.close()
    raise AssertionError("the offline judge's coroutine waited on something")


def answer(body: dict[str, Any]) -> dict[str, Any]:
    """What a careful judge would answer to one request."""
    found = blocks(body)
    tasks = tasks_of(body)
    if _COMPOSED.search(system_text(body)):
        long = {short: name for name, short in SHORT.items()}
        return {long[task]: answer_task(task, found) for task in tasks}
    return answer_task(tasks[0], found)


def answer_task(task: str, found: dict[str, str]) -> dict[str, Any]:
    """One task's answer, from the blocks of its request."""
    judge = OfflineJudge()
    chunks = tuple(html.unescape(c) for c in _CHUNK.findall(found.get("context", "")))
    if task == "extract":
        return {"claims": extract_sentence_claims(found["response"])}
    if task == "chunks":
        case = TestCase(id="x", query=found["query"], context=chunks, response="")
        rated = _run(judge.rate_chunks(case))
        return {
            "chunks": [
                {"chunk": i, "relevant": r.relevant, "reason": r.reason}
                for i, r in enumerate(rated.ratings, start=1)
            ]
        }
    if task == "relevance":
        case = TestCase(id="x", query=found["query"], context=(), response=found["response"])
        result = _run(judge.evaluate_relevance(case))
        return {"score": result.score, "reasoning": result.reasoning}
    listing = found["claims" if task == "verify" else "facts"]
    items = [text for _, text in sorted((int(i), t) for i, t in _ITEM.findall(listing))]
    case = TestCase(id="x", query="", context=chunks, response="")
    result = _run(judge.verify_claims(case, items))
    return {
        "verdicts": [
            {
                "index": i,
                "verdict": v.verdict.value,
                "evidence": v.evidence or "",
                "chunks": backing(v.verdict.value, v.evidence, chunks),
                "reason": v.reason,
                "confidence": v.confidence,
            }
            for i, v in enumerate(result.verdicts)
        ]
    }


def backing(verdict: str, evidence: str | None, chunks: tuple[str, ...]) -> list[int]:
    """The chunks a verdict's quote comes from, when the verdict says they back the claim."""
    if verdict not in ("SUPPORTED", "PARTIALLY_SUPPORTED") or not evidence:
        return []
    return [i for i, chunk in enumerate(chunks, start=1) if evidence in chunk]


def claude_like() -> Responder:
    return structured_responder(answer)

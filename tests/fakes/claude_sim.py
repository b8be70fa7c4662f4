"""A stand-in for Claude behind the fake Messages API: realistic structured replies.

It reads the request the way the real model would (which task, the XML blocks of query, response,
context and claims) and answers with the offline judge's verdicts, so tests and benchmarks drive
the real SDK with replies that have the right shape, one verdict per claim and real quotes.
"""

from __future__ import annotations

import asyncio
import html
import re
from typing import Any

from ragaliq.judges.offline import OfflineJudge, extract_sentence_claims
from ragaliq.models import TestCase
from tests.fakes.anthropic_server import Responder, structured_responder

_BLOCK = re.compile(r"<(query|response|context|claims)>(.*?)</\1>", re.DOTALL)
_CHUNK = re.compile(r'<chunk id="\d+">(.*?)</chunk>', re.DOTALL)
_CLAIM = re.compile(r"^(\d+)\. (.*)$", re.MULTILINE)


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


def task_of(body: dict[str, Any]) -> str:
    system = system_text(body)
    if "Task: break the response" in system:
        return "extract"
    if "Task: verify" in system:
        return "verify"
    if "Task: rate whether each retrieved chunk" in system:
        return "chunks"
    if "Task: rate" in system:
        return "relevance"
    raise AssertionError("unknown task")


def blocks(body: dict[str, Any]) -> dict[str, str]:
    return {name: html.unescape(text.strip()) for name, text in _BLOCK.findall(request_text(body))}


def answer(body: dict[str, Any]) -> dict[str, Any]:
    """What a careful judge would answer to one request."""
    found = blocks(body)
    judge = OfflineJudge()
    task = task_of(body)
    if task == "extract":
        return {"claims": extract_sentence_claims(found["response"])}
    if task == "chunks":
        chunks = tuple(html.unescape(c) for c in _CHUNK.findall(found["context"]))
        case = TestCase(id="x", query=found["query"], context=chunks, response="")
        rated = asyncio.run(judge.rate_chunks(case))
        return {
            "chunks": [
                {"chunk": i, "relevant": r.relevant, "reason": r.reason}
                for i, r in enumerate(rated.ratings, start=1)
            ]
        }
    if task == "relevance":
        case = TestCase(id="x", query=found["query"], context=(), response=found["response"])
        result = asyncio.run(judge.evaluate_relevance(case))
        return {"score": result.score, "reasoning": result.reasoning}
    chunks = tuple(html.unescape(c) for c in _CHUNK.findall(found["context"]))
    claims = [text for _, text in sorted((int(i), t) for i, t in _CLAIM.findall(found["claims"]))]
    case = TestCase(id="x", query="", context=chunks, response="")
    result = asyncio.run(judge.verify_claims(case, claims))
    return {
        "verdicts": [
            {
                "index": i,
                "verdict": v.verdict.value,
                "evidence": v.evidence or "",
                "reason": v.reason,
                "confidence": v.confidence,
            }
            for i, v in enumerate(result.verdicts)
        ]
    }


def claude_like() -> Responder:
    return structured_responder(answer)

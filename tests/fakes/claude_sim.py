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
import random
import re
import threading
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
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


def wrong_verdict(verdict: dict[str, Any], chunks: tuple[str, ...]) -> dict[str, Any]:
    """The opposite call on one claim: support said where there is none, or doubt where there is.

    A wrong SUPPORTED quotes the context (the judge's check of quotes would catch anything else),
    as a careless model does when it reads a near match as support.
    """
    if verdict["verdict"] == "SUPPORTED":
        return {**verdict, "verdict": "NOT_ENOUGH_INFO", "evidence": "", "chunks": []}
    quote = chunks[0][:60] if chunks else ""
    return {**verdict, "verdict": "SUPPORTED", "evidence": quote, "chunks": [1] if quote else []}


@dataclass
class Noise:
    """A careful judge that gets a claim wrong at a chance ``p`` per claim.

    The chances come from one seeded stream, drawn for every claim of every verification in the
    order the requests arrive, whatever the request is (a first ask or a confirmation). ``bias``
    ``"last"`` puts the chance on the last claims of a call (the claim at place i of n gets
    ``p * 2i / (n + 1)``, the same ``p`` on average).
    """

    p: float
    seed: int = 0
    bias: str = "independent"
    verdicts: int = 0
    flips: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self._stream = random.Random(self.seed)

    def chance(self, place: int, count: int) -> float:
        if self.bias == "last":
            return min(1.0, self.p * 2 * place / (count + 1))
        return self.p

    def apply(
        self, verdicts: list[dict[str, Any]], chunks: tuple[str, ...]
    ) -> list[dict[str, Any]]:
        with self._lock:
            out = []
            for place, verdict in enumerate(verdicts, start=1):
                self.verdicts += 1
                if self._stream.random() < self.chance(place, len(verdicts)):
                    self.flips += 1
                    verdict = wrong_verdict(verdict, chunks)
                out.append(verdict)
            return out


def noisy_answer(
    flip: Callable[[list[dict[str, Any]], tuple[str, ...]], list[dict[str, Any]]],
) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """:func:`answer`, with ``flip`` deciding each verification's verdicts."""

    def respond(body: dict[str, Any]) -> dict[str, Any]:
        output = answer(body)
        if "verify" not in tasks_of(body):
            return output
        chunks = tuple(html.unescape(c) for c in _CHUNK.findall(blocks(body).get("context", "")))
        if "verify_claims" in output:
            verified = output["verify_claims"]
            return {
                **output,
                "verify_claims": {**verified, "verdicts": flip(verified["verdicts"], chunks)},
            }
        return {**output, "verdicts": flip(output["verdicts"], chunks)}

    return respond


def noisy_claude(noise: Noise) -> Responder:
    """A careful judge whose verdicts are wrong at the chance ``noise`` draws."""
    return structured_responder(noisy_answer(noise.apply))


def flipping_once(claim: str) -> tuple[Responder, list[int]]:
    """A careful judge that gets one claim wrong the first time it verifies it, and only then.

    Returned with the list of times it flipped it (one entry per flip).
    """
    flipped: list[int] = []
    lock = threading.Lock()

    def respond(body: dict[str, Any]) -> dict[str, Any]:
        output = answer(body)
        if "verify" not in tasks_of(body):
            return output
        found = blocks(body)
        chunks = tuple(html.unescape(c) for c in _CHUNK.findall(found.get("context", "")))
        items = [t for _, t in sorted((int(i), t) for i, t in _ITEM.findall(found["claims"]))]
        target = output.get("verify_claims", output)
        verdicts = list(target["verdicts"])
        with lock:
            for i, text in enumerate(items):
                if text == claim and not flipped:
                    flipped.append(i)
                    verdicts[i] = wrong_verdict(verdicts[i], chunks)
        target = {**target, "verdicts": verdicts}
        return {**output, "verify_claims": target} if "verify_claims" in output else target

    return structured_responder(respond), flipped

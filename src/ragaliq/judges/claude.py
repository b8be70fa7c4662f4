"""The Claude judge: structured verdicts from the Anthropic Messages API.

Every reply is validated against a pydantic model whose JSON schema is sent as the structured
output format. An invalid reply (a missing claim, an unknown verdict, a refusal, a reply cut off at
``max_tokens``) is re-asked once with the problem stated, then becomes a :class:`JudgeResponseError`
for its case; a verdict is never guessed. Transient API faults are retried with exponential
backoff and jitter that honours ``retry-after``; a bad key, a missing model or an API that keeps
failing raises :class:`JudgeUnavailableError`, which stops the run.
"""

from __future__ import annotations

import asyncio
import functools
import json
import random
import re
import time
from collections.abc import Awaitable, Callable, Sequence
from email.utils import parsedate_to_datetime
from typing import Any, TypeVar

import anthropic
from anthropic.types import Message
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ragaliq.config import JudgeConfig
from ragaliq.errors import JudgeError, JudgeResponseError, JudgeUnavailableError
from ragaliq.judges.base import Operation, check_verdict_count, verified_evidence
from ragaliq.judges.pricing import cost_usd, price_for
from ragaliq.judges.prompts import PROMPT_VERSION, Prompts
from ragaliq.models import (
    ClaimsResult,
    ClaimVerdict,
    JudgeInfo,
    RelevanceResult,
    TestCase,
    Usage,
    Verdict,
    VerificationResult,
)

__all__ = ["PROMPT_VERSION", "ClaudeJudge"]

RETRYABLE_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504, 529})
FAILURES_BEFORE_UNAVAILABLE = 3
"""Requests failing in a row (after their retries) before the API is taken to be down."""
MAX_RETRY_AFTER_S = 60.0
BACKOFF_BASE_S = 0.5
BACKOFF_CAP_S = 20.0
MAX_TOKENS_CEILING = 32_000
CHARS_PER_TOKEN = 4
_OWN_TAGS = re.compile(r"<(/?)(query|response|context|chunk|claims)\b", re.IGNORECASE)

M = TypeVar("M", bound=BaseModel)


class _Reply(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ExtractReply(_Reply):
    claims: list[str] = Field(description="The atomic, self-contained factual claims, in order.")


class VerdictItem(_Reply):
    index: int = Field(description="The claim's number, exactly as given.")
    verdict: Verdict = Field(description="How far the context backs the claim.")
    evidence: str = Field(description="The shortest exact quote from the context, or ''.")
    reason: str = Field(description="One short sentence explaining the verdict.")
    confidence: float = Field(ge=0.0, le=1.0, description="Confidence in the verdict, 0 to 1.")


class VerifyReply(_Reply):
    verdicts: list[VerdictItem] = Field(description="One entry per claim, in order.")


class RelevanceReply(_Reply):
    score: float = Field(ge=0.0, le=1.0, description="How well the response answers the query.")
    reasoning: str = Field(description="One or two sentences.")


class _InvalidReply(Exception):
    """A reply that does not validate; its message is what the re-ask tells the model."""


def _escape(text: str) -> str:
    """Keep untrusted text from closing or opening our own XML blocks."""
    return _OWN_TAGS.sub(lambda m: f"&lt;{m.group(1)}{m.group(2)}", text)


Sleep = Callable[[float], Awaitable[None]]


class ClaudeJudge:
    """A judge backed by Claude through the ``anthropic`` SDK's ``AsyncAnthropic`` client."""

    def __init__(
        self,
        config: JudgeConfig,
        *,
        api_key: str,
        base_url: str | None = None,
        sleep: Sleep = asyncio.sleep,
        rng: random.Random | None = None,
    ) -> None:
        self.config = config
        self.client = anthropic.AsyncAnthropic(
            api_key=api_key,
            base_url=base_url,
            timeout=config.timeout_s,
            max_retries=0,  # retries are ours: they honour retry-after and feed the breaker
        )
        self.prompts = Prompts.load()
        self.price = price_for(config.model, config.pricing)
        self._sleep = sleep
        self._rng = rng or random.Random()
        self._failures_in_row = 0
        self._paused_until = 0.0
        self._unusable: JudgeUnavailableError | None = None
        self._info = JudgeInfo(
            provider="anthropic",
            model=config.model,
            prompt_version=PROMPT_VERSION,
            endpoint=base_url.rstrip("/") if base_url else None,
        )
        self._min_cache_tokens = 2048 if "haiku" in config.model else 1024

    @property
    def info(self) -> JudgeInfo:
        return self._info

    async def aclose(self) -> None:
        await self.client.close()

    # -- operations -----------------------------------------------------------------------

    async def extract_claims(self, case: TestCase) -> ClaimsResult:
        reply, usage = await self._ask(
            "extract claims", self.prompts.extract, self._extract_content(case), ExtractReply
        )
        claims = tuple(c.strip() for c in reply.claims if c.strip())
        return ClaimsResult(claims=claims, usage=usage)

    async def verify_claims(
        self, case: TestCase, claims: Sequence[str], *, sample: int = 0
    ) -> VerificationResult:
        context_block = self._context_block(case)
        verdicts: list[ClaimVerdict] = []
        usage = Usage()
        for batch in self._batches(claims):
            try:
                reply, batch_usage = await self._ask(
                    "verify claims",
                    self.prompts.verify,
                    [context_block, self._claims_block(batch)],
                    VerifyReply,
                    check=functools.partial(_check_indices, count=len(batch)),
                )
            except JudgeError as exc:
                exc.usage = usage + (exc.usage or Usage())
                raise
            usage += batch_usage
            ordered = sorted(reply.verdicts, key=lambda item: item.index)
            verdicts += [
                self._verdict(claim, item, case) for claim, item in zip(batch, ordered, strict=True)
            ]
        result = VerificationResult(verdicts=tuple(verdicts), usage=usage)
        return check_verdict_count(claims, result)

    async def evaluate_relevance(self, case: TestCase) -> RelevanceResult:
        reply, usage = await self._ask(
            "rate relevance", self.prompts.relevance, self._relevance_content(case), RelevanceReply
        )
        return RelevanceResult(score=reply.score, reasoning=reply.reasoning, usage=usage)

    # -- requests ---------------------------------------------------------------------------

    def _extract_content(self, case: TestCase) -> list[dict[str, Any]]:
        return [
            _text(
                f"<query>{_escape(case.query)}</query>\n<response>{_escape(case.response)}"
                "</response>\n\nExtract the claims of the response."
            )
        ]

    def _relevance_content(self, case: TestCase) -> list[dict[str, Any]]:
        return [
            _text(
                f"<query>{_escape(case.query)}</query>\n<response>{_escape(case.response)}"
                "</response>\n\nRate how well the response answers the query."
            )
        ]

    def _context_block(self, case: TestCase) -> dict[str, Any]:
        """The context, marked for Anthropic's prompt cache when the prefix is long enough."""
        block = _text(
            "<context>\n"
            + "\n".join(
                f'<chunk id="{i + 1}">{_escape(chunk)}</chunk>'
                for i, chunk in enumerate(case.context)
            )
            + "\n</context>"
        )
        prefix_chars = len(self.prompts.system) + len(self.prompts.verify) + len(block["text"])
        if prefix_chars // CHARS_PER_TOKEN >= self._min_cache_tokens:
            block["cache_control"] = {"type": "ephemeral"}
        return block

    def _claims_block(self, batch: Sequence[str]) -> dict[str, Any]:
        listing = "\n".join(f"{i}. {_escape(claim)}" for i, claim in enumerate(batch))
        return _text(f"<claims>\n{listing}\n</claims>\n\nVerify each claim against the context.")

    def _batches(self, claims: Sequence[str]) -> list[list[str]]:
        size = self.config.claims_per_call
        return [list(claims[start : start + size]) for start in range(0, len(claims), size)]

    def planned_claims(self, case: TestCase) -> tuple[str, ...] | None:
        """Unknown before the call."""
        return None

    def estimate(
        self, operation: Operation, case: TestCase, claims: Sequence[str] = (), *, sample: int = 0
    ) -> Usage:
        """What one operation would cost, from the prompt's size; nothing is sent.

        Token counts are estimated at four characters a token; output sizes from typical replies.
        """
        system = len(self.prompts.system) + 2
        if operation == "extract_claims":
            task, content = self.prompts.extract, self._extract_content(case)
            outputs = [len(case.response) // CHARS_PER_TOKEN + 20]
        elif operation == "evaluate_relevance":
            task, content = self.prompts.relevance, self._relevance_content(case)
            outputs = [60]
        else:
            task = self.prompts.verify
            context = self._context_block(case)
            content = [context]
            outputs = []
            for batch in self._batches(claims):
                content.append(self._claims_block(batch))
                outputs.append(70 * len(batch) + 10)
        prompt_chars = system + len(task)
        calls = max(1, len(outputs))
        if operation == "verify_claims":
            prompt_chars += len(content[0]["text"])
            prompt_chars = prompt_chars * calls + sum(len(b["text"]) for b in content[1:])
        else:
            prompt_chars += sum(len(b["text"]) for b in content)
        usage = Usage(
            calls=calls,
            input_tokens=prompt_chars // CHARS_PER_TOKEN,
            output_tokens=sum(outputs),
        )
        return usage.model_copy(update={"cost_usd": cost_usd(usage, self.price)})

    # -- one validated answer -------------------------------------------------------------

    def _verdict(self, claim: str, item: VerdictItem, case: TestCase) -> ClaimVerdict:
        verdict = ClaimVerdict(
            text=claim,
            verdict=item.verdict,
            evidence=item.evidence.strip() or None,
            reason=item.reason,
            confidence=item.confidence,
        )
        return verified_evidence(verdict, case.context)

    async def _ask(
        self,
        operation: str,
        task: str,
        content: list[dict[str, Any]],
        reply_model: type[M],
        check: Callable[[M], None] | None = None,
    ) -> tuple[M, Usage]:
        system = [_text(f"{self.prompts.system}\n\n{task}")]
        schema = _schema(reply_model)
        usage = Usage()
        max_tokens = self.config.max_tokens
        problem = ""
        for attempt in range(2):
            blocks = content
            if attempt:
                blocks = [
                    *content,
                    _text(
                        f"Your previous reply was rejected: {problem}. Reply again with one JSON "
                        "object that matches the schema exactly."
                    ),
                ]
            try:
                message = await self._send(system, blocks, schema, max_tokens, usage_sink=usage)
            except JudgeUnavailableError as exc:
                self._unusable = self._unusable or exc  # later requests fail at once, unsent
                raise
            usage = usage + self._usage(message)
            try:
                reply = _parse(message, reply_model)
                if check is not None:
                    check(reply)
                return reply, usage
            except _InvalidReply as exc:
                problem = str(exc)
                if message.stop_reason == "max_tokens":
                    max_tokens = min(max_tokens * 2, MAX_TOKENS_CEILING)
        raise JudgeResponseError(
            f"{operation}: the judge's reply was invalid twice ({problem})", usage=usage
        )

    def _usage(self, message: Message) -> Usage:
        u = message.usage
        usage = Usage(
            calls=1,
            input_tokens=u.input_tokens,
            output_tokens=u.output_tokens,
            cache_read_tokens=u.cache_read_input_tokens or 0,
            cache_write_tokens=u.cache_creation_input_tokens or 0,
        )
        return usage.model_copy(update={"cost_usd": cost_usd(usage, self.price)})

    # -- transport with retries -----------------------------------------------------------

    async def _send(
        self,
        system: list[dict[str, Any]],
        content: list[dict[str, Any]],
        schema: dict[str, Any],
        max_tokens: int,
        *,
        usage_sink: Usage,
    ) -> Message:
        attempt = 0
        while True:
            if self._unusable is not None:
                raise JudgeUnavailableError(str(self._unusable))
            await self._wait_for_pause()
            try:
                params: dict[str, Any] = {
                    "model": self.config.model,
                    "max_tokens": max_tokens,
                    "system": system,
                    "messages": [{"role": "user", "content": content}],
                    "output_config": {"format": {"type": "json_schema", "schema": schema}},
                }
                message: Message = await self.client.messages.create(**params)
                self._failures_in_row = 0
                return message
            except anthropic.APIStatusError as exc:
                self._raise_if_fatal(exc, usage_sink)
                failure: Exception = exc
                retry_after = _retry_after(exc.response.headers)
            except anthropic.APIConnectionError as exc:
                failure, retry_after = exc, None
            if attempt >= self.config.max_retries:
                self._failures_in_row += 1
                detail = _describe(failure)
                if self._failures_in_row >= FAILURES_BEFORE_UNAVAILABLE:
                    raise JudgeUnavailableError(
                        f"the Anthropic API failed {self._failures_in_row} requests in a row, "
                        f"each after {self.config.max_retries} retries (last: {detail}); "
                        "try again later or raise judge.max_retries"
                    ) from failure
                raise JudgeError(
                    f"the Anthropic API failed after {self.config.max_retries} retries: {detail}",
                    usage=usage_sink,
                ) from failure
            if isinstance(failure, anthropic.RateLimitError) and retry_after is not None:
                # pause every request, not only this one; the wait happens at the loop's top
                until = time.monotonic() + min(retry_after, MAX_RETRY_AFTER_S)
                self._paused_until = max(self._paused_until, until)
            else:
                await self._sleep(self._backoff(attempt, retry_after))
            attempt += 1

    def _raise_if_fatal(self, exc: anthropic.APIStatusError, usage: Usage) -> None:
        status = exc.status_code
        if status in RETRYABLE_STATUS or status >= 500:
            return
        if status == 401:
            raise JudgeUnavailableError(
                "the Anthropic API rejected the API key (401): it is missing or invalid; set "
                "ANTHROPIC_API_KEY (in the action, the anthropic-api-key input) or judge.api_key"
            ) from exc
        if status == 403:
            raise JudgeUnavailableError(
                f"the Anthropic API refused access (403): the key may not use model "
                f"'{self.config.model}' ({_api_message(exc)})"
            ) from exc
        if status == 404:
            raise JudgeUnavailableError(
                f"the Anthropic API does not know model '{self.config.model}' (404); "
                "set judge.model to a current model name"
            ) from exc
        if status == 400 and "credit balance" in _api_message(exc).lower():
            # An account without credit fails every request alike: stop rather than fail each case.
            raise JudgeUnavailableError(
                f"the Anthropic account has no credit left (400: {_api_message(exc)}); add "
                "credit in the Anthropic Console under Plans & Billing, then run again"
            ) from exc
        raise JudgeError(
            f"the Anthropic API rejected the request ({status}): {_api_message(exc)}", usage=usage
        ) from exc

    def _backoff(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(retry_after, MAX_RETRY_AFTER_S)
        ceiling: float = min(BACKOFF_CAP_S, BACKOFF_BASE_S * 2.0**attempt)
        return ceiling * (0.5 + 0.5 * self._rng.random())

    async def _wait_for_pause(self) -> None:
        """After a 429 with retry-after, every request waits, not only the one that got it."""
        remaining = self._paused_until - time.monotonic()
        if remaining > 0:
            await self._sleep(remaining)


@functools.cache
def _schema(reply_model: type[BaseModel]) -> dict[str, Any]:
    return anthropic.transform_schema(reply_model)


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def _parse(message: Message, reply_model: type[M]) -> M:
    if message.stop_reason == "refusal":
        raise _InvalidReply("the model refused to answer")
    if message.stop_reason == "max_tokens":
        raise _InvalidReply("the reply was cut off at max_tokens; be more concise")
    text = "".join(block.text for block in message.content if block.type == "text").strip()
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise _InvalidReply(f"the reply is not valid JSON ({exc.msg})") from exc
    try:
        return reply_model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        where = ".".join(str(p) for p in first["loc"]) or "reply"
        raise _InvalidReply(f"{where}: {first['msg']}") from exc


def _check_indices(reply: VerifyReply, count: int) -> None:
    seen = [item.index for item in reply.verdicts]
    unknown = sorted({i for i in seen if not 0 <= i < count})
    if unknown:
        raise _InvalidReply(
            f"unknown claim index {unknown[0]}; claims are numbered 0 to {count - 1}"
        )
    doubled = sorted({i for i in seen if seen.count(i) > 1})
    if doubled:
        raise _InvalidReply(f"claim {doubled[0]} has more than one verdict")
    missing = sorted(set(range(count)) - set(seen))
    if missing:
        shown = ", ".join(str(i) for i in missing[:10])
        raise _InvalidReply(f"no verdict for claim {shown}; give one verdict for every claim")


def _retry_after(headers: Any) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``retry-after`` (seconds or an HTTP date)."""
    raw_ms = headers.get("retry-after-ms")
    if raw_ms:
        try:
            return max(0.0, float(raw_ms) / 1000)
        except ValueError:
            pass
    raw = headers.get("retry-after")
    if not raw:
        return None
    try:
        return max(0.0, float(raw))
    except ValueError:
        try:
            return max(0.0, float(parsedate_to_datetime(raw).timestamp()) - time.time())
        except (TypeError, ValueError):
            return None


def _api_message(exc: anthropic.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict):
        error = body.get("error")
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return str(error["message"])
    return exc.message


def _describe(exc: Exception) -> str:
    if isinstance(exc, anthropic.APIStatusError):
        return f"{exc.status_code} {_api_message(exc)}"
    if isinstance(exc, anthropic.APITimeoutError):
        return "the request timed out"
    return f"connection failed ({exc.__class__.__name__})"

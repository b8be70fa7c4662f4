"""The Claude judge: structured verdicts from the Messages API, wherever Claude is reached.

Claude is reached through a :class:`~ragaliq.judges.platforms.Platform`: Anthropic's API (or an
Anthropic-compatible server at ``judge.base_url``), Amazon Bedrock or Vertex AI. Every reply is
validated against a pydantic model whose JSON schema is sent the way ``judge.structured_output``
says: as the structured output format (``schema``), as the one tool the model must call
(``tool``), or in the prompt (``prompt``). With ``auto`` on a custom endpoint, a reply that
shows the endpoint ignored the schema (not JSON, or JSON of another shape) is asked again in the
next way, and the way that worked is kept for the rest of the run. An invalid reply (a missing
claim, an unknown verdict, a refusal, a reply cut off at ``max_tokens``) is re-asked once with the
problem stated, then becomes a :class:`JudgeResponseError` for its case; a verdict is never
guessed, and no assistant prefill is ever sent. Transient API faults are retried with
exponential backoff and jitter that honours ``retry-after``; bad credentials, a missing model or
an API that keeps failing raise :class:`JudgeUnavailableError`, which stops the run. With
``judge.batch`` the requests go out as Message Batches (:mod:`ragaliq.judges.batch`).
"""

from __future__ import annotations

import asyncio
import functools
import json
import random
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

import anthropic
from anthropic.types import Message
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError

from ragaliq.config import JudgeConfig
from ragaliq.errors import ConfigError, JudgeError, JudgeResponseError, JudgeUnavailableError
from ragaliq.judges.base import (
    Operation,
    check_chunk_count,
    check_verdict_count,
    verified_evidence,
)
from ragaliq.judges.batch import MessageBatcher
from ragaliq.judges.platforms import Platform, anthropic_platform
from ragaliq.judges.pricing import batch_price, cost_usd, price_for
from ragaliq.judges.prompts import PROMPT_VERSION, Prompts, as_data
from ragaliq.judges.transport import Sleep, Transport
from ragaliq.models import (
    ChunkRating,
    ChunkRatings,
    ClaimsResult,
    ClaimVerdict,
    JudgeInfo,
    RelevanceResult,
    TestCase,
    Usage,
    VerdictName,
    VerificationResult,
)

__all__ = ["MODES", "PROMPT_VERSION", "ClaudeJudge", "Mode"]

MAX_TOKENS_CEILING = 32_000
CHARS_PER_TOKEN = 4
_FENCE = re.compile(r"^```(?:json)?\s*\n(.*)\n```$", re.DOTALL)
Mode = Literal["schema", "tool", "prompt"]
MODES: tuple[Mode, ...] = ("schema", "tool", "prompt")
"""The ways of asking for structured replies, in the order ``auto`` tries them."""
_SHAPE_ERRORS = frozenset(
    {"missing", "extra_forbidden", "model_type", "model_attributes_type", "dict_type", "list_type"}
)
"""Validation errors that say a reply is not of the schema's shape at all (rather than a value
out of range): what an endpoint that ignores the schema gives."""
PROMPT_FORMAT = (
    "Reply with one JSON object and nothing else (no prose before or after it). It must match "
    "this JSON schema exactly:\n{schema}"
)
"""Asks for the JSON in the prompt, for endpoints that honour neither a schema nor a tool."""
REASK = (
    "Your previous reply was rejected: {problem}. Reply again with one JSON object that matches "
    "the schema exactly."
)

M = TypeVar("M", bound=BaseModel)


class _Reply(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ExtractReply(_Reply):
    claims: list[str] = Field(description="The atomic, self-contained factual claims, in order.")


def _none_as_empty(value: Any) -> Any:
    return "" if value is None else value


class VerdictItem(_Reply):
    index: int = Field(description="The claim's number, exactly as given.")
    verdict: VerdictName = Field(description="How far the context backs the claim.")
    evidence: Annotated[str, BeforeValidator(_none_as_empty)] = Field(
        description="The shortest exact quote from the context, or ''."
    )
    """Null, as open models write "no quote", is the empty quote: it backs nothing."""
    reason: str = Field(description="One short sentence explaining the verdict.")
    confidence: float = Field(ge=0.0, le=1.0, description="Confidence in the verdict, 0 to 1.")


class VerifyReply(_Reply):
    verdicts: list[VerdictItem] = Field(description="One entry per claim, in order.")


class ChunkItem(_Reply):
    chunk: int = Field(description="The chunk's id, exactly as given.")
    relevant: bool = Field(description="Whether the chunk helps answer the query.")
    reason: str = Field(description="One short sentence explaining the rating.")


class ChunksReply(_Reply):
    chunks: list[ChunkItem] = Field(description="One entry per chunk, in order.")


class RelevanceReply(_Reply):
    score: float = Field(ge=0.0, le=1.0, description="How well the response answers the query.")
    reasoning: str = Field(description="One or two sentences.")


TOOL_NAMES: dict[type[BaseModel], str] = {
    ExtractReply: "record_claims",
    VerifyReply: "record_verdicts",
    ChunksReply: "record_chunk_ratings",
    RelevanceReply: "record_relevance",
}
"""The one tool each reply is asked for as, with ``structured_output: tool``."""


class _InvalidReply(Exception):
    """A reply that does not validate; its message is what the re-ask tells the model.

    ``shape`` is true when the reply is not of the schema's shape at all (not JSON, another
    object, no tool call): the sign of an endpoint that ignored how the reply was asked for.
    """

    def __init__(self, message: str, *, shape: bool = False) -> None:
        super().__init__(message)
        self.shape = shape


def _escape(text: str) -> str:
    """Keep untrusted text from closing or opening our own XML blocks (every variant)."""
    return as_data(text)


class ClaudeJudge:
    """A judge backed by Claude through the ``anthropic`` SDK's async clients."""

    def __init__(
        self,
        config: JudgeConfig,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        platform: Platform | None = None,
        batch_state: Path | None = None,
        sleep: Sleep = asyncio.sleep,
        rng: random.Random | None = None,
    ) -> None:
        """Build the judge on ``platform`` (by default Anthropic's API with ``api_key``).

        With ``config.batch`` the requests go out as Message Batches, recorded in
        ``batch_state`` so that an interrupted run can collect them later.

        Raises:
            ConfigError: batches asked for on a platform that has no Message Batches API.
        """
        self.config = config
        self.platform = platform or anthropic_platform(api_key=api_key or "", base_url=base_url)
        self.model = config.model_id
        self.client = self.platform.connect(config.timeout_s)
        self.prompts = Prompts.load()
        price = price_for(self.model, config.pricing)
        self.price = batch_price(price) if config.batch else price
        self.transport = Transport(
            self.platform, self.client, max_retries=config.max_retries, sleep=sleep, rng=rng
        )
        self._modes = _modes(config.structured_output, custom=self.platform.custom_endpoint)
        self._floor = 0
        """The way of asking that requests start with: the last one ``auto`` found to work."""
        self._notices: list[str] = []
        self._batcher: MessageBatcher | None = None
        if config.batch:
            if not isinstance(self.client, anthropic.AsyncAnthropic) or not self.platform.batches:
                raise ConfigError(
                    f"judge.batch: the Message Batches API is Anthropic's; {self.platform.label} "
                    "has none that RagaliQ drives; use provider: claude, or turn batch off"
                )
            self._batcher = MessageBatcher(
                self.client,
                transport=self.transport,
                state_path=batch_state,
                max_requests=config.batch_size,
                poll_max_s=config.batch_poll_s,
            )
        self._info = self._make_info()
        self._min_cache_tokens = 2048 if "haiku" in self.model else 1024

    @property
    def info(self) -> JudgeInfo:
        return self._info

    @property
    def notices(self) -> tuple[str, ...]:
        """What the run should say about how the judge was reached (fallbacks, batches)."""
        batched = self._batcher.notices if self._batcher is not None else ()
        return (*self._notices, *batched)

    @property
    def structured_output(self) -> Mode:
        """How replies are asked for now: the way that worked, with ``auto``."""
        return self._modes[self._floor]

    async def aclose(self) -> None:
        try:
            if self._batcher is not None:
                await self._batcher.aclose()
        finally:
            await self.client.close()

    def _make_info(self) -> JudgeInfo:
        return JudgeInfo(
            provider=self.platform.provider,
            model=self.model,
            prompt_version=PROMPT_VERSION,
            endpoint=self.platform.endpoint,
            structured_output=self.structured_output,
        )

    # -- operations -----------------------------------------------------------------------

    async def extract_claims(self, case: TestCase) -> ClaimsResult:
        reply, usage = await self._ask(
            "extract claims", self.prompts.extract, self._extract_content(case), ExtractReply
        )
        claims = tuple(c.strip() for c in reply.claims if c.strip())
        return ClaimsResult(claims=claims, usage=usage)

    async def verify_claims(
        self,
        case: TestCase,
        claims: Sequence[str],
        *,
        sample: int = 0,
        facts: Sequence[str] = (),
    ) -> VerificationResult:
        """The claims and the needed facts, numbered in one list and verified in one call."""
        context_block = self._context_block(case)
        verdicts: list[ClaimVerdict] = []
        usage = Usage()
        for batch in self._batches([*claims, *facts]):
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
        result = VerificationResult(
            verdicts=tuple(verdicts[: len(claims)]),
            fact_verdicts=tuple(verdicts[len(claims) :]),
            usage=usage,
        )
        return check_verdict_count(claims, result, facts)

    async def evaluate_relevance(self, case: TestCase) -> RelevanceResult:
        reply, usage = await self._ask(
            "rate relevance", self.prompts.relevance, self._relevance_content(case), RelevanceReply
        )
        return RelevanceResult(score=reply.score, reasoning=reply.reasoning, usage=usage)

    async def rate_chunks(self, case: TestCase) -> ChunkRatings:
        """Every chunk's relevance to the query, in one call over the (cached) context block."""
        if not case.context:
            return ChunkRatings(ratings=())
        reply, usage = await self._ask(
            "rate chunks",
            self.prompts.chunks,
            [self._context_block(case), self._chunks_question(case)],
            ChunksReply,
            check=functools.partial(_check_chunk_ids, count=len(case.context)),
        )
        ordered = sorted(reply.chunks, key=lambda item: item.chunk)
        ratings = tuple(ChunkRating(relevant=item.relevant, reason=item.reason) for item in ordered)
        return check_chunk_count(case, ChunkRatings(ratings=ratings, usage=usage))

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

    def _chunks_question(self, case: TestCase) -> dict[str, Any]:
        return _text(
            f"<query>{_escape(case.query)}</query>\n\nRate whether each chunk of the context "
            "is relevant to the query."
        )

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
        self,
        operation: Operation,
        case: TestCase,
        claims: Sequence[str] = (),
        *,
        sample: int = 0,
        facts: Sequence[str] = (),
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
        elif operation == "rate_chunks":
            task = self.prompts.chunks
            content = [self._context_block(case), self._chunks_question(case)]
            outputs = [40 * len(case.context) + 10]
        else:
            task = self.prompts.verify
            context = self._context_block(case)
            content = [context]
            outputs = []
            for batch in self._batches([*claims, *facts]):
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
        usage = Usage()
        max_tokens = self.config.max_tokens
        problem = ""
        reasked = False
        mode = self._floor
        while True:
            blocks = [*content, _text(REASK.format(problem=problem))] if problem else content
            params = self._params(system, blocks, reply_model, max_tokens, self._modes[mode])
            try:
                message, paid = await self._send(params, usage_sink=usage)
            except JudgeUnavailableError as exc:
                self.transport.stop(exc)  # later requests fail at once, unsent
                raise
            if paid:
                usage = usage + self._usage(message)
            try:
                reply = _parse(message, reply_model, self._modes[mode])
                if check is not None:
                    check(reply)
            except _InvalidReply as exc:
                if exc.shape and mode + 1 < len(self._modes):
                    mode, problem = mode + 1, ""  # asked anew in the next way, not re-asked
                    continue
                if reasked:
                    problem = str(exc)
                    break
                reasked, problem = True, str(exc)
                if message.stop_reason == "max_tokens":
                    max_tokens = min(max_tokens * 2, MAX_TOKENS_CEILING)
                continue
            self._worked(mode)
            return reply, usage
        raise JudgeResponseError(
            f"{operation}: the judge's reply was invalid twice ({problem})", usage=usage
        )

    def _params(
        self,
        system: list[dict[str, Any]],
        blocks: list[dict[str, Any]],
        reply_model: type[BaseModel],
        max_tokens: int,
        mode: Mode,
    ) -> dict[str, Any]:
        """One request; the last message is always the user's (never an assistant prefill)."""
        schema = _schema(reply_model)
        params: dict[str, Any] = {"model": self.model, "max_tokens": max_tokens, "system": system}
        if mode == "schema":
            params["output_config"] = {"format": {"type": "json_schema", "schema": schema}}
        elif mode == "tool":
            name = TOOL_NAMES[reply_model]
            params["tools"] = [
                {
                    "name": name,
                    "description": "Record your answer; call this exactly once.",
                    "input_schema": schema,
                }
            ]
            params["tool_choice"] = {"type": "any"}  # with one tool: that tool, forced
        else:
            blocks = [*blocks, _text(PROMPT_FORMAT.format(schema=json.dumps(schema)))]
        params["messages"] = [{"role": "user", "content": blocks}]
        return params

    def _worked(self, mode: int) -> None:
        """Remember a way of asking that gave a valid reply, when ``auto`` had to look for it."""
        if mode <= self._floor:
            return
        self._floor = mode
        self._info = self._make_info()
        skipped = " and ".join(_MODE_NAMES[m] for m in self._modes[:mode])
        self._notices = [
            f"judge.structured_output auto: {self.platform.label} ignored {skipped}, so "
            f"replies were asked for {_MODE_HOW[self._modes[mode]]} (and validated as ever); "
            f"set judge.structured_output: {self._modes[mode]} to skip the probing."
        ]

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

    # -- sending ----------------------------------------------------------------------------

    async def _send(self, params: dict[str, Any], *, usage_sink: Usage) -> tuple[Message, bool]:
        """The reply to one request, and whether it was paid for here (not shared with another).

        Raises:
            JudgeUnavailableError: the platform cannot be used at all.
            JudgeError: this request failed after its retries.
        """
        if self._batcher is not None:
            self.transport.check()
            return await self._batcher.create(params)
        return await self.transport.create_message(params, usage=usage_sink), True


@functools.cache
def _schema(reply_model: type[BaseModel]) -> dict[str, Any]:
    return anthropic.transform_schema(reply_model)


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def _modes(setting: str, *, custom: bool) -> tuple[Mode, ...]:
    """The ways of asking a run may use: all three in turn with ``auto`` on a custom endpoint."""
    if setting == "auto":
        return MODES if custom else ("schema",)
    return (next(m for m in MODES if m == setting),)


_MODE_NAMES: dict[Mode, str] = {"schema": "the JSON schema", "tool": "the forced tool"}
_MODE_HOW: dict[Mode, str] = {
    "schema": "with the JSON schema",
    "tool": "through one forced tool",
    "prompt": "as JSON in the prompt",
}


def _parse(message: Message, reply_model: type[M], mode: Mode) -> M:
    if message.stop_reason == "refusal":
        raise _InvalidReply("the model refused to answer")
    if message.stop_reason == "max_tokens":
        raise _InvalidReply("the reply was cut off at max_tokens; be more concise")
    if mode == "tool":
        calls = [block for block in message.content if block.type == "tool_use"]
        if not calls:
            raise _InvalidReply(
                f"the reply did not call the tool {TOOL_NAMES[reply_model]}", shape=True
            )
        if len(calls) > 1:
            raise _InvalidReply(f"the reply called {len(calls)} tools; call exactly one, once")
        data: Any = calls[0].input
    else:
        text = "".join(block.text for block in message.content if block.type == "text").strip()
        if mode == "prompt":
            fenced = _FENCE.match(text)
            text = fenced.group(1).strip() if fenced else text
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise _InvalidReply(f"the reply is not valid JSON ({exc.msg})", shape=True) from exc
    if not isinstance(data, dict):
        raise _InvalidReply("the reply is not a JSON object", shape=True)
    try:
        return reply_model.model_validate(data)
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
        first = errors[0]
        where = ".".join(str(p) for p in first["loc"]) or "reply"
        shape = any(error["type"] in _SHAPE_ERRORS for error in errors)
        raise _InvalidReply(f"{where}: {first['msg']}", shape=shape) from exc


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


def _check_chunk_ids(reply: ChunksReply, count: int) -> None:
    seen = [item.chunk for item in reply.chunks]
    unknown = sorted({i for i in seen if not 1 <= i <= count})
    if unknown:
        raise _InvalidReply(f"unknown chunk id {unknown[0]}; chunks are numbered 1 to {count}")
    doubled = sorted({i for i in seen if seen.count(i) > 1})
    if doubled:
        raise _InvalidReply(f"chunk {doubled[0]} is rated more than once")
    missing = sorted(set(range(1, count + 1)) - set(seen))
    if missing:
        shown = ", ".join(str(i) for i in missing[:10])
        raise _InvalidReply(f"no rating for chunk {shown}; rate every chunk")

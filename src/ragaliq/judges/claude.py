"""The Claude judge: structured verdicts from the Messages API, wherever Claude is reached.

Claude is reached through a :class:`~ragaliq.judges.platforms.Platform`: Anthropic's API (or an
Anthropic-compatible server at ``judge.base_url``), Amazon Bedrock or Vertex AI. Each operation is
one of the :mod:`~ragaliq.judges.questions`; its reply is asked for and validated as
:mod:`~ragaliq.judges.replies` says (with ``auto`` on a custom endpoint, the way that worked is
kept for the rest of the run). An invalid reply (a missing claim, an unknown verdict, a refusal, a
reply cut off at ``max_tokens``) is re-asked once with the problem stated, then becomes a
:class:`JudgeResponseError` for its case; a verdict is never guessed, and no assistant prefill is
ever sent. Requests go out through the :mod:`~ragaliq.judges.transport` (retries, backoff, the
API's errors as the judges' errors) or, with ``judge.batch``, as Message Batches
(:mod:`ragaliq.judges.batch`).
"""

from __future__ import annotations

import asyncio
import functools
import random
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import anthropic
from anthropic.types import Message
from pydantic import BaseModel

from ragaliq.config import JudgeConfig
from ragaliq.errors import ConfigError, JudgeError, JudgeResponseError, JudgeUnavailableError
from ragaliq.judges.base import Operation, check_chunk_count, check_verdict_count, verified_evidence
from ragaliq.judges.batch import MessageBatcher
from ragaliq.judges.estimates import CHARS_PER_TOKEN, estimate_usage
from ragaliq.judges.platforms import Platform, anthropic_platform
from ragaliq.judges.pricing import batch_price, cost_usd, price_for
from ragaliq.judges.prompts import PROMPT_VERSION, Prompts
from ragaliq.judges.questions import (
    CHUNKS,
    EXTRACT,
    QUESTIONS,
    RELEVANCE,
    VERIFY,
    Question,
    VerdictItem,
    claim_batches,
    context_text,
    question_text,
    text_block,
)
from ragaliq.judges.replies import (
    REASK,
    InvalidReply,
    Mode,
    check_chunk_ids,
    check_claim_indices,
    fallback_notice,
    modes_for,
    parse_reply,
    request_params,
)
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
    VerificationResult,
)

__all__ = ["PROMPT_VERSION", "ClaudeJudge"]

MAX_TOKENS_CEILING = 32_000

M = TypeVar("M", bound=BaseModel)


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
        self._modes = modes_for(config.structured_output, custom=self.platform.custom_endpoint)
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
        reply, usage = await self._ask(EXTRACT, case)
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
        verdicts: list[ClaimVerdict] = []
        usage = Usage()
        for batch in claim_batches([*claims, *facts], self.config.claims_per_call):
            try:
                reply, batch_usage = await self._ask(
                    VERIFY,
                    case,
                    batch,
                    check=functools.partial(check_claim_indices, count=len(batch)),
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
        reply, usage = await self._ask(RELEVANCE, case)
        return RelevanceResult(score=reply.score, reasoning=reply.reasoning, usage=usage)

    async def rate_chunks(self, case: TestCase) -> ChunkRatings:
        """Every chunk's relevance to the query, in one call over the (cached) context block."""
        if not case.context:
            return ChunkRatings(ratings=())
        reply, usage = await self._ask(
            CHUNKS, case, check=functools.partial(check_chunk_ids, count=len(case.context))
        )
        ordered = sorted(reply.chunks, key=lambda item: item.chunk)
        ratings = tuple(ChunkRating(relevant=item.relevant, reason=item.reason) for item in ordered)
        return check_chunk_count(case, ChunkRatings(ratings=ratings, usage=usage))

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
        """What one operation would cost, from the prompt's size; nothing is sent."""
        return estimate_usage(
            QUESTIONS[operation],
            case,
            [*claims, *facts],
            prompts=self.prompts,
            claims_per_call=self.config.claims_per_call,
            price=self.price,
        )

    # -- one validated answer -------------------------------------------------------------

    def _content(
        self, question: Question[Any], case: TestCase, claims: Sequence[str]
    ) -> list[dict[str, Any]]:
        """The user's turn: the context (marked for the prompt cache when long), the question."""
        asked = text_block(question_text(question, case, claims))
        if not question.context:
            return [asked]
        context = text_block(context_text(case))
        # measured as verification's prefix, the longest, for every question that shows it
        prefix_chars = (
            len(self.prompts.system) + len(self.prompts.tasks[VERIFY.prompt]) + len(context["text"])
        )
        if prefix_chars // CHARS_PER_TOKEN >= self._min_cache_tokens:
            context["cache_control"] = {"type": "ephemeral"}
        return [context, asked]

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
        question: Question[M],
        case: TestCase,
        claims: Sequence[str] = (),
        check: Callable[[M], None] | None = None,
    ) -> tuple[M, Usage]:
        """The question's reply, validated.

        A reply of another shape is asked anew in the next way, when ``auto`` has one left; an
        invalid one is re-asked once, with the problem stated.
        """
        system = [text_block(f"{self.prompts.system}\n\n{self.prompts.tasks[question.prompt]}")]
        content = self._content(question, case, claims)
        usage = Usage()
        max_tokens = self.config.max_tokens
        problem = ""
        reasked = False
        mode = self._floor
        while True:
            blocks = [*content, text_block(REASK.format(problem=problem))] if problem else content
            params = request_params(
                question,
                model=self.model,
                system=system,
                blocks=blocks,
                max_tokens=max_tokens,
                mode=self._modes[mode],
            )
            message, paid = await self._send(params, usage_sink=usage)
            if paid:
                usage = usage + self._usage(message)
            try:
                reply = parse_reply(message, question, self._modes[mode])
                if check is not None:
                    check(reply)
            except InvalidReply as exc:
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
            f"{question.label}: the judge's reply was invalid twice ({problem})", usage=usage
        )

    def _worked(self, mode: int) -> None:
        """Remember a way of asking that gave a valid reply, when ``auto`` had to look for it."""
        if mode <= self._floor:
            return
        self._floor = mode
        self._info = self._make_info()
        self._notices = [fallback_notice(self.platform.label, self._modes, mode)]

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

    async def _send(self, params: dict[str, Any], *, usage_sink: Usage) -> tuple[Message, bool]:
        """The reply to one request, and whether it was paid for here (not shared with another).

        Raises:
            JudgeUnavailableError: the platform cannot be used at all; later requests fail at
                once, unsent.
            JudgeError: this request failed after its retries.
        """
        try:
            if self._batcher is None:
                return await self.transport.create_message(params, usage=usage_sink), True
            self.transport.check()
            return await self._batcher.create(params)
        except JudgeUnavailableError as exc:
            self.transport.stop(exc)
            raise

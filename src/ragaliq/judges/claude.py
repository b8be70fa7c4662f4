"""The Claude judge: structured verdicts from the Messages API, wherever Claude is reached.

Claude is reached through a :class:`~ragaliq.judges.platforms.Platform`: Anthropic's API (or an
Anthropic-compatible server at ``judge.base_url``), Amazon Bedrock or Vertex AI. The questions
asked about a case go out in one call per part of the case they read
(:mod:`~ragaliq.judges.calls`; each in a call of its own with ``judge.one_question_per_call``),
worded as :mod:`~ragaliq.judges.questions` says; the reply is asked for and validated as
:mod:`~ragaliq.judges.replies` says (with ``auto`` on a custom endpoint, the way that worked is
kept for the rest of the run). An invalid answer to one question (a verdict missing for a claim,
an unknown verdict, a chunk that does not exist, a member left out) is re-asked once, that
question alone, with the problem stated, and the others' answers are kept; a refusal or a reply
cut off at ``max_tokens`` re-asks them all. What is still invalid is that question's error for
its case: a verdict is never guessed, and no assistant prefill is ever sent. Requests go out
through the :mod:`~ragaliq.judges.transport` (retries, backoff, the API's errors as the judges'
errors) or, with ``judge.batch``, as Message Batches (:mod:`ragaliq.judges.batch`).
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anthropic
from anthropic.types import Message
from pydantic import BaseModel

from ragaliq.config import JudgeConfig
from ragaliq.errors import ConfigError, JudgeError, JudgeUnavailableError
from ragaliq.evaluators.questions import Answers, Question, Questions
from ragaliq.judges.batch import MessageBatcher
from ragaliq.judges.calls import Call, asked_text, context_text, plan_calls, system_text, text_block
from ragaliq.judges.estimates import CHARS_PER_TOKEN, estimate_usage
from ragaliq.judges.platforms import Platform, anthropic_platform
from ragaliq.judges.pricing import batch_price, cost_usd, price_for
from ragaliq.judges.prompts import Prompts
from ragaliq.judges.questions import (
    PROMPT_VERSION,
    answered_without_judge,
    prompt_version,
    wording_version,
)
from ragaliq.judges.replies import (
    REASK,
    InvalidReply,
    Mode,
    fallback_notice,
    modes_for,
    parse_replies,
    request_params,
)
from ragaliq.judges.transport import Sleep, Transport
from ragaliq.models import JudgeInfo, TestCase, Usage

__all__ = ["PROMPT_VERSION", "ClaudeJudge"]

MAX_TOKENS_CEILING = 32_000


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
        self._together = not config.one_question_per_call
        self._slots = asyncio.Semaphore(config.requests_in_flight)
        """Requests in flight at once: the calls of one case go out at once, and cases do too."""
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
            prompt_version=prompt_version(together=self._together),
            endpoint=self.platform.endpoint,
            structured_output=self.structured_output,
        )

    # -- questions ------------------------------------------------------------------------

    def version_of(self, question: Question[Any]) -> str:
        """The question's wording version, and whether it is asked with others."""
        version = wording_version(question)
        return version if self._together else f"{version}/apart"

    async def ask(
        self, questions: Questions, case: TestCase, *, claims: Sequence[str] = (), sample: int = 0
    ) -> Answers:
        """The questions' answers: one call per part of the case they read, those parts at once.

        ``sample`` is not sent: a repeated verification is the same request asked again.
        """
        known, left = answered_without_judge(questions, case, claims)
        groups = self._plan(left, case, claims)
        asked = await asyncio.gather(*map(self._ask_group, groups), return_exceptions=True)
        answers = known
        for group in asked:
            if isinstance(group, BaseException):
                raise group  # the judge cannot be used at all (or a bug): no answer stands
            answers += group
        return answers

    def planned_claims(self, case: TestCase) -> tuple[str, ...] | None:
        """Unknown before the call."""
        return None

    def estimate(
        self, questions: Questions, case: TestCase, *, claims: Sequence[str] = (), sample: int = 0
    ) -> Usage:
        """What asking would cost, from the prompts' size; nothing is sent."""
        _, left = answered_without_judge(questions, case, claims)
        groups = self._plan(left, case, claims)
        return estimate_usage(groups, prompts=self.prompts, price=self.price)

    def _plan(
        self, questions: Questions, case: TestCase, claims: Sequence[str]
    ) -> list[list[Call]]:
        return plan_calls(
            questions,
            case,
            claims,
            per_call=self.config.claims_per_call,
            together=self._together,
        )

    async def _ask_group(self, calls: list[Call]) -> Answers:
        """The answers of one group's calls, one after another, joined per question.

        A question that failed in one call is not asked in the group's later calls.
        """
        parts: dict[str, list[BaseModel]] = {}
        failed: dict[str, str] = {}
        usage = Usage()
        for call in calls:
            left = call.only({w.question.name for w in call.wordings} - set(failed))
            if not left.asked:
                continue
            answers = await self._ask_call(left)
            usage += answers.usage
            failed.update(answers.failed)
            for name, answer in answers.found.items():
                parts.setdefault(name, []).append(answer)
        found: dict[str, BaseModel] = {}
        for wording in calls[0].wordings:
            name = wording.question.name
            if name in failed or name not in parts:
                continue
            answers_of = parts[name]
            found[name] = answers_of[0] if wording.join is None else wording.join(answers_of)
        return Answers(found=found, failed=failed, usage=usage)

    # -- one call, validated ----------------------------------------------------------------

    def _content(self, call: Call) -> list[dict[str, Any]]:
        """The user's turn: the context (marked for the prompt cache when long), the questions."""
        asked = text_block(asked_text(call))
        if not call.reads_context:
            return [asked]
        context = text_block(context_text(call.case))
        prefix_chars = len(self.prompts.system) + len(context["text"])
        if prefix_chars // CHARS_PER_TOKEN >= self._min_cache_tokens:
            context["cache_control"] = {"type": "ephemeral"}
        return [context, asked]

    async def _ask_call(self, call: Call) -> Answers:
        """The answers of one call.

        A reply of another shape is asked anew in the next way, when ``auto`` has one left. An
        invalid answer is re-asked once, with the problem stated: that question alone, when the
        reply's other answers are valid.
        """
        found: dict[str, BaseModel] = {}
        failed: dict[str, str] = {}
        problems: dict[str, str] = {}
        usage = Usage()
        max_tokens = self.config.max_tokens
        mode = self._floor
        pending = call
        while pending.asked:
            asked = [w.question.name for w in pending.wordings]
            params = self._request(pending, problems, max_tokens=max_tokens, mode=mode)
            try:
                message, paid = await self._send(params, usage_sink=usage)
            except JudgeUnavailableError:
                raise
            except JudgeError as exc:
                usage += exc.usage or Usage()
                failed.update(dict.fromkeys(asked, str(exc)))
                break
            if paid:
                usage += self._usage(message)
            try:
                invalid = self._read(message, pending, self._modes[mode], found)
            except InvalidReply as exc:
                if exc.shape and mode + 1 < len(self._modes):
                    mode = mode + 1  # asked anew in the next way, not re-asked
                    continue
                if message.stop_reason == "max_tokens":
                    max_tokens = min(max_tokens * 2, MAX_TOKENS_CEILING)
                invalid = dict.fromkeys(asked, exc)
            if len(invalid) < len(asked):
                self._worked(mode)
            for name, problem in invalid.items():
                if name in problems:
                    failed[name] = f"the judge's reply was invalid twice ({problem})"
                else:
                    problems[name] = str(problem)
            pending = pending.only(set(invalid) - set(failed))
        return Answers(found=found, failed=failed, usage=usage)

    def _request(
        self, call: Call, problems: dict[str, str], *, max_tokens: int, mode: int
    ) -> dict[str, Any]:
        """The request of a call; a re-ask states the problem of each question asked again."""
        wordings = call.wordings
        alone = len(wordings) == 1
        problem = "; ".join(
            problems[name] if alone else f"{name}: {problems[name]}"
            for name in (w.question.name for w in wordings)
            if name in problems
        )
        content = self._content(call)
        blocks = [*content, text_block(REASK.format(problem=problem))] if problem else content
        return request_params(
            wordings,
            model=self.model,
            system=[text_block(system_text(self.prompts, wordings, call.case))],
            blocks=blocks,
            max_tokens=max_tokens,
            mode=self._modes[mode],
        )

    def _read(
        self, message: Message, call: Call, mode: Mode, found: dict[str, BaseModel]
    ) -> dict[str, InvalidReply]:
        """Each question's answer in ``message``, into ``found``; the invalid ones, by name.

        Raises:
            InvalidReply: the reply as a whole (see :func:`~ragaliq.judges.replies.parse_replies`).
        """
        replies, invalid = parse_replies(message, call.wordings, mode)
        for wording, shown in call.asked:
            name = wording.question.name
            if name not in replies:
                continue
            try:
                if wording.check is not None:
                    wording.check(replies[name], shown)
                found[name] = wording.read(replies[name], shown)
            except InvalidReply as exc:
                invalid[name] = exc
        return invalid

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
            async with self._slots:
                if self._batcher is None:
                    return await self.transport.create_message(params, usage=usage_sink), True
                self.transport.check()
                return await self._batcher.create(params)
        except JudgeUnavailableError as exc:
            self.transport.stop(exc)
            raise

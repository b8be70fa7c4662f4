"""Sending requests to Claude: retries, backoff, and the API's errors as the judges' errors.

The interactive judge (:mod:`ragaliq.judges.claude`) and the Message Batches collector
(:mod:`ragaliq.judges.batch`) send every request through one :class:`Transport`. A request that
failed for a passing reason (408, 409, 429, 5xx and 529, a timeout, a dropped connection) is sent
again after exponential backoff with jitter, or after the delay the server asked for
(``retry-after-ms``, or ``retry-after`` in seconds or as an HTTP date), at most a minute. A 429
that names its delay pauses every request of the transport, not only the one that got it.

An answer no retry will change becomes one of the judges' errors in one place, :func:`refusal`:
rejected credentials (401), refused access (403), an unknown model (404) and an account without
credit stop the run (:class:`JudgeUnavailableError`); any other refusal fails its case
(:class:`JudgeError`). So does a Messages request that failed after its retries, unless three
have failed in a row: then the API is taken to be down, and the run stops. Once a transport is
stopped, every later Messages request fails at once, unsent.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable, Mapping
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING, Any, TypeVar

import anthropic
from anthropic.types import Message

from ragaliq.errors import JudgeError, JudgeUnavailableError
from ragaliq.models import Usage
from ragaliq.redaction import excerpt

if TYPE_CHECKING:
    from ragaliq.judges.platforms import Client, Platform

__all__ = [
    "BACKOFF_BASE_S",
    "BACKOFF_CAP_S",
    "BATCHES_API",
    "FAILURES_BEFORE_UNAVAILABLE",
    "MAX_RETRY_AFTER_S",
    "RETRYABLE_STATUS",
    "Sleep",
    "Transport",
    "api_message",
    "backoff",
    "describe",
    "refusal",
    "retry_after",
    "retryable",
]

RETRYABLE_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504, 529})
"""Statuses worth sending again (every other 5xx too)."""
FAILURES_BEFORE_UNAVAILABLE = 3
"""Requests failing in a row (after their retries) before the API is taken to be down."""
MAX_RETRY_AFTER_S = 60.0
"""The longest wait a server's ``retry-after`` gets."""
BACKOFF_BASE_S = 0.5
BACKOFF_CAP_S = 20.0
BATCHES_API = "the Message Batches API"
"""How messages name the batch endpoints."""

Sleep = Callable[[float], Awaitable[None]]
T = TypeVar("T")


def retryable(status: int) -> bool:
    """Whether a request answered with ``status`` is worth sending again."""
    return status in RETRYABLE_STATUS or status >= 500


def retry_after(headers: Mapping[str, str]) -> float | None:
    """The seconds a server asks to wait, at most :data:`MAX_RETRY_AFTER_S`; None if it says none.

    ``retry-after-ms`` comes first; then ``retry-after``, in seconds or as an HTTP date. A value
    that reads as neither is no request to wait.
    """
    raw_ms = headers.get("retry-after-ms")
    if raw_ms:
        try:
            return min(max(0.0, float(raw_ms) / 1000), MAX_RETRY_AFTER_S)
        except ValueError:
            pass
    raw = headers.get("retry-after")
    if not raw:
        return None
    try:
        return min(max(0.0, float(raw)), MAX_RETRY_AFTER_S)
    except ValueError:
        pass
    try:
        when = float(parsedate_to_datetime(raw).timestamp())
    except (TypeError, ValueError):
        return None
    return min(max(0.0, when - time.time()), MAX_RETRY_AFTER_S)


def backoff(attempt: int, wait: float | None, rng: random.Random) -> float:
    """Seconds before retry number ``attempt + 1``.

    The server's ``wait`` if it asked for one, else exponential backoff with jitter: half to all
    of ``0.5 s x 2^attempt``, at most :data:`BACKOFF_CAP_S`.
    """
    if wait is not None:
        return min(wait, MAX_RETRY_AFTER_S)
    ceiling: float = min(BACKOFF_CAP_S, BACKOFF_BASE_S * 2.0**attempt)
    return ceiling * (0.5 + 0.5 * rng.random())


def api_message(exc: anthropic.APIStatusError) -> str:
    """What the API said in an error's body, else the SDK's message (which quotes the body).

    A short, decoded and redacted excerpt (:func:`~ragaliq.redaction.excerpt`): a gateway's
    answer may echo the key in any encoding.
    """
    body = exc.body
    if isinstance(body, dict):
        error = body.get("error")
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return excerpt(str(error["message"]))
    return excerpt(exc.message)


def describe(exc: Exception) -> str:
    """A failed attempt in a few words: ``529 Overloaded``, ``the request timed out``."""
    if isinstance(exc, anthropic.APIStatusError):
        return f"{exc.status_code} {api_message(exc)}"
    if isinstance(exc, anthropic.APITimeoutError):
        return "the request timed out"
    return f"connection failed ({exc.__class__.__name__})"


def refusal(
    exc: anthropic.APIStatusError,
    *,
    platform: Platform,
    model: str = "",
    usage: Usage | None = None,
    doing: str | None = None,
) -> JudgeError:
    """The judges' error for a request the API refused for good (a status not worth a retry).

    ``doing`` names a call to the Message Batches endpoints (``"send a batch"``) rather than a
    Messages request for ``model``: its refusals name the call, and a 404 there is no model's.
    """
    status, detail = exc.status_code, api_message(exc)
    if doing is not None:
        if status in (401, 403):
            return JudgeUnavailableError(
                f"{BATCHES_API} refused to {doing} ({status}): {detail}; {platform.credentials_fix}"
            )
        return JudgeError(f"{BATCHES_API} would not {doing} ({status}): {detail}")
    label = platform.label
    if status == 401:
        return JudgeUnavailableError(
            f"{label} rejected {platform.credentials} (401): {platform.credentials_fix}"
        )
    if status == 403:
        return JudgeUnavailableError(
            f"{label} refused access (403): {platform.access_fix} (model '{model}': {detail})"
        )
    if status == 404 or (status == 400 and "model identifier" in detail.lower()):
        return JudgeUnavailableError(
            f"{label} does not know model '{model}' ({status}); "
            "set judge.model to a current model name"
        )
    if status == 400 and "credit balance" in detail.lower():
        # An account without credit fails every request alike: stop rather than fail each case.
        return JudgeUnavailableError(
            f"the Anthropic account has no credit left (400: {detail}); add "
            "credit in the Anthropic Console under Plans & Billing, then run again"
        )
    return JudgeError(f"{label} rejected the request ({status}): {detail}", usage=usage)


class _Exhausted(Exception):
    """A request failed after its retries; ``failure`` is its last attempt's."""

    def __init__(self, failure: Exception) -> None:
        super().__init__(str(failure))
        self.failure = failure


class Transport:
    """One judge's way to its platform: every request, retried, paused and stopped together."""

    def __init__(
        self,
        platform: Platform,
        client: Client,
        *,
        max_retries: int,
        sleep: Sleep = asyncio.sleep,
        rng: random.Random | None = None,
    ) -> None:
        self.platform = platform
        self.client = client
        self.max_retries = max_retries
        self.sleep = sleep
        self.rng = rng or random.Random()
        self._failures_in_row = 0
        self._paused_until = 0.0
        self._unusable: JudgeUnavailableError | None = None

    def check(self) -> None:
        """Fail at once when the platform is known to be unusable.

        Raises:
            JudgeUnavailableError: the transport was stopped.
        """
        if self._unusable is not None:
            raise JudgeUnavailableError(str(self._unusable))

    def stop(self, error: JudgeUnavailableError) -> None:
        """Take the platform to be unusable: every later request fails with the first ``error``."""
        self._unusable = self._unusable or error

    async def create_message(self, params: dict[str, Any], *, usage: Usage) -> Message:
        """The reply to one Messages request; ``usage`` is what its case spent so far.

        Raises:
            JudgeUnavailableError: the platform cannot be used at all.
            JudgeError: this request was refused, or failed after its retries.
        """

        def refused(exc: anthropic.APIStatusError) -> JudgeError:
            return refusal(exc, platform=self.platform, model=params["model"], usage=usage)

        try:
            message: Message = await self._retrying(
                lambda: self.client.messages.create(**params), refused=refused
            )
        except _Exhausted as out:
            raise self._given_up(out.failure, usage) from out.failure
        self._failures_in_row = 0
        return message

    async def batch_call(self, doing: str, call: Callable[[], Awaitable[T]]) -> T:
        """The result of one call to the Message Batches endpoints (``doing`` names it).

        Raises:
            JudgeUnavailableError: the endpoints refused the credentials, or failed after retries.
            JudgeError: they refused this call.
        """

        def refused(exc: anthropic.APIStatusError) -> JudgeError:
            return refusal(exc, platform=self.platform, doing=doing)

        try:
            return await self._retrying(call, refused=refused, stoppable=False)
        except _Exhausted as out:
            raise JudgeUnavailableError(
                f"{BATCHES_API} failed to {doing} after {self.max_retries} retries "
                f"({describe(out.failure)})"
            ) from out.failure

    async def _retrying(
        self,
        call: Callable[[], Awaitable[T]],
        *,
        refused: Callable[[anthropic.APIStatusError], JudgeError],
        stoppable: bool = True,
    ) -> T:
        """``call``'s result, retried while its failures pass.

        A ``stoppable`` call fails at once, unsent, when the transport is stopped; the batch
        endpoints are not, so that batches already sent are still collected.

        Raises:
            JudgeError: from ``refused``, for a status not worth a retry; or the platform's
                credentials could not be used (unavailable).
            _Exhausted: the retries ran out.
        """
        attempt = 0
        while True:
            if stoppable:
                self.check()
            await self._wait_for_pause()
            try:
                return await call()
            except anthropic.APIStatusError as exc:
                if not retryable(exc.status_code):
                    raise refused(exc) from exc
                failure: Exception = exc
                wait = retry_after(exc.response.headers)
            except anthropic.APIConnectionError as exc:
                failure, wait = exc, None
            except self.platform.auth_errors as exc:
                raise JudgeUnavailableError(
                    f"{self.platform.label}: the credentials could not be used ({exc}); "
                    f"{self.platform.credentials_fix}"
                ) from exc
            if attempt >= self.max_retries:
                raise _Exhausted(failure)
            if isinstance(failure, anthropic.RateLimitError) and wait is not None:
                # pause every request, not only this one; the wait happens at the loop's top
                self._paused_until = max(self._paused_until, time.monotonic() + wait)
            else:
                await self.sleep(backoff(attempt, wait, self.rng))
            attempt += 1

    def _given_up(self, failure: Exception, usage: Usage) -> JudgeError:
        """A Messages request out of retries: its case's error, or the API's after a few."""
        self._failures_in_row += 1
        label, detail = self.platform.label, describe(failure)
        if self._failures_in_row >= FAILURES_BEFORE_UNAVAILABLE:
            return JudgeUnavailableError(
                f"{label} failed {self._failures_in_row} requests in a row, "
                f"each after {self.max_retries} retries (last: {detail}); "
                "try again later or raise judge.max_retries"
            )
        return JudgeError(f"{label} failed after {self.max_retries} retries: {detail}", usage=usage)

    async def _wait_for_pause(self) -> None:
        """After a 429 with retry-after, every request waits, not only the one that got it."""
        remaining = self._paused_until - time.monotonic()
        if remaining > 0:
            await self.sleep(remaining)

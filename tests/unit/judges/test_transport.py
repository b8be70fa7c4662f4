"""The transport's timing and its error map: retry-after in every form, backoff, refusals."""

from __future__ import annotations

import random
import time
from email.utils import format_datetime, formatdate

import anthropic
import httpx2
import pytest

from ragaliq.errors import JudgeError, JudgeUnavailableError
from ragaliq.judges.platforms import anthropic_platform
from ragaliq.judges.transport import (
    BACKOFF_CAP_S,
    MAX_RETRY_AFTER_S,
    backoff,
    refusal,
    retry_after,
    retryable,
)


def http_date(seconds_from_now: float) -> str:
    return formatdate(time.time() + seconds_from_now, usegmt=True)


def test_retry_after_in_seconds():
    assert retry_after({"retry-after": "7"}) == 7.0
    assert retry_after({"retry-after": "0.25"}) == 0.25  # not the standard, but honoured


def test_retry_after_ms_comes_first_and_is_in_milliseconds():
    assert retry_after({"retry-after-ms": "1500"}) == 1.5
    assert retry_after({"retry-after-ms": "250", "retry-after": "9"}) == 0.25


def test_an_unreadable_retry_after_ms_falls_back_to_retry_after():
    assert retry_after({"retry-after-ms": "soon", "retry-after": "3"}) == 3.0


def test_retry_after_as_an_http_date():
    assert retry_after({"retry-after": http_date(30)}) == pytest.approx(30, abs=2)


def test_an_http_date_in_the_past_means_no_wait():
    assert retry_after({"retry-after": http_date(-120)}) == 0.0


def test_an_http_date_with_an_offset_is_read_as_that_time():
    from datetime import UTC, datetime, timedelta, timezone

    later = datetime.now(UTC) + timedelta(seconds=20)
    written = format_datetime(later.astimezone(timezone(timedelta(hours=2))))
    assert retry_after({"retry-after": written}) == pytest.approx(20, abs=2)


@pytest.mark.parametrize(
    "headers",
    [
        {"retry-after-ms": "120000"},
        {"retry-after": "300"},
        {"retry-after": http_date(3600)},
    ],
)
def test_every_form_is_capped_at_a_minute(headers):
    assert retry_after(headers) == MAX_RETRY_AFTER_S


@pytest.mark.parametrize(
    "headers", [{}, {"retry-after": ""}, {"retry-after": "tomorrow-ish"}, {"retry-after-ms": "x"}]
)
def test_no_readable_value_is_no_request_to_wait(headers):
    assert retry_after(headers) is None


def test_negative_values_mean_no_wait():
    assert retry_after({"retry-after": "-5"}) == 0.0
    assert retry_after({"retry-after-ms": "-5"}) == 0.0


def test_backoff_honours_the_server_and_otherwise_grows_with_jitter():
    rng = random.Random(7)
    assert backoff(0, 4.0, rng) == 4.0
    for attempt in range(8):
        ceiling = min(BACKOFF_CAP_S, 0.5 * 2**attempt)
        delays = [backoff(attempt, None, rng) for _ in range(50)]
        assert all(ceiling / 2 <= d <= ceiling for d in delays)


@pytest.mark.parametrize("status", [408, 409, 429, 500, 503, 529, 599])
def test_passing_failures_are_retried(status):
    assert retryable(status)


@pytest.mark.parametrize("status", [400, 401, 403, 404, 413, 422])
def test_refusals_are_not_retried(status):
    assert not retryable(status)


def status_error(status: int, message: str) -> anthropic.APIStatusError:
    request = httpx2.Request("POST", "https://api.anthropic.com/v1/messages")
    response = httpx2.Response(status, request=request)
    body = {"type": "error", "error": {"type": "x", "message": message}}
    return anthropic.APIStatusError(message, response=response, body=body)


PLATFORM = anthropic_platform(api_key="sk-ant-test")


@pytest.mark.parametrize(
    ("status", "message", "expected", "phrase"),
    [
        (401, "invalid x-api-key", JudgeUnavailableError, "rejected the API key (401)"),
        (403, "no access", JudgeUnavailableError, "refused access (403)"),
        (404, "not found", JudgeUnavailableError, "does not know model 'm'"),
        (400, "invalid model identifier", JudgeUnavailableError, "does not know model 'm'"),
        (400, "Your credit balance is too low", JudgeUnavailableError, "no credit left"),
        (400, "prompt is too long", JudgeError, "rejected the request (400): prompt is too long"),
    ],
)
def test_the_error_map_of_a_messages_request(status, message, expected, phrase):
    error = refusal(status_error(status, message), platform=PLATFORM, model="m")
    assert type(error) is expected
    assert phrase in str(error)


@pytest.mark.parametrize(
    ("status", "expected", "phrase"),
    [
        (401, JudgeUnavailableError, "refused to send a batch (401)"),
        (403, JudgeUnavailableError, "refused to send a batch (403)"),
        (404, JudgeError, "would not send a batch (404)"),
        (400, JudgeError, "would not send a batch (400)"),
    ],
)
def test_the_error_map_of_the_batch_endpoints(status, expected, phrase):
    error = refusal(status_error(status, "no"), platform=PLATFORM, doing="send a batch")
    assert type(error) is expected
    assert phrase in str(error)
    if expected is JudgeUnavailableError:
        assert "ANTHROPIC_API_KEY" in str(error)

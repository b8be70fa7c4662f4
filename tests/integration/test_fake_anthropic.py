"""Self-test of tests/fakes/anthropic_server.py against the real anthropic SDK."""

from __future__ import annotations

import asyncio
import http.client
import json
from collections.abc import Iterator
from typing import Any

import anthropic
import pytest
from anthropic.types import Message, MessageParam, OutputConfigParam, TextBlockParam

from tests.fakes.anthropic_server import (
    FakeAnthropic,
    Fault,
    PromptCache,
    Reply,
    estimate_input_tokens,
    structured_responder,
)

# Not in the SDK's DEPRECATED_MODELS (those emit a DeprecationWarning, an error under -W error).
MODEL = "claude-haiku-4-5"

VERDICT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "verdict": {"type": "string", "enum": ["supported", "unsupported"]},
        "score": {"type": "number"},
    },
    "required": ["verdict", "score"],
    "additionalProperties": False,
}


@pytest.fixture
def fake() -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as server:
        yield server
    assert server.server_errors == []


def client_for(
    server: FakeAnthropic, *, max_retries: int = 2, timeout: float = 10.0
) -> anthropic.AsyncAnthropic:
    return anthropic.AsyncAnthropic(
        base_url=server.base_url, api_key="test-key", max_retries=max_retries, timeout=timeout
    )


async def judge(
    client: anthropic.AsyncAnthropic,
    question: str = "Is the claim supported?",
    *,
    system: str | list[TextBlockParam] = "You are a strict judge.",
) -> Message:
    messages: list[MessageParam] = [{"role": "user", "content": question}]
    output_config: OutputConfigParam = {
        "format": {"type": "json_schema", "schema": VERDICT_SCHEMA},
    }
    return await client.messages.create(
        model=MODEL,
        max_tokens=512,
        system=system,
        messages=messages,
        output_config=output_config,
    )


def text_of(message: Message) -> str:
    block = message.content[0]
    assert block.type == "text"
    return block.text


def raw_request(
    server: FakeAnthropic,
    method: str,
    path: str,
    body: bytes | None = None,
    headers: dict[str, str] | None = None,
) -> tuple[int, dict[str, str], bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    try:
        connection.request(method, path, body=body, headers=headers or {})
        response = connection.getresponse()
        data = response.read()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, data
    finally:
        connection.close()


# --------------------------------------------------------------------------------------------
# Successful replies
# --------------------------------------------------------------------------------------------


@pytest.mark.asyncio
async def test_scripted_structured_reply_round_trips(fake: FakeAnthropic) -> None:
    fake.enqueue(
        Reply(
            json_output={"verdict": "supported", "score": 0.9},
            input_tokens=321,
            output_tokens=17,
            cache_read_input_tokens=200,
            cache_creation_input_tokens=50,
        )
    )
    async with client_for(fake) as client:
        message = await judge(client)

    assert json.loads(text_of(message)) == {"verdict": "supported", "score": 0.9}
    assert message.stop_reason == "end_turn"
    assert message.model == MODEL
    assert message.id == "msg_fake_1"
    assert message.usage.input_tokens == 321
    assert message.usage.output_tokens == 17
    assert message.usage.cache_read_input_tokens == 200
    assert message.usage.cache_creation_input_tokens == 50

    assert fake.count() == 1
    assert fake.pending() == 0
    [request] = fake.requests
    assert request.path == "/v1/messages"
    assert request.status == 200
    assert request.api_key == "test-key"
    assert request.body["model"] == MODEL
    assert request.body["output_config"]["format"] == {
        "type": "json_schema",
        "schema": VERDICT_SCHEMA,
    }
    assert request.body["messages"] == [{"role": "user", "content": "Is the claim supported?"}]
    assert "temperature" not in request.body


@pytest.mark.asyncio
async def test_default_usage_is_estimated_from_sizes(fake: FakeAnthropic) -> None:
    fake.enqueue(Reply(json_output={"verdict": "unsupported", "score": 0.1}))
    async with client_for(fake) as client:
        message = await judge(client)

    text = text_of(message)
    assert message.usage.input_tokens == estimate_input_tokens(fake.requests[0].body)
    assert message.usage.input_tokens > 0
    assert message.usage.output_tokens == len(text) // 4 + 1
    assert message.usage.cache_read_input_tokens == 0
    assert message.usage.cache_creation_input_tokens == 0


@pytest.mark.asyncio
async def test_responder_is_used_when_script_is_empty(fake: FakeAnthropic) -> None:
    seen: list[str] = []

    def answer(body: dict[str, Any]) -> Any:
        question = body["messages"][0]["content"]
        seen.append(question)
        return {"verdict": "supported", "score": len(question)}

    fake.responder = structured_responder(answer)
    fake.enqueue(Reply(json_output={"verdict": "unsupported", "score": 0}))
    async with client_for(fake) as client:
        first = await judge(client, "abc")
        second = await judge(client, "abcdef")

    assert json.loads(text_of(first)) == {"verdict": "unsupported", "score": 0}
    assert json.loads(text_of(second)) == {"verdict": "supported", "score": 6}
    assert seen == ["abcdef"]
    assert second.id == "msg_fake_2"
    assert fake.count() == 2


@pytest.mark.asyncio
async def test_max_tokens_stop_reason_with_truncated_json(fake: FakeAnthropic) -> None:
    fake.enqueue(Reply(text='{"verdict": "suppo', stop_reason="max_tokens"))
    async with client_for(fake) as client:
        message = await judge(client)

    assert message.stop_reason == "max_tokens"
    assert text_of(message) == '{"verdict": "suppo'
    with pytest.raises(json.JSONDecodeError):
        json.loads(text_of(message))


@pytest.mark.asyncio
async def test_refusal_stop_reason_and_details(fake: FakeAnthropic) -> None:
    fake.enqueue(Reply(stop_reason="refusal", refusal_explanation="policy says no"))
    async with client_for(fake) as client:
        message = await judge(client)

    assert message.stop_reason == "refusal"
    assert message.stop_details is not None
    assert message.stop_details.type == "refusal"
    assert message.stop_details.category is None
    assert message.stop_details.explanation == "policy says no"
    assert text_of(message) != ""


# --------------------------------------------------------------------------------------------
# Faults and the SDK's retry behaviour
# --------------------------------------------------------------------------------------------


@pytest.mark.asyncio
async def test_429_with_retry_after_is_retried(fake: FakeAnthropic) -> None:
    fake.enqueue(Fault(429, retry_after=0.2), Reply(json_output={"verdict": "supported"}))
    async with client_for(fake, max_retries=2) as client:
        message = await judge(client)

    assert json.loads(text_of(message)) == {"verdict": "supported"}
    assert len(fake.requests) == 2
    assert fake.statuses() == [429, 200]
    assert [r.headers["x-stainless-retry-count"] for r in fake.requests] == ["0", "1"]
    assert fake.requests[0].body == fake.requests[1].body
    assert fake.count() == 1


@pytest.mark.asyncio
async def test_529_overloaded_is_retried(fake: FakeAnthropic) -> None:
    fake.responder = structured_responder(lambda _body: {"verdict": "supported"})
    fake.fail_next(529, times=2, retry_after=0.01)
    async with client_for(fake, max_retries=2) as client:
        message = await judge(client)

    assert json.loads(text_of(message)) == {"verdict": "supported"}
    assert fake.statuses() == [529, 529, 200]


@pytest.mark.asyncio
async def test_529_surfaces_as_overloaded_error_when_retries_run_out(fake: FakeAnthropic) -> None:
    fake.fail_next(529, times=2, retry_after=0.01)
    async with client_for(fake, max_retries=1) as client:
        with pytest.raises(anthropic.OverloadedError) as caught:
            await judge(client)

    assert caught.value.status_code == 529
    assert caught.value.type == "overloaded_error"
    assert caught.value.request_id is not None
    assert caught.value.request_id.startswith("req_fake_")
    assert fake.statuses() == [529, 529]


@pytest.mark.asyncio
async def test_401_raises_authentication_error_without_retry(fake: FakeAnthropic) -> None:
    fake.enqueue(Fault(401), Reply(json_output={"never": "sent"}))
    async with client_for(fake, max_retries=3) as client:
        with pytest.raises(anthropic.AuthenticationError) as caught:
            await judge(client)

    assert caught.value.status_code == 401
    assert caught.value.type == "authentication_error"
    assert len(fake.requests) == 1
    assert fake.pending() == 1
    assert fake.count() == 0


@pytest.mark.asyncio
async def test_wrong_api_key_is_rejected_when_a_key_is_configured() -> None:
    responder = structured_responder(lambda _body: {"ok": True})
    with FakeAnthropic(responder, api_key="the-right-key") as server:
        async with client_for(server, max_retries=2) as client:
            with pytest.raises(anthropic.AuthenticationError):
                await judge(client)
        async with anthropic.AsyncAnthropic(
            base_url=server.base_url, api_key="the-right-key", max_retries=0
        ) as good_client:
            message = await judge(good_client)
    assert json.loads(text_of(message)) == {"ok": True}
    assert server.statuses() == [401, 200]


@pytest.mark.asyncio
async def test_should_retry_header_overrides_sdk_policy(fake: FakeAnthropic) -> None:
    fake.enqueue(Fault(500, should_retry=False), Fault(400, should_retry=True, retry_after=0.01))
    fake.enqueue(Reply(json_output={"verdict": "supported"}))
    async with client_for(fake, max_retries=3) as client:
        with pytest.raises(anthropic.InternalServerError):
            await judge(client)
        message = await judge(client)

    assert json.loads(text_of(message)) == {"verdict": "supported"}
    assert fake.statuses() == [500, 400, 200]


@pytest.mark.asyncio
async def test_max_in_flight_answers_429_and_sdk_retries_until_success() -> None:
    admitted_concurrency: list[int] = []
    server = FakeAnthropic(latency=0.2, max_in_flight=2, rate_limit_retry_after=0.05)

    def answer(body: dict[str, Any]) -> Any:
        admitted_concurrency.append(server.in_flight)
        return {"echo": body["messages"][0]["content"]}

    server.responder = structured_responder(answer)
    with server:
        async with client_for(server, max_retries=100) as client:
            messages = await asyncio.gather(*(judge(client, f"q{i}") for i in range(6)))

    assert sorted(json.loads(text_of(m))["echo"] for m in messages) == [f"q{i}" for i in range(6)]
    assert server.count() == 6
    assert server.rate_limited > 0
    assert server.statuses().count(429) == server.rate_limited
    assert server.statuses().count(200) == 6
    assert server.peak_in_flight > 2
    assert admitted_concurrency
    assert max(admitted_concurrency) <= 2
    assert server.server_errors == []


@pytest.mark.asyncio
async def test_dropped_connection_raises_connection_error_without_retries(
    fake: FakeAnthropic,
) -> None:
    fake.enqueue(Fault(0, drop_connection=True))
    async with client_for(fake, max_retries=0) as client:
        with pytest.raises(anthropic.APIConnectionError):
            await judge(client)

    assert len(fake.requests) == 1
    assert fake.statuses() == [None]


@pytest.mark.asyncio
async def test_dropped_connection_is_retried_by_the_sdk(fake: FakeAnthropic) -> None:
    fake.enqueue(Fault(0, drop_connection=True), Reply(json_output={"verdict": "supported"}))
    async with client_for(fake, max_retries=1) as client:
        message = await judge(client)

    assert json.loads(text_of(message)) == {"verdict": "supported"}
    assert fake.statuses() == [None, 200]


@pytest.mark.asyncio
async def test_delay_triggers_client_timeout(fake: FakeAnthropic) -> None:
    fake.enqueue(Fault(500, delay=5.0))
    async with client_for(fake, max_retries=0, timeout=0.2) as client:
        with pytest.raises(anthropic.APITimeoutError):
            await judge(client)

    assert len(fake.requests) == 1


@pytest.mark.asyncio
async def test_no_scripted_reply_is_a_500(fake: FakeAnthropic) -> None:
    async with client_for(fake, max_retries=0) as client:
        with pytest.raises(anthropic.InternalServerError) as caught:
            await judge(client)

    assert caught.value.status_code == 500
    assert caught.value.type == "api_error"
    assert "no scripted reply" in str(caught.value.api_message)
    assert fake.count() == 0


@pytest.mark.asyncio
async def test_responder_exception_is_a_500_and_recorded(fake: FakeAnthropic) -> None:
    def explode(_body: dict[str, Any]) -> Any:
        raise ValueError("boom")

    fake.responder = structured_responder(explode)
    async with client_for(fake, max_retries=0) as client:
        with pytest.raises(anthropic.InternalServerError) as caught:
            await judge(client)

    assert "boom" in str(caught.value.api_message)
    assert [str(e) for e in fake.responder_errors] == ["boom"]


# --------------------------------------------------------------------------------------------
# Prompt-cache simulation
# --------------------------------------------------------------------------------------------


@pytest.mark.asyncio
async def test_structured_responder_simulates_prompt_caching(fake: FakeAnthropic) -> None:
    fake.responder = structured_responder(lambda _body: {"verdict": "supported", "score": 1})
    long_rubric = "Judge each claim against the context. " * 100
    cached_system: list[TextBlockParam] = [
        {"type": "text", "text": long_rubric, "cache_control": {"type": "ephemeral"}},
    ]
    other_system: list[TextBlockParam] = [
        {"type": "text", "text": long_rubric + "!", "cache_control": {"type": "ephemeral"}},
    ]
    async with client_for(fake) as client:
        first = await judge(client, "claim one", system=cached_system)
        second = await judge(client, "claim two, longer", system=cached_system)
        third = await judge(client, "claim one", system=other_system)
        plain = await judge(client, "claim one")

    totals = [estimate_input_tokens(r.body) for r in fake.requests]
    usages = [m.usage for m in (first, second, third, plain)]
    for usage, total in zip(usages, totals, strict=True):
        cached = (usage.cache_creation_input_tokens or 0) + (usage.cache_read_input_tokens or 0)
        assert usage.input_tokens + cached == total

    # The marked prefix is the single system block, sized without its marker.
    rubric_block = {"type": "text", "text": long_rubric}
    assert first.usage.cache_creation_input_tokens == len(json.dumps(rubric_block)) // 4
    assert first.usage.cache_read_input_tokens == 0
    assert second.usage.cache_creation_input_tokens == 0
    assert second.usage.cache_read_input_tokens == first.usage.cache_creation_input_tokens
    assert second.usage.input_tokens < totals[1] // 2
    assert third.usage.cache_creation_input_tokens
    assert third.usage.cache_read_input_tokens == 0
    assert plain.usage.cache_creation_input_tokens == 0
    assert plain.usage.cache_read_input_tokens == 0
    assert len(fake.prompt_cache) == 2


def test_prompt_cache_longest_seen_prefix_is_read() -> None:
    cache = PromptCache()
    marker = {"type": "ephemeral"}

    def body(*texts: str, marked: tuple[int, ...]) -> dict[str, Any]:
        blocks = [
            {"type": "text", "text": t, **({"cache_control": marker} if i in marked else {})}
            for i, t in enumerate(texts)
        ]
        return {"model": MODEL, "messages": [{"role": "user", "content": blocks}]}

    a, b = "a" * 400, "b" * 400
    first = cache.usage_for(body(a, b, marked=(0,)))
    assert first.cache_read_input_tokens == 0
    assert first.cache_creation_input_tokens > 100

    # The same first block is read from cache; the longer marked prefix is written.
    second = cache.usage_for(body(a, b, marked=(0, 1)))
    assert second.cache_read_input_tokens == first.cache_creation_input_tokens
    assert second.cache_creation_input_tokens > 100

    # Markers do not change the cached content; a different model does.
    third = cache.usage_for(body(a, b, marked=(1,)))
    assert third.cache_creation_input_tokens == 0
    assert third.cache_read_input_tokens == (
        second.cache_read_input_tokens + second.cache_creation_input_tokens
    )
    other_model = {**body(a, b, marked=(1,)), "model": "claude-opus-4-7"}
    assert cache.usage_for(other_model).cache_read_input_tokens == 0

    # A top-level cache_control marks the last block.
    automatic = {**body(a, marked=()), "cache_control": marker, "model": "m2"}
    assert cache.usage_for(automatic).cache_creation_input_tokens > 0
    assert cache.usage_for(automatic).cache_read_input_tokens > 0

    cache.clear()
    assert len(cache) == 0


# --------------------------------------------------------------------------------------------
# Raw HTTP behaviour and lifecycle
# --------------------------------------------------------------------------------------------


def test_missing_api_key_other_paths_and_methods(fake: FakeAnthropic) -> None:
    fake.enqueue(Reply(json_output={"unused": True}))
    body = json.dumps({"model": MODEL, "max_tokens": 5, "messages": []}).encode()

    status, headers, data = raw_request(
        fake, "POST", "/v1/messages", body, {"content-type": "application/json"}
    )
    assert status == 401
    assert headers["content-type"] == "application/json"
    assert headers["request-id"].startswith("req_fake_")
    assert json.loads(data)["error"]["type"] == "authentication_error"

    status, headers, data = raw_request(fake, "POST", "/v1/complete", body, {"x-api-key": "k"})
    assert status == 404
    assert json.loads(data) == {
        "type": "error",
        "error": {"type": "not_found_error", "message": "POST /v1/complete: not found"},
    }

    status, headers, data = raw_request(fake, "HEAD", "/v1/messages", None, {"x-api-key": "k"})
    assert status == 404
    assert data == b""
    assert "request-id" in headers

    status, _, data = raw_request(fake, "POST", "/v1/messages", b"{not json", {"x-api-key": "k"})
    assert status == 400
    assert json.loads(data)["error"]["type"] == "invalid_request_error"

    assert [r.method for r in fake.requests] == ["POST", "POST", "HEAD", "POST"]
    assert fake.statuses() == [401, 404, 404, 400]
    assert fake.pending() == 1  # nothing was consumed from the script


def test_x_api_key_header_is_accepted(fake: FakeAnthropic) -> None:
    fake.enqueue(Reply(json_output={"ok": True}, output_tokens=3))
    body = json.dumps(
        {"model": MODEL, "max_tokens": 5, "messages": [{"role": "user", "content": "hi"}]}
    ).encode()
    status, headers, data = raw_request(fake, "POST", "/v1/messages", body, {"x-api-key": "k"})

    assert status == 200
    assert headers["content-type"] == "application/json"
    message = Message.model_validate(json.loads(data))
    assert message.usage.output_tokens == 3
    assert fake.requests[0].api_key == "k"


def test_stop_closes_the_port_and_is_idempotent() -> None:
    server = FakeAnthropic().start()
    port = server.port
    server.stop()
    server.stop()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        with pytest.raises(ConnectionRefusedError):
            connection.request("GET", "/")
    finally:
        connection.close()
    with pytest.raises(RuntimeError):
        server.start()


@pytest.mark.asyncio
async def test_stop_with_idle_keep_alive_and_sleeping_requests() -> None:
    server = FakeAnthropic(structured_responder(lambda _body: {"ok": True})).start()
    async with client_for(server, max_retries=0) as client:
        await judge(client)  # leaves a keep-alive connection open in the client pool
        server.enqueue(Fault(500, delay=30.0))
        pending = asyncio.ensure_future(judge(client))
        while not server.in_flight:
            await asyncio.sleep(0.01)
        await asyncio.to_thread(server.stop)  # must not wait for the 30 s delay
        with pytest.raises(anthropic.APIError):
            await pending
    assert server.server_errors == []

"""A fake Anthropic Messages API served over real HTTP, for tests and benchmarks.

`FakeAnthropic` runs a stdlib `ThreadingHTTPServer` on 127.0.0.1 (ephemeral port) in a
background thread and answers `POST /v1/messages` well enough for the real
`anthropic.AsyncAnthropic(base_url=fake.base_url, api_key="test-key")` client, so the SDK's
own retry, timeout and parsing code is exercised. Because it is a real socket server it can
also be handed to subprocess end-to-end tests through its URL (for example by setting
`ANTHROPIC_BASE_URL`).

Answers come, in order, from:

1. the FIFO script filled with `enqueue()` / `fail_next()` (`Reply` or `Fault` items);
2. the `responder` callable (gets the parsed request body, returns a `Reply` or `Fault`);
3. otherwise a 500 `api_error` saying "no scripted reply".

Before that, a request without credentials gets a 401 (the key may come as `x-api-key: <key>`
or as `authorization: Bearer <key>`, which is what the anthropic 2.x SDK sends for `api_key`),
any other path or method a 404, and when `max_in_flight` is set and more requests than that
are being served at once, the extra ones get a 429 with `retry-after: rate_limit_retry_after`
(they consume nothing from the script). Every request is recorded in `requests`, faulted
ones included.

The same server plays Claude's cloud platforms, as the SDK's clients reach them:

- Amazon Bedrock: `POST /model/{model}/invoke` (the model in the path, `anthropic_version` in
  the body), signed with SigV4 (`authorization: AWS4-HMAC-SHA256 Credential=<key id>/...` and
  `x-amz-date`) or a Bedrock API key (`authorization: Bearer`); errors in Bedrock's shape
  (`{"message": ...}` and `x-amzn-errortype`); a request without a signature gets a 403.
- Vertex AI: `POST [/v1]/projects/{project}/locations/{region}/publishers/anthropic/models/
  {model}:rawPredict` with `authorization: Bearer <access token>` (a 401 without one; only
  `google_token` when set); errors in Google's shape (`{"error": {"code", "message", "status"}}`).

and Anthropic's Message Batches API (see `tests/fakes/anthropic_batches.py`): `POST
/v1/messages/batches`, `GET /v1/messages/batches/{id}` (in progress for `batch_polls` looks,
then ended), `GET /v1/messages/batches/{id}/results` (JSON Lines) and `POST
/v1/messages/batches/{id}/cancel`. Each request of a batch is answered like a message (script,
then responder); a `Fault` becomes an errored result and an `Expire` an expired one.

Typical use::

    with FakeAnthropic(structured_responder(lambda body: {"verdict": "ok"})) as fake:
        fake.fail_next(429, retry_after=0.01)
        client = anthropic.AsyncAnthropic(base_url=fake.base_url, api_key="test-key")
        ...
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import re
import socket
import sys
import threading
import urllib.parse
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import KW_ONLY, dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Final, TypeAlias, cast

__all__ = [
    "CacheUsage",
    "Expire",
    "FakeAnthropic",
    "Fault",
    "PromptCache",
    "RecordedRequest",
    "Reply",
    "Responder",
    "estimate_input_tokens",
    "estimate_tokens",
    "structured_responder",
]

MESSAGES_PATH: Final = "/v1/messages"
DEFAULT_REFUSAL_TEXT: Final = "I can't help with that request."
DEFAULT_REFUSAL_EXPLANATION: Final = "The fake server was scripted to refuse this request."

_ERROR_TYPES: Final[dict[int, str]] = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    408: "timeout_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    504: "timeout_error",
    529: "overloaded_error",
}


def _error_type(status: int) -> str:
    if status in _ERROR_TYPES:
        return _ERROR_TYPES[status]
    return "api_error" if status >= 500 else "invalid_request_error"


def estimate_tokens(text: str) -> int:
    """Deterministic token estimate for a piece of text: one token per four characters."""
    return len(text) // 4


def estimate_input_tokens(body: dict[str, Any]) -> int:
    """Deterministic input-token estimate for a request body: `len(json.dumps(body)) // 4`."""
    return estimate_tokens(json.dumps(body))


# --------------------------------------------------------------------------------------------
# Script items and records
# --------------------------------------------------------------------------------------------


@dataclass(kw_only=True)
class RecordedRequest:
    """One request as the server received it."""

    path: str
    headers: dict[str, str]
    """Header names lower-cased."""
    body: dict[str, Any]
    """Parsed JSON request body (`{}` when absent or not a JSON object)."""
    method: str = "POST"
    status: int | None = None
    """Status answered; `None` while in progress or when the connection was dropped."""

    @property
    def api_key(self) -> str | None:
        """The key sent as `x-api-key`, or else as `authorization: Bearer <key>`."""
        key = self.headers.get("x-api-key")
        if key:
            return key
        scheme, _, token = self.headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer":
            return None
        return token.strip() or None


@dataclass(kw_only=True)
class Reply:
    """One scripted successful (200) answer."""

    json_output: Any = None
    """Serialised with `json.dumps` into the single text content block."""
    text: str | None = None
    """Raw text for the text block instead of `json_output` (e.g. malformed JSON)."""
    stop_reason: str = "end_turn"
    """`"end_turn"`, `"max_tokens"`, `"refusal"`, ..."""
    input_tokens: int | None = None
    """Default: `estimate_input_tokens(body)`."""
    output_tokens: int | None = None
    """Default: `len(text) // 4 + 1`."""
    cache_read_input_tokens: int = 0
    cache_creation_input_tokens: int = 0
    refusal_explanation: str = DEFAULT_REFUSAL_EXPLANATION
    """`stop_details.explanation` when `stop_reason == "refusal"`."""
    content: list[dict[str, Any]] | None = None
    """Raw content blocks, overriding `json_output` / `text` entirely."""
    delay: float = 0.0
    """Extra seconds to sleep before answering (on top of the server latency)."""

    def resolved_text(self) -> str:
        """The text put into the text content block."""
        if self.text is not None:
            return self.text
        if self.json_output is not None:
            return json.dumps(self.json_output)
        if self.stop_reason == "refusal":
            return DEFAULT_REFUSAL_TEXT
        return ""


@dataclass
class Fault:
    """One scripted failure: an error status, or a dropped connection.

    `status` may be given positionally (`Fault(429, retry_after=0.2)`); the rest are keyword-only.
    """

    status: int
    """HTTP status to answer: 429, 529, 500, 401, 400, ..."""
    _: KW_ONLY
    retry_after: float | None = None
    """Sent as the `retry-after` header (seconds); the SDK honours it exactly."""
    drop_connection: bool = False
    """Close the socket without any response instead (the SDK sees a connection error)."""
    delay: float = 0.0
    """Seconds to sleep before answering or dropping (to trigger client timeouts)."""
    message: str | None = None
    """`error.message` in the body; a default is derived from the status."""
    should_retry: bool | None = None
    """When set, sent as `x-should-retry: true|false`, which overrides the SDK's retry policy."""
    page: str | None = None
    """An HTML page sent as the body instead of the API's JSON error (a gateway's own page)."""


@dataclass(frozen=True)
class Expire:
    """In a batch: the request expires (not processed within 24 hours). Sent alone: a 504."""


Responder: TypeAlias = Callable[[dict[str, Any]], "Reply | Fault | Expire"]
"""Gets the parsed request body and returns the answer (usually a `Reply`)."""


# --------------------------------------------------------------------------------------------
# Prompt-cache simulation
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class CacheUsage:
    """Usage numbers for one request, as the real API splits them."""

    input_tokens: int
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0


def _strip_cache_control(block: Any) -> Any:
    if isinstance(block, dict):
        return {k: v for k, v in block.items() if k != "cache_control"}
    return block


def _prompt_blocks(body: dict[str, Any]) -> list[tuple[str, Any]]:
    """The cacheable prompt in API order (tools, system, messages) as (role, block) pairs."""
    blocks: list[tuple[str, Any]] = []
    tools = body.get("tools")
    if isinstance(tools, list):
        blocks.extend(("tools", tool) for tool in tools)
    system = body.get("system")
    if isinstance(system, str):
        blocks.append(("system", {"type": "text", "text": system}))
    elif isinstance(system, list):
        blocks.extend(("system", block) for block in system)
    messages = body.get("messages")
    for message in messages if isinstance(messages, list) else []:
        if not isinstance(message, dict):
            continue
        role = str(message.get("role", "user"))
        content = message.get("content")
        if isinstance(content, list):
            blocks.extend((role, block) for block in content)
        else:
            blocks.append((role, {"type": "text", "text": str(content)}))
    return blocks


class PromptCache:
    """Remembers which `cache_control`-marked prompt prefixes have been seen (by hash).

    A prefix runs from the first prompt block (tools, then system, then message content
    blocks) up to and including a block carrying `"cache_control"` (a top-level
    `cache_control` on the request marks the last block). For a request, the longest marked
    prefix seen before is reported as `cache_read_input_tokens`, and the rest of the last
    marked prefix as `cache_creation_input_tokens`; `input_tokens` is the remainder of
    `estimate_input_tokens(body)`. Prefix sizes are `len(json.dumps(blocks)) // 4` without the
    markers; hashes include the model. There is no minimum length and no expiry.
    """

    def __init__(self) -> None:
        self._seen: set[str] = set()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        with self._lock:
            return len(self._seen)

    def clear(self) -> None:
        """Forget every prefix."""
        with self._lock:
            self._seen.clear()

    def usage_for(self, body: dict[str, Any]) -> CacheUsage:
        """Compute the usage split for `body` and remember its marked prefixes."""
        total = estimate_input_tokens(body)
        blocks = _prompt_blocks(body)
        marked = {
            i
            for i, (_, block) in enumerate(blocks)
            if isinstance(block, dict) and "cache_control" in block
        }
        if body.get("cache_control") and blocks:
            marked.add(len(blocks) - 1)
        if not marked:
            return CacheUsage(input_tokens=total)

        hasher = hashlib.sha256(json.dumps(body.get("model")).encode())
        chars = 0
        prefixes: list[tuple[str, int]] = []  # (hash, size in tokens) per marked prefix
        for i, (role, block) in enumerate(blocks):
            stripped = json.dumps(_strip_cache_control(block), sort_keys=True)
            hasher.update(json.dumps(role).encode() + stripped.encode() + b"\n")
            chars += len(stripped)
            if i in marked:
                prefixes.append((hasher.copy().hexdigest(), chars // 4))

        with self._lock:
            hits = [size for digest, size in prefixes if digest in self._seen]
            self._seen.update(digest for digest, _ in prefixes)

        read = max(hits, default=0)
        creation = max(prefixes[-1][1] - read, 0)
        return CacheUsage(
            input_tokens=max(total - read - creation, 0),
            cache_creation_input_tokens=creation,
            cache_read_input_tokens=read,
        )


_local = threading.local()


def _active_prompt_cache() -> PromptCache | None:
    """The prompt cache of the server whose handler thread is calling a responder."""
    return cast("PromptCache | None", getattr(_local, "prompt_cache", None))


@contextlib.contextmanager
def _using_prompt_cache(cache: PromptCache) -> Iterator[None]:
    previous = _active_prompt_cache()
    _local.prompt_cache = cache
    try:
        yield
    finally:
        _local.prompt_cache = previous


def structured_responder(handler: Callable[[dict[str, Any]], Any]) -> Responder:
    """Wrap `handler(body) -> JSON output object` into a responder with realistic usage.

    The returned responder answers `Reply(json_output=handler(body))` with `input_tokens`
    estimated from the request size and prompt caching simulated (see `PromptCache`): when
    called by a `FakeAnthropic` it uses that server's `prompt_cache`, otherwise a cache of its
    own. If `handler` returns a `Reply` or `Fault` it is passed through unchanged.
    """
    own_cache = PromptCache()

    def respond(body: dict[str, Any]) -> Reply | Fault:
        output = handler(body)
        if isinstance(output, Reply | Fault):
            return output
        cache = _active_prompt_cache()  # not `or`: an empty PromptCache is falsy
        usage = (own_cache if cache is None else cache).usage_for(body)
        return Reply(
            json_output=output,
            input_tokens=usage.input_tokens,
            cache_creation_input_tokens=usage.cache_creation_input_tokens,
            cache_read_input_tokens=usage.cache_read_input_tokens,
        )

    return respond


# --------------------------------------------------------------------------------------------
# HTTP plumbing
# --------------------------------------------------------------------------------------------


@dataclass(kw_only=True)
class _Outcome:
    status: int
    payload: dict[str, Any] | None = None
    headers: dict[str, str] = field(default_factory=dict)
    drop: bool = False
    raw: bytes | None = None
    """A body other than JSON (batch results are JSON Lines)."""
    content_type: str = "application/json"


def _error_outcome(
    status: int,
    message: str,
    *,
    retry_after: float | None = None,
    should_retry: bool | None = None,
) -> _Outcome:
    headers: dict[str, str] = {}
    if retry_after is not None:
        headers["retry-after"] = f"{retry_after:g}"
    if should_retry is not None:
        headers["x-should-retry"] = "true" if should_retry else "false"
    payload = {"type": "error", "error": {"type": _error_type(status), "message": message}}
    return _Outcome(status=status, payload=payload, headers=headers)


_SIGV4 = re.compile(
    r"^AWS4-HMAC-SHA256 Credential=(?P<key>[^/]+)/(?P<date>\d{8})/(?P<region>[^/]+)/"
    r"(?P<service>[^/]+)/aws4_request, SignedHeaders=(?P<signed>[^,]+), Signature=[0-9a-f]{64}$"
)
_BEDROCK = re.compile(r"^/model/(?P<model>[^/]+)/invoke$")
_VERTEX = re.compile(
    r"^(?:/v1)?/projects/(?P<project>[^/]+)/locations/(?P<region>[^/]+)/publishers/anthropic/"
    r"models/(?P<model>[^/:]+):rawPredict$"
)
_BATCHES = re.compile(r"^/v1/messages/batches(?:/(?P<id>[^/]+)(?:/(?P<action>results|cancel))?)?$")


@dataclass(frozen=True, kw_only=True)
class _Route:
    platform: str
    """`anthropic`, `bedrock` or `vertex`: whose credentials and error shape."""
    model: str | None = None
    batch: tuple[str | None, str | None] | None = None
    """For the batch endpoints: (batch id, `results` | `cancel` | None)."""


def _route(method: str, path: str) -> _Route | None:
    if method == "POST" and path == MESSAGES_PATH:
        return _Route(platform="anthropic")
    if method == "POST" and (bedrock := _BEDROCK.match(path)):
        return _Route(platform="bedrock", model=urllib.parse.unquote(bedrock["model"]))
    if method == "POST" and (vertex := _VERTEX.match(path)):
        return _Route(platform="vertex", model=urllib.parse.unquote(vertex["model"]))
    if method in ("GET", "POST") and (batch := _BATCHES.match(path)):
        return _Route(platform="anthropic", batch=(batch["id"], batch["action"]))
    return None


_BEDROCK_ERROR_TYPES: Final[dict[int, str]] = {
    400: "ValidationException",
    403: "AccessDeniedException",
    404: "ResourceNotFoundException",
    408: "ModelTimeoutException",
    429: "ThrottlingException",
    500: "InternalServerException",
    503: "ServiceUnavailableException",
}
_GOOGLE_STATUSES: Final[dict[int, str]] = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
}


def _in_platform_shape(outcome: _Outcome, platform: str) -> _Outcome:
    """An error body as Bedrock or Vertex shapes it (Anthropic's own is left as it is)."""
    if outcome.status < 400 or outcome.payload is None or platform == "anthropic":
        return outcome
    message = outcome.payload["error"]["message"]
    if platform == "bedrock":
        kind = _BEDROCK_ERROR_TYPES.get(outcome.status, "InternalServerException")
        return _Outcome(
            status=outcome.status,
            payload={"message": message},
            headers={**outcome.headers, "x-amzn-errortype": kind},
        )
    status = _GOOGLE_STATUSES.get(outcome.status, "UNKNOWN")
    payload = {"error": {"code": outcome.status, "message": message, "status": status}}
    return _Outcome(status=outcome.status, payload=payload, headers=outcome.headers)


class _Server(ThreadingHTTPServer):
    """Threading server that tracks its live connections so `stop()` can close them."""

    daemon_threads = True

    def __init__(self, fake: FakeAnthropic) -> None:
        self.fake = fake
        self._connections: set[socket.socket] = set()
        self._connections_lock = threading.Lock()
        super().__init__(("127.0.0.1", 0), _Handler)

    def process_request(
        self, request: socket.socket | tuple[bytes, socket.socket], client_address: Any
    ) -> None:
        if isinstance(request, socket.socket):
            with self._connections_lock:
                self._connections.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: socket.socket | tuple[bytes, socket.socket]) -> None:
        if isinstance(request, socket.socket):
            with self._connections_lock:
                self._connections.discard(request)
        super().shutdown_request(request)

    def close_connections(self) -> None:
        """Shut down every open connection, waking handler threads blocked on keep-alive reads."""
        with self._connections_lock:
            connections = list(self._connections)
        for connection in connections:
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)

    def handle_error(
        self, request: socket.socket | tuple[bytes, socket.socket], client_address: Any
    ) -> None:
        error = sys.exc_info()[1]
        if error is None or isinstance(error, OSError):
            return  # client went away (timeout, dropped connection, shutdown): not interesting
        self.fake.server_errors.append(error)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    """A reply's headers and body go out as two writes: with Nagle's algorithm on, the body waits
    for the client's delayed ACK of the headers (about 40 ms on Linux), a delay no real API adds
    to a reply and that would be counted as the judge's own time."""
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        """Silence the default per-request logging."""

    def do_POST(self) -> None:
        self._serve()

    def do_GET(self) -> None:
        self._serve()

    def do_PUT(self) -> None:
        self._serve()

    def do_PATCH(self) -> None:
        self._serve()

    def do_DELETE(self) -> None:
        self._serve()

    def do_HEAD(self) -> None:
        self._serve(send_body=False)

    def _read_body(self) -> bytes:
        try:
            length = int(self.headers.get("content-length") or 0)
        except ValueError:
            length = 0
        return self.rfile.read(length) if length > 0 else b""

    def _serve(self, *, send_body: bool = True) -> None:
        raw = self._read_body()
        try:
            parsed: Any = json.loads(raw) if raw else None
        except ValueError:
            parsed = None
        record = RecordedRequest(
            path=self.path,
            headers={name.lower(): value for name, value in self.headers.items()},
            body=parsed if isinstance(parsed, dict) else {},
            method=self.command,
        )
        fake = self.server.fake
        fake._record(record)
        valid_json = isinstance(parsed, dict)
        outcome = fake._answer(record, valid_json=valid_json)
        record.status = None if outcome.drop else outcome.status
        if outcome.drop:
            self.close_connection = True
            return
        self._write(outcome, fake._next_request_id(), send_body=send_body)

    def _write(self, outcome: _Outcome, request_id: str, *, send_body: bool) -> None:
        data = json.dumps(outcome.payload).encode() if outcome.payload is not None else b""
        if outcome.raw is not None:
            data = outcome.raw
        self.send_response(outcome.status)
        self.send_header("content-type", outcome.content_type)
        self.send_header("request-id", request_id)
        for name, value in outcome.headers.items():
            self.send_header(name, value)
        self.send_header("content-length", str(len(data) if send_body else 0))
        self.end_headers()
        if send_body and data:
            self.wfile.write(data)


# --------------------------------------------------------------------------------------------
# The fake
# --------------------------------------------------------------------------------------------


class FakeAnthropic:
    """A scripted Anthropic Messages API on a real local HTTP port.

    Attributes:
        responder: Answers requests when the script is empty (`None`: 500 "no scripted reply").
        latency: Seconds slept per admitted request before answering; settable at runtime.
        max_in_flight: When more requests than this are being served at once, the extra ones
            get a 429 with `retry-after: rate_limit_retry_after`. `None`: unlimited.
        rate_limit_retry_after: `retry-after` seconds sent with those 429s.
        api_key: When set, only this key is accepted (else 401); `None`: any non-empty key.
        requests: Every request received, in arrival order, faulted ones included.
        peak_in_flight: Highest number of requests seen being served at once (counting the
            ones about to be refused by `max_in_flight`).
        rate_limited: Number of 429s sent because of `max_in_flight`.
        responder_errors: Exceptions raised by the responder (each answered with a 500).
        server_errors: Unexpected exceptions in the HTTP handler (should stay empty).
        prompt_cache: Prompt prefixes seen, used by `structured_responder`.
        aws_access_key: Bedrock: when set, only SigV4 signatures by this access key id are
            accepted (else 403); `None`: any well-formed signature.
        google_token: Vertex: when set, only this bearer token is accepted (else 401).
        batches: The Message Batches API's state (`tests/fakes/anthropic_batches.py`).
    """

    def __init__(
        self,
        responder: Responder | None = None,
        *,
        latency: float = 0.0,
        max_in_flight: int | None = None,
        rate_limit_retry_after: float = 0.05,
        api_key: str | None = None,
    ) -> None:
        self.responder: Responder | None = responder
        self.latency = latency
        self.max_in_flight = max_in_flight
        self.rate_limit_retry_after = rate_limit_retry_after
        self.api_key = api_key
        self.requests: list[RecordedRequest] = []
        self.peak_in_flight = 0
        self.rate_limited = 0
        self.responder_errors: list[BaseException] = []
        self.server_errors: list[BaseException] = []
        self.prompt_cache = PromptCache()
        self.aws_access_key: str | None = None
        self.google_token: str | None = None
        from tests.fakes.anthropic_batches import FakeBatches  # sibling module, same fake

        self.batches = FakeBatches(self)
        self._script: deque[Reply | Fault | Expire] = deque()
        self._lock = threading.Lock()
        self._in_flight = 0
        self._ok = 0
        self._message_ids = itertools.count(1)
        self._request_ids = itertools.count(1)
        self._stopping = threading.Event()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._stopped = False

    # -- lifecycle -----------------------------------------------------------------------------

    def start(self) -> FakeAnthropic:
        """Bind an ephemeral port on 127.0.0.1 and serve in a daemon thread (idempotent)."""
        if self._stopped:
            raise RuntimeError("FakeAnthropic cannot be restarted after stop()")
        if self._server is None:
            self._server = _Server(self)
            self._thread = threading.Thread(
                target=self._server.serve_forever,
                kwargs={"poll_interval": 0.05},
                name=f"fake-anthropic-{self._server.server_address[1]}",
                daemon=True,
            )
            self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving, close every connection and the listening socket (idempotent)."""
        if self._stopped:
            return
        self._stopped = True
        self._stopping.set()  # cut short any latency / delay sleeps
        server, thread = self._server, self._thread
        if server is None:
            return
        server.shutdown()
        server.close_connections()
        server.server_close()  # joins the handler threads
        if thread is not None:
            thread.join()

    def __enter__(self) -> FakeAnthropic:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def port(self) -> int:
        """The bound port (only once started)."""
        if self._server is None:
            raise RuntimeError("FakeAnthropic is not started; call start() or use `with`")
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        """E.g. `"http://127.0.0.1:43123"`, to pass as the SDK's `base_url`."""
        return f"http://127.0.0.1:{self.port}"

    # -- scripting -------------------------------------------------------------------------------

    def enqueue(self, *replies: Reply | Fault | Expire) -> None:
        """Append answers to the FIFO script, consumed before the responder is asked."""
        with self._lock:
            self._script.extend(replies)

    def fail_next(self, status: int, *, times: int = 1, retry_after: float | None = None) -> None:
        """Append `times` x `Fault(status, retry_after=retry_after)` to the script (FIFO)."""
        self.enqueue(*(Fault(status, retry_after=retry_after) for _ in range(times)))

    def pending(self) -> int:
        """Number of scripted answers not consumed yet."""
        with self._lock:
            return len(self._script)

    # -- observation -----------------------------------------------------------------------------

    def count(self) -> int:
        """Number of requests answered with a 200."""
        with self._lock:
            return self._ok

    @property
    def in_flight(self) -> int:
        """Number of requests being served right now."""
        with self._lock:
            return self._in_flight

    def statuses(self) -> list[int | None]:
        """Status answered to each recorded request, in arrival order (`None`: dropped)."""
        with self._lock:
            return [request.status for request in self.requests]

    # -- request handling (called from handler threads) ------------------------------------------

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(request)

    def _next_request_id(self) -> str:
        with self._lock:
            return f"req_fake_{next(self._request_ids)}"

    def _sleep(self, seconds: float) -> None:
        if seconds > 0:
            self._stopping.wait(seconds)

    def _admit(self) -> bool:
        with self._lock:
            self._in_flight += 1
            self.peak_in_flight = max(self.peak_in_flight, self._in_flight)
            limit = self.max_in_flight
            if limit is not None and self._in_flight > limit:
                self._in_flight -= 1
                self.rate_limited += 1
                return False
            return True

    def _release(self) -> None:
        with self._lock:
            self._in_flight -= 1

    def _answer(self, request: RecordedRequest, *, valid_json: bool) -> _Outcome:
        route = _route(request.method, request.path.split("?", 1)[0])
        if route is None:
            return _error_outcome(404, f"{request.method} {request.path}: not found")
        refused = self._authenticate(request, route.platform)
        if refused is not None:
            return _in_platform_shape(refused, route.platform)
        if route.batch is not None:
            return self.batches.answer(request, route.batch, valid_json=valid_json)
        if not valid_json:
            return _error_outcome(400, "request body must be a JSON object")
        body = request.body
        if route.platform != "anthropic":
            if "model" in body or "anthropic_version" not in body:
                outcome = _error_outcome(
                    400,
                    f"{route.platform}: the model goes in the path, anthropic_version in the body",
                )
                return _in_platform_shape(outcome, route.platform)
            body = {**body, "model": route.model}
        return _in_platform_shape(self._answer_message(body), route.platform)

    def _answer_message(self, body: dict[str, Any]) -> _Outcome:
        if body.get("stream"):
            return _error_outcome(400, "stream=true is not supported by the fake server")
        if not self._admit():
            return _error_outcome(
                429,
                f"more than {self.max_in_flight} concurrent requests",
                retry_after=self.rate_limit_retry_after,
            )
        try:
            self._sleep(self.latency)
            item = self._next_item(body)
            if isinstance(item, _Outcome):
                return item
            if isinstance(item, Expire):
                return _error_outcome(504, "the request expired")
            self._sleep(item.delay)
            if isinstance(item, Fault):
                return self._fault_outcome(item)
            outcome = _Outcome(status=200, payload=self._message(item, body))
            with self._lock:
                self._ok += 1
            return outcome
        finally:
            self._release()

    def _authenticate(self, request: RecordedRequest, platform: str) -> _Outcome | None:
        """The refusal of a request without the platform's credentials; None when they are there."""
        authorization = request.headers.get("authorization", "")
        if platform == "bedrock":
            if authorization.lower().startswith("bearer ") and authorization[7:].strip():
                return None
            credential = _SIGV4.match(authorization)
            if credential is None or "x-amz-date" not in request.headers:
                return _error_outcome(403, "Missing Authentication Token")
            if self.aws_access_key is not None and credential["key"] != self.aws_access_key:
                return _error_outcome(403, "The security token included in the request is invalid.")
            return None
        if platform == "vertex":
            scheme, _, token = authorization.partition(" ")
            if scheme.lower() != "bearer" or not token.strip():
                return _error_outcome(401, "Request is missing required authentication credential.")
            if self.google_token is not None and token.strip() != self.google_token:
                return _error_outcome(401, "Request had invalid authentication credentials.")
            return None
        key = request.api_key
        if key is None:
            return _error_outcome(401, "x-api-key header is required")
        if self.api_key is not None and key != self.api_key:
            return _error_outcome(401, "invalid x-api-key")
        return None

    def _next_item(self, body: dict[str, Any]) -> Reply | Fault | Expire | _Outcome:
        with self._lock:
            scripted = self._script.popleft() if self._script else None
        if scripted is not None:
            return scripted
        responder = self.responder
        if responder is None:
            return _error_outcome(500, "no scripted reply (script empty and no responder set)")
        try:
            with _using_prompt_cache(self.prompt_cache):
                return responder(body)
        except Exception as error:
            self.responder_errors.append(error)
            return _error_outcome(500, f"responder raised {type(error).__name__}: {error}")

    @staticmethod
    def _fault_outcome(fault: Fault) -> _Outcome:
        if fault.drop_connection:
            return _Outcome(status=0, drop=True)
        if fault.page is not None:
            return _Outcome(
                status=fault.status, raw=fault.page.encode("utf-8"), content_type="text/html"
            )
        message = fault.message or f"fake fault: HTTP {fault.status} ({_error_type(fault.status)})"
        return _error_outcome(
            fault.status, message, retry_after=fault.retry_after, should_retry=fault.should_retry
        )

    def _message(self, reply: Reply, body: dict[str, Any]) -> dict[str, Any]:
        text = reply.resolved_text()
        content = reply.content if reply.content is not None else [{"type": "text", "text": text}]
        input_tokens = reply.input_tokens
        if input_tokens is None:
            input_tokens = estimate_input_tokens(body)
        output_tokens = reply.output_tokens
        if output_tokens is None:
            output_tokens = estimate_tokens(text) + 1
        with self._lock:
            message_id = f"msg_fake_{next(self._message_ids)}"
        message: dict[str, Any] = {
            "id": message_id,
            "type": "message",
            "role": "assistant",
            "model": body.get("model", "claude-fake"),
            "content": content,
            "stop_reason": reply.stop_reason,
            "stop_sequence": None,
            "usage": {
                "input_tokens": input_tokens,
                "output_tokens": output_tokens,
                "cache_creation_input_tokens": reply.cache_creation_input_tokens,
                "cache_read_input_tokens": reply.cache_read_input_tokens,
            },
        }
        if reply.stop_reason == "refusal":
            message["stop_details"] = {
                "type": "refusal",
                "category": None,
                "explanation": reply.refusal_explanation,
            }
        return message

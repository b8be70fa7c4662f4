"""Judge requests sent as Message Batches: every token at half price, answers in minutes to hours.

With ``judge.batch`` the Claude judge hands each request to a :class:`MessageBatcher` instead of
sending it, and waits for its answer. When nothing new has been asked for while the event loop
went round (every case in flight is waiting for an answer), or when a batch is full, the waiting
requests go out as one batch; a poller looks at the batch with growing pauses and, once it has
ended, answers each request from the results. A run is thus a few rounds: claims and relevance
(and chunk ratings), then verification, then any re-asks and retries.

Custom ids are content hashes of the requests, and every batch is recorded with its ids in a small
state file (beside the judge cache). A run that is interrupted and started again finds its
requests there and collects them from their batches instead of sending them again, so nothing is
paid twice; the file is removed once a run has collected everything.

A request that errors for a passing reason (overloaded, rate-limited, a server error, a canceled
batch) goes out again in a later round, up to ``judge.max_retries`` times; any other error, and a
request that expired (its batch was not done within 24 hours), is a :class:`JudgeError` for its
case: never a guessed verdict.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import anthropic
from anthropic.types import Message
from anthropic.types.messages import (
    MessageBatch,
    MessageBatchExpiredResult,
    MessageBatchIndividualResponse,
    MessageBatchSucceededResult,
)

from ragaliq._files import write_atomic
from ragaliq.errors import JudgeError, JudgeUnavailableError
from ragaliq.judges.transport import BATCHES_API, Transport

__all__ = ["STATE_SUFFIX", "MessageBatcher", "custom_id"]

STATE_SUFFIX = ".batches.json"
"""The state file is the judge cache's path with this added."""
STATE_FORMAT = 1
SETTLE_TURNS = 20
"""Turns of the event loop without a new request before the waiting ones go out: by then every
case that could go on has asked what it needs next."""
MAX_BATCH_BYTES = 200 * 1024 * 1024
"""Below the API's 256 MB limit on a batch."""
POLL_FIRST_S = 5.0
POLL_GROWTH = 1.5
RETRYABLE_ERRORS = frozenset(
    {"api_error", "overloaded_error", "rate_limit_error", "timeout_error", "gateway_timeout_error"}
)
"""Errors of one request in a batch that are worth sending again."""
FATAL_ERRORS = frozenset({"authentication_error", "permission_error", "billing_error"})
"""Errors that no request of the run will get past."""

Answer = tuple[Message, bool]
"""A reply, and whether this request paid for it (False: an identical request's reply, shared)."""
T = TypeVar("T")


def custom_id(params: dict[str, Any]) -> str:
    """The request's content hash: the same request gets the same id in every run."""
    canonical = json.dumps(params, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


@dataclass(kw_only=True)
class _Request:
    params: dict[str, Any]
    size: int
    waiters: list[asyncio.Future[Answer]] = field(default_factory=list)
    sent: int = 0
    """Times it went out in a batch (a retry sends it again)."""


class MessageBatcher:
    """Collects the judge's requests into Message Batches and answers each from the results."""

    def __init__(
        self,
        client: anthropic.AsyncAnthropic,
        *,
        transport: Transport,
        state_path: Path | None,
        max_requests: int,
        poll_max_s: float,
    ) -> None:
        """Batch ``client``'s requests.

        Calls to the batch endpoints go through ``transport``: its retries, its pauses; a fatal
        error stops it, and with it the judge.
        """
        self.client = client
        self.transport = transport
        self.state_path = state_path
        self.max_requests = max_requests
        self.poll_max_s = poll_max_s
        self._requests: dict[str, _Request] = {}
        """Every request asked for and not answered yet, by custom id."""
        self._queue: dict[str, _Request] = {}
        """Requests waiting to go out, in the order they were asked for."""
        self._queued_bytes = 0
        self._recorded: dict[str, str] = {}
        """Custom id to the batch it went out in, from the state file and this run."""
        self._batches: dict[str, list[str]] = {}
        """Every batch recorded in the state file, with its custom ids."""
        self._collected: dict[str, MessageBatchIndividualResponse] = {}
        """Results of recorded batches that no request has asked for yet (a resumed run)."""
        self._watched: set[str] = set()
        self._tasks: set[asyncio.Task[None]] = set()
        self._flusher: asyncio.Task[None] | None = None
        self.sent_batches = 0
        self.sent_requests = 0
        self.resumed = 0
        self._sent_ids: set[str] = set()
        """Batches this run sent (the others in the state file are an earlier run's)."""
        self._load_state()

    @property
    def notices(self) -> tuple[str, ...]:
        """What the run should say: that it was batched, at what price, and what it resumed."""
        if not self.sent_batches and not self.resumed:
            return ()
        resumed = (
            f"; {self.resumed} answers were collected from batches an earlier, interrupted run sent"
            if self.resumed
            else ""
        )
        unrecorded = (
            " The judge cache is off, so the batches were not recorded: an interrupted run "
            "could not have collected them."
            if self.state_path is None
            else ""
        )
        return (
            f"Judged through the Message Batches API: {self.sent_requests} requests in "
            f"{self.sent_batches} batches, every token at half price (the usage's cost is "
            f"the batch price){resumed}.{unrecorded}",
        )

    async def create(self, params: dict[str, Any]) -> Answer:
        """The reply to one Messages request, once its batch has ended.

        Raises:
            JudgeUnavailableError: the batch endpoints cannot be used at all.
            JudgeError: the request errored or expired.
        """
        self.transport.check()
        cid = custom_id(params)
        request = self._requests.get(cid)
        if request is not None:  # the same question is already waiting: share its answer
            return await self._wait(request)
        request = _Request(params=params, size=len(json.dumps(params)))
        self._requests[cid] = request
        waiting = self._wait(request)
        if cid in self._collected:
            self._answer(cid, self._collected.pop(cid), resumed=True)
        elif cid in self._recorded:
            self._watch(self._recorded[cid])
        else:
            self._enqueue(cid, request)
        return await waiting

    async def aclose(self) -> None:
        """Stop polling; the state file stays while batches of the run are not collected."""
        tasks = [*self._tasks, *([self._flusher] if self._flusher else [])]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        done = not self._requests and (self._sent_ids or self.resumed)
        if done and self.state_path is not None:  # a dry run leaves an earlier run's file be
            self.state_path.unlink(missing_ok=True)

    # -- rounds ---------------------------------------------------------------------------------

    async def _wait(self, request: _Request) -> Answer:
        future: asyncio.Future[Answer] = asyncio.get_running_loop().create_future()
        request.waiters.append(future)
        return await future

    def _enqueue(self, cid: str, request: _Request) -> None:
        self._queue[cid] = request
        self._queued_bytes += request.size
        if self._flusher is None or self._flusher.done():
            self._flusher = asyncio.create_task(self._guarded(self._flush()))

    async def _flush(self) -> None:
        """Send what is waiting once the run has settled, batch after batch."""
        while self._queue:
            await self._settle()
            chunk: dict[str, _Request] = {}
            size = 0
            for cid in list(self._queue):
                request = self._queue[cid]
                if chunk and (
                    len(chunk) >= self.max_requests or size + request.size > MAX_BATCH_BYTES
                ):
                    break
                chunk[cid] = self._queue.pop(cid)
                size += request.size
            self._queued_bytes -= size
            self._spawn(self._send(chunk))

    async def _settle(self) -> None:
        """Wait until no request has been added for a few turns of the loop, or a batch is full."""
        unchanged, seen = 0, -1
        while unchanged < SETTLE_TURNS:
            if len(self._queue) >= self.max_requests or self._queued_bytes >= MAX_BATCH_BYTES:
                return
            await asyncio.sleep(0)
            unchanged = unchanged + 1 if len(self._queue) == seen else 0
            seen = len(self._queue)

    async def _send(self, chunk: dict[str, _Request]) -> None:
        requests = [{"custom_id": cid, "params": r.params} for cid, r in chunk.items()]
        try:
            batch = await self._call(
                "send a batch",
                lambda: self.client.messages.batches.create(requests=requests),  # type: ignore[arg-type]
            )
        except JudgeError as error:
            for cid in chunk:
                self._fail(cid, error)
            return
        self.sent_batches += 1
        self.sent_requests += len(chunk)
        for request in chunk.values():
            request.sent += 1
        self._record(batch.id, list(chunk))
        self._watched.add(batch.id)
        await self._collect(batch)

    def _watch(self, batch_id: str) -> None:
        """Collect a batch an earlier run recorded (once)."""
        if batch_id not in self._watched:
            self._watched.add(batch_id)
            self._spawn(self._collect_recorded(batch_id))

    async def _collect_recorded(self, batch_id: str) -> None:
        async def retrieve() -> MessageBatch | None:
            try:
                return await self.client.messages.batches.retrieve(batch_id)
            except anthropic.NotFoundError:
                return None

        try:
            batch = await self._call("look at a recorded batch", retrieve)
        except JudgeError as error:
            self._fail_batch(batch_id, error)
            return
        if batch is None:  # unknown to this key (another account, deleted): send anew
            self._forget(batch_id)
            for cid in [c for c, b in self._recorded.items() if b == batch_id]:
                del self._recorded[cid]
                if cid in self._requests and cid not in self._queue:
                    self._enqueue(cid, self._requests[cid])
            return
        await self._collect(batch)

    async def _collect(self, batch: MessageBatch) -> None:
        """Poll ``batch`` with growing pauses until it has ended, then answer from its results."""
        delay = min(POLL_FIRST_S, self.poll_max_s)
        batch_id = batch.id
        try:
            while batch.processing_status != "ended":
                await self.transport.sleep(delay)
                delay = min(delay * POLL_GROWTH, self.poll_max_s)
                batch = await self._call(
                    "look at a batch", lambda: self.client.messages.batches.retrieve(batch_id)
                )
            results = await self._call("read a batch's results", lambda: self._results(batch_id))
        except JudgeError as error:
            self._fail_batch(batch.id, error)
            return
        seen = set()
        for item in results:
            seen.add(item.custom_id)
            if item.custom_id in self._requests and self._recorded.get(item.custom_id) == batch.id:
                self._answer(item.custom_id, item, resumed=batch.id not in self._sent_ids)
            elif item.custom_id not in self._requests:
                self._collected[item.custom_id] = item  # a resumed run may ask for it later
        for cid in self._batches.get(batch.id, []):
            if cid not in seen and cid in self._requests and self._recorded.get(cid) == batch.id:
                self._fail(cid, JudgeError(f"batch {batch.id} has no result for the request"))

    async def _results(self, batch_id: str) -> list[MessageBatchIndividualResponse]:
        decoder = await self.client.messages.batches.results(batch_id)
        return [item async for item in decoder]

    # -- answers --------------------------------------------------------------------------------

    def _answer(self, cid: str, item: MessageBatchIndividualResponse, *, resumed: bool) -> None:
        result = item.result
        if isinstance(result, MessageBatchSucceededResult):
            self.resumed += resumed
            request = self._requests.pop(cid)
            for i, waiter in enumerate(request.waiters):
                if not waiter.done():
                    waiter.set_result((result.message, i == 0))
            return
        if isinstance(result, MessageBatchExpiredResult):
            self._fail(
                cid,
                JudgeError(
                    "the batch expired before this request was judged (a batch has 24 hours); "
                    "run again to send it anew"
                ),
            )
            return
        if result.type == "canceled":
            kind, message = "canceled", "the batch was canceled"
        else:
            kind, message = result.error.error.type, result.error.error.message
        if kind in FATAL_ERRORS:
            unusable = JudgeUnavailableError(
                f"{BATCHES_API} refused the requests ({kind}: {message})"
            )
            self.transport.stop(unusable)
            self._fail(cid, unusable)
        elif kind in RETRYABLE_ERRORS or kind == "canceled":
            request = self._requests[cid]
            if request.sent > self.transport.max_retries:
                self._fail(
                    cid,
                    JudgeError(
                        f"the batched request failed {request.sent} times (last: {kind}: {message})"
                    ),
                )
                return
            self._recorded.pop(cid, None)
            self._enqueue(cid, request)  # the next round sends it again
        else:
            self._fail(cid, JudgeError(f"the batched request failed ({kind}: {message})"))

    def _fail(self, cid: str, error: JudgeError) -> None:
        request = self._requests.pop(cid, None)
        if request is None:
            return
        for waiter in request.waiters:
            if not waiter.done():
                waiter.set_exception(type(error)(str(error)))

    def _fail_batch(self, batch_id: str, error: JudgeError) -> None:
        for cid in [c for c, b in self._recorded.items() if b == batch_id]:
            self._fail(cid, error)

    # -- the batch endpoints, with retries ------------------------------------------------------

    async def _call(self, doing: str, call: Callable[[], Awaitable[T]]) -> T:
        """One call to the batch endpoints, through the judge's transport.

        Raises:
            JudgeError: the call was refused, or failed after its retries; when no later call can
                get past it (unavailable), the transport is stopped with it.
        """
        try:
            return await self.transport.batch_call(doing, call)
        except JudgeUnavailableError as exc:
            unusable = JudgeUnavailableError(f"{exc}{self._resumable()}")
            self.transport.stop(unusable)
            raise unusable from exc

    def _resumable(self) -> str:
        """What a run that stops can say of the batches it leaves recorded."""
        if self.state_path is None or not self._batches:
            return ""
        return (
            f"; batches already sent are recorded in {self.state_path}, so running again "
            "collects them without paying twice"
        )

    def _spawn(self, work: Awaitable[None]) -> None:
        task = asyncio.ensure_future(self._guarded(work))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _guarded(self, work: Awaitable[None]) -> None:
        """Run background work; a failure in it stops the run rather than leave cases waiting."""
        try:
            await work
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            unusable = JudgeUnavailableError(
                f"the Message Batches collector failed ({type(exc).__name__}: {exc}); batches "
                f"already sent are recorded in {self.state_path}, so running again collects them"
            )
            self.transport.stop(unusable)
            for cid in list(self._requests):
                self._fail(cid, unusable)

    # -- the state file -------------------------------------------------------------------------

    def _load_state(self) -> None:
        if self.state_path is None:
            return
        try:
            data = json.loads(self.state_path.read_text(encoding="utf-8"))
            batches = data["batches"] if data.get("format") == STATE_FORMAT else []
            for entry in batches:
                batch_id, ids = str(entry["id"]), [str(i) for i in entry["requests"]]
                self._batches[batch_id] = ids
                for cid in ids:
                    self._recorded[cid] = batch_id
        except (OSError, ValueError, KeyError, TypeError):
            self._batches.clear()
            self._recorded.clear()  # no file (the usual case) or an unreadable one: start afresh

    def _record(self, batch_id: str, ids: list[str]) -> None:
        self._batches[batch_id] = ids
        self._sent_ids.add(batch_id)
        for cid in ids:
            self._recorded[cid] = batch_id
        self._save()

    def _forget(self, batch_id: str) -> None:
        self._batches.pop(batch_id, None)
        self._save()

    def _save(self) -> None:
        if self.state_path is None:
            return
        entries = [{"id": b, "requests": ids} for b, ids in self._batches.items()]
        write_atomic(self.state_path, json.dumps({"format": STATE_FORMAT, "batches": entries}))

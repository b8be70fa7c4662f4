"""The Message Batches API of the fake Anthropic server (see `tests/fakes/anthropic_server.py`).

Each request of a batch is answered when the batch is created, exactly as a message would be (the
script first, then the responder): a `Reply` becomes a succeeded result, a `Fault` an errored one
(its status picks the error type: 529 `overloaded_error`, 500 `api_error`, 400
`invalid_request_error`, ...) and an `Expire` an expired one. The batch then stays `in_progress`
for `polls` looks (`GET /v1/messages/batches/{id}`), and ends; its results are JSON Lines at
`results_url`. Cancelling a batch in progress ends it with every result `canceled`.
"""

from __future__ import annotations

import itertools
import json
import re
import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tests.fakes.anthropic_server import FakeAnthropic, RecordedRequest, _Outcome

__all__ = ["FakeBatch", "FakeBatches"]

_CUSTOM_ID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


@dataclass(kw_only=True)
class FakeBatch:
    """One batch as the fake holds it."""

    id: str
    created_at: datetime
    params: dict[str, dict[str, Any]]
    """Each request's params, by custom id, in the order sent."""
    results: dict[str, dict[str, Any]] = field(default_factory=dict)
    looks: int = 0
    ended: bool = False
    canceled: bool = False

    def counts(self) -> dict[str, int]:
        counts = dict.fromkeys(("processing", "succeeded", "errored", "canceled", "expired"), 0)
        if not self.ended:
            counts["processing"] = len(self.params)
            return counts
        for result in self.results.values():
            counts[result["type"]] += 1
        return counts


class FakeBatches:
    """Batches sent to one fake server.

    Attributes:
        polls: Looks a batch stays `in_progress` for before it ends (0: ended at once).
        created: Every batch, by id, in creation order.
        looks: Number of `GET /v1/messages/batches/{id}` answered.
    """

    def __init__(self, fake: FakeAnthropic) -> None:
        self.fake = fake
        self.polls = 1
        self.created: dict[str, FakeBatch] = {}
        self.looks = 0
        self._ids = itertools.count(1)
        self._lock = threading.Lock()

    def requests(self) -> int:
        """Requests sent in all batches."""
        with self._lock:
            return sum(len(b.params) for b in self.created.values())

    def answer(
        self, request: RecordedRequest, batch: tuple[str | None, str | None], *, valid_json: bool
    ) -> _Outcome:
        from tests.fakes.anthropic_server import _error_outcome, _Outcome

        batch_id, action = batch
        if batch_id is None:
            if request.method != "POST":
                return _error_outcome(404, "listing batches is not supported by the fake server")
            if not valid_json:
                return _error_outcome(400, "request body must be a JSON object")
            return self._create(request.body)
        with self._lock:
            found = self.created.get(batch_id)
        if found is None:
            return _error_outcome(404, f"batch {batch_id} not found")
        if action == "results" and request.method == "GET":
            if not found.ended:
                return _error_outcome(400, f"batch {batch_id} is still in progress")
            lines = [
                json.dumps({"custom_id": cid, "result": found.results[cid]}) for cid in found.params
            ]
            raw = ("\n".join(lines) + "\n").encode()
            return _Outcome(status=200, raw=raw, content_type="application/binary")
        if action == "cancel" and request.method == "POST":
            with self._lock:
                if not found.ended:
                    found.canceled = found.ended = True
                    found.results = {cid: {"type": "canceled"} for cid in found.params}
            return _Outcome(status=200, payload=self._json(found))
        if action is None and request.method == "GET":
            with self._lock:
                self.looks += 1
                found.looks += 1
                if found.looks > self.polls:
                    found.ended = True
            return _Outcome(status=200, payload=self._json(found))
        return _error_outcome(404, f"{request.method} {request.path}: not found")

    def _create(self, body: dict[str, Any]) -> _Outcome:
        from tests.fakes.anthropic_server import _error_outcome, _Outcome

        requests = body.get("requests")
        if not isinstance(requests, list) or not requests:
            return _error_outcome(400, "requests: must be a non-empty list")
        params: dict[str, dict[str, Any]] = {}
        for i, item in enumerate(requests):
            cid = item.get("custom_id") if isinstance(item, dict) else None
            if not isinstance(cid, str) or not _CUSTOM_ID.match(cid):
                return _error_outcome(
                    400, f"requests.{i}.custom_id: must match {_CUSTOM_ID.pattern}"
                )
            if cid in params:
                return _error_outcome(400, f"requests.{i}.custom_id: {cid} is not unique")
            one = item.get("params")
            if not isinstance(one, dict) or not {"model", "max_tokens", "messages"} <= set(one):
                return _error_outcome(400, f"requests.{i}.params: model, max_tokens, messages")
            params[cid] = one
        with self._lock:
            batch_id = f"msgbatch_fake_{next(self._ids)}"
        batch = FakeBatch(id=batch_id, created_at=datetime.now(UTC), params=params)
        batch.results = {cid: self._result(one) for cid, one in params.items()}
        batch.ended = self.polls == 0
        with self._lock:
            self.created[batch_id] = batch
        return _Outcome(status=200, payload=self._json(batch))

    def _result(self, params: dict[str, Any]) -> dict[str, Any]:
        from tests.fakes.anthropic_server import Expire, Fault, _error_type, _Outcome

        item = self.fake._next_item(params)
        if isinstance(item, Expire):
            return {"type": "expired"}
        if isinstance(item, Fault):
            message = item.message or f"fake fault: {_error_type(item.status)}"
            error = {"type": _error_type(item.status), "message": message}
            return {"type": "errored", "error": {"type": "error", "error": error}}
        if isinstance(item, _Outcome):  # no reply scripted, or the responder raised
            error = (item.payload or {}).get("error", {"type": "api_error", "message": "?"})
            return {"type": "errored", "error": {"type": "error", "error": error}}
        return {"type": "succeeded", "message": self.fake._message(item, params)}

    def _json(self, batch: FakeBatch) -> dict[str, Any]:
        created = batch.created_at
        ended = created + timedelta(seconds=1) if batch.ended else None
        return {
            "id": batch.id,
            "type": "message_batch",
            "processing_status": "ended" if batch.ended else "in_progress",
            "request_counts": batch.counts(),
            "created_at": created.isoformat(),
            "expires_at": (created + timedelta(hours=24)).isoformat(),
            "ended_at": ended.isoformat() if ended else None,
            "cancel_initiated_at": created.isoformat() if batch.canceled else None,
            "archived_at": None,
            "results_url": (
                f"{self.fake.base_url}/v1/messages/batches/{batch.id}/results"
                if batch.ended
                else None
            ),
        }

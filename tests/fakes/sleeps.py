"""A stand-in for ``time.sleep`` and ``asyncio.sleep`` that records the delays asked for."""

from __future__ import annotations

from collections.abc import Callable


class SleepLog:
    """Records every delay and returns at once; each pause may first run one queued hook.

    Pass the log itself where a blocking ``sleep`` is expected and ``log.wait`` where an
    awaitable one is: both record into the same ``delays``.
    """

    def __init__(self) -> None:
        self.delays: list[float] = []
        self.hooks: list[Callable[[], object]] = []

    def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)
        if self.hooks:
            self.hooks.pop(0)()

    async def wait(self, seconds: float) -> None:
        self(seconds)

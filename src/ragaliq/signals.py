"""SIGTERM and SIGHUP stop a command as Ctrl-C does.

SIGTERM is what a CI runner sends to cancel a step, and ``docker stop`` to the action; SIGHUP
comes from a closed terminal. Raised as :class:`Terminated` where the process is, they run every
cleanup written for Ctrl-C: files are written whole or not at all, and worker processes end.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

__all__ = ["TERMINATING", "Terminated", "stop_held", "stop_on_termination"]


TERMINATING: tuple[signal.Signals, ...] = tuple(
    getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name)
)
"""The signals besides Ctrl-C's SIGINT that stop a command as Ctrl-C does."""


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP, raised where the process is, so that it stops as Ctrl-C stops it.

    A ``KeyboardInterrupt`` so that every cleanup written for Ctrl-C runs for it too (asyncio
    passes it through as it passes Ctrl-C).
    """

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


_held: list[int] | None = None
"""While :func:`stop_held` holds them: the stop signals that arrived, to act on after."""


@contextmanager
def stop_held() -> Iterator[None]:
    """Hold a SIGTERM or SIGHUP that arrives in the block, and stop once the block is done.

    For what must not be cut in the middle: a process being started would be left reading a
    half-written start-up (Ctrl-C needs no holding: asyncio delivers it between steps). The stop
    wins over an error the block raised meanwhile (a worker the same signal ended, found dead
    as it was being started): that error is what the signal caused, kept as the stop's context.
    """
    global _held
    outer = _held
    _held = [] if outer is None else outer
    try:
        yield
    finally:
        held, _held = _held, outer
        if outer is None and held:
            _stop(held[0])


def _stop(signum: int) -> None:
    for other in TERMINATING:
        signal.signal(other, signal.SIG_IGN)
    raise Terminated(signum)


def stop_on_termination() -> None:
    """Make SIGTERM and SIGHUP stop this process as Ctrl-C does (raise :class:`Terminated`).

    Without it, SIGTERM ends Python at once: no temporary file is removed and worker processes
    are left running (and in a container the entry point, as process 1, ignores it). A second
    signal while the first is being handled is ignored, so that it cannot cut the cleanup short.
    Call from the main thread.
    """

    def stop(signum: int, _frame: FrameType | None) -> None:
        if _held is not None:
            _held.append(signum)
            return
        _stop(signum)

    for terminating in TERMINATING:
        signal.signal(terminating, stop)

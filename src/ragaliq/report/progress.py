"""Progress while a run judges: a live bar on a terminal, plain periodic lines on CI logs."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Literal, TextIO

from ragaliq.models import Progress
from ragaliq.text.counts import plural

__all__ = ["ProgressPrinter", "Verbosity"]

BAR_WIDTH = 28

Verbosity = Literal["quiet", "normal", "verbose"]
"""How much the command line says: ``-q`` only errors and the verdict, ``-v`` everything."""


class ProgressPrinter:
    """Prints :class:`~ragaliq.models.Progress` updates.

    With ``live`` (an interactive terminal) one line is redrawn in place; otherwise a plain line
    such as ``judged 120/500 cases, 3 errors, $0.42 so far`` is printed at every tenth of the run
    and at least every ``every_s`` seconds, which reads well in CI logs. A run that finishes
    within ``quiet_s`` prints no progress at all. ``verbosity`` ``verbose`` prints every update
    from the first case on; ``quiet`` prints none.
    """

    def __init__(
        self,
        stream: TextIO,
        *,
        live: bool,
        every_s: float = 15.0,
        quiet_s: float = 2.0,
        clock: Callable[[], float] = time.monotonic,
        verbosity: Verbosity = "normal",
    ) -> None:
        self.stream = stream
        self.live = live
        self.verbosity = verbosity
        self.every_s = every_s
        self.quiet_s = quiet_s
        self.clock = clock
        self._next_share = 0.1
        self._start = self._last = clock()
        self._printed = False

    def __call__(self, progress: Progress) -> None:
        if progress.total == 0 or self.verbosity == "quiet":
            return
        if self.live:
            self._draw(progress)
            return
        share = progress.done / progress.total
        now = self.clock()
        finished = progress.done == progress.total
        due = (share >= self._next_share and now - self._start >= self.quiet_s) or (
            now - self._last >= self.every_s
        )
        if due or self.verbosity == "verbose" or (finished and self._printed):
            self._printed = True
            self.stream.write(
                f"judged {progress.done:,}/{plural(progress.total, 'case')}, "
                f"{plural(progress.errors, 'error')}, ${progress.usage.cost_usd:.2f} so far\n"
            )
            self.stream.flush()
            self._last = now
            while self._next_share <= share:
                self._next_share += 0.1

    def _draw(self, progress: Progress) -> None:
        filled = round(BAR_WIDTH * progress.done / progress.total)
        bar = "█" * filled + "░" * (BAR_WIDTH - filled)
        line = (
            f"\r{bar} {progress.done}/{plural(progress.total, 'case')} · "
            f"{plural(progress.errors, 'error')} · {plural(progress.usage.calls, 'call')} · "
            f"${progress.usage.cost_usd:.2f}"
        )
        end = "\n" if progress.done == progress.total else ""
        self.stream.write(line + end)
        self.stream.flush()

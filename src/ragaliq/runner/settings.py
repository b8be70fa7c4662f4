"""How a run may use its judge, and how it ended."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ragaliq.models import Progress, Usage
from ragaliq.runner.confirm import ToConfirm

__all__ = ["RunEnd", "RunSettings"]


@dataclass(frozen=True, kw_only=True)
class RunSettings:
    """How a run may use the judge."""

    concurrency: int = 8
    """Judge requests in flight at once."""
    processes: int = 1
    """Processes to spread a judge that runs on the CPU alone (the offline judge) over."""
    budget_usd: float | None = None
    """Stop starting new cases when the next one would probably take the spend past this."""
    budget_tokens: int | None = None
    """The same for the tokens used, in and out."""
    on_progress: Callable[[Progress], None] | None = None
    repeat: int = 1
    """Verifications per case; with more than one, each claim gets the majority verdict."""
    case_tokens: int | None = None
    """The most tokens, in and out, one case may use (a gate's budget per case)."""
    case_usd: float | None = None
    """The most one case may cost, in USD."""
    confirm: ToConfirm | None = None
    """Which claims of a judged case would fail the gate, asked again before it decides; None
    outside a gate, or with ``gate.confirm_new_hallucinations: false``."""


@dataclass(frozen=True, kw_only=True)
class RunEnd:
    """How a streamed run ended: what it cost, and why it stopped early, if it did."""

    usage: Usage
    stopped_early: str | None = None

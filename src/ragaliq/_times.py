"""Times as the hosts' APIs write them."""

from __future__ import annotations

from datetime import datetime
from typing import Any

__all__ = ["read_time"]


def read_time(value: Any) -> datetime | None:
    """A time as an API writes it (``2024-01-01T00:00:01Z``, with an offset or fractions).

    Aware; None when absent or unreadable.
    """
    try:
        return datetime.fromisoformat(str(value).replace("Z", "+00:00")) if value else None
    except ValueError:
        return None

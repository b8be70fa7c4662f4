"""The processes of a session, read from /proc: what a command left running after it ended.

Shared by the signal tests and `benchmarks/signals.py`, which start a command in a session of its
own (``start_new_session=True``) so that every process it started can be found afterwards.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["HAS_PROC", "session_processes"]

HAS_PROC = Path("/proc/self/stat").exists()


def session_processes(sid: int) -> list[int]:
    """The live processes of session ``sid`` (its leader and every process started in it)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[3]) == sid and fields[0] != "Z":
            found.append(int(entry))
    return sorted(found)

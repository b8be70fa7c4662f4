"""The version of RagaliQ Gate."""

from __future__ import annotations

__version__ = "0.1.0"

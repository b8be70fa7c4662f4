"""Rendering reports for people: the terminal table, and the Markdown comment and summary."""

from __future__ import annotations

from ragaliq.report.console import format_run_table

__all__ = ["format_run_table"]

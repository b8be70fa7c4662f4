"""Rendering for people: the terminal tables, and the Markdown comment and summary."""

from __future__ import annotations

from ragaliq.report.console import (
    format_decision,
    format_failing_cases,
    format_preflight,
    format_run_table,
    format_unchecked_claims,
    format_usage,
)

__all__ = [
    "format_decision",
    "format_failing_cases",
    "format_preflight",
    "format_run_table",
    "format_unchecked_claims",
    "format_usage",
]

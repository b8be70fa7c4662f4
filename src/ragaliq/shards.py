"""Splitting a suite across runners and joining the shard reports again.

A case's shard is a hash of its id, so the partition is stable across runs and machines and does
not depend on the order of the dataset.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from typing import NamedTuple

from ragaliq.errors import ConfigError
from ragaliq.models import RunReport, RunSummary, TestCase, Usage

__all__ = ["Shard", "merge_reports", "parse_shard", "shard_cases", "shard_index"]

_SHARD = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")


class Shard(NamedTuple):
    """Shard ``number`` (1-based) of ``total``."""

    number: int
    total: int

    def __str__(self) -> str:
        return f"{self.number}/{self.total}"


def parse_shard(text: str) -> Shard:
    """Parse ``K/N``.

    Raises:
        ConfigError: not ``K/N`` with ``1 <= K <= N``.
    """
    match = _SHARD.match(text)
    if not match:
        raise ConfigError(f"--shard: expected K/N such as 2/8 (got {text!r})")
    index, count = int(match.group(1)), int(match.group(2))
    if not 1 <= index <= count:
        raise ConfigError(f"--shard: K must be between 1 and N (got {text!r})")
    return Shard(index, count)


def shard_index(case_id: str, count: int) -> int:
    """The 1-based shard a case id belongs to."""
    digest = hashlib.sha256(case_id.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % count + 1


def shard_cases(cases: Sequence[TestCase], shard: Shard) -> list[TestCase]:
    """The cases of one shard, in dataset order."""
    return [c for c in cases if shard_index(c.id, shard.total) == shard.number]


def merge_reports(reports: Sequence[RunReport], *, names: Sequence[str] | None = None) -> RunReport:
    """Join shard reports into one report, as if one runner had judged every case.

    Cases are ordered by id, since shards do not know the dataset's order.

    Raises:
        ConfigError: no reports, reports judged with different judges, prompts or evaluator
            settings, or a case id that appears in more than one report.
    """
    if not reports:
        raise ConfigError("merge: no reports given")
    labels = list(names or [f"report {i + 1}" for i in range(len(reports))])
    first = reports[0]
    for label, report in zip(labels[1:], reports[1:], strict=True):
        if report.judge != first.judge:
            raise ConfigError(
                f"merge: {label} was judged by {report.judge.provider}/{report.judge.model} "
                f"(prompt {report.judge.prompt_version}), {labels[0]} by "
                f"{first.judge.provider}/{first.judge.model} (prompt "
                f"{first.judge.prompt_version}); shards must share one judge"
            )
        if report.evaluators != first.evaluators:
            raise ConfigError(
                f"merge: {label} used other evaluator settings than {labels[0]}; "
                "run every shard with the same config"
            )
    seen: dict[str, str] = {}
    for label, report in zip(labels, reports, strict=True):
        for case in report.cases:
            if case.id in seen:
                raise ConfigError(
                    f"merge: case {case.id!r} is in both {seen[case.id]} and {label}; "
                    "merge each shard once"
                )
            seen[case.id] = label
    cases = sorted((c for r in reports for c in r.cases), key=lambda c: c.id)
    usage = sum((r.usage for r in reports), Usage())
    notices = tuple(dict.fromkeys(n for r in reports for n in r.notices))
    stopped = [
        f"{label}: {r.stopped_early}"
        for label, r in zip(labels, reports, strict=True)
        if r.stopped_early
    ]
    return RunReport(
        judge=first.judge,
        evaluators=first.evaluators,
        summary=RunSummary.of(cases, first.evaluators),
        usage=usage,
        cases=tuple(cases),
        notices=notices,
        stopped_early="; ".join(stopped) or None,
    )

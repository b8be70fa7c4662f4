"""Splitting a suite across runners and joining the shard reports again.

A case's shard is a hash of its id, so the partition is stable across runs and machines and does
not depend on the order of the dataset.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Iterator, Sequence
from typing import NamedTuple

from ragaliq.dataset import DatasetCases
from ragaliq.errors import ConfigError
from ragaliq.models import CaseResult, ReportHead, TestCase, Usage
from ragaliq.policy import Budget
from ragaliq.run_report import DISCARD, ReportSource, ReportWriter, TextSink

__all__ = [
    "Shard",
    "merge_reports",
    "parse_shard",
    "shard_budget",
    "shard_cases",
    "shard_index",
]

_SHARD = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")


class Shard(NamedTuple):
    """Shard ``number`` (1-based) of ``total``."""

    number: int
    total: int

    def __str__(self) -> str:
        return f"{self.number}/{self.total}"


def shard_budget(budget: Budget, shard: Shard) -> Budget:
    """What one shard of a gate may spend: each case as in the gate, the run a share of it.

    The shards of a gate judge with the base commit's config, so they are held to its
    ``gate.budget``: every case to its budget per case, and each shard to 1/N of the budget per
    run, so that all N together stay within the gate's.
    """
    return budget.model_copy(
        update={
            "run_usd": budget.run_usd / shard.total,
            "run_tokens": max(1, budget.run_tokens // shard.total),
        }
    )


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


def shard_cases(cases: Iterable[TestCase], shard: Shard) -> DatasetCases | list[TestCase]:
    """The cases of one shard, in dataset order (read lazily from a dataset file)."""

    def keep(case: TestCase) -> bool:
        return shard_index(case.id, shard.total) == shard.number

    if isinstance(cases, DatasetCases):
        return cases.where(keep)
    return [c for c in cases if keep(c)]


def _check_mergeable(heads: Sequence[ReportHead], labels: Sequence[str]) -> None:
    first = heads[0]
    for label, head in zip(labels[1:], heads[1:], strict=True):
        if head.judge != first.judge:
            raise ConfigError(
                f"merge: {label} was judged by {head.judge.provider}/{head.judge.model} "
                f"(prompt {head.judge.prompt_version}), {labels[0]} by "
                f"{first.judge.provider}/{first.judge.model} (prompt "
                f"{first.judge.prompt_version}); shards must share one judge"
            )
        if head.evaluators != first.evaluators:
            raise ConfigError(
                f"merge: {label} used other evaluator settings than {labels[0]}; "
                "run every shard with the same config"
            )


def _check_every_shard(heads: Sequence[ReportHead], labels: Sequence[str]) -> None:
    """Shard reports must be every shard of one split, each once; whole reports, no shard."""
    shards = {label: head.shard for label, head in zip(labels, heads, strict=True)}
    if not any(shards.values()):
        return  # whole reports, joined as they are
    whole = [label for label, shard in shards.items() if shard is None]
    if whole:
        raise ConfigError(
            f"merge: {whole[0]} is not a shard's report, and the others are; merge the reports "
            "of `ragaliq run --shard K/N`, one per shard"
        )
    seen: dict[Shard, str] = {}
    for label, text in shards.items():
        shard = parse_shard(str(text))
        first = next(iter(seen), None)
        if first is not None and shard.total != first.total:
            raise ConfigError(
                f"merge: {label} is shard {shard} of a suite split into {shard.total} shards, "
                f"{seen[first]} of one split into {first.total}; merge the shards of one split"
            )
        if shard in seen:
            raise ConfigError(
                f"merge: shard {shard} is given twice ({seen[shard]} and {label}); merge each "
                "shard once"
            )
        seen[shard] = label
    total = next(iter(seen)).total
    missing = [str(Shard(k, total)) for k in range(1, total + 1) if Shard(k, total) not in seen]
    if missing:
        names = ", ".join(missing[:-1]) + " and " + missing[-1] if len(missing) > 1 else missing[0]
        are = "are" if len(missing) > 1 else "is"
        raise ConfigError(
            f"merge: {'shards' if len(missing) > 1 else 'shard'} {names} {are} missing, so the "
            f"merged report would lack their cases; merge all {total} shard reports (a shard "
            "with no cases writes one too)"
        )


def _merged_cases(reports: Sequence[ReportSource], labels: Sequence[str]) -> Iterator[CaseResult]:
    seen: dict[str, str] = {}
    for label, report in zip(labels, reports, strict=True):
        for case in report.iter_cases():
            if case.id in seen:
                raise ConfigError(
                    f"merge: case {case.id!r} is in both {seen[case.id]} and {label}; "
                    "merge each shard once"
                )
            seen[case.id] = label
            yield case


def merge_reports(
    reports: Sequence[ReportSource],
    *,
    names: Sequence[str] | None = None,
    out: TextSink | None = None,
) -> ReportHead:
    """Join shard reports into one report, as if one runner had judged every case.

    The cases follow one another shard by shard, in the order the reports are given; with
    ``out`` they are written there as they are read, so no shard is held whole.

    Raises:
        ConfigError: no reports, reports judged with different judges, prompts or evaluator
            settings, shard reports that are not every shard of one split each once, or a case
            id that appears in more than one report.
    """
    if not reports:
        raise ConfigError("merge: no reports given")
    labels = list(names or [f"report {i + 1}" for i in range(len(reports))])
    heads = [r.head for r in reports]
    _check_mergeable(heads, labels)
    _check_every_shard(heads, labels)
    first = heads[0]
    writer = ReportWriter(out or DISCARD, judge=first.judge, evaluators=first.evaluators)
    for case in _merged_cases(reports, labels):
        writer.add(case)
    stopped = [
        f"{label}: {h.stopped_early}"
        for label, h in zip(labels, heads, strict=True)
        if h.stopped_early
    ]
    return writer.finish(
        usage=sum((h.usage for h in heads), Usage()),
        notices=tuple(dict.fromkeys(n for h in heads for n in h.notices)),
        stopped_early="; ".join(stopped) or None,
    )

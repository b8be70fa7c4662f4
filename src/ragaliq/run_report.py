"""Run reports on disk: written case by case as a run goes, read case by case.

A suite of any size is judged, compared and rendered without holding its cases: the runner hands
each finished case to a :class:`ReportWriter`, and every reader (``compare``, ``merge``,
``baseline update``, the HTML report) goes through a :class:`ReportFile`, which gives the cases
one at a time (see :mod:`ragaliq._streamed` for the layout). The summary is always recomputed
from the cases, never taken from the file.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any, Protocol

from pydantic import ValidationError

from ragaliq._files import open_atomic
from ragaliq._reading import TooLong, describe_size, numbered_lines, open_regular
from ragaliq._streamed import read_streamed, streamed_closing, streamed_item, streamed_opening
from ragaliq._validation import field_problems
from ragaliq.errors import ReportError
from ragaliq.models import (
    SCHEMA_VERSION,
    CaseResult,
    EvaluatorInfo,
    JudgeInfo,
    ReportHead,
    RunReport,
    SummaryBuilder,
    Usage,
)

__all__ = [
    "DISCARD",
    "MAX_CASE_LINE_BYTES",
    "MAX_REPORT_BYTES",
    "MAX_WHOLE_REPORT_BYTES",
    "ReportFile",
    "ReportSource",
    "ReportWriter",
    "TextSink",
    "write_report",
]

MAX_REPORT_BYTES = 16 * 1024**3
"""The size limit of a streamed report file (about three million cases)."""
MAX_WHOLE_REPORT_BYTES = 256 * 1024**2
"""The size limit of a report in another layout, which has to be parsed whole."""
MAX_CASE_LINE_BYTES = 64 * 1024**2
"""The longest line of a streamed report: one case with all its claims."""
_WRITE_AGAIN = "write it again with `ragaliq run -o ...` of this version"


class ReportSource(Protocol):
    """A run report, in memory or on disk: its head, and its cases one at a time."""

    @property
    def head(self) -> ReportHead:
        """Everything but the cases, with the summary computed from them."""
        ...

    def iter_cases(self) -> Iterator[CaseResult]:
        """The cases in the order the run wrote them."""
        ...


class TextSink(Protocol):
    """Where a report or a page is written: a text file, an atomic writer, ``io.StringIO``."""

    def write(self, text: str, /) -> object:
        """Append ``text``."""
        ...


class _Discard:
    def write(self, text: str, /) -> None:
        del text


DISCARD: TextSink = _Discard()
"""A sink that keeps nothing: a run whose report is not kept still has its summary counted."""


class ReportWriter:
    """Writes a report as its cases arrive; the summary is accumulated, never recomputed."""

    def __init__(
        self,
        out: TextSink,
        *,
        judge: JudgeInfo,
        evaluators: Mapping[str, EvaluatorInfo],
        shard: str | None = None,
    ) -> None:
        self._out = out
        self._judge = judge
        self._evaluators = dict(evaluators)
        self._shard = shard
        self._summary = SummaryBuilder(evaluators)
        self._first = True
        out.write(
            streamed_opening(
                {
                    "schema_version": SCHEMA_VERSION,
                    "judge": judge.model_dump(mode="json"),
                    "evaluators": {
                        name: info.model_dump(mode="json") for name, info in evaluators.items()
                    },
                    "shard": shard,
                }
            )
        )

    def add(self, case: CaseResult) -> None:
        """Write one case."""
        self._out.write(streamed_item(case.model_dump_json(), first=self._first))
        self._first = False
        self._summary.add(case)

    def finish(
        self,
        *,
        usage: Usage,
        notices: Iterable[str] = (),
        stopped_early: str | None = None,
    ) -> ReportHead:
        """Close the report; return its head."""
        head = ReportHead(
            judge=self._judge,
            evaluators=self._evaluators,
            summary=self._summary.summary(),
            usage=usage,
            notices=tuple(notices),
            stopped_early=stopped_early,
            shard=self._shard,
        )
        self._out.write(
            streamed_closing(
                head.model_dump(
                    mode="json", include={"summary", "usage", "notices", "stopped_early"}
                )
            )
        )
        return head


def write_report(path: Path, report: ReportSource) -> ReportHead:
    """Write a whole report (in memory or read from another file) to ``path``, atomically.

    Raises:
        OutputError: the file cannot be written.
    """
    head = report.head
    with open_atomic(path) as out:
        writer = ReportWriter(out, judge=head.judge, evaluators=head.evaluators, shard=head.shard)
        for case in report.iter_cases():
            writer.add(case)
        return writer.finish(
            usage=head.usage, notices=head.notices, stopped_early=head.stopped_early
        )


class ReportFile:
    """A report file, read case by case; the summary is recomputed from the cases.

    Cases are validated as they are read, so a corrupt line raises :class:`ReportError` naming
    it. ``head`` reads the file through once (unless a full pass of :meth:`iter_cases` already
    has); older reports in another layout are read whole, within :data:`MAX_WHOLE_REPORT_BYTES`.
    """

    def __init__(self, path: Path, *, what: str = "run report") -> None:
        self.path = path
        self.what = what
        self._head: ReportHead | None = None
        self._whole: RunReport | None = None
        with self._lines() as lines:
            streamed = read_streamed(
                lines, name=str(path), error=ReportError, max_line=self._max_line
            )
            if streamed is None:
                self._whole = self._read_whole()
                return
            self._opening = self._check_opening(streamed[0].opening)

    @property
    def head(self) -> ReportHead:
        """The report without its cases; the summary is what the cases say."""
        if self._whole is not None:
            return self._whole.head
        if self._head is None:
            for _ in self.iter_cases():
                pass
        assert self._head is not None  # set by a full pass
        return self._head

    def iter_cases(self) -> Iterator[CaseResult]:
        """The cases, validated one at a time.

        Raises:
            ReportError: a case does not validate, an id comes twice (one would hide the other),
                or the file's layout is broken.
        """
        if self._whole is not None:
            seen: set[str] = set()
            for case in self._whole.cases:
                self._check_new(case.id, seen, "")
                yield case
            return
        evaluators = self._opening["evaluators"]
        summary = SummaryBuilder(evaluators)
        with self._lines() as lines:
            streamed = read_streamed(
                lines, name=str(self.path), error=ReportError, max_line=self._max_line
            )
            if streamed is None:
                raise ReportError(f"{self.path}: the file changed while it was being read")
            document, items = streamed
            ids: set[str] = set()
            for number, text in items:
                case = self._case(text, number)
                self._check_new(case.id, ids, f":{number}")
                summary.add(case)
                yield case
            assert document.closing is not None  # set once the items are exhausted
            self._head = self._make_head(document.closing, summary)

    # --- reading ------------------------------------------------------------------------------

    _max_line = describe_size(MAX_CASE_LINE_BYTES)

    def _lines(self) -> AbstractContextManager[Iterator[tuple[int, str | TooLong]]]:
        return _numbered_lines(self.path, self.what)

    def _read_whole(self) -> RunReport:
        with open_regular(
            self.path,
            limit=MAX_WHOLE_REPORT_BYTES,
            error=ReportError,
            missing=f"pass the {self.what} written by ragaliq",
            too_big=_WRITE_AGAIN + ", which writes a report that is read as a stream",
        ) as handle:
            raw = handle.read()
        try:
            return RunReport.model_validate_json(raw)
        except ValidationError as exc:
            raise self._invalid(exc, RunReport) from exc

    def _check_opening(self, opening: dict[str, Any]) -> dict[str, Any]:
        version = opening.get("schema_version")
        if version != SCHEMA_VERSION:
            raise ReportError(
                f"{self.path}: schema_version {version!r} is not the supported "
                f"{SCHEMA_VERSION}; {_WRITE_AGAIN}"
            )
        try:
            judge = JudgeInfo.model_validate(opening.get("judge"))
            evaluators = {
                name: EvaluatorInfo.model_validate(info)
                for name, info in dict(opening.get("evaluators") or {}).items()
            }
        except (ValidationError, TypeError, ValueError) as exc:
            raise ReportError(
                f"{self.path}:1: not a valid {self.what} (judge or evaluators): "
                f"{str(exc).splitlines()[0]}"
            ) from exc
        shard = opening.get("shard")
        if shard is not None and not isinstance(shard, str):
            raise ReportError(f"{self.path}:1: shard: must be text like 2/8 or null")
        return {"judge": judge, "evaluators": evaluators, "shard": shard}

    def _check_new(self, case_id: str, seen: set[str], where: str) -> None:
        if case_id in seen:
            raise ReportError(
                f"{self.path}{where}: case {case_id!r} comes twice; a report holds each case "
                f"once (one would hide the other); pass the {self.what} written by ragaliq"
            )
        seen.add(case_id)

    def _case(self, text: str, number: int) -> CaseResult:
        try:
            return CaseResult.model_validate_json(text)
        except ValidationError as exc:
            problems = list(field_problems(exc, CaseResult))
            first = problems[0]
            raise ReportError(
                f"{self.path}:{number}: not a valid case: {first.path}: {first.message}; "
                f"pass the {self.what} written by ragaliq"
            ) from exc

    def _make_head(self, closing: dict[str, Any], summary: SummaryBuilder) -> ReportHead:
        try:
            return ReportHead(
                judge=self._opening["judge"],
                evaluators=self._opening["evaluators"],
                summary=summary.summary(),
                usage=Usage.model_validate(closing.get("usage") or {}),
                notices=tuple(closing.get("notices") or ()),
                stopped_early=closing.get("stopped_early"),
                shard=self._opening["shard"],
            )
        except (ValidationError, TypeError, ValueError) as exc:
            raise ReportError(
                f"{self.path}: the closing line is not valid: {str(exc).splitlines()[0]}"
            ) from exc

    def _invalid(self, exc: ValidationError, kind: type[Any]) -> ReportError:
        problems = list(field_problems(exc, kind))
        more = f" and {len(problems) - 1} more problems" if len(problems) > 1 else ""
        return ReportError(
            f"{self.path}: not a valid {self.what}: {problems[0].path}: {problems[0].message}"
            f"{more}; pass the {self.what} written by ragaliq"
        )


@contextmanager
def _numbered_lines(path: Path, what: str) -> Iterator[Iterator[tuple[int, str | TooLong]]]:
    """The numbered lines of a report file, opened within its size limit."""
    with open_regular(
        path,
        limit=MAX_REPORT_BYTES,
        error=ReportError,
        missing=f"pass the {what} written by ragaliq",
        too_big="split the suite into shards (ragaliq run --shard K/N)",
    ) as handle:
        yield numbered_lines(
            handle, name=str(path), max_line_bytes=MAX_CASE_LINE_BYTES, error=ReportError
        )

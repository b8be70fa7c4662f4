"""The baseline: what the gate compares a change with, recorded on the main branch.

A baseline keeps, per case, only what the comparison reads: the input hash, the scores, and
what each kind of finding keeps (:mod:`ragaliq.evaluators.findings`): the hallucinated claims,
the needed facts the context held, the relevance labels and the relevant chunks retrieval
found. Verdicts, evidence and reasons stay in the run report, so a baseline is about a tenth of
its report's size and a suite of a hundred thousand cases is compared within a few hundred
megabytes. It is one JSON document laid out one case per line (see :mod:`ragaliq._streamed`),
written and read as a stream.

Baselines of schema version 2 (which kept the hallucinated claims and the held facts as fields
of their own, and no labels) and of version 1 (which held the whole run report) are still read.
"""

from __future__ import annotations

import io
import json
from collections.abc import Collection, Iterable, Iterator, Mapping
from datetime import UTC, datetime
from functools import cached_property
from pathlib import Path
from typing import Annotated, Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from ragaliq._files import open_atomic
from ragaliq._reading import describe_size, numbered_lines
from ragaliq._streamed import read_streamed, streamed_closing, streamed_item, streamed_opening
from ragaliq.errors import BaselineError
from ragaliq.evaluators.registry import finding_kinds
from ragaliq.models import (
    SCHEMA_VERSION,
    CaseResult,
    JudgeInfo,
    ReportHead,
    RunReport,
    Status,
)
from ragaliq.policy import GateRules
from ragaliq.text.counts import plural

__all__ = [
    "BASELINE_SCHEMA_VERSION",
    "DEFAULT_BASELINE_PATH",
    "MAX_BASELINE_BYTES",
    "MAX_BASELINE_LINE_BYTES",
    "Baseline",
    "BaselineCase",
    "Origin",
    "Provenance",
    "load_baseline",
    "parse_baseline",
    "write_baseline",
]

BASELINE_SCHEMA_VERSION = 3
"""Version of the baseline layout: 3 keeps what each kind of finding keeps per case (``kept``,
with the relevance labels); 2 kept claims and facts as fields of their own; 1 held the whole
report."""
_INDEXED = (2, BASELINE_SCHEMA_VERSION)
"""The versions laid out as an index of cases."""
_LEGACY_KEPT = ("hallucinated", "held_facts")
"""The fields of a version 2 case that are now what a kind of finding keeps, by that name."""
DEFAULT_BASELINE_PATH = ".ragaliq/baseline.json"
MAX_BASELINE_BYTES = 512 * 1024 * 1024
"""The size limit of a baseline file."""
MAX_BASELINE_LINE_BYTES = 16 * 1024**2
"""The longest line of a baseline: one case's index entry."""
Fraction = Annotated[float, Field(ge=0.0, le=1.0, allow_inf_nan=False)]
_REGENERATE = (
    "regenerate it on the main branch with the action's mode: update-baseline, or with "
    "`ragaliq baseline record` (which judges and records whatever the scores)"
)


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)


class Provenance(_Model):
    """What produced a set of scores; scores are comparable only under equal provenance."""

    judge_provider: str
    judge_model: str
    prompt_version: str
    evaluator_versions: dict[str, str]
    judge_endpoint: str | None = None
    """A custom base URL or cloud region/project; None for Anthropic's own API."""

    @classmethod
    def of(cls, report: ReportHead | RunReport) -> Provenance:
        """The provenance of a run report."""
        return cls(
            judge_provider=report.judge.provider,
            judge_model=report.judge.model,
            prompt_version=report.judge.prompt_version,
            evaluator_versions={name: e.version for name, e in report.evaluators.items()},
            judge_endpoint=report.judge.endpoint,
        )

    @property
    def judge(self) -> JudgeInfo:
        """The judge as a report names it."""
        return JudgeInfo(
            provider=self.judge_provider,
            model=self.judge_model,
            prompt_version=self.prompt_version,
            endpoint=self.judge_endpoint,
        )

    def differences(self, other: Provenance, *, leaving_out: Collection[str] = ()) -> list[str]:
        """Human-readable differences, e.g. ``judge model: a → b``; empty when comparable.

        The versions of the evaluators in ``leaving_out`` are not compared.
        """
        out = []
        for label, mine, theirs in (
            ("judge provider", self.judge_provider, other.judge_provider),
            ("judge model", self.judge_model, other.judge_model),
            ("prompt version", self.prompt_version, other.prompt_version),
            ("judge endpoint", self.judge_endpoint or "default", other.judge_endpoint or "default"),
        ):
            if mine != theirs:
                out.append(f"{label}: {mine} → {theirs}")
        for name in sorted(set(self.evaluator_versions) & set(other.evaluator_versions)):
            if name in leaving_out:
                continue
            if self.evaluator_versions[name] != other.evaluator_versions[name]:
                out.append(
                    f"{name} evaluator version: {self.evaluator_versions[name]} → "
                    f"{other.evaluator_versions[name]}"
                )
        return out


class BaselineCase(_Model):
    """What the comparison needs of one recorded case."""

    id: str
    input_hash: str
    status: Status
    scores: dict[str, Fraction] = Field(default_factory=dict)
    """Each evaluator's score, for the evaluators that scored the case."""
    kept: dict[str, Any] = Field(default_factory=dict)
    """What each kind of finding keeps of the case, by the kind's name; a kind that keeps
    nothing of it is left out."""

    @model_validator(mode="before")
    @classmethod
    def _read_kept(cls, data: Any) -> Any:
        """Each kind's part validated as that kind keeps it; a version 2 case's fields moved in.

        Raises:
            ValueError: a part no kind of finding keeps, or not what its kind keeps.
        """
        if not isinstance(data, dict):
            return data
        data = dict(data)
        kept = dict(data.get("kept") or {})
        for name in _LEGACY_KEPT:
            value = data.pop(name, None)
            if value:
                kept[name] = value
        kinds = {kind.name: kind for kind in finding_kinds()}
        for name, value in kept.items():
            kind = kinds.get(name)
            if kind is None or kind.kept is None:
                raise ValueError(f"kept: no kind of finding keeps {name!r}")
            kept[name] = kind.read_kept(value)
        data["kept"] = kept
        return data

    @classmethod
    def of(cls, case: CaseResult) -> BaselineCase:
        """The index entry of a judged case."""
        kept = {kind.name: kind.keep(case) for kind in finding_kinds()}
        return cls(
            id=case.id,
            input_hash=case.input_hash,
            status=case.status,
            scores={
                name: result.score
                for name, result in case.results.items()
                if result.status == "ok" and result.score is not None
            },
            kept={name: value for name, value in kept.items() if value is not None},
        )


class Origin(_Model):
    """The workflow run that recorded a baseline, as the run said of itself.

    A claim to check, not a proof: a gate trusts a stored baseline only once GitHub's API shows
    that this run is a ``push`` run of the baseline workflow on the base branch at the
    baseline's commit, and that it uploaded an artifact named for the file's SHA-256.
    """

    repository: str
    run_id: int = Field(gt=0)


class _Header(_Model):
    """A baseline without its cases: what its opening line holds."""

    schema_version: int = BASELINE_SCHEMA_VERSION
    recorded_at: str
    """UTC time of recording, ISO 8601."""
    commit: str | None = None
    """The commit the report was produced on, when known."""
    provenance: Provenance
    thresholds: dict[str, Fraction]
    policy: GateRules | None = None
    """The gate policy in force then; None in a baseline recorded without one."""
    case_count: int = Field(default=0, ge=0)
    """How many cases the baseline holds (checked against the cases read)."""
    origin: Origin | None = None
    """The workflow run that recorded it; None when recorded outside GitHub Actions."""


class Baseline(_Header):
    """A recorded baseline: provenance, thresholds, policy, and the index of its cases."""

    case_index: tuple[BaselineCase, ...] = Field(default=(), repr=False)

    @cached_property
    def by_id(self) -> Mapping[str, BaselineCase]:
        """The cases by id."""
        return {case.id: case for case in self.case_index}

    def score(self, evaluator: str) -> float | None:
        """The baseline's mean score for one evaluator over the cases it judged whole."""
        scores = [
            c.scores[evaluator]
            for c in self.case_index
            if c.status == "ok" and evaluator in c.scores
        ]
        return round(sum(scores) / len(scores), 6) if scores else None


def _header(
    head: ReportHead,
    *,
    commit: str | None,
    policy: GateRules | None,
    allow_errors: bool,
    origin: Origin | None = None,
) -> _Header:
    if head.stopped_early:
        raise BaselineError(
            f"the run stopped early ({head.stopped_early}); a partial run cannot be a baseline"
        )
    if head.summary.errors and not allow_errors:
        raise BaselineError(
            f"the run has {head.summary.errors} case errors; fix them or pass --allow-errors "
            "to record the baseline anyway"
        )
    return _Header(
        recorded_at=datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        commit=commit,
        provenance=Provenance.of(head),
        thresholds={name: e.threshold for name, e in head.evaluators.items()},
        policy=policy,
        case_count=head.summary.cases,
        origin=origin,
    )


def write_baseline(
    path: Path,
    *,
    head: ReportHead,
    cases: Iterator[CaseResult],
    allow_errors: bool = False,
    commit: str | None = None,
    policy: GateRules | None = None,
    origin: Origin | None = None,
) -> _Header:
    """Record a baseline from a report read as a stream, writing it case by case (atomically).

    Raises:
        BaselineError: the run had errors or stopped early (errors allowed with ``allow_errors``).
        OutputError: the file cannot be written.
    """
    header = _header(head, commit=commit, policy=policy, allow_errors=allow_errors, origin=origin)
    with open_atomic(path) as out:
        out.write(streamed_opening(header.model_dump(mode="json")))
        for i, case in enumerate(cases):
            out.write(streamed_item(BaselineCase.of(case).model_dump_json(), first=i == 0))
        out.write(streamed_closing({}))
    return header


def parse_baseline(data: bytes | str, *, source: str) -> Baseline:
    """Validate a baseline file's content; ``source`` names where it came from in messages.

    Raises:
        BaselineError: it is not a baseline of a version this one reads, with how to regenerate
            it.
    """
    raw = data.encode("utf-8") if isinstance(data, str) else data
    lines = numbered_lines(
        io.BytesIO(raw), name=source, max_line_bytes=MAX_BASELINE_LINE_BYTES, error=BaselineError
    )
    streamed = read_streamed(
        lines,
        name=source,
        error=BaselineError,
        max_line=describe_size(MAX_BASELINE_LINE_BYTES),
    )
    if streamed is None:
        return _parse_whole(raw, source=source)
    document, items = streamed
    header = _validated(_Header, _checked_version(document.opening, source), source, line=1)
    index = tuple(_validated(BaselineCase, text, source, line=n) for n, text in items)
    if document.closing:
        raise BaselineError(f"{source}: unexpected fields after the cases; {_REGENERATE}")
    return _checked_count(header, index, source)


def _checked_count(header: _Header, index: tuple[BaselineCase, ...], source: str) -> Baseline:
    _check_unique(index, source)
    if len(index) != header.case_count:
        raise BaselineError(
            f"{source}: holds {plural(len(index), 'case')} where its header says "
            f"{header.case_count} (a cut or edited file?); {_REGENERATE}"
        )
    return Baseline(**header.model_dump(exclude_unset=True), case_index=index)


def _parse_whole(raw: bytes, *, source: str) -> Baseline:
    """A baseline in another layout: one of schema version 1, or a re-formatted file."""
    try:
        data = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        where = f"line {exc.lineno}: {exc.msg}" if isinstance(exc, json.JSONDecodeError) else exc
        raise BaselineError(f"{source}: not valid JSON ({where}); {_REGENERATE}") from exc
    if not isinstance(data, dict):
        raise BaselineError(f"{source}: not a RagaliQ baseline file; {_REGENERATE}")
    version = _checked_version(data, source)["schema_version"]
    if version in _INDEXED:
        cases = data.pop("cases", None)
        if not isinstance(cases, list):
            raise BaselineError(f"{source}: corrupt baseline (cases: not a list); {_REGENERATE}")
        header = _validated(_Header, data, source)
        index = tuple(_validated(BaselineCase, case, source) for case in cases)
        return _checked_count(header, index, source)
    report = _validated(RunReport, data.pop("report", None), source, where="report")
    header = _validated(_Header, {**data, "schema_version": BASELINE_SCHEMA_VERSION}, source)
    _check_unique(report.cases, source)
    return Baseline(
        **header.model_dump(exclude={"case_count"}, exclude_unset=True),
        case_count=len(report.cases),
        case_index=tuple(BaselineCase.of(c) for c in report.cases),
    )


def _check_unique(cases: Iterable[BaselineCase | CaseResult], source: str) -> None:
    """Refuse a baseline that holds a case twice: the later one would hide the earlier."""
    seen: set[str] = set()
    for case in cases:
        if case.id in seen:
            raise BaselineError(
                f"{source}: case {case.id!r} comes twice, so one would hide the other (a drop "
                f"could disappear); {_REGENERATE}"
            )
        seen.add(case.id)


def _checked_version(data: dict[str, Any], source: str) -> dict[str, Any]:
    if "schema_version" not in data:
        raise BaselineError(f"{source}: not a RagaliQ baseline file; {_REGENERATE}")
    version = data["schema_version"]
    if version not in (SCHEMA_VERSION, *_INDEXED) or isinstance(version, bool):
        raise BaselineError(
            f"{source}: schema_version {version!r} is not one this version reads "
            f"({SCHEMA_VERSION} to {BASELINE_SCHEMA_VERSION}); {_REGENERATE}"
        )
    return data


M = TypeVar("M", bound=BaseModel)


def _validated(
    model: type[M], data: Any, source: str, *, line: int | None = None, where: str = ""
) -> M:
    try:
        if isinstance(data, str):
            return model.model_validate_json(data)
        return model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        loc = ".".join(str(p) for p in (*((where,) if where else ()), *first["loc"]))
        at = f"{source}:{line}" if line is not None else source
        raise BaselineError(
            f"{at}: corrupt baseline ({loc}: {first['msg']}); {_REGENERATE}"
        ) from exc


def load_baseline(path: Path) -> Baseline | None:
    """The baseline at ``path``, or None when there is none yet.

    Raises:
        BaselineError: the file exists but cannot be used.
    """
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise BaselineError(f"{path}: cannot be read ({exc}); {_REGENERATE}") from exc
    return parse_baseline(data, source=str(path))

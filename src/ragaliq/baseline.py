"""The baseline: a run report recorded on the main branch, with the thresholds and provenance."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ragaliq._files import write_atomic
from ragaliq.errors import BaselineError
from ragaliq.models import SCHEMA_VERSION, RunReport

__all__ = [
    "DEFAULT_BASELINE_PATH",
    "Baseline",
    "Provenance",
    "RecordedPolicy",
    "load_baseline",
    "parse_baseline",
    "record_baseline",
    "save_baseline",
]

DEFAULT_BASELINE_PATH = ".ragaliq/baseline.json"
Fraction = Annotated[float, Field(ge=0.0, le=1.0, allow_inf_nan=False)]
_REGENERATE = (
    "regenerate it on the main branch with `ragaliq run -o report.json` and "
    "`ragaliq baseline update --report report.json` (or the action's mode: update-baseline)"
)


class Provenance(BaseModel):
    """What produced a set of scores; scores are comparable only under equal provenance."""

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    judge_provider: str
    judge_model: str
    prompt_version: str
    evaluator_versions: dict[str, str]
    judge_endpoint: str | None = None
    """A custom base URL or cloud region/project; None for Anthropic's own API."""

    @classmethod
    def of(cls, report: RunReport) -> Provenance:
        """The provenance of a run report."""
        return cls(
            judge_provider=report.judge.provider,
            judge_model=report.judge.model,
            prompt_version=report.judge.prompt_version,
            evaluator_versions={name: e.version for name, e in report.evaluators.items()},
            judge_endpoint=report.judge.endpoint,
        )

    def differences(self, other: Provenance) -> list[str]:
        """Human-readable differences, e.g. ``judge model: a → b``; empty when comparable."""
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
            if self.evaluator_versions[name] != other.evaluator_versions[name]:
                out.append(
                    f"{name} evaluator version: {self.evaluator_versions[name]} → "
                    f"{other.evaluator_versions[name]}"
                )
        return out


class RecordedPolicy(BaseModel):
    """The gate policy in force when the baseline was recorded: the bar a PR cannot lower."""

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    max_drop: dict[str, Fraction]
    """The tolerated drop per evaluator."""
    fail_on_new_hallucinations: bool
    on_error: Literal["fail", "ignore"]
    count_unstable: bool
    on_missing_cases: Literal["fail", "notice"] = "fail"
    """Whether baseline cases missing from a run fail the gate; "fail" for older baselines."""
    confidence: float = Field(default=0.95, ge=0.5, le=0.999, allow_inf_nan=False)
    """The level of the interval a drop must clear to fail the gate."""
    on_inconclusive: Literal["pass", "fail"] = "pass"
    """What a drop past ``max_drop`` the suite cannot resolve does."""


class Baseline(BaseModel):
    """A run report recorded on the main branch, plus the thresholds in force then."""

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    schema_version: int = SCHEMA_VERSION
    recorded_at: str
    """UTC time of recording, ISO 8601."""
    commit: str | None = None
    """The commit the report was produced on, when known."""
    provenance: Provenance
    thresholds: dict[str, Fraction]
    policy: RecordedPolicy | None = None
    """The gate policy in force then; None in a baseline recorded without one."""
    report: RunReport = Field(repr=False)


def record_baseline(
    report: RunReport,
    *,
    allow_errors: bool = False,
    commit: str | None = None,
    policy: RecordedPolicy | None = None,
) -> Baseline:
    """A baseline from a finished report.

    Raises:
        BaselineError: the run had errors or stopped early (errors allowed with ``allow_errors``).
    """
    if report.stopped_early:
        raise BaselineError(
            f"the run stopped early ({report.stopped_early}); a partial run cannot be a baseline"
        )
    if report.summary.errors and not allow_errors:
        raise BaselineError(
            f"the run has {report.summary.errors} case errors; fix them or pass --allow-errors "
            "to record the baseline anyway"
        )
    return Baseline(
        recorded_at=datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        commit=commit,
        provenance=Provenance.of(report),
        thresholds={name: e.threshold for name, e in report.evaluators.items()},
        policy=policy,
        report=report,
    )


def save_baseline(baseline: Baseline, path: Path) -> None:
    """Write the baseline atomically (temporary file, then rename)."""
    write_atomic(path, baseline.model_dump_json(indent=1) + "\n")


def parse_baseline(text: str, *, source: str) -> Baseline:
    """Validate baseline JSON; ``source`` names where it came from in messages.

    Raises:
        BaselineError: the text is not a baseline of this version, with how to regenerate it.
    """
    import json

    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise BaselineError(
            f"{source}: not valid JSON (line {exc.lineno}: {exc.msg}); {_REGENERATE}"
        ) from exc
    if not isinstance(data, dict) or "schema_version" not in data:
        raise BaselineError(f"{source}: not a RagaliQ baseline file; {_REGENERATE}")
    if data["schema_version"] != SCHEMA_VERSION:
        raise BaselineError(
            f"{source}: schema_version {data['schema_version']!r} is not the supported "
            f"{SCHEMA_VERSION}; {_REGENERATE}"
        )
    try:
        return Baseline.model_validate(data)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        where = ".".join(str(p) for p in first["loc"])
        raise BaselineError(
            f"{source}: corrupt baseline ({where}: {first['msg']}); {_REGENERATE}"
        ) from exc


def load_baseline(path: Path) -> Baseline | None:
    """The baseline at ``path``, or None when there is none yet.

    Raises:
        BaselineError: the file exists but cannot be used.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise BaselineError(f"{path}: cannot be read ({exc}); {_REGENERATE}") from exc
    return parse_baseline(text, source=str(path))

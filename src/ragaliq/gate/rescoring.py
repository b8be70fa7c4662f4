"""The claim-based evaluators a run was scored with, to score a case again as the gate decides.

A claim a reviewer accepted, or an unstable one, counts as supported in the scores the gate
decides on (:mod:`ragaliq.gate.compare`); its case is scored again by the evaluators the run's
report records.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from ragaliq._validation import field_problems
from ragaliq.errors import ReportError
from ragaliq.evaluators.base import Evaluator
from ragaliq.evaluators.questions import VERIFY
from ragaliq.evaluators.registry import EVALUATORS
from ragaliq.models import EvaluatorInfo

__all__ = ["rescoring_evaluators"]


def rescoring_evaluators(
    infos: Mapping[str, EvaluatorInfo], *, needed: bool = True
) -> tuple[Evaluator[Any], ...]:
    """The claim-based evaluators a run was scored with, rebuilt from what its report records.

    A report whose options this version cannot read gives none unless ``needed`` (claims a
    reviewer accepted): its unstable claims then count as the judge gave them.

    Raises:
        ReportError: the report records options this version cannot read, and ``needed``.
    """
    built: list[Evaluator[Any]] = []
    claim_based = {kind.name: kind for kind in EVALUATORS if kind.asks(VERIFY)}
    for name, info in infos.items():
        if (kind := claim_based.get(name)) is None:
            continue  # not scored from claims, or not an evaluator this version knows
        try:
            options = kind.Options.model_validate({**info.options, "threshold": info.threshold})
        except ValidationError as exc:
            if not needed:
                return ()
            first = next(field_problems(exc, kind.Options))
            raise ReportError(
                f"the run report's {name} options are not this version's ({first.path}: "
                f"{first.message}), so the claims a reviewer accepted cannot be scored again; "
                "judge the run with this version of ragaliq"
            ) from exc
        built.append(kind(options))
    return tuple(built)

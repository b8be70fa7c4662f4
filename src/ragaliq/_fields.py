"""The value types of ``ragaliq.yaml``, shared by the config and the evaluators' options.

Numbers and flags are strict: YAML already types them, so ``true`` for a threshold, a quoted
``"0.7"`` or ``.inf`` seconds is a mistake worth reporting rather than a value to coerce.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, AllowInfNan, BaseModel, ConfigDict, Strict

__all__ = ["Count", "FileName", "Flag", "Fraction", "Number", "Section", "Weight"]


def _unit_interval(value: float) -> float:
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"must be between 0 and 1 (got {value:g})")
    return value


def _weight(value: float) -> float:
    if value > 1.0:
        raise ValueError(
            f"must be at most 1 (got {value:g}): a verdict may cost more than a supported claim "
            "earns (Axion's CONTRADICTORY: -2.0), but no claim may earn more"
        )
    return value


def _file_name(value: str) -> str:
    if not value.strip():
        raise ValueError("must name a file (got an empty string); remove the key for the default")
    return value


Number = Annotated[float, Strict(), AllowInfNan(False)]
Count = Annotated[int, Strict()]
Flag = Annotated[bool, Strict()]
FileName = Annotated[str, Strict(), AfterValidator(_file_name)]
"""A path in the config, relative to the config file."""
Fraction = Annotated[Number, AfterValidator(_unit_interval)]
Weight = Annotated[Number, AfterValidator(_weight)]
"""A verdict's weight: at most 1 (a supported claim), as low as a team wants a verdict to cost."""


class Section(BaseModel):
    """A section of ``ragaliq.yaml``: unknown keys are errors, values do not change once read."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

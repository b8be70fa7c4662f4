"""The evaluators, in one list: the config, the gate's rules and the runner all iterate it.

Adding an evaluator is a module with an :class:`~ragaliq.evaluators.base.Evaluator` subclass (its
options declared as its ``Options`` model) and one line in :data:`EVALUATORS`.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Iterator
from typing import Any, TypeVar

from pydantic import Field, GetJsonSchemaHandler, create_model, model_validator
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema

from ragaliq._fields import Section
from ragaliq.evaluators.base import Evaluator, EvaluatorOptions
from ragaliq.evaluators.citations import CitationAccuracyEvaluator
from ragaliq.evaluators.context_precision import ContextPrecisionEvaluator
from ragaliq.evaluators.context_recall import ContextRecallEvaluator
from ragaliq.evaluators.faithfulness import FaithfulnessEvaluator
from ragaliq.evaluators.findings import Finding, FindingKind
from ragaliq.evaluators.hallucination import HallucinationEvaluator
from ragaliq.evaluators.relevance import RelevanceEvaluator
from ragaliq.evaluators.retrieval import (
    HitRateEvaluator,
    MrrEvaluator,
    NdcgEvaluator,
    RecallAtKEvaluator,
)

__all__ = [
    "EVALUATORS",
    "EvaluatorSections",
    "build_evaluators",
    "evaluator_class",
    "evaluator_sections",
    "finding_kinds",
    "finding_lists",
    "judge_asked",
    "response_judged_by",
]

EVALUATORS: tuple[type[Evaluator[Any]], ...] = (
    FaithfulnessEvaluator,
    HallucinationEvaluator,
    RelevanceEvaluator,
    ContextPrecisionEvaluator,
    ContextRecallEvaluator,
    CitationAccuracyEvaluator,
    HitRateEvaluator,
    RecallAtKEvaluator,
    MrrEvaluator,
    NdcgEvaluator,
)
"""Every evaluator, in the order reports and comments list them."""

OptionsT = TypeVar("OptionsT", bound=EvaluatorOptions)


@functools.cache
def finding_kinds() -> tuple[type[FindingKind], ...]:
    """Every kind of finding the evaluators declare, once each, in the registry's order."""
    kinds = {kind.name: kind for evaluator in EVALUATORS for kind in evaluator.findings}
    return tuple(kinds.values())


@functools.cache
def finding_lists() -> dict[str, type[Finding]]:
    """Every list of findings a decision may hold, by name, with its entry model."""
    return {name: entry for kind in finding_kinds() for name, entry in kind.lists.items()}


class EvaluatorSections(Section):
    """``evaluators`` in ``ragaliq.yaml``: one section per registered evaluator.

    An evaluator whose section is written is on unless it says ``enabled: false``; one whose
    section is left out is at its default (``context_precision``, ``context_recall``,
    ``citation_accuracy`` and the retrieval metrics off).
    """

    def sections(self) -> Iterator[tuple[str, EvaluatorOptions]]:
        """Each evaluator's name and options, in registry order."""
        for evaluator in EVALUATORS:
            yield evaluator.name, self.section(evaluator.name)

    def section(self, name: str) -> EvaluatorOptions:
        """One evaluator's options by name."""
        options: EvaluatorOptions = getattr(self, name)
        return options

    def options(self, evaluator: type[Evaluator[OptionsT]]) -> OptionsT:
        """One evaluator's options, typed as its own ``Options``."""
        options: OptionsT = getattr(self, evaluator.name)
        return options

    @classmethod
    def __get_pydantic_json_schema__(
        cls, core_schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        """The schema with each section's effective defaults, for editors and ``ragaliq schema``.

        A section left without ``threshold`` is held to its evaluator's default threshold, and
        a written section is on unless ``enabled: false`` (even one off when left out), so the
        schema says that, where the model's own fields default to None and to off.
        """
        schema = handler(core_schema)
        sections = handler.resolve_ref_schema(schema)["properties"]
        for evaluator in EVALUATORS:
            section = copy.deepcopy(handler.resolve_ref_schema(sections[evaluator.name]))
            options = section["properties"]
            default = evaluator.default_threshold
            options["threshold"] |= {
                "default": default,
                "description": f"Minimum mean score ({default:g} when left out).",
            }
            off = not evaluator.Options.model_fields["enabled"].default
            options["enabled"] = {
                **options["enabled"],
                "default": True,
                "description": (
                    f"Writing this section turns {evaluator.name} on; it is off when the section "
                    "is left out, and enabled: false keeps a written section off."
                    if off
                    else f"{evaluator.name} is on unless enabled: false."
                ),
            }
            section["title"] = evaluator.name
            sections[evaluator.name] = section
        return schema

    @model_validator(mode="before")
    @classmethod
    def _written_is_on(cls, data: Any) -> Any:
        """A section written without ``enabled`` turns its evaluator on, even one off by default.

        ``context_precision: {}`` (or with a threshold, or with nothing after the colon) asks for
        the evaluator; only ``enabled: false`` keeps a written section off.
        """
        if not isinstance(data, dict):
            return data
        written = dict(data)
        for evaluator in EVALUATORS:
            section = written.get(evaluator.name, ...)
            if section is None:
                written[evaluator.name] = {"enabled": True}
            elif isinstance(section, dict) and "enabled" not in section:
                written[evaluator.name] = {"enabled": True, **section}
        return written

    @model_validator(mode="after")
    def _one_enabled(self) -> EvaluatorSections:
        if not any(options.enabled for _, options in self.sections()):
            raise ValueError("every evaluator is disabled; enable at least one")
        return self


def evaluator_sections() -> type[EvaluatorSections]:
    """The config model of ``evaluators``, with a field per registered evaluator."""
    fields: dict[str, Any] = {
        evaluator.name: (evaluator.Options, Field(default_factory=evaluator.Options))
        for evaluator in EVALUATORS
    }
    model: type[EvaluatorSections] = create_model(
        "EvaluatorsConfig", __base__=EvaluatorSections, __doc__=EvaluatorSections.__doc__, **fields
    )
    return model


def evaluator_class(name: str) -> type[Evaluator[Any]]:
    """The evaluator registered under ``name``.

    Raises:
        KeyError: no evaluator has that name.
    """
    for evaluator in EVALUATORS:
        if evaluator.name == name:
            return evaluator
    raise KeyError(name)


def response_judged_by(config: EvaluatorSections) -> str | None:
    """The enabled evaluators that judge a case's response, as a reader names them; None if none.

    A dataset is read for them: without them (retrieval data), a case without a response is read.
    """
    names = [e.name for e in EVALUATORS if config.section(e.name).enabled and e.reads_response()]
    if not names:
        return None
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def judge_asked(config: EvaluatorSections) -> bool:
    """Whether an enabled evaluator asks the judge anything (the retrieval metrics ask none)."""
    return any(config.section(e.name).enabled and e.asks_judge() for e in EVALUATORS)


def build_evaluators(config: EvaluatorSections) -> list[Evaluator[Any]]:
    """The enabled evaluators, each built from its own options."""
    return [
        evaluator(config.section(evaluator.name))
        for evaluator in EVALUATORS
        if config.section(evaluator.name).enabled
    ]

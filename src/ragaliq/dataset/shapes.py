"""The shapes a case may come in: RagaliQ's own fields, RAGAS's and DeepEval's.

Each shape is a pydantic model with the field names as the file writes them, so that a problem
names the field the user wrote (``user_input: missing required field``, not ``query``); the
types of those fields are in :mod:`ragaliq.dataset.fields`. Every model turns a valid record into
the same :class:`~ragaliq.dataset.fields.CaseFields`:

=================  ======================  ============================  ====================
RagaliQ            RAGAS                   RAGAS before 0.2              DeepEval
=================  ======================  ============================  ====================
``id``             (derived from query)    (derived from query)          (derived from input)
``query``          ``user_input``          ``question``                  ``input``
``context``        ``retrieved_contexts``  ``contexts``                  ``retrieval_context``
``response``       ``response``            ``answer``                    ``actual_output``
expected_answer    ``reference``           ``ground_truth``              ``expected_output``
=================  ======================  ============================  ====================

The other fields those tools define (RAGAS's ``reference_contexts``, DeepEval's ``context``,
``comments`` ...) are kept in ``metadata``; DeepEval's ``additional_metadata`` is ``metadata``.
Any shape may also carry ``id``, ``expected_facts``, ``tags``, ``metadata`` and the relevance
labels ``relevant_chunks`` or ``relevant_sources``; a chunk of any shape's context may be an
object ``{"id": ..., "source": ..., "text": ...}``. RAGAS's ``retrieved_context_ids`` are the
retrieved chunks' ids, and its ``reference_context_ids`` are ``relevant_chunks``.

The response may be left out, null or empty in every shape (retrieval data has none: RAGAS's and
DeepEval's context precision and recall samples); whether that is allowed depends on the
evaluators, and is decided by :mod:`ragaliq.dataset.checker`. The query may not be blank.
DeepEval's records are read as ``LLMTestCase.model_dump()`` writes them too, every field of it,
in snake_case or in the camelCase of ``model_dump(by_alias=True)``, and the marker DeepEval's
``save_as`` puts on a retrieved chunk with a source (``deepeval_source=...,deepeval_context=...``)
is taken off the chunk's text, its source kept in ``metadata``.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field

from ragaliq.dataset.fields import (
    CaseFields,
    CaseId,
    ChunkObject,
    Facts,
    ItemId,
    LabelMap,
    Metadata,
    OptionalCaseId,
    OptionalText,
    Query,
    RetrievedChunks,
    Tags,
    as_chunks,
    labels_of,
    split_chunks,
)
from ragaliq.models import ChunkRef
from ragaliq.text.counts import plural

__all__ = [
    "NATIVE",
    "NATIVE_ID_OPTIONAL",
    "SHAPES",
    "CaseRecord",
    "DeepEvalRecord",
    "IdOptionalRecord",
    "RagasLegacyRecord",
    "RagasRecord",
    "Shape",
    "ShapeName",
    "ShapeRecord",
    "detect_shape",
    "shape_named",
]

ShapeName = Literal["ragaliq", "ragas", "deepeval"]


class ShapeRecord(BaseModel):
    """A case as one shape writes it."""

    model_config = ConfigDict(extra="forbid", coerce_numbers_to_str=True)

    def fields(self) -> CaseFields:
        """The record in RagaliQ's terms."""
        raise NotImplementedError

    def problems(self) -> list[str]:
        """What is wrong with the record beyond each field alone, as ``field: problem``."""
        return []

    @classmethod
    def explain(cls, field: str, item: dict[str, Any]) -> str:
        """What to add to a problem with ``field`` of ``item`` that this shape's users need."""
        return ""


class _Labelled(ShapeRecord):
    """What every shape may carry: the relevance labels of a case's retrieval."""

    relevant_chunks: LabelMap = None
    """The ids of the chunks retrieval should find (a list), or each with its relevance."""
    relevant_sources: LabelMap = None
    """The ids of the documents retrieval should find: labels that survive a re-chunking."""

    def problems(self) -> list[str]:
        if self.relevant_chunks is not None and self.relevant_sources is not None:
            return [
                "relevant_chunks, relevant_sources: a case is scored on one kind of label; keep "
                "relevant_sources to judge by document (it survives a change of chunking), or "
                "relevant_chunks to judge by chunk"
            ]
        return []


class CaseRecord(_Labelled):
    """RagaliQ's own shape; stricter about types than the in-memory model."""

    id: CaseId = Field(min_length=1)
    query: Query
    context: RetrievedChunks
    response: OptionalText = None
    """Left out, null or empty for retrieval data (see the module)."""
    expected_answer: OptionalText = None
    expected_facts: Facts = None
    tags: list[str] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)

    def fields(self) -> CaseFields:
        context, refs = split_chunks(self.context)
        return CaseFields(
            id=self.id,
            query=self.query,
            context=context,
            response=self.response or "",
            expected_answer=self.expected_answer,
            expected_facts=as_chunks(self.expected_facts) if self.expected_facts else (),
            tags=tuple(self.tags),
            metadata=self.metadata,
            chunk_refs=refs,
            labels=labels_of(self.relevant_chunks, self.relevant_sources),
        )


class IdOptionalRecord(CaseRecord):
    """RagaliQ's shape where the id may be left out (a CSV file, the writer): it is derived."""

    id: OptionalCaseId = None  # type: ignore[assignment]


class _Foreign(_Labelled):
    """A shape of another tool: no id of its own, and fields of its own kept in metadata."""

    kept: ClassVar[tuple[str, ...]] = ()
    """The tool's fields that have no place in a case, kept in ``metadata`` under their names."""

    id: OptionalCaseId = None
    expected_facts: Facts = None
    tags: Tags = Field(default_factory=list)
    metadata: Metadata = Field(default_factory=dict)

    def _fields(
        self,
        *,
        query: str,
        context: Sequence[str | ChunkObject] | Sequence[str] | str,
        response: str | None,
        expected_answer: str | None,
        metadata: dict[str, Any] | None = None,
        chunk_refs: tuple[ChunkRef, ...] | None = None,
    ) -> CaseFields:
        kept = {
            name: value
            for name in self.kept
            if (value := getattr(self, name)) is not None and value is not False
        }
        texts, refs = split_chunks(context)
        return CaseFields(
            id=self.id,
            query=query,
            context=texts,
            response=response or "",
            expected_answer=expected_answer,
            expected_facts=as_chunks(self.expected_facts) if self.expected_facts else (),
            tags=tuple(self.tags),
            metadata={**(metadata or {}), **kept, **self.metadata},
            chunk_refs=refs if chunk_refs is None else chunk_refs,
            labels=labels_of(self.relevant_chunks, self.relevant_sources),
        )


class RagasRecord(_Foreign):
    """A RAGAS ``SingleTurnSample`` (RAGAS 0.2 and later)."""

    kept: ClassVar[tuple[str, ...]] = (
        "reference_contexts",
        "multi_responses",
        "rubrics",
        "persona_name",
        "query_style",
        "query_length",
        "synthesizer_name",
    )

    user_input: Query
    retrieved_contexts: RetrievedChunks
    response: OptionalText = None
    reference: OptionalText = None
    reference_contexts: Any = None
    retrieved_context_ids: list[ItemId] | None = None
    """The retrieved chunks' ids, one per chunk of ``retrieved_contexts``."""
    reference_context_ids: LabelMap = None
    """The ids of the chunks retrieval should find: ``relevant_chunks``."""
    multi_responses: Any = None
    rubrics: Any = None
    persona_name: Any = None
    query_style: Any = None
    query_length: Any = None
    synthesizer_name: Any = None

    def fields(self) -> CaseFields:
        fields = self._fields(
            query=self.user_input,
            context=self.retrieved_contexts,
            response=self.response,
            expected_answer=self.reference,
            chunk_refs=(
                tuple(ChunkRef(id=i) for i in self.retrieved_context_ids)
                if self.retrieved_context_ids
                else None
            ),
        )
        if self.reference_context_ids is not None:
            return dataclasses.replace(fields, labels=labels_of(self.reference_context_ids, None))
        return fields

    def problems(self) -> list[str]:
        problems = super().problems()
        chunks = self.retrieved_contexts
        count = 1 if isinstance(chunks, str) else len(chunks)
        ids = self.retrieved_context_ids
        if ids is not None and len(ids) != count:
            problems.append(
                f"retrieved_context_ids: {plural(len(ids), 'id')} for {count} "
                "retrieved_contexts; give one id per retrieved chunk, in the same order"
            )
        if ids and not isinstance(chunks, str) and any(isinstance(c, ChunkObject) for c in chunks):
            problems.append(
                "retrieved_context_ids: the chunks are objects as well; give their ids in one "
                "place, as each object's id or as retrieved_context_ids"
            )
        if self.reference_context_ids is not None and (
            self.relevant_chunks is not None or self.relevant_sources is not None
        ):
            problems.append(
                "reference_context_ids: names the relevant chunks as relevant_chunks does; keep one"
            )
        return problems


class RagasLegacyRecord(_Foreign):
    """A RAGAS row with the names RAGAS used before 0.2."""

    kept: ClassVar[tuple[str, ...]] = ("ground_truths",)

    question: Query
    contexts: RetrievedChunks
    answer: OptionalText = None
    ground_truth: OptionalText = None
    ground_truths: Any = None

    def fields(self) -> CaseFields:
        return self._fields(
            query=self.question,
            context=self.contexts,
            response=self.answer,
            expected_answer=self.ground_truth,
        )


def _deepeval(name: str) -> AliasChoices:
    """A DeepEval field's names: snake_case (``model_dump()``, ``save_as``) and camelCase."""
    head, *rest = name.split("_")
    return AliasChoices(name, head + "".join(word.title() for word in rest))


DEEPEVAL_SOURCE = re.compile(r"deepeval_source=(?P<source>.*?),deepeval_context=(?P<text>.*)", re.S)
"""The marker DeepEval's ``save_as`` writes for a retrieved chunk with a source."""


def _without_source_markers(chunks: list[str]) -> tuple[list[str], list[str | None]]:
    """The chunks' own text, and each chunk's source where DeepEval's marker named one."""
    texts: list[str] = []
    sources: list[str | None] = []
    for chunk in chunks:
        found = DEEPEVAL_SOURCE.fullmatch(chunk)
        texts.append(found.group("text") if found else chunk)
        sources.append(found.group("source") if found else None)
    return texts, sources


class DeepEvalRecord(_Foreign):
    """A DeepEval ``LLMTestCase`` or ``Golden`` with its output.

    As ``save_as`` writes it, or as ``model_dump()`` gives it (in camelCase with
    ``by_alias=True``), every field of DeepEval 4.3.1's dump read. ``retrieval_context`` given
    as one string is split at ``|``, as DeepEval joins it. DeepEval's ``context`` is the ideal
    context (what retrieval should have found), kept in ``metadata``.
    """

    kept: ClassVar[tuple[str, ...]] = (
        "context",
        "name",
        "comments",
        "source_file",
        "tools_called",
        "expected_tools",
        "custom_column_key_values",
        "token_cost",
        "completion_time",
        "multimodal",
        "mcp_servers",
        "mcp_tools_called",
        "mcp_resources_called",
        "mcp_prompts_called",
        "images_mapping",
        "input_token_count",
        "output_token_count",
        "flaky",
        "expectations",
        "expected_labels",
    )

    input: Query
    actual_output: OptionalText = Field(default=None, validation_alias=_deepeval("actual_output"))
    retrieval_context: RetrievedChunks = Field(validation_alias=_deepeval("retrieval_context"))
    expected_output: OptionalText = Field(
        default=None, validation_alias=_deepeval("expected_output")
    )
    additional_metadata: dict[str, Any] | None = Field(
        default=None, validation_alias=_deepeval("additional_metadata")
    )
    context: Any = None
    name: Any = None
    comments: Any = None
    source_file: Any = Field(default=None, validation_alias=_deepeval("source_file"))
    tools_called: Any = Field(default=None, validation_alias=_deepeval("tools_called"))
    expected_tools: Any = Field(default=None, validation_alias=_deepeval("expected_tools"))
    custom_column_key_values: Any = Field(
        default=None, validation_alias=_deepeval("custom_column_key_values")
    )
    token_cost: Any = Field(default=None, validation_alias=_deepeval("token_cost"))
    completion_time: Any = Field(default=None, validation_alias=_deepeval("completion_time"))
    multimodal: Any = None
    mcp_servers: Any = None
    mcp_tools_called: Any = Field(default=None, validation_alias=_deepeval("mcp_tools_called"))
    mcp_resources_called: Any = Field(
        default=None, validation_alias=_deepeval("mcp_resources_called")
    )
    mcp_prompts_called: Any = Field(default=None, validation_alias=_deepeval("mcp_prompts_called"))
    images_mapping: Any = Field(default=None, validation_alias=_deepeval("images_mapping"))
    input_token_count: Any = Field(default=None, validation_alias=_deepeval("input_token_count"))
    output_token_count: Any = Field(default=None, validation_alias=_deepeval("output_token_count"))
    flaky: Any = None
    expectations: Any = None
    expected_labels: Any = Field(default=None, validation_alias=_deepeval("expected_labels"))

    def fields(self) -> CaseFields:
        context = self.retrieval_context
        # DeepEval writes a list as one string joined with "|" in its JSONL and CSV files.
        texts, refs = split_chunks(context.split("|") if isinstance(context, str) else context)
        chunks, sources = _without_source_markers(list(texts))
        metadata = dict(self.additional_metadata or {})
        if any(sources):
            metadata["retrieval_context_sources"] = sources
        return self._fields(
            query=self.input,
            context=chunks,
            response=self.actual_output,
            expected_answer=self.expected_output,
            metadata=metadata,
            chunk_refs=refs,
        )

    @classmethod
    def explain(cls, field: str, item: dict[str, Any]) -> str:
        if field == "retrieval_context" and item.get("context") is not None:
            return (
                "; DeepEval's context is the ideal context (what retrieval should have found, "
                "kept in metadata), not what it found: write the chunks your retrieval returned "
                "as retrieval_context ([] when it found none)"
            )
        return ""


@dataclass(frozen=True)
class Shape:
    """One shape: its name, its model and how its fields map to RagaliQ's."""

    name: ShapeName
    label: str
    model: type[ShapeRecord]
    names: dict[str, str]
    """RagaliQ's field name → the name this shape gives it."""
    distinctive: frozenset[str]
    """Field names that point to this shape when a file's shape is detected."""

    def field_name(self, native: str) -> str:
        """The name this shape gives one of RagaliQ's fields."""
        return self.names.get(native, native)

    @property
    def mapping(self) -> str:
        """How the fields map, for a notice: ``user_input → query, ...``."""
        return ", ".join(
            f"{theirs} → {ours}" for ours, theirs in self.names.items() if theirs != ours
        )


_NATIVE_NAMES = {name: name for name in ("query", "context", "response", "expected_answer")}

NATIVE = Shape(
    "ragaliq",
    "RagaliQ",
    CaseRecord,
    _NATIVE_NAMES,
    frozenset({"query", "context", "expected_answer", "expected_facts"}),
)
NATIVE_ID_OPTIONAL = Shape(
    "ragaliq", "RagaliQ", IdOptionalRecord, _NATIVE_NAMES, NATIVE.distinctive
)
"""RagaliQ's shape with ids derived where left out: for CSV files and the dataset writer."""
SHAPES = (
    NATIVE,
    Shape(
        "ragas",
        "RAGAS",
        RagasRecord,
        {
            "query": "user_input",
            "context": "retrieved_contexts",
            "response": "response",
            "expected_answer": "reference",
        },
        frozenset({"user_input", "retrieved_contexts", "reference", "reference_contexts"}),
    ),
    Shape(
        "ragas",
        "RAGAS (names before 0.2)",
        RagasLegacyRecord,
        {
            "query": "question",
            "context": "contexts",
            "response": "answer",
            "expected_answer": "ground_truth",
        },
        frozenset({"question", "contexts", "answer", "ground_truth", "ground_truths"}),
    ),
    Shape(
        "deepeval",
        "DeepEval",
        DeepEvalRecord,
        {
            "query": "input",
            "context": "retrieval_context",
            "response": "actual_output",
            "expected_answer": "expected_output",
        },
        frozenset(
            {
                "input",
                "actual_output",
                "retrieval_context",
                "expected_output",
                "additional_metadata",
                "actualOutput",
                "retrievalContext",
                "expectedOutput",
                "additionalMetadata",
            }
        ),
    ),
)
"""Every shape; RAGAS has two, for its current and its earlier field names."""


def detect_shape(keys: Iterable[str], *, among: Iterable[Shape] = SHAPES) -> Shape:
    """The shape whose distinctive field names a record uses most; RagaliQ's on a tie."""
    present = set(keys)
    shapes = tuple(among)
    best = shapes[0]
    best_score = 0
    for shape in shapes:
        score = len(shape.distinctive & present)
        if score > best_score:
            best, best_score = shape, score
    return best


def shape_named(name: ShapeName) -> tuple[Shape, ...]:
    """The shapes of one ``dataset_format`` (RAGAS has two sets of names)."""
    return tuple(shape for shape in SHAPES if shape.name == name)

"""Writing a dataset from a RAG pipeline, one case at a time, checked as it is written.

The first step of a gate's workflow runs the team's pipeline over a fixed set of questions and
writes ``rag_outputs.jsonl``. :class:`DatasetWriter` is that step's pen::

    from ragaliq import DatasetWriter

    with DatasetWriter("rag_outputs.jsonl") as writer:
        for question in questions:
            chunks = retriever.search(question.text)
            answer = generator.answer(question.text, chunks)
            writer.add(id=question.id, query=question.text, context=chunks, response=answer)

Each case is validated by the same rules as the loader the moment it is added, so a bad case
stops the pipeline at the line that made it, not the gate minutes later. The file is replaced
atomically when the ``with`` block ends without an error; an error leaves the previous file as
it was.

Retrieval data, whose cases have no answer (judged only by context precision and recall, or by
the retrieval metrics), is written by a writer built with ``responses=False``; otherwise every
case needs its response. A chunk may be given with its id and its document's id, and a case with
what its retrieval should find, for the retrieval metrics::

    writer.add(
        id="reset-password",
        query="How do I reset my password?",
        context=[{"id": hit.id, "source": hit.doc_id, "text": hit.text} for hit in hits],
        relevant_sources=["help/account.md"],
    )

The baseline matches cases by id, so ids must be the same on every run. The writer refuses an id
that looks generated per run (a random or time-based UUID, a ULID, a timestamp), and one that
differs from the id the same query had in the file it replaces; leaving ``id`` out derives a
stable one from the query.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from contextlib import ExitStack
from pathlib import Path
from types import TracebackType
from typing import Any

from ragaliq._files import AtomicWriter, open_atomic
from ragaliq._ids import looks_generated, visible
from ragaliq._reading import describe_size
from ragaliq._validation import describe_value
from ragaliq.dataset.checker import RESPONSE_JUDGED_BY, CaseChecker
from ragaliq.dataset.fields import CaseFields
from ragaliq.dataset.formats import MAX_LINE_BYTES, MAX_STREAM_BYTES
from ragaliq.dataset.reader import DatasetReader
from ragaliq.dataset.shapes import NATIVE_ID_OPTIONAL
from ragaliq.errors import DatasetError

__all__ = ["DatasetWriter"]


class DatasetWriter:
    """Writes cases to a JSON Lines dataset as a pipeline produces them.

    Use it as a context manager (or call :meth:`close` yourself): the file appears, whole, when
    the block ends without an error.

    Args:
        path: The dataset to write, usually ``rag_outputs.jsonl``.
        check_ids: Refuse ids that look generated per run or that changed for a query since the
            file being replaced. Turn it off only when your ids are stored with your questions
            (say, random UUIDs kept in a database), so that they are stable after all.
        responses: Whether every case must have the pipeline's answer. ``False`` writes
            retrieval data, whose cases may have none: a suite that judges only context
            precision and recall (the config turns faithfulness, hallucination and relevance
            off) reads it.
    """

    def __init__(
        self, path: str | os.PathLike[str], *, check_ids: bool = True, responses: bool = True
    ) -> None:
        self.path = Path(path)
        self.check_ids = check_ids
        self.responses = responses
        self._checker = CaseChecker(
            str(self.path),
            (NATIVE_ID_OPTIONAL,),
            response_judged_by=RESPONSE_JUDGED_BY if responses else None,
            response_fix=(
                "write the pipeline's answer (an empty answer is never judged); for retrieval "
                "data without answers, build the writer with DatasetWriter(..., responses=False)"
            ),
        )
        self._file: ExitStack | None = None
        """The atomic write in progress (:func:`~ragaliq._files.open_atomic`), once opened."""
        self._out: AtomicWriter | None = None
        self._line = 0
        self._bytes = 0
        self._previous: dict[int, str | tuple[str, ...]] | None = None
        self._closed = False

    @property
    def count(self) -> int:
        """Cases written so far."""
        return self._line

    def __enter__(self) -> DatasetWriter:
        self._open()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abort()

    def add(
        self,
        *,
        query: str,
        context: Sequence[str | Mapping[str, Any]] | str,
        response: str = "",
        id: str | None = None,
        expected_answer: str | None = None,
        expected_facts: Sequence[str] | None = None,
        tags: Sequence[str] = (),
        metadata: Mapping[str, Any] | None = None,
        relevant_chunks: Sequence[str] | Mapping[str, int] | None = None,
        relevant_sources: Sequence[str] | Mapping[str, int] | None = None,
    ) -> str:
        """Check one case and write it; return its id.

        Args:
            query: The question asked.
            context: The retrieved chunks, in rank order (a string is one chunk; an empty list
                means retrieval found nothing). A chunk may be a mapping with its ``text``, its
                ``id`` and its ``source`` (the document it was cut from).
            response: The pipeline's answer; left out only by a writer of retrieval data
                (``responses=False``).
            id: A short name for the case, the same on every run; derived from the query when
                left out.
            expected_answer: A reference answer.
            expected_facts: Statements retrieval should have brought for a good answer.
            tags: Labels for filtering.
            metadata: Anything else to keep with the case (JSON values).
            relevant_chunks: The ids of the chunks retrieval should find, or a mapping from each
                id to its relevance (0 to 3), for the retrieval metrics.
            relevant_sources: The same by document id, matched against the chunks' ``source``
                (labels that survive a change of chunking); give one of the two.

        Raises:
            DatasetError: the case is invalid, its id is taken or looks unstable; the message is
                ``file:line: field: problem`` and nothing of the case is written.
        """
        if self._closed:
            raise DatasetError(f"{self.path}: the writer is closed; start a new DatasetWriter")
        self._open()
        line = self._line + 1
        where = f"{self.path}:{line}"
        if id is not None and not isinstance(id, str):
            raise DatasetError(
                f"{where}: id: must be a string (got {describe_value(id)}); pass str(...) if "
                "that value is the case's name"
            )
        record: dict[str, Any] = {
            "query": query,
            "context": (
                context
                if isinstance(context, str)
                else [c if isinstance(c, str) else dict(c) for c in context]
            ),
            "response": response,
            "tags": list(tags) if not isinstance(tags, str) else [tags],
            "metadata": dict(metadata or {}),
        }
        if id is not None:
            record["id"] = id
        if expected_answer is not None:
            record["expected_answer"] = expected_answer
        if expected_facts is not None:
            record["expected_facts"] = (
                expected_facts if isinstance(expected_facts, str) else list(expected_facts)
            )
        for name, labels in (
            ("relevant_chunks", relevant_chunks),
            ("relevant_sources", relevant_sources),
        ):
            if labels is not None:
                record[name] = (
                    labels
                    if isinstance(labels, str)
                    else dict(labels)
                    if isinstance(labels, Mapping)
                    else list(labels)
                )
        if id is not None and self.check_ids:
            self._check_stable(id, query, where)
        fields, case_id = self._checked(line, record)
        self._write(_line_of(fields, case_id), where)
        self._line = line
        return case_id

    def close(self) -> None:
        """Finish the file and put it in place (atomically).

        Raises:
            DatasetError: no case was added (the previous file is left as it was).
            OutputError: the file could not be written.
        """
        if self._closed:
            return
        self._open()
        if self._line == 0:
            self.abort()
            raise DatasetError(
                f"{self.path}: no case was added, so nothing was written; add at least one case"
            )
        written, self._file = self._file, None
        self._closed = True
        assert written is not None
        written.close()  # in place now, or OutputError with nothing left behind

    def abort(self) -> None:
        """Throw away what was written; the previous file, if any, is left as it was."""
        written, self._file = self._file, None
        self._closed = True
        if written is not None:
            written.__exit__(_Abandoned, _Abandoned(), None)

    # --- inside --------------------------------------------------------------------------------

    def _open(self) -> None:
        if self._file is not None:
            return
        if self.check_ids:
            self._previous = _previous_ids(self.path)
        written = ExitStack()
        self._out = written.enter_context(open_atomic(self.path))
        self._file = written

    def _checked(self, line: int, item: dict[str, Any]) -> tuple[CaseFields, str]:
        try:
            json.dumps(item["metadata"])
        except (TypeError, ValueError) as exc:
            raise DatasetError(
                f"{self.path}:{line}: metadata: holds a value JSON cannot hold ({exc}); convert "
                "it to text, a number, a list or a mapping"
            ) from exc
        return self._checker.check_one(line, item)

    def _check_stable(self, case_id: str, query: str, where: str) -> None:
        kind = looks_generated(case_id)
        if kind is not None:
            raise DatasetError(
                f"{where}: id: {visible(case_id)} looks generated per run ({kind}); the baseline "
                "matches cases by id, so give the case a name that stays the same, or leave id "
                "out to derive one from the query (pass check_ids=False if these ids are stored "
                "with your questions)"
            )
        if not self._previous or not isinstance(query, str):
            return
        before = self._previous.get(hash(query))
        earlier = (before,) if isinstance(before, str) else before or ()
        if earlier and case_id not in earlier:
            raise DatasetError(
                f"{where}: id: {visible(case_id)} is new for this query, which had the id "
                f"{visible(earlier[0])} in the {self.path.name} this run replaces; ids must stay "
                "the same from run to run, or the baseline loses the case (if you renamed it on "
                "purpose, delete the old file first)"
            )

    def _write(self, text: str, where: str) -> None:
        size = len(text.encode("utf-8"))
        if size > MAX_LINE_BYTES:
            raise DatasetError(
                f"{where}: the case is {describe_size(size)} as a line, over the limit of "
                f"{describe_size(MAX_LINE_BYTES)}; keep less in its metadata"
            )
        if self._bytes + size > MAX_STREAM_BYTES:
            raise DatasetError(
                f"{where}: the dataset would pass the limit of {describe_size(MAX_STREAM_BYTES)}; "
                "judge a smaller suite"
            )
        assert self._out is not None
        self._out.write(text)
        self._bytes += size


def _line_of(fields: CaseFields, case_id: str) -> str:
    context: list[Any] = list(fields.context)
    if fields.chunk_refs:
        context = [
            {"text": text, **ref.model_dump(exclude_none=True)}
            for text, ref in zip(fields.context, fields.chunk_refs, strict=True)
        ]
    record: dict[str, Any] = {
        "id": case_id,
        "query": fields.query,
        "context": context,
        "response": fields.response,
    }
    if fields.labels is not None:
        record[fields.labels.field] = fields.labels.grades
    if fields.expected_answer is not None:
        record["expected_answer"] = fields.expected_answer
    if fields.expected_facts:
        record["expected_facts"] = list(fields.expected_facts)
    if fields.tags:
        record["tags"] = list(fields.tags)
    if fields.metadata:
        record["metadata"] = fields.metadata
    return json.dumps(record, ensure_ascii=False) + "\n"


def _previous_ids(path: Path) -> dict[int, str | tuple[str, ...]] | None:
    """The ids of the dataset about to be replaced, by query; None when there is none to read."""
    if not path.is_file():
        return None
    ids: dict[int, str | tuple[str, ...]] = {}
    try:
        for _, case in DatasetReader(path):
            key = hash(case.query)
            before = ids.get(key)
            if before is None:
                ids[key] = case.id
            else:
                ids[key] = (*((before,) if isinstance(before, str) else before), case.id)
    except DatasetError:
        return None  # an unreadable old file is simply replaced
    return ids


class _Abandoned(Exception):
    """Thrown into the atomic write to throw it away."""

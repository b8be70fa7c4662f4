"""Which calls ask a case's questions, and the text of each call.

Questions are asked by what they read, not one by one: those that read the context go in one
call, the context first (its own block, so the prompt cache serves it to every later call of the
case), and those that read only the query and the response go in another. A call of several
questions composes them: the system prompt holds the composing note and each question's
sections (a section two questions share once), the user's turn each block they read once and
each question's ask, and the reply is one object with a member per question, each member that
question's own reply model. A call of one question is that question alone, as
``judge.one_question_per_call`` asks every question.

A question over items (claims, needed facts) takes ``judge.claims_per_call`` of them a call: the
first call of its group carries the first of them with the other questions, and later calls carry
the rest alone, one after another so that each reads the context its predecessor cached.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, create_model

from ragaliq.evaluators.questions import Part, Questions
from ragaliq.judges.prompts import Prompts, as_data
from ragaliq.judges.questions import WORDINGS, Shown, Wording
from ragaliq.models import TestCase

__all__ = [
    "COMPOSED_TOOL",
    "Call",
    "asked_text",
    "context_text",
    "plan_calls",
    "reply_model",
    "system_text",
    "text_block",
    "tool_name",
]

COMPOSED_TOOL = "record_answers"
"""The one tool a composed reply is asked for as, with ``structured_output: tool``."""
_SHOWN_PARTS: tuple[Part, ...] = ("query", "response", "claims", "facts")
"""The blocks after the context, in the order a call shows them."""


@dataclass(frozen=True, kw_only=True)
class Call:
    """One request: the questions it asks, each with what it shows them."""

    asked: tuple[tuple[Wording[Any, Any], Shown], ...]

    @property
    def wordings(self) -> tuple[Wording[Any, Any], ...]:
        return tuple(wording for wording, _ in self.asked)

    @property
    def case(self) -> TestCase:
        return self.asked[0][1].case

    @property
    def reads_context(self) -> bool:
        return any(w.question.reads_context for w in self.wordings)

    def only(self, names: set[str]) -> Call:
        """The same call asking only the questions named."""
        return Call(asked=tuple((w, s) for w, s in self.asked if w.question.name in names))


def plan_calls(
    questions: Questions,
    case: TestCase,
    claims: Sequence[str] = (),
    *,
    per_call: int,
    together: bool = True,
) -> list[list[Call]]:
    """The calls that ask ``questions`` about ``case``, in groups.

    Each group's calls go one after another (the first caches the context the others read);
    the groups go at once. ``together`` groups the questions by whether they read the context;
    otherwise each question is a group of its own.
    """
    groups: dict[Any, list[Wording[Any, Any]]] = {}
    for question in questions:
        key = question.reads_context if together else question.name
        groups.setdefault(key, []).append(WORDINGS[question.name])
    return [_calls(group, case, claims, per_call) for group in groups.values()]


def _calls(
    group: list[Wording[Any, Any]], case: TestCase, claims: Sequence[str], per_call: int
) -> list[Call]:
    slices: list[list[tuple[str, ...]]] = []
    for wording in group:
        items = wording.question.items(case, claims)
        if wording.join is None or not items:
            slices.append([items])
        else:
            slices.append([items[i : i + per_call] for i in range(0, len(items), per_call)])
    count = max(len(s) for s in slices)
    return [
        Call(
            asked=tuple(
                (wording, Shown(case=case, items=parts[i]))
                for wording, parts in zip(group, slices, strict=True)
                if i < len(parts)
            )
        )
        for i in range(count)
    ]


def text_block(text: str) -> dict[str, Any]:
    """One text block of a message."""
    return {"type": "text", "text": text}


def system_text(prompts: Prompts, wordings: Sequence[Wording[Any, Any]], case: TestCase) -> str:
    """The system prompt of a call about ``case``: the judge's own, then each question's."""
    if len(wordings) == 1:
        own = wordings[0].sections(case)
        return "\n\n".join([prompts.system, *(prompts.sections[f] for f in own)])
    names = ", ".join(f'"{w.question.name}"' for w in wordings)
    parts = [prompts.system, prompts.compose.replace("{tasks}", names)]
    shown: set[str] = set()
    for wording in wordings:
        own = wording.sections(case)
        sections = [prompts.sections[f] for f in own if f not in shown]
        shown.update(own)
        parts.append("\n\n".join([f'## Task "{wording.question.name}"', *sections]))
    return "\n\n".join(parts)


def context_text(case: TestCase) -> str:
    """The case's context, chunk by chunk, each numbered from 1 and framed as data."""
    chunks = "\n".join(
        f'<chunk id="{i + 1}">{as_data(chunk)}</chunk>' for i, chunk in enumerate(case.context)
    )
    return f"<context>\n{chunks}\n</context>"


def asked_text(call: Call) -> str:
    """The block after the context: what the questions read, framed as data, then their asks."""
    framed = [_framed(part, shown) for part in _SHOWN_PARTS for shown in _reading(call, part)[:1]]
    if len(call.asked) == 1:
        ask = call.wordings[0].ask
    else:
        ask = "Answer every task, each in its member:\n" + "\n".join(
            f'- "{w.question.name}": {w.ask}' for w in call.wordings
        )
    return "\n".join(framed) + "\n\n" + ask


def _reading(call: Call, part: Part) -> list[Shown]:
    return [shown for wording, shown in call.asked if part in wording.question.reads]


def _framed(part: Part, shown: Shown) -> str:
    if part in ("claims", "facts"):
        listing = "\n".join(f"{i}. {as_data(item)}" for i, item in enumerate(shown.items))
        return f"<{part}>\n{listing}\n</{part}>"
    text = shown.case.query if part == "query" else shown.case.response
    return f"<{part}>{as_data(text)}</{part}>"


@functools.cache
def reply_model(wordings: tuple[Wording[Any, Any], ...]) -> type[BaseModel]:
    """The model a call's reply must validate against: one question's own, or one member each."""
    if len(wordings) == 1:
        return wordings[0].reply
    fields: dict[str, Any] = {
        w.question.name: (w.reply, Field(description=f"The answer of the task {w.question.name}."))
        for w in wordings
    }
    model: type[BaseModel] = create_model(
        "Answers", __config__=ConfigDict(extra="forbid"), **fields
    )
    return model


def tool_name(wordings: Sequence[Wording[Any, Any]]) -> str:
    """The tool a call's reply is asked for as, with ``structured_output: tool``."""
    return wordings[0].tool if len(wordings) == 1 else COMPOSED_TOOL

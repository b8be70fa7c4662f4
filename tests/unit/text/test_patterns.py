"""The patterns run on a response or a context cannot backtrack badly on any text.

Every compiled pattern of the text readers and the offline judge is parsed, and two shapes are
refused: a repeat nested in a repeat over the same characters (``(\\w+\\s?)*``), and two repeats
over the same characters side by side with nothing required between them (``\\s+(?:of)?\\s*``),
unless the first never gives back what it took (a possessive ``*+``, ``++``). A run of spaces,
letters or digits of any length is then read a bounded number of times at each start.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
import re._constants as sre
import re._parser as sre_parse
from collections.abc import Iterator

import pytest

import ragaliq.offline
import ragaliq.text

SAMPLE = " \n\tazAZ09-,.;:'\"&%$/_#()\u2019\u2013\u00b0|*"
"""Characters standing for every class the patterns name."""

REPEATS = (sre.MAX_REPEAT, sre.MIN_REPEAT)
LOOKAROUNDS = (sre.ASSERT, sre.ASSERT_NOT)


def _patterns() -> Iterator[tuple[str, re.Pattern[str]]]:
    modules = [
        importlib.import_module(f"{package.__name__}.{info.name}")
        for package in (ragaliq.text, ragaliq.offline)
        for info in pkgutil.iter_modules(package.__path__)
    ]
    modules.append(importlib.import_module("ragaliq.judges.cascade"))
    for module in modules:
        for name, value in vars(module).items():
            if isinstance(value, re.Pattern) and isinstance(value.pattern, str):
                yield f"{module.__name__}.{name}", value


def _matches(item: tuple[object, object], char: str, ignore_case: bool) -> bool:
    """Whether one single-character item matches ``char``."""
    op, arg = item
    chars = {char, char.lower(), char.upper()} if ignore_case else {char}
    if op is sre.ANY:
        return char != "\n"
    if op is sre.LITERAL:
        return any(ord(c) == arg for c in chars)
    if op is sre.NOT_LITERAL:
        return all(ord(c) != arg for c in chars)
    if op is sre.IN:
        negate = False
        hit = False
        for sub_op, sub_arg in arg:  # type: ignore[attr-defined]
            if sub_op is sre.NEGATE:
                negate = True
            elif sub_op is sre.RANGE:
                hit |= any(sub_arg[0] <= ord(c) <= sub_arg[1] for c in chars)
            elif sub_op is sre.CATEGORY:
                hit |= bool(re.fullmatch(_CATEGORIES[sub_arg], char))
            else:
                hit |= _matches((sub_op, sub_arg), char, ignore_case)
        return hit != negate
    return True  # anything else: assume the worst


_CATEGORIES = {
    sre.CATEGORY_DIGIT: r"\d",
    sre.CATEGORY_NOT_DIGIT: r"\D",
    sre.CATEGORY_SPACE: r"\s",
    sre.CATEGORY_NOT_SPACE: r"\S",
    sre.CATEGORY_WORD: r"\w",
    sre.CATEGORY_NOT_WORD: r"\W",
}


def _chars(items: list[tuple[object, object]], ignore_case: bool) -> set[str]:
    """The sample characters a sequence of items can start with (or hold, for a repeat)."""
    found: set[str] = set()
    for op, arg in items:
        if op in LOOKAROUNDS or op is sre.AT:
            continue
        if op is sre.SUBPATTERN:
            inner = _chars(list(arg[3]), ignore_case)  # type: ignore[index]
        elif op is sre.BRANCH:
            inner = set().union(*(_chars(list(b), ignore_case) for b in arg[1]))  # type: ignore[index]
        elif op in (*REPEATS, sre.POSSESSIVE_REPEAT):
            inner = _chars(list(arg[2]), ignore_case)  # type: ignore[index]
        else:
            inner = {c for c in SAMPLE if _matches((op, arg), c, ignore_case)}
        found |= inner
        if not _nullable(op, arg):
            break
    return found


def _nullable(op: object, arg: object) -> bool:
    if op in LOOKAROUNDS or op is sre.AT:
        return True
    if op in (*REPEATS, sre.POSSESSIVE_REPEAT):
        return arg[0] == 0  # type: ignore[index]
    if op is sre.SUBPATTERN:
        return all(_nullable(o, a) for o, a in arg[3])  # type: ignore[index]
    if op is sre.BRANCH:
        return any(all(_nullable(o, a) for o, a in b) for b in arg[1])  # type: ignore[index]
    return False


def _unbounded(op: object, arg: object) -> bool:
    return op in REPEATS and arg[1] == sre.MAXREPEAT  # type: ignore[index]


def _one_char(items: list[tuple[object, object]]) -> bool:
    """Whether a repeat's body reads one character a round (``\\s``, ``[^,]``, ``(?:a|b)``)."""
    width = 0
    for op, arg in items:
        if op in LOOKAROUNDS:
            continue
        if op is sre.SUBPATTERN:
            if not _one_char(list(arg[3])):  # type: ignore[index]
                return False
        elif op is sre.BRANCH:
            if not all(_one_char(list(b)) for b in arg[1]):  # type: ignore[index]
                return False
        elif op not in (sre.ANY, sre.LITERAL, sre.NOT_LITERAL, sre.IN):
            return False
        width += 1
    return width == 1


class _Checker:
    """The shapes that can backtrack badly in one pattern."""

    def __init__(self, pattern: re.Pattern[str]) -> None:
        self.ignore_case = bool(pattern.flags & re.IGNORECASE)
        self.found: list[str] = []

    def chars(self, items: list[tuple[object, object]]) -> set[str]:
        return _chars(items, self.ignore_case)

    def inside(self, items: list[tuple[object, object]], tail: list[tuple[object, object]]) -> None:
        """Repeats in the body of a repeat: none may hand its characters to what follows it,
        the next round of the body included (``tail``)."""
        for k, (op, arg) in enumerate(items):
            after = items[k + 1 :] + tail
            if _unbounded(op, arg) and self.chars(list(arg[2])) & self.chars(after):  # type: ignore[index]
                self.found.append("a repeat nested in a repeat over the same characters")
            for body, rest in _bodies(op, arg):
                self.inside(body, (body if rest is None else []) + after)

    def beside(self, items: list[tuple[object, object]], k: int) -> None:
        """A one-character repeat at ``items[k]`` followed by another over the same characters,
        with nothing required between them."""
        _, arg = items[k]
        body = list(arg[2])  # type: ignore[index]
        if not _one_char(body):
            return
        held = self.chars(body)
        for later_op, later_arg in items[k + 1 :]:
            if (
                later_op in REPEATS
                and later_arg[1] == sre.MAXREPEAT  # type: ignore[index]
                and _one_char(list(later_arg[2]))  # type: ignore[index]
                and self.chars(list(later_arg[2])) & held  # type: ignore[index]
            ):
                self.found.append("two repeats over the same characters side by side")
            if not _nullable(later_op, later_arg):
                break

    def walk(self, items: list[tuple[object, object]]) -> None:
        for k, (op, arg) in enumerate(items):
            if _unbounded(op, arg):
                body = list(arg[2])  # type: ignore[index]
                self.inside(body, body)
                self.beside(items, k)
            for inner, _ in _bodies(op, arg, lookarounds=True):
                self.walk(inner)


def _bodies(
    op: object, arg: object, *, lookarounds: bool = False
) -> list[tuple[list[tuple[object, object]], object]]:
    """The item sequences inside one item, each with None when it is a repeat's body."""
    if op is sre.SUBPATTERN:
        return [(list(arg[3]), "group")]  # type: ignore[index]
    if op is sre.BRANCH:
        return [(list(branch), "branch") for branch in arg[1]]  # type: ignore[index]
    if op in (*REPEATS, sre.POSSESSIVE_REPEAT):
        return [(list(arg[2]), None)]  # type: ignore[index]
    if lookarounds and op in LOOKAROUNDS:
        return [(list(arg[1]), "lookaround")]  # type: ignore[index]
    return []


def problems(pattern: re.Pattern[str]) -> list[str]:
    """The shapes in ``pattern`` that can backtrack badly, described."""
    checker = _Checker(pattern)
    checker.walk(list(sre_parse.parse(pattern.pattern, pattern.flags)))
    return checker.found


PATTERNS = dict(_patterns())


def test_the_check_finds_the_shapes_it_refuses():
    assert problems(re.compile(r"(\w+\s?)*$"))
    assert problems(re.compile(r"\s+(?:of|the)?\s*[A-Z]"))
    assert not problems(re.compile(r"\s++(?:of|the)?\s*[A-Z]"))
    assert not problems(re.compile(r"(?:\s++[A-Z][\w'-]*)*"))
    assert len(PATTERNS) > 50


@pytest.mark.parametrize("name", sorted(PATTERNS))
def test_no_pattern_backtracks_badly(name: str):
    assert problems(PATTERNS[name]) == [], PATTERNS[name].pattern

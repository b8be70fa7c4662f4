"""YAML as the config and datasets use it: safe, bounded, and a key given twice is an error.

PyYAML keeps the last of two equal keys without a word, so a pasted second ``threshold:`` would
silently win; here it is reported at its line instead. Beyond the safe loader, three more guards:

- **Aliases are bounded.** An alias (``*name``) repeats its anchor's whole subtree, so nine
  levels of ten aliases (the "billion laughs") describe 10⁹ values in a few hundred bytes. The
  parsed document shares the repeated parts, but anything that walks it (validation, a JSON dump)
  expands them; so a document whose aliases add more than :data:`MAX_ALIAS_VALUES` values, or that
  refers to itself, is refused at the alias that goes past the limit.
- **Nesting is bounded** at :data:`MAX_DEPTH` levels (aliases included), well above any config or
  case and well below where Python's recursion would fail.
- **Only JSON's kinds of value.** A date such as ``2024-05-01`` stays the text written: YAML 1.1
  reads it as a date object, which no field takes and which JSON cannot hold (JSON files and YAML
  files then read the same). ``!!binary`` and ``!!set`` values are refused with their line.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import yaml
from yaml.composer import ComposerError
from yaml.constructor import ConstructorError
from yaml.error import Mark
from yaml.events import AliasEvent
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

__all__ = ["MAX_ALIAS_VALUES", "MAX_DEPTH", "YamlDocument", "load_yaml", "load_yaml_node"]

MAX_DEPTH = 50
"""Levels of nesting a YAML document may have, counting what its aliases bring in."""
MAX_ALIAS_VALUES = 100_000
"""Values (scalars, lists and mappings) that all of a document's aliases may add together."""

_TIMESTAMP = "tag:yaml.org,2002:timestamp"


class _Loader(yaml.SafeLoader):
    """The safe loader, without dates, with a depth limit and a record of every alias."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0
        self.aliases: list[tuple[Mark, Node]] = []
        self.item_lines: dict[tuple[int, int], int] = {}
        """(id of a sequence node, index) → the line its item starts on."""

    def _next_mark(self) -> Mark:
        event: Any = self.peek_event()  # type: ignore[no-untyped-call]  # untyped in the stubs
        mark: Mark = event.start_mark
        return mark

    def compose_node(self, parent: Node | None, index: Any) -> Node | None:
        if isinstance(parent, SequenceNode):
            # An alias item is its anchor's node, so its own line is kept here.
            self.item_lines[(id(parent), index)] = self._next_mark().line + 1
        if self.check_event(AliasEvent):
            mark = self._next_mark()
            node = super().compose_node(parent, index)
            if node is not None:
                self.aliases.append((mark, node))
            return node
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                raise ComposerError(
                    None,
                    None,
                    f"nested too deeply to read (more than {MAX_DEPTH} levels)",
                    self._next_mark(),
                )
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def construct_mapping(self, node: MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue  # `<<: *defaults`: merged keys may be overridden, as YAML intends
            key = self.construct_object(key_node, deep=deep)
            try:
                duplicate = key in seen
            except TypeError:  # an unhashable key; the base class reports it
                break
            if duplicate:
                raise ConstructorError(
                    "while reading a mapping",
                    node.start_mark,
                    f"the key {key!r} is given twice; keep one",
                    key_node.start_mark,
                )
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


# YAML 1.1's implicit dates are left out, so `2024-05-01` is read as the text it is.
_Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != _TIMESTAMP]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def _as_written(loader: _Loader, node: ScalarNode) -> str:
    return str(loader.construct_scalar(node))


def _refuse(kind: str, fix: str) -> Any:
    def construct(loader: _Loader, node: Node) -> Any:
        raise ConstructorError(
            None, None, f"a {kind} value cannot be read here; {fix}", node.start_mark
        )

    return construct


_Loader.add_constructor(_TIMESTAMP, _as_written)
_Loader.add_constructor(
    "tag:yaml.org,2002:binary", _refuse("!!binary", "write the value as text instead")
)
_Loader.add_constructor("tag:yaml.org,2002:set", _refuse("!!set", "write a list instead"))


def _check_aliases(loader: _Loader, root: Node) -> None:
    """Refuse aliases that make the document too large or too deep once expanded, or circular."""
    if not loader.aliases:
        return
    sizes: dict[int, int] = {}
    heights: dict[int, int] = {}
    active: set[int] = set()
    first_alias = loader.aliases[0][0]

    def measure(node: Node, depth: int) -> None:
        # The depth of a path through the shared nodes is a depth of the expanded document.
        key = id(node)
        if key in sizes:
            return
        if key in active:
            raise ComposerError(
                None, None, "an alias refers to a value that contains it", node.start_mark
            )
        if depth > MAX_DEPTH:
            raise ComposerError(
                None,
                None,
                f"nested too deeply to read (more than {MAX_DEPTH} levels once aliases are "
                "expanded)",
                first_alias,
            )
        active.add(key)
        children: list[Node] = []
        if isinstance(node, SequenceNode):
            children = list(node.value)
        elif isinstance(node, MappingNode):
            children = [part for pair in node.value for part in pair]
        for child in children:
            measure(child, depth + 1)
        active.discard(key)
        sizes[key] = 1 + sum(sizes[id(child)] for child in children)
        heights[key] = 1 + max((heights[id(child)] for child in children), default=0)

    measure(root, 1)
    if heights[id(root)] > MAX_DEPTH:
        raise ComposerError(
            None,
            None,
            f"nested too deeply to read (more than {MAX_DEPTH} levels once aliases are expanded)",
            first_alias,
        )
    added = 0
    for mark, node in loader.aliases:
        added += sizes[id(node)]
        if added > MAX_ALIAS_VALUES:
            raise ComposerError(
                None,
                None,
                f"aliases (*name) repeat more than {MAX_ALIAS_VALUES:,} values in all; write the "
                "values out, or use fewer aliases",
                mark,
            )


@dataclass(frozen=True)
class YamlDocument:
    """A parsed YAML document, with what is needed to name the line of a list's items."""

    data: Any
    node: Node | None
    item_lines: dict[tuple[int, int], int]

    def lines_of(self, sequence: SequenceNode) -> list[int]:
        """The line each item of ``sequence`` starts on (an alias's own line, not its anchor's)."""
        return [
            self.item_lines.get((id(sequence), i), child.start_mark.line + 1)
            for i, child in enumerate(sequence.value)
        ]


def load_yaml_node(text: str) -> YamlDocument:
    """Parse one YAML document safely; return its data and its node tree (for line numbers).

    Raises:
        yaml.YAMLError: with ``problem`` and ``problem_mark`` (the line) set: invalid syntax, a
            key given twice, an alias past the limits, a ``!!binary`` or ``!!set`` value.
        RecursionError: never in practice (nesting is limited first), but callers keep their
            handler for it.
    """
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return YamlDocument(None, None, {})
        _check_aliases(loader, node)
        return YamlDocument(loader.construct_document(node), node, loader.item_lines)
    finally:
        loader.dispose()


def load_yaml(text: str) -> Any:
    """Parse YAML safely, refusing a mapping that repeats a key and the excesses above.

    Raises:
        yaml.YAMLError: with ``problem`` and ``problem_mark`` (the line) set.
    """
    return load_yaml_node(text).data

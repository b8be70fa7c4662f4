"""YAML as the config and datasets use it: safe, and a key given twice is an error.

PyYAML keeps the last of two equal keys without a word, so a pasted second ``threshold:`` would
silently win; here it is reported at its line instead.
"""

from __future__ import annotations

from typing import Any

import yaml

__all__ = ["load_yaml"]


class _UniqueKeyLoader(yaml.SafeLoader):
    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
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
                raise yaml.constructor.ConstructorError(
                    "while reading a mapping",
                    node.start_mark,
                    f"the key {key!r} is given twice; keep one",
                    key_node.start_mark,
                )
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def load_yaml(text: str) -> Any:
    """Parse YAML safely, refusing a mapping that repeats a key.

    Raises:
        yaml.YAMLError: with ``problem`` and ``problem_mark`` (the line) set.
    """
    return yaml.load(text, Loader=_UniqueKeyLoader)

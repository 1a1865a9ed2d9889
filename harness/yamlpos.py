"""YAML loading that remembers where every value came from.

Validation errors must point at ``file:line``; PyYAML's composed node tree has
the marks, so values are built from it directly, and duplicate keys (which
``safe_load`` silently merges) are reported instead of dropped.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import yaml

Path_ = tuple[Any, ...]


class YamlError(Exception):
    def __init__(self, line: int, message: str) -> None:
        super().__init__(message)
        self.line = line
        self.message = message


@dataclass
class Located:
    """A plain Python value plus the 1-based line of every path inside it."""

    value: Any
    lines: dict[Path_, int] = field(default_factory=dict)

    def line(self, path: Path_) -> int:
        """Line of ``path``, or of its nearest ancestor that has one."""
        while path and path not in self.lines:
            path = path[:-1]
        return self.lines.get(path, 1)


def _build(node: yaml.Node, path: Path_, lines: dict[Path_, int]) -> Any:
    lines.setdefault(path, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        out: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode):
                raise YamlError(key_node.start_mark.line + 1, "mapping keys must be plain scalars")
            key = yaml.safe_load(yaml.serialize(key_node))
            if key in out:
                raise YamlError(key_node.start_mark.line + 1, f"duplicate key {key!r}")
            lines[path + (key,)] = key_node.start_mark.line + 1
            out[key] = _build(value_node, path + (key,), lines)
        return out
    if isinstance(node, yaml.SequenceNode):
        return [_build(item, path + (i,), lines) for i, item in enumerate(node.value)]
    return yaml.safe_load(yaml.serialize(node))


def load(text: str) -> Located:
    """Parse YAML text; raises :class:`YamlError` with a line for any problem."""
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else 1
        context = ""
        if exc.context and exc.context_mark is not None:
            context = f"{exc.context} started on line {exc.context_mark.line + 1}: "
        raise YamlError(line, f"invalid YAML: {context}{exc.problem or exc}") from None
    except yaml.YAMLError as exc:
        raise YamlError(1, f"invalid YAML: {exc}") from None
    if node is None:
        return Located(None, {(): 1})
    lines: dict[Path_, int] = {}
    return Located(_build(node, (), lines), lines)

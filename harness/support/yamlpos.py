"""YAML loading that remembers where every value came from.

Validation errors must point at ``file:line``; PyYAML's composed node tree has
the marks, so values are built from it directly, and duplicate keys (which
``safe_load`` silently merges) are reported instead of dropped.
"""

from __future__ import annotations

import re
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


#: limits that keep a hostile matrix from exhausting the reader: nesting depth, values built (alias bombs), size
MAX_DEPTH = 64
MAX_VALUES = 200_000
MAX_BYTES = 4 << 20
_MERGE = "tag:yaml.org,2002:merge"
#: controls (C0 but tab and newline, DEL, C1), the bidirectional overrides and isolates, lone surrogates: a name
#: holding one would drive a terminal or display as something other than what it is
_BAD_CHARS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_PLAIN_TAGS = {
    f"tag:yaml.org,2002:{t}" for t in ("str", "int", "float", "bool", "null", "map", "seq", "merge", "timestamp")
}


#: libyaml's parser where PyYAML was built with it (about 10x faster, the same nodes and marks: a 50,000-shape
#: matrix reads in seconds), else PyYAML's own
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Builder:
    """Builds plain values from composed nodes with PyYAML's safe constructor, keeping every value's line."""

    def __init__(self, lines: dict[Path_, int]) -> None:
        self.lines = lines
        self.count = 0
        self.constructor = yaml.constructor.SafeConstructor()

    def build(self, node: yaml.Node, path: Path_, depth: int = 0) -> Any:
        line = node.start_mark.line + 1
        self.count += 1
        if self.count > MAX_VALUES:
            raise YamlError(line, f"the document expands to more than {MAX_VALUES} values (aliases?)")
        if depth > MAX_DEPTH:
            raise YamlError(line, f"values nested deeper than {MAX_DEPTH} levels")
        if str(node.tag) not in _PLAIN_TAGS:
            raise YamlError(line, f"unsupported YAML tag {node.tag!r}: a matrix holds plain values only")
        self.lines.setdefault(path, line)
        if isinstance(node, yaml.MappingNode):
            return self._mapping(node, path, depth)
        if isinstance(node, yaml.SequenceNode):
            return [self.build(item, path + (i,), depth + 1) for i, item in enumerate(node.value)]
        try:
            value = self.constructor.construct_object(node, deep=True)
        except yaml.YAMLError as exc:
            raise YamlError(line, f"invalid value: {getattr(exc, 'problem', None) or exc}") from None
        except ValueError as exc:  # an integer over Python's digit limit, a date out of range
            raise YamlError(line, f"invalid value: {str(exc).split(';')[0]}") from None
        if isinstance(value, str) and _BAD_CHARS.search(value):
            bad = _BAD_CHARS.search(value).group()  # type: ignore[union-attr]
            raise YamlError(
                line,
                f"a string holds the character U+{ord(bad):04X} (a control character, a bidirectional "
                "override or a lone surrogate): names and values must be printable text",
            )
        return value

    def _mapping(self, node: yaml.MappingNode, path: Path_, depth: int) -> dict[Any, Any]:
        out: dict[Any, Any] = {}
        merged: list[dict[Any, Any]] = []
        for key_node, value_node in node.value:
            key_line = key_node.start_mark.line + 1
            if key_node.tag == _MERGE:  # YAML merge keys: ``<<: *base`` or ``<<: [*a, *b]``
                sources = value_node.value if isinstance(value_node, yaml.SequenceNode) else [value_node]
                for source in sources:
                    if not isinstance(source, yaml.MappingNode):
                        raise YamlError(key_line, "a merge key (<<) must name a mapping or a list of mappings")
                    merged.append(self.build(source, path, depth + 1))
                continue
            if not isinstance(key_node, yaml.ScalarNode):
                raise YamlError(key_line, "mapping keys must be plain scalars")
            key = self.build(key_node, path + ("<key>",), depth + 1)
            if isinstance(key, (list, dict)) or key is None:
                raise YamlError(key_line, "mapping keys must be plain scalars")
            if key in out:
                raise YamlError(key_line, f"duplicate key {key!r}")
            self.lines[path + (key,)] = key_line
            out[key] = self.build(value_node, path + (key,), depth + 1)
        for source in merged:  # explicit keys win over merged ones, earlier merges over later ones
            for key, value in source.items():
                out.setdefault(key, value)
        return out


def decode(data: bytes) -> str:
    """Matrix bytes as text: UTF-8 only (a BOM is allowed); anything else is a clear error, not a traceback."""
    if len(data) > MAX_BYTES:
        raise YamlError(1, f"matrix file is {len(data)} bytes, more than the {MAX_BYTES} a matrix may have")
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise YamlError(1, "the file is UTF-16 text: save the matrix as UTF-8")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise YamlError(line, f"not UTF-8 text: byte 0x{data[exc.start]:02x} at offset {exc.start}") from None
    if "\x00" in text:
        raise YamlError(text[: text.index("\x00")].count("\n") + 1, "the file holds a NUL byte: not a text file")
    return text


def load(text: str) -> Located:
    """Parse YAML text; raises :class:`YamlError` with a line for any problem."""
    if len(text) > MAX_BYTES:
        raise YamlError(1, f"matrix text is longer than {MAX_BYTES} characters")
    try:
        node = yaml.compose(text, Loader=_LOADER)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else 1
        context = ""
        if exc.context and exc.context_mark is not None:
            context = f"{exc.context} started on line {exc.context_mark.line + 1}: "
        raise YamlError(line, f"invalid YAML: {context}{exc.problem or exc}") from None
    except yaml.reader.ReaderError as exc:  # a character YAML itself refuses: one line, not PyYAML's two
        line = text[: max(int(exc.position), 0)].count("\n") + 1
        code = exc.character if isinstance(exc.character, int) else ord(str(exc.character)[:1] or "?")
        raise YamlError(
            line, f"invalid YAML: the character U+{code:04X} (a control character) is not allowed"
        ) from None
    except yaml.YAMLError as exc:
        raise YamlError(1, f"invalid YAML: {' '.join(str(exc).split())}") from None
    except RecursionError:
        raise YamlError(1, "invalid YAML: nested too deeply to read") from None
    if node is None:
        return Located(None, {(): 1})
    lines: dict[Path_, int] = {}
    return Located(_Builder(lines).build(node, ()), lines)

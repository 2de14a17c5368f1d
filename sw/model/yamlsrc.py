"""YAML with line numbers, and the one error type of the model front end.

PyYAML's safe constructors lose the position of every value; the front end
needs it to say *where* a rule is broken.  ``load`` composes the node graph
and converts it itself: mappings become :class:`YMap` (a dict that remembers
the line of each key and value), sequences :class:`YList`, scalars plain
Python values (built by PyYAML's safe constructor, so ``True``, ``0x10`` and
``~`` mean what YAML says).  Duplicate keys, which PyYAML silently merges, are
errors here.
"""

import yaml

MAX_DEPTH = 64


class ModelError(Exception):
    """A broken rule of the model: ``file:line: where: message``."""

    def __init__(self, message, file=None, line=None):
        self.message = message
        self.file = file
        self.line = line
        super().__init__(str(self))

    def __str__(self):
        loc = ":".join(str(p) for p in (self.file, self.line) if p is not None)
        return f"{loc}: {self.message}" if loc else self.message


class YMap(dict):
    line = None
    key_lines = None        # key -> line of the key


class YList(list):
    line = None
    lines = None            # index -> line of the item


def _line(node):
    return node.start_mark.line + 1


def load(text, file=None):
    """Parse YAML text into YMap/YList/scalars; any YAML problem is a
    ModelError with the line PyYAML reports."""
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None) or getattr(e, "context_mark", None)
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        raise ModelError(f"YAML syntax error: {problem}", file, mark.line + 1 if mark else None) from None
    if node is None:
        raise ModelError("empty YAML document: expected a mapping with 'tens_trans_seq'", file, 1)
    constructor = yaml.SafeLoader("")
    return _convert(node, constructor, file, 0, set())


def _convert(node, constructor, file, depth, active):
    if depth > MAX_DEPTH or id(node) in active:
        raise ModelError("YAML nesting too deep (or a recursive alias)", file, _line(node))
    if isinstance(node, yaml.ScalarNode):
        try:
            return constructor.construct_object(node)
        except (yaml.YAMLError, ValueError, OverflowError) as e:
            raise ModelError(f"bad YAML value {node.value!r}: {e}", file, _line(node)) from None
    active = active | {id(node)}
    if isinstance(node, yaml.SequenceNode):
        out = YList(_convert(n, constructor, file, depth + 1, active) for n in node.value)
        out.line = _line(node)
        out.lines = [_line(n) for n in node.value]
        return out
    if isinstance(node, yaml.MappingNode):
        out = YMap()
        out.line = _line(node)
        out.key_lines = {}
        for knode, vnode in node.value:
            if not isinstance(knode, yaml.ScalarNode):
                raise ModelError("mapping keys must be plain names", file, _line(knode))
            key = _convert(knode, constructor, file, depth + 1, active)
            if not isinstance(key, str):
                raise ModelError(f"mapping key {key!r} is not a name", file, _line(knode))
            if key in out:
                raise ModelError(f"duplicate key '{key}' (first on line {out.key_lines[key]})", file, _line(knode))
            out[key] = _convert(vnode, constructor, file, depth + 1, active)
            out.key_lines[key] = _line(knode)
        return out
    raise ModelError(f"unsupported YAML node {type(node).__name__}", file, _line(node))

"""YAML with line numbers, and the one error type of the model front end.

PyYAML's safe constructors lose the position of every value; the front end
needs it to say *where* a rule is broken.  ``load`` composes the node graph
and converts it itself: mappings become :class:`YMap` (a dict that remembers
the line of each key and value), sequences :class:`YList`, scalars plain
Python values (built by PyYAML's safe constructor, so ``True``, ``0x10`` and
``~`` mean what YAML says).  Duplicate keys, which PyYAML silently merges, are
errors here.

Before any node is built, one pass over PyYAML's event stream (which is not
recursive) checks the nesting depth and the number of nodes the document has
once its aliases are expanded, so a 500-deep list or an alias bomb is an error
at its line rather than a crash or minutes of work.
"""

import yaml

MAX_DEPTH = 64
MAX_NODES = 200_000         # nodes after alias expansion: far above any model, far below an alias bomb
TAG_EXPECTS = {"int": "an integer", "float": "a number", "bool": "true or false", "null": "nothing or ~",
               "timestamp": "a date (2024-01-31)", "binary": "base64 text", "str": "text"}


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
        _check_size(text, file)
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None) or getattr(e, "context_mark", None)
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        if mark is not None:
            line = mark.line + 1
        elif isinstance(e, yaml.reader.ReaderError):
            line = text.count("\n", 0, e.position) + 1 if isinstance(text, str) else None
            problem = f"character {e.character!r} is not allowed in YAML ({e.reason})"
        else:
            line = None
        raise ModelError(f"YAML syntax error: {problem}", file, line) from None
    if node is None:
        raise ModelError("empty YAML document: expected a mapping with 'tens_trans_seq'", file, 1)
    constructor = yaml.SafeLoader("")
    return _convert(node, constructor, file, 0, set())


def _check_size(text, file):
    """Depth and alias-expanded node count from the event stream, before composing."""
    sizes = {}                  # anchor -> (nodes, depth) of its node
    stack = []                  # open collections: [nodes so far, deepest child, anchor]
    for ev in yaml.parse(text, Loader=yaml.SafeLoader):
        if isinstance(ev, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
            if len(stack) >= MAX_DEPTH:
                raise ModelError(f"YAML nested deeper than {MAX_DEPTH} levels", file, ev.start_mark.line + 1)
            stack.append([1, 0, ev.anchor])
            continue
        if isinstance(ev, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
            nodes, deep, anchor = stack.pop()
            size = (nodes, deep + 1)
        elif isinstance(ev, yaml.ScalarEvent):
            size, anchor = (1, 0), ev.anchor
        elif isinstance(ev, yaml.AliasEvent):
            size, anchor = sizes.get(ev.anchor, (1, 0)), None
        else:
            continue
        if anchor is not None:
            sizes[anchor] = size
        if stack:
            top = stack[-1]
            top[0] += size[0]
            top[1] = max(top[1], size[1])
            if top[0] > MAX_NODES:
                raise ModelError(f"YAML document too large: more than {MAX_NODES} values once its aliases "
                                 "(*name) are expanded", file, ev.start_mark.line + 1)
            if len(stack) + size[1] > MAX_DEPTH:
                raise ModelError(f"YAML nested deeper than {MAX_DEPTH} levels (through the alias "
                                 f"*{ev.anchor})", file, ev.start_mark.line + 1)


def _convert(node, constructor, file, depth, active, key=None):
    if depth > MAX_DEPTH or id(node) in active:
        raise ModelError("YAML nesting too deep (or a recursive alias)", file, _line(node))
    if isinstance(node, yaml.ScalarNode):
        try:
            return constructor.construct_object(node)
        except (yaml.YAMLError, ValueError, OverflowError, ArithmeticError, LookupError, AttributeError,
                TypeError) as e:
            # PyYAML's constructors fail on an explicit tag with a value not of its type
            # ('seed: !!float' is an empty string tagged float): IndexError, KeyError, ...
            tag = node.tag.rsplit(":", 1)[-1]
            where = f"field '{key}': " if key is not None else ""
            expected = TAG_EXPECTS.get(tag, "a value of that type, or no tag")
            raise ModelError(f"{where}bad YAML value {node.value!r} for the tag !!{tag}; expected {expected}",
                             file, _line(node)) from None
    active = active | {id(node)}
    if isinstance(node, yaml.SequenceNode):
        out = YList(_convert(n, constructor, file, depth + 1, active, key) for n in node.value)
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
            out[key] = _convert(vnode, constructor, file, depth + 1, active, key)
            out.key_lines[key] = _line(knode)
        return out
    raise ModelError(f"unsupported YAML node {type(node).__name__}", file, _line(node))

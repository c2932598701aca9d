"""Record checks compiled for one line layout: the comparison's fastest path.

Most differing lines of a recording differ only in the digits of their
numbers: a step of a noisy rerun holds the same fields, keys, strings and
kinds of numbers as the golden's. Such lines have the same *skeleton* (the
line with its digits taken out), and every record of one skeleton has the same
structure. :func:`compile_check` turns one parsed record into straight-line
Python that compares two records of its skeleton field by field, with the
tolerance of each field written in as a constant: no walk of the structure,
no lookups in the tolerance tree, no calls per value.

A compiled check answers True (the records match), False (they differ) or
None when the two records do not have the layout it was compiled for after
all (a key that differs only in its digits, ``[7]`` against ``[]``); the
caller then compares them the general way.

The checks are a second copy of the float rule of
:mod:`gym_goldens.comparison.floats`, kept for speed behind one seam,
:func:`check_for`, which also keeps the checks of a tolerance tree on its
root; ``tests/comparison/test_compiled.py`` holds the copies together and
``benchmarks/run.py`` measures what they buy.

Example:
    >>> from gym_goldens.comparison.tolerance import Tolerance
    >>> root = Tolerance.build(rtol={"obs": 1e-3}).tree()
    >>> check = compile_check({"obs": [1.0, 2.0], "t": 3}, root)
    >>> check({"obs": [1.0, 2.0], "t": 3}, {"obs": [1.0005, 2.0], "t": 3})
    True
    >>> check({"obs": [1.0, 2.0], "t": 3}, {"obs": [1.1, 2.0], "t": 3})
    False
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, Final

from gym_goldens.comparison.tolerance import ToleranceNode

__all__ = [
    "SKELETON_DROPPED",
    "SKELETON_KINDS",
    "Check",
    "check_for",
    "compile_check",
    "skeleton",
]

Check = Callable[[Any, Any], "bool | None"]

SKELETON_DROPPED: Final = b"0123456789+-"
# Skeletons: digits and signs out, "e" as "." (every float has one of them,
# no int has either), so that the values of one field share a skeleton.
SKELETON_KINDS: Final = bytes.maketrans(b"eE", b"..")
"""With :data:`SKELETON_DROPPED`, the tables of :func:`skeleton`, for a loop that writes it out."""
_KEY_KINDS: Final = str.maketrans("eE", "..", "0123456789+-")

_MAX_VALUES: Final = 2000
# Whole floats this large may have been integers in the file (see _maybe_int).
_INT_LIMIT: Final = 2.0**63
_MAX_CACHED: Final = 512
# Longer arrays of floats, or of ints, are compared in a loop or at once.
_UNROLLED: Final = 16


class _Source:
    """The lines of a compiled check, and the constants they refer to."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.constants: dict[str, Any] = {}
        self.values = 0
        self.names = 0

    def name(self) -> str:
        self.names += 1
        return f"v{self.names}"

    def constant(self, value: Any) -> str:
        name = f"c{len(self.constants)}"
        self.constants[name] = value
        return name

    def literal(self, value: float) -> str:
        """A float written in: its repr where that reads back as it (finite), else a constant."""
        number = float(value)
        return repr(number) if math.isfinite(number) else self.constant(number)


def skeleton(line: bytes) -> bytes:
    """The layout of a record line: the line without its digits and signs, ``e`` as ``.``.

    Two lines of one skeleton hold values of the same types wherever both
    have one: the same structure, keys and strings (but for digits, signs and
    ``e``/``.``), literals and, in the same places, numbers of the same kind
    (an int has no ``.`` or ``e``, a float always has one). Two lines that
    differ only in their numbers, the common case, share one. What the
    skeleton blurs, the checks compare: a length (``[7]`` against ``[]``),
    and keys (``{"k1":1.0,"k2":1}`` against ``{"k2":1.0,"k1":1}``, or
    ``{"k1":5.0,"k1":5.0}``, which reads as one key).

    Example:
        >>> skeleton(b'{"obs":[1.5,-2e-05],"t":3}')
        b'{"obs":[.,.],"t":}'
    """
    return line.translate(SKELETON_KINDS, SKELETON_DROPPED)


def check_for(skeleton: bytes, template: dict[str, Any], root: ToleranceNode) -> Check | None:
    """The compiled check of the records of one skeleton, kept on the tolerance tree.

    Args:
        skeleton: The layout of the lines (a line without its digits and signs).
        template: A record of that layout, parsed, without tags.
        root: The root of the comparison's tolerance tree, which keeps the checks.

    Returns:
        The check, or None when the records of this layout are compared by
        the walk (:func:`~gym_goldens.comparison.walk.values_match`): records
        too large, and a template that names a
        key twice (its skeleton names more keys than it holds).
    """
    cache = root.cache
    if cache is None:
        cache = root.cache = {}
    if skeleton in cache:
        return cache[skeleton]  # type: ignore[return-value]
    # A template that names a key twice reads as fewer keys than its skeleton
    # names: {"k1":5.0,"k1":5.0} would check k1 alone on {"k1":5.0,"k2":5.0}.
    check = None
    if skeleton.count(b'":') == _keys(template):
        check = compile_check(template, root)
    if len(cache) >= _MAX_CACHED:
        cache.clear()
    cache[skeleton] = check
    return check


def _keys(value: Any) -> int:
    """The number of keys of the dicts in a parsed value, all together."""
    if type(value) is dict:
        return len(value) + sum(map(_keys, value.values()))
    if type(value) is list:
        return sum(map(_keys, value))
    return 0


def compile_check(template: dict[str, Any], root: ToleranceNode) -> Check | None:
    """A check of two records laid out as ``template``, or None when there is none.

    Args:
        template: A parsed record without tags (plain JSON values only).
        root: The tolerance tree of the comparison.

    Returns:
        ``check(golden, actual)``: True when they match within tolerance,
        False when they differ, None when they are not laid out as
        ``template``. None instead of a check for records too large to be
        worth it.
    """
    source = _Source()
    if not _emit(source, "g", "a", template, root, depth=1):
        return None
    body = "\n".join(f"        {line}" for line in source.lines)
    code = (
        "def check(g, a):\n"
        "    try:\n"
        f"{body or '        pass'}\n"
        "    except (KeyError, IndexError, TypeError, ValueError):\n"
        "        return None\n"
        "    return True\n"
    )
    namespace = dict(source.constants)
    # Generated from the record's layout alone: keys are written with repr().
    exec(compile(code, "<gym_goldens compiled check>", "exec"), namespace)
    check: Check = namespace["check"]
    return check


def _emit(
    source: _Source, golden: str, actual: str, value: Any, node: ToleranceNode, *, depth: int
) -> bool:
    """Add the statements that compare ``golden`` with ``actual`` (expressions)."""
    if node.ignored:
        return True
    if depth > 32:
        return False
    kind = type(value)
    lines = source.lines
    if (kind is float or kind is int or kind is dict) and not golden.isidentifier():
        # A subscript: looked up once, used several times.
        g, a = source.name(), source.name()
        lines.append(f"{g} = {golden}")
        lines.append(f"{a} = {actual}")
        golden, actual = g, a
    if kind is float:
        source.values += 1
        _emit_float(source, golden, actual, node, indent="", typed=_maybe_int(value))
    elif kind is int:
        source.values += 1
        # An integer past 64 bits is read as a float: the walk decides then.
        lines.append(f"if type({golden}) is not int or type({actual}) is not int:")
        lines.append("    return None")
        lines.append(f"if {golden} != {actual}:")
        lines.append("    return False")
    elif kind is str or kind is bool or value is None:
        source.values += 1
        lines.append(f"if {golden} != {actual}:")
        lines.append("    return False")
    elif kind is list:
        return _emit_list(source, golden, actual, value, node, depth=depth)
    elif kind is dict:
        if len({key.translate(_KEY_KINDS) for key in value}) < len(value):
            # Keys that differ only in digits may come in another order, with
            # other types: {"k1":1.0,"k2":1} against {"k2":1.0,"k1":1}.
            order = source.constant(list(value))
            lines.append(f"if list({golden}) != {order} or list({actual}) != {order}:")
            lines.append("    return None")
        if any(node.child(key).ignored for key in value):
            # Every key of the template is looked up in both records, which
            # name as many keys (and none twice, see check_for): so they have
            # the same keys, unless one is ignored and not looked up. Then
            # the key sets are compared.
            keys = source.constant(value.keys() | set())
            lines.append(f"if {golden}.keys() != {keys} or {actual}.keys() != {keys}:")
            lines.append("    return None")
        for key, item in value.items():
            child = node.child(key)
            if not _emit(
                source, f"{golden}[{key!r}]", f"{actual}[{key!r}]", item, child, depth=depth + 1
            ):
                return False
    else:
        return False
    return source.values <= _MAX_VALUES


def _emit_list(
    source: _Source, golden: str, actual: str, value: list[Any], node: ToleranceNode, *, depth: int
) -> bool:
    """:func:`_emit` for a list."""
    lines = source.lines
    if not value:
        # "[7]" and "[]" have the same skeleton.
        lines.append(f"if {golden} or {actual}:")
        lines.append("    return None")
        return True
    if node.leaf and len(value) > _UNROLLED and all(type(item) is float for item in value):
        # A long array of floats with one tolerance: a loop, not thousands
        # of lines that take longer to compile than to run.
        source.values += 1
        g, a, x, y = (source.name() for _ in range(4))
        lines.append(f"{g} = {golden}")
        lines.append(f"{a} = {actual}")
        lines.append(f"if len({g}) != {len(value)} or len({a}) != {len(value)}:")
        lines.append("    return None")
        lines.append(f"for {x}, {y} in zip({g}, {a}):")
        typed = any(map(_maybe_int, value))
        _emit_float(source, x, y, node, indent="    ", typed=typed)
        return source.values <= _MAX_VALUES
    if node.leaf and len(value) > _UNROLLED and all(type(item) is int for item in value):
        # Ints match exactly: one comparison of the lists (none of whose items
        # is ignored), which hold ints only in lines of this skeleton.
        source.values += 1
        lines.append(f"if len({golden}) != {len(value)} or len({actual}) != {len(value)}:")
        lines.append("    return None")
        lines.append(f"if {golden} != {actual}:")
        # Unless an item is an integer past 64 bits, read as a float: the walk decides then.
        lines.append(f"    if float in map(type, {golden}) or float in map(type, {actual}):")
        lines.append("        return None")
        lines.append("    return False")
        return source.values <= _MAX_VALUES
    # Unpacking checks the length (ValueError) and binds every item once.
    gs = [source.name() for _ in value]
    as_ = [source.name() for _ in value]
    lines.append(f"{', '.join(gs)}, = {golden}")
    lines.append(f"{', '.join(as_)}, = {actual}")
    for index, (item, g, a) in enumerate(zip(value, gs, as_, strict=True)):
        if not _emit(source, g, a, item, node.child(index), depth=depth + 1):
            return False
    return source.values <= _MAX_VALUES


def _emit_float(
    source: _Source, golden: str, actual: str, node: ToleranceNode, *, indent: str, typed: bool
) -> None:
    """Add the statements that compare two floats, held by the names ``golden`` and ``actual``.

    With ``typed``, two values that differ are floats, else the walk decides.
    """
    # floats_match, written out for finite values: untagged JSON holds no NaN
    # and no infinity (orjson refuses 1e400), and between two finite values
    # the rule is the difference within atol + rtol * |golden|. The absolute
    # values are taken by a conditional, which is exact and spares two calls
    # of abs(), and the tolerances are written in as literals where finite.
    g, a = golden, actual
    limit = (
        f"{source.literal(node.atol)} + {source.literal(node.rtol)} * ({g} if {g} >= 0.0 else -{g})"
    )
    source.lines.append(f"{indent}if {g} != {a}:")
    if typed:
        source.lines += [
            f"{indent}    if type({g}) is not float or type({a}) is not float:",
            f"{indent}        return None",
        ]
    source.lines += [
        f"{indent}    if not ({g} - {a} if {g} > {a} else {a} - {g}) <= {limit}:",
        f"{indent}        return False",
    ]


def _maybe_int(value: float) -> bool:
    """Whether a float of the template may stand where other lines hold ints.

    orjson reads an integer past 64 bits as a float, so the lines of its
    skeleton hold integers there, which may be ints: such a float is large
    and whole.
    """
    return value.is_integer() and abs(value) >= _INT_LIMIT

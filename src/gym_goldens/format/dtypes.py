"""The numpy types of recorded values: the ``dtypes`` field of a record.

JSON writes ``float32(0.5)``, ``float64(0.5)`` and ``int8(3)``/``int64(3)``
alike, so values alone cannot show that an env started returning float64
observations. Records therefore carry a ``dtypes`` field that mirrors the
record's structure down to its numpy values and gives each one's type::

    "dtypes": {"action": "int64", "obs": "float32[4]"}
    "dtypes": {"obs": {"image": "uint8[64,64,3]", "position": "float32[2]"}}
    "dtypes": {"obs": ["int64", null, "int8[2]"]}

A leaf is ``<dtype>[<shape>]`` for an array (``"float32[]"`` for a 0-d array)
and ``<dtype>`` for a numpy scalar. Python values have no entry: their JSON
already shows whether they are ints, floats, bools or strings. In a list,
items without numpy values are ``null``.

To keep lines short the field is sparse: a reset record always carries it,
and a step record only when the types differ from the previous step of the
episode (so, in practice, on the first step). It is compared like any other
field, so a change of dtype or shape is reported as such.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

import numpy as np

__all__ = ["describe_change", "needs_careful_path", "parse_leaf", "signature", "to_json"]

_PLAIN: Final = frozenset({float, int, bool, str, type(None), bytes})
_LEAF: Final = re.compile(r"^([A-Za-z0-9_<>|]+)(?:\[([0-9,]*)\])?$")
_MAX_LEAF_TEXTS: Final = 4096
_LEAF_TEXT: dict[tuple[Any, Any], str] = {}


def signature(value: Any) -> Any:
    """The numpy types inside ``value``, as a structure that compares cheaply.

    Arrays give ``(dtype, shape)``, numpy scalars ``(dtype, None)``, mappings
    a dict of their typed items, lists and tuples a list; None when there is
    no numpy value inside.
    """
    # The recorder calls this on every step: the common types come first.
    kind = type(value)
    if kind is np.ndarray:
        return (value.dtype, value.shape)
    if kind in _PLAIN:
        return None
    if kind is dict:
        if not value:
            return None
        typed = {}
        for key, item in value.items():
            found = signature(item)
            if found is not None:
                typed[key] = found
        return typed or None
    if isinstance(value, np.generic):
        return (value.dtype, None)
    if isinstance(value, Mapping):
        return signature(dict(value))
    if isinstance(value, tuple) and hasattr(kind, "_fields"):
        return signature(dict(zip(kind._fields, value, strict=True)))
    if isinstance(value, (list, tuple)):
        items = [signature(item) for item in value]
        return items if any(item is not None for item in items) else None
    return None


def needs_careful_path(found: Any) -> bool:
    """Whether a :func:`signature` holds what orjson must not write itself.

    A ``datetime64`` (an array of them, or one): orjson writes them cut to
    microseconds, and NaT as a date. A value of the other byte order
    (``>f8`` on a little-endian machine): orjson refuses it (3.10.0 read its
    bytes as native ones, wrong numbers without an error). The recorder writes
    such records by the careful path, which keeps their values (see the codec).
    """
    if isinstance(found, tuple):
        return bool(found[0].kind == "M" or not found[0].isnative)
    if isinstance(found, dict):
        return any(map(needs_careful_path, found.values()))
    if isinstance(found, list):
        return any(map(needs_careful_path, found))
    return False


def to_json(found: Any) -> Any:
    """A :func:`signature` as written in a file: leaves become strings."""
    if isinstance(found, tuple):
        text = _LEAF_TEXT.get(found)
        if text is None:
            # str(dtype) costs microseconds: each leaf is worked out once.
            dtype, shape = found
            text = str(dtype) if shape is None else f"{dtype}[{','.join(map(str, shape))}]"
            if len(_LEAF_TEXT) < _MAX_LEAF_TEXTS:
                _LEAF_TEXT[found] = text
        return text
    if isinstance(found, dict):
        return {key: to_json(item) for key, item in found.items()}
    if isinstance(found, list):
        return [to_json(item) for item in found]
    return found


def parse_leaf(text: str) -> tuple[str, tuple[int, ...] | None]:
    """Split a leaf into dtype and shape (None for a numpy scalar).

    Example:
        >>> parse_leaf("uint8[210,160,3]")
        ('uint8', (210, 160, 3))
        >>> parse_leaf("float64")
        ('float64', None)
    """
    match = _LEAF.match(text)
    if match is None:
        return text, None
    dtype, shape = match.groups()
    if shape is None:
        return dtype, None
    return dtype, tuple(int(n) for n in shape.split(",") if n)


def describe_change(golden: Any, actual: Any) -> str:
    """Words for a change of the ``dtypes`` entry of one field.

    Example:
        >>> describe_change("float32[4]", "float64[4]")
        'dtype changed float32 -> float64'
        >>> describe_change("float32[4]", "float32[5]")
        'shape changed (4,) -> (5,)'
    """
    if not isinstance(golden, str) or not isinstance(actual, str):
        return f"numpy type changed: golden {_leaf_words(golden)}, actual {_leaf_words(actual)}"
    golden_dtype, golden_shape = parse_leaf(golden)
    actual_dtype, actual_shape = parse_leaf(actual)
    changes = []
    if golden_dtype != actual_dtype:
        changes.append(f"dtype changed {golden_dtype} -> {actual_dtype}")
    if golden_shape != actual_shape:
        if golden_shape is None or actual_shape is None:
            kinds = [
                "scalar" if s is None else f"array of shape {s}"
                for s in (golden_shape, actual_shape)
            ]
            changes.append(f"numpy {kinds[0]} became a numpy {kinds[1]}")
        else:
            changes.append(f"shape changed {golden_shape} -> {actual_shape}")
    return ", ".join(changes) or f"{golden} -> {actual}"


def _leaf_words(value: Any) -> str:
    if value is None:
        return "a Python value (no numpy type)"
    if isinstance(value, str):
        return value
    return "a structure of numpy values"

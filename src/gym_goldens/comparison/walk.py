"""The walk of two parsed records: do they match within tolerance?

:func:`values_match` walks a golden and an actual value together with the
tolerance tree (:class:`~gym_goldens.comparison.tolerance.ToleranceNode`):
ignored fields are passed over, floats are held to the float rule of
:mod:`gym_goldens.comparison.floats`, and everything else must be equal and of
the same type (``0`` against ``0.0``, ``1`` against ``True`` differ). An
array stored as a summary on one side matches the full array on the other
when the summary is that of the array.

When the two values are known to hold the same types wherever both have a
value (``same_types=True``, which the comparison knows from the lines'
skeletons), ``==`` is a sound shortcut for lists: equal arrays are passed
over in C, and only what differs is walked. Not for dicts: lines of one
skeleton may hold keys that differ only in digits in another order, or a key
twice, so their keys are walked.
"""

from __future__ import annotations

from typing import Any

from gym_goldens.comparison.arrays import summary_matches
from gym_goldens.comparison.floats import floats_match
from gym_goldens.comparison.tolerance import ToleranceNode

__all__ = ["values_match"]


def values_match(
    golden: Any, actual: Any, node: ToleranceNode, *, same_types: bool = False
) -> bool:
    """Whether two parsed values match under the tolerance tree ``node``.

    Args:
        golden: The golden value (a parsed record, or a part of one).
        actual: The actual value.
        node: The tolerance node of where the values sit.
        same_types: Whether the values are known to have the same types
            wherever both have one; then ``==`` decides what it can.
    """
    if node.ignored:
        return True
    kind = type(golden)
    # Lists only: Python's == takes 1 for 1.0, and dicts of one skeleton may
    # hold their keys in another order (k1 and k2 swapped) or one of them twice.
    if same_types and kind is list and golden == actual:
        return True
    if kind is not type(actual):
        return summary_matches(golden, actual)
    if kind is float:
        return floats_match(golden, actual, node.rtol, node.atol)
    if kind is list:
        if len(golden) != len(actual):
            return False
        child = node.child
        return all(
            values_match(g, a, child(i), same_types=same_types)
            for i, (g, a) in enumerate(zip(golden, actual, strict=True))
        )
    if kind is dict:
        if node.leaf:
            if golden.keys() != actual.keys():
                return False
            return all(
                values_match(value, actual[key], node, same_types=same_types)
                for key, value in golden.items()
            )
        for key in golden.keys() | actual.keys():
            child_node = node.child(key)
            if child_node.ignored:
                continue
            if key not in golden or key not in actual:
                return False
            if not values_match(golden[key], actual[key], child_node, same_types=same_types):
                return False
        return True
    return bool(golden == actual)

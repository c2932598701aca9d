"""Which fields of two records differ, and how: the one explanation, by DeepDiff.

The comparison (:mod:`gym_goldens.comparison.engine`) finds the records that
differ with its own fast checks; the first differing record of an episode,
and a header that differs, are explained here, when a report asks. That is
DeepDiff's job: it walks both values, however nested (a header's spaces and
env spec, an info dict of dicts), and reports changed values, changed types
and added or removed keys by path, while :class:`ToleranceOperator` applies
the comparison's tolerance tree (``rtol``/``atol`` per field, ignored fields,
the float rule of :mod:`gym_goldens.comparison.floats`) and reports lists whose
length changed as one difference. DeepDiff is imported here only, so only a
mismatch pays for it.

Example:
    >>> from gym_goldens.comparison.tolerance import Tolerance
    >>> root = Tolerance.build(rtol={"obs": 1e-3}).tree()
    >>> golden = {"obs": [1.0, 2.0], "reward": 1.0, "info": {"x": 1}}
    >>> actual = {"obs": [1.0001, 2.5], "reward": 1.5, "info": {}}
    >>> [(d.field, d.kind) for d in explain(golden, actual, root)]
    [('obs[1]', 'value'), ('reward', 'value'), ('info.x', 'missing')]
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import numpy as np

from gym_goldens.comparison.arrays import numeric_pair, summary_matches
from gym_goldens.comparison.floats import arrays_match, floats_match
from gym_goldens.comparison.result import Difference
from gym_goldens.comparison.tolerance import Tolerance, ToleranceNode
from gym_goldens.format.header import INFORMATIONAL_FIELDS

__all__ = ["MAX_DIFFERENCES", "ToleranceOperator", "explain", "header_differences"]

MAX_DIFFERENCES: Final = 20
"""At most this many differences are listed for one record."""

_LENGTH: Final = "gym_goldens_length"
# Lists at least this long under one tolerance are compared as numpy arrays,
# element by element: DeepDiff would visit every element of an image.
_ARRAY_LENGTH: Final = 16
_EXACT: Final = Tolerance(rtol=0.0, atol=0.0)
_NOT_COMPARED: Final = INFORMATIONAL_FIELDS | {"event", "format", "version"}
_KINDS: Final = {
    "values_changed": "value",
    "type_changes": "type",
    "dictionary_item_removed": "missing",
    "dictionary_item_added": "extra",
    _LENGTH: "length",
}


class ToleranceOperator:
    """A DeepDiff operator that compares values as the comparison does.

    It is consulted at every level DeepDiff visits. Ignored fields and floats
    within tolerance end the comparison there; floats out of tolerance,
    unequal leaves (ints, strings, array summaries, tags) and lists of another
    length are reported here; dicts and lists of the same length are left to
    DeepDiff to walk, and so are changes of type.

    A long list of numbers under one tolerance (an observation, an image
    kept in full) is compared here at once, as numpy arrays under the same
    float rule; its differing elements are kept in :attr:`array_differences`.

    Args:
        root: The root of the tolerance tree (``Tolerance.tree()``).
        arrays: Whether long lists of numbers are compared as arrays.
        limit: At most this many differing elements are kept per array.
    """

    def __init__(
        self, root: ToleranceNode, *, arrays: bool = True, limit: int = MAX_DIFFERENCES
    ) -> None:
        self.root = root
        self.arrays = arrays
        self.limit = limit
        self.array_differences: list[Difference] = []

    def match(self, level: Any) -> bool:
        """Every level DeepDiff visits is this operator's (DeepDiff's operator protocol)."""
        return True

    def give_up_diffing(self, level: Any, diff_instance: Any) -> bool:
        """Compare the values of ``level``; True when DeepDiff need not look inside them."""
        node = self.node(level.path(output_format="list"))
        if node.ignored:
            return True
        golden, actual = level.t1, level.t2
        kind = type(golden)
        if kind is not type(actual):
            # An array summarised on one side may be the full array on the other.
            return summary_matches(golden, actual)
        if kind is dict:
            return False
        if kind is list:
            if len(golden) != len(actual):
                diff_instance.custom_report_result(_LENGTH, level)
                return True
            if self.arrays and node.leaf and len(golden) >= _ARRAY_LENGTH:
                return self._compare_arrays(golden, actual, level, node)
            return False
        if kind is float:
            matches = floats_match(golden, actual, node.rtol, node.atol)
        else:
            matches = bool(golden == actual)
        if not matches:
            diff_instance.custom_report_result("values_changed", level)
        return True

    def _compare_arrays(
        self, golden: list[Any], actual: list[Any], level: Any, node: ToleranceNode
    ) -> bool:
        """Compare two lists of numbers as arrays; False to leave them to DeepDiff."""
        pair = numeric_pair(golden, actual)
        if pair is None:
            return False
        golden_array, actual_array = pair
        is_float = golden_array.dtype.kind == "f"
        if is_float:
            far = ~arrays_match(golden_array, actual_array, node.rtol, node.atol)
        else:
            far = golden_array != actual_array
        path = tuple(level.path(output_format="list"))
        for index in np.argwhere(far)[: self.limit]:
            at = tuple(int(i) for i in index)
            golden_value, actual_value = golden_array[at].item(), actual_array[at].item()
            tolerance = (node.rtol, node.atol) if is_float else (None, None)
            self.array_differences.append(
                Difference((*path, *at), "value", golden_value, actual_value, *tolerance)
            )
        return True

    def node(self, path: list[Any]) -> ToleranceNode:
        """The tolerance node of a DeepDiff path."""
        node = self.root
        for segment in path:
            node = node.child(segment)
        return node


def explain(
    golden: Any,
    actual: Any,
    root: ToleranceNode,
    *,
    limit: int = MAX_DIFFERENCES,
    _arrays: bool = True,
) -> list[Difference]:
    """The differences between two parsed records, in record order.

    Args:
        golden: The golden record (or any parsed value).
        actual: The actual record.
        root: The tolerance tree that applies at the top of the records.
        limit: At most this many differences are returned: the first ones
            in the order of the golden's fields (the actual's extra keys after
            the golden's at each level).

    Returns:
        The differences; empty when the records match within tolerance.
    """
    # Imported here, not with the module: DeepDiff takes a tenth of a second
    # and a few MiB to import, and only a mismatch needs it.
    from deepdiff import DeepDiff

    operator = ToleranceOperator(root, arrays=_arrays, limit=limit)
    tree = DeepDiff(
        golden,
        actual,
        custom_operators=[operator],
        view="tree",
        # Report every added or removed key as such, however few keys the
        # two dicts share, and do not skip keys that start with "__".
        threshold_to_diff_deeper=0,
        # Pair list items by index, as the records do, and visit every pair:
        # difflib would pass over items that are == but of another type (0, 0.0).
        zip_ordered_iterables=True,
        ignore_private_variables=False,
        cache_size=0,
    ).tree
    found: list[tuple[tuple[int, ...], Difference]] = []
    order = _Order(golden, actual)
    for report_type, levels in tree.items():
        kind = _KINDS.get(report_type)
        if kind is None:
            raise AssertionError(f"unexpected DeepDiff report {report_type!r}")
        for level in levels:
            path = tuple(level.path(output_format="list"))
            node = operator.node(list(path))
            if node.ignored:  # an added or removed key DeepDiff did not ask about
                continue
            found.append((order(path), _difference(kind, path, level, node)))
    found += [(order(d.path), d) for d in operator.array_differences]
    found.sort(key=lambda item: item[0])
    return [difference for _, difference in found[:limit]]


def _difference(kind: str, path: tuple[Any, ...], level: Any, node: ToleranceNode) -> Difference:
    golden, actual = level.t1, level.t2
    if kind == "missing":
        return Difference(path, "missing", golden, None)
    if kind == "extra":
        return Difference(path, "extra", None, actual)
    if kind == "length":
        return Difference(path, "length", len(golden), len(actual))
    if kind == "type":
        return Difference(path, "type", golden, actual)
    if type(golden) is float:
        return Difference(path, "value", golden, actual, node.rtol, node.atol)
    return Difference(path, "value", golden, actual)


class _Order:
    """Where paths come in a walk of two records: the golden's keys first, then the actual's extra.

    The keys of each pair of dicts are numbered once, the first time a path
    goes through them, so that ordering any number of differences takes time
    linear in their number and in the keys (a dict of 40,000 differing keys
    took 20 s when each difference listed the keys again).

    Args:
        golden: The golden record.
        actual: The actual record.
    """

    __slots__ = ("_actual", "_golden", "_numbered")

    def __init__(self, golden: Any, actual: Any) -> None:
        self._golden = golden
        self._actual = actual
        # By the ids of the two dicts, which the records keep alive meanwhile.
        self._numbered: dict[tuple[int, int], dict[Any, int]] = {}

    def __call__(self, path: tuple[Any, ...]) -> tuple[int, ...]:
        golden, actual = self._golden, self._actual
        positions: list[int] = []
        for segment in path:
            if isinstance(golden, Mapping) or isinstance(actual, Mapping):
                positions.append(self._keys(golden, actual)[segment])
                golden = golden.get(segment) if isinstance(golden, Mapping) else None
                actual = actual.get(segment) if isinstance(actual, Mapping) else None
            else:
                positions.append(segment)
                golden = _item(golden, segment)
                actual = _item(actual, segment)
        return tuple(positions)

    def _keys(self, golden: Any, actual: Any) -> dict[Any, int]:
        """The place of each key of two dicts (one may be another value): golden's, then extra."""
        pair = (id(golden), id(actual))
        numbered = self._numbered.get(pair)
        if numbered is None:
            numbered = {}
            for side in (golden, actual):
                if isinstance(side, Mapping):
                    for key in side:
                        numbered.setdefault(key, len(numbered))
            self._numbered[pair] = numbered
        return numbered


def _item(value: Any, index: int) -> Any:
    """Item ``index`` of a list, or None where there is none."""
    return value[index] if isinstance(value, list) and index < len(value) else None


def header_differences(golden: dict[str, Any], actual: dict[str, Any]) -> tuple[Difference, ...]:
    """The differences of the compared fields of two header records, compared exactly.

    The informational fields (versions, platform, reset arguments...) are
    shown beside a mismatch, never compared; nor are the format's own fields.
    """
    golden_compared = {k: v for k, v in golden.items() if k not in _NOT_COMPARED}
    actual_compared = {k: v for k, v in actual.items() if k not in _NOT_COMPARED}
    return tuple(explain(golden_compared, actual_compared, _EXACT.tree()))

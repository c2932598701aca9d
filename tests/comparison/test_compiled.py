"""Compiled checks give the verdict of the general walk, or step aside."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import orjson
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from gym_goldens.comparison.compiled import check_for, compile_check
from gym_goldens.comparison.engine import skeleton
from gym_goldens.comparison.tolerance import Tolerance
from gym_goldens.comparison.walk import values_match
from gym_goldens.format.codec import Encoder
from tests.comparison.test_explain import TOLERANCES

_FLOATS = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([0.0, -0.0, 1.0, 1e308, -1e308, 5e-324]),
)
_LEAVES = st.one_of(
    _FLOATS,
    st.integers(-(2**70), 2**70),
    st.booleans(),
    st.none(),
    st.sampled_from(["x", "x1", "x2", "", "e-1"]),
)
# Keys that differ only in digits share a skeleton.
_KEYS = st.sampled_from(["a", "b", "k1", "k2", "obs"])
_VALUES = st.recursive(
    _LEAVES,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(_KEYS, inner, max_size=3)),
    max_leaves=10,
)


@st.composite
def _renumbered(draw: st.DrawFn, value: Any) -> Any:
    """``value`` with other numbers, digits in keys and strings, and ``[7]`` as ``[]``."""
    if type(value) is float:
        scale = draw(st.sampled_from([1.0, 1 + 1e-9, 1 + 1e-3, -1.0, 2.0]))
        return draw(st.sampled_from([value * scale, draw(_FLOATS)]))
    if type(value) is int:
        return draw(st.sampled_from([value, value + 1, -value, draw(st.integers(0, 9))]))
    if type(value) is str:
        return value.replace("1", draw(st.sampled_from(["1", "2", "11"])))
    if type(value) is list:
        if len(value) == 1 and type(value[0]) in (int, float) and draw(st.booleans()):
            return []
        return [draw(_renumbered(item)) for item in value]
    if type(value) is dict:
        renamed = {}
        for key, item in value.items():
            other = key.replace("1", "2") if draw(st.booleans()) else key
            renamed[other if other not in value else key] = draw(_renumbered(item))
        return renamed
    return value


def _line(record: Any) -> bytes:
    return Encoder().encode(record)


@settings(max_examples=400, deadline=None)
@given(
    base=st.dictionaries(_KEYS, _VALUES, min_size=1, max_size=4),
    data=st.data(),
    tolerance=st.sampled_from(TOLERANCES),
)
def test_a_compiled_check_agrees_with_the_walk(
    base: dict[str, Any], data: st.DataObject, tolerance: Tolerance
) -> None:
    # The check is compiled from one record of a skeleton and used on others.
    template, golden, actual = (data.draw(_renumbered(base)) for _ in range(3))
    lines = [_line(record) for record in (template, golden, actual)]
    assume(all(b'"$' not in line for line in lines))  # tags are not compiled
    assume(skeleton(lines[0]) == skeleton(lines[1]) == skeleton(lines[2]))
    # As the comparison has them: parsed from the line, keys in sorted order.
    template, golden, actual = (orjson.loads(line) for line in lines)
    root = tolerance.tree()

    check = compile_check(template, root)

    assert check is not None
    verdict = check(golden, actual)
    assert verdict is None or verdict == values_match(golden, actual, root)
    if golden == template and actual == template:
        assert verdict is True


def test_floats_within_and_beyond_the_tolerance_of_their_field() -> None:
    root = Tolerance.build(rtol={"obs": 1e-3}, atol={"reward": 0.5}).tree()
    check = compile_check({"obs": [1.0, 2.0], "reward": 1.0, "t": 1}, root)
    assert check is not None
    golden = {"obs": [1.0, 2.0], "reward": 1.0, "t": 1}
    assert check(golden, {"obs": [1.0009, 2.0], "reward": 1.4, "t": 1}) is True
    assert check(golden, {"obs": [1.0011, 2.0], "reward": 1.0, "t": 1}) is False
    assert check(golden, {"obs": [1.0, 2.0], "reward": 1.6, "t": 1}) is False
    assert check(golden, {"obs": [1.0, 2.0], "reward": 1.0, "t": 2}) is False


@pytest.mark.parametrize(("rtol", "within"), [(10.0, True), (1e-6, False)])
def test_a_difference_past_the_largest_float_is_judged_as_numpy_isclose_judges_it(
    rtol: float, within: bool
) -> None:
    # 1e308 - (-1e308) overflows to inf; with rtol 10 the limit does too, and
    # 2e308 <= 10 * 1e308 holds: numpy.isclose says they match, and so do we.
    root = Tolerance.build(rtol=rtol).tree()
    check = compile_check({"x": 1.0}, root)
    assert check is not None
    assert bool(np.isclose(-1e308, 1e308, rtol=rtol, atol=1e-12)) is within
    assert check({"x": 1e308}, {"x": -1e308}) is within
    assert values_match({"x": 1e308}, {"x": -1e308}, root) is within


def test_records_of_another_layout_are_left_to_the_walk() -> None:
    root = Tolerance().tree()
    check = compile_check({"obs": [7], "info": {"k1": 1.0}}, root)
    assert check is not None
    assert check({"obs": [], "info": {"k1": 1.0}}, {"obs": [], "info": {"k1": 1.0}}) is None
    assert check({"obs": [7], "info": {"k2": 1.0}}, {"obs": [7], "info": {"k2": 1.0}}) is None
    empty = compile_check({"obs": []}, root)
    assert empty is not None
    assert empty({"obs": [7]}, {"obs": []}) is None
    assert empty({"obs": []}, {"obs": [7]}) is None
    pair = compile_check({"obs": [1.0, 2.0]}, root)
    assert pair is not None
    assert pair({"obs": [1.0, 2.0]}, {"obs": [1.0, 2.0, 3.0]}) is None


def test_an_ignored_key_cannot_hide_another() -> None:
    root = Tolerance.build(ignore=["info.k1"]).tree()
    check = compile_check({"info": {"k1": 1.0, "a": 2.0}}, root)
    assert check is not None
    golden = {"info": {"k1": 1.0, "a": 2.0}}
    assert check(golden, {"info": {"k1": 5.0, "a": 2.0}}) is True
    # Same skeleton, but k2 is not ignored: the walk must decide.
    assert check(golden, {"info": {"k2": 1.0, "a": 2.0}}) is None


def test_a_long_int_array_is_compared_at_once() -> None:
    root = Tolerance.build(rtol=0.5).tree()  # ints match exactly whatever the tolerance
    check = compile_check({"obs": list(range(100))}, root)
    assert check is not None
    golden = {"obs": list(range(100))}
    assert check(golden, {"obs": list(range(100))}) is True
    assert check(golden, {"obs": [*range(99), 100]}) is False
    assert check(golden, {"obs": list(range(101))}) is None
    # An ignored item is not compared.
    ignoring = compile_check(golden, Tolerance.build(ignore=["obs[99]"]).tree())
    assert ignoring is not None
    assert ignoring(golden, {"obs": [*range(99), 100]}) is True


def test_a_record_with_nothing_to_compare_matches() -> None:
    check = compile_check({"obs": [1.0]}, Tolerance.build(ignore=["obs"]).tree())
    assert check is not None
    assert check({"obs": [1.0]}, {"obs": [2.0]}) is True


def test_huge_records_are_not_compiled() -> None:
    mixed = [0.5, 1] * 2500  # no loop for arrays that are not all floats
    assert compile_check({"obs": mixed}, Tolerance().tree()) is None


@settings(max_examples=200, deadline=None)
@given(
    values=st.lists(_FLOATS, min_size=17, max_size=60),
    scales=st.lists(st.sampled_from([1.0, 1.0, 1 + 1e-9, 1 + 1e-3, -1.0]), min_size=60),
    tolerance=st.sampled_from(TOLERANCES),
    length=st.sampled_from([0, 1, -1]),
)
def test_a_long_float_array_is_checked_in_a_loop_that_agrees_with_the_walk(
    values: list[float], scales: list[float], tolerance: Tolerance, length: int
) -> None:
    root = tolerance.tree()
    check = compile_check({"obs": values, "t": 1}, root)
    assert check is not None
    actual = [value * scale for value, scale in zip(values, scales, strict=False)]
    if length:  # one more or one less item: not the layout compiled for
        actual = [*actual, 0.5] if length > 0 else actual[:-1]
    golden_record, actual_record = {"obs": values, "t": 1}, {"obs": actual, "t": 1}
    verdict = check(golden_record, actual_record)
    if length:
        assert verdict is None
    else:
        assert verdict == values_match(golden_record, actual_record, root)
    assert check(golden_record, golden_record) is True


class _Pairs(list):  # type: ignore[type-arg]
    """A JSON object as its key-value pairs, in order: a key may come twice, as a file can hold."""


_PAIR_VALUES = st.recursive(
    _LEAVES,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.lists(st.tuples(_KEYS, inner), max_size=4).map(_Pairs),
    ),
    max_leaves=10,
)


def _text(value: Any) -> bytes:
    """The JSON of a value whose objects are :class:`_Pairs`, duplicated keys and all."""
    if isinstance(value, _Pairs):
        return b"{" + b",".join(orjson.dumps(k) + b":" + _text(v) for k, v in value) + b"}"
    if isinstance(value, list):
        return b"[" + b",".join(_text(item) for item in value) + b"]"
    if type(value) is int:
        return b"%d" % value  # past 64 bits too, which orjson reads back as a float
    return orjson.dumps(value)


@st.composite
def _changed(draw: st.DrawFn, value: Any) -> Any:
    """``value`` renumbered, each key perhaps renamed to another of its skeleton.

    ``k1`` may become ``k2`` and ``k2`` ``k1``: keys are then missing, extra
    or named twice, in lines that keep their skeleton.
    """
    if isinstance(value, _Pairs):
        pairs = _Pairs()
        for key, item in value:
            digit = draw(st.sampled_from("12"))
            pairs.append((key.replace("1", digit).replace("2", digit), draw(_changed(item))))
        return pairs
    if isinstance(value, list):
        return [draw(_changed(item)) for item in value]
    return draw(_renumbered(value))


@settings(max_examples=250, deadline=None)
@given(
    base=st.lists(st.tuples(_KEYS, _PAIR_VALUES), min_size=1, max_size=4).map(_Pairs),
    data=st.data(),
    tolerance=st.sampled_from(TOLERANCES),
)
def test_a_compiled_check_agrees_with_the_walk_on_any_keys_a_file_holds(
    base: _Pairs, data: st.DataObject, tolerance: Tolerance
) -> None:
    # Lines as a file may hold them: keys repeated (JSON keeps the last),
    # renamed or left out, on any side, within one skeleton: a golden of
    # {"k1":5.0,"k1":5.0} must not hide the k2 of {"k1":5.0,"k2":5.0}.
    lines = [_text(data.draw(_changed(base))) for _ in range(3)]
    layout = skeleton(lines[0])
    assume(layout == skeleton(lines[1]) == skeleton(lines[2]))
    template, golden, actual = (orjson.loads(line) for line in lines)
    root = dataclasses.replace(tolerance).tree()  # a tree of its own: no check kept from before

    # As the comparison has it: compiled for a skeleton from one of its lines.
    check = check_for(layout, template, root)

    assume(check is not None)
    assert check is not None
    verdict = check(golden, actual)
    # The walk as the comparison calls it on lines of one skeleton.
    assert verdict is None or verdict == values_match(golden, actual, root, same_types=True)


def test_a_repeated_key_cannot_hide_another_key() -> None:
    root = Tolerance().tree()
    # The lines {"k1":5.0,"k1":5.0} and {"k1":5.0,"k2":5.0} share a skeleton.
    repeated, both = b'{"k1":5.0,"k1":5.0}', b'{"k1":5.0,"k2":5.0}'
    assert skeleton(repeated) == skeleton(both)
    golden, actual = orjson.loads(repeated), orjson.loads(both)
    # No check from the line that reads as fewer keys than it names...
    assert check_for(skeleton(repeated), golden, root) is None
    # ... and the check from the other finds a key missing.
    check = check_for(skeleton(both), actual, Tolerance().tree())
    assert check is not None
    assert check(golden, actual) is None
    assert check(actual, golden) is None
    assert not values_match(golden, actual, root)


def test_keys_that_differ_in_digits_in_another_order_are_left_to_the_walk() -> None:
    root = Tolerance().tree()
    # 1.0 == 1 in Python: the types are what differ.
    golden, actual = orjson.loads(b'{"k1":1.0,"k2":1}'), orjson.loads(b'{"k2":1.0,"k1":1}')
    check = compile_check(golden, root)
    assert check is not None
    assert check(golden, actual) is None
    assert not values_match(golden, actual, root, same_types=True)

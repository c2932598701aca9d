"""The dtypes field: numpy types of recorded values."""

from __future__ import annotations

from collections import namedtuple

import numpy as np
import pytest

from gym_goldens.format.dtypes import describe_change, parse_leaf, signature, to_json


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (np.zeros((2, 3), dtype=np.uint8), "uint8[2,3]"),
        (np.zeros((), dtype=np.float32), "float32[]"),
        (np.float16(1.5), "float16"),
        (np.bool_(True), "bool"),
        (np.array(["ab", "c"]), "<U2[2]"),
        (1.5, None),
        ("text", None),
        (None, None),
        ({}, None),
        ([1, 2.0], None),
    ],
)
def test_leaves(value: object, expected: str | None) -> None:
    assert to_json(signature(value)) == expected


def test_structures_mirror_the_record() -> None:
    Point = namedtuple("Point", ["x", "label"])
    value = {
        "obs": {"image": np.zeros((4, 4, 3), dtype=np.uint8), "speed": 3.0},
        "info": {
            "mask": np.ones(2, dtype=np.int8),
            "nested": [1, np.int16(2)],
            "p": Point(np.int8(1), "a"),
        },
        "reward": 1.0,
    }
    assert to_json(signature(value)) == {
        "obs": {"image": "uint8[4,4,3]"},
        "info": {"mask": "int8[2]", "nested": [None, "int16"], "p": {"x": "int8"}},
    }


def test_signatures_compare_by_dtype_and_shape() -> None:
    assert signature(np.zeros(3, np.float32)) == signature(np.ones(3, np.float32))
    assert signature(np.zeros(3, np.float32)) != signature(np.zeros(3, np.float64))
    assert signature(np.zeros(3, np.float32)) != signature(np.zeros(4, np.float32))
    assert signature(np.float32(1)) != signature(np.zeros((), np.float32))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("uint8[210,160,3]", ("uint8", (210, 160, 3))),
        ("float32[]", ("float32", ())),
        ("int64", ("int64", None)),
        ("<U2[2]", ("<U2", (2,))),
    ],
)
def test_parse_leaf(text: str, expected: tuple[str, tuple[int, ...] | None]) -> None:
    assert parse_leaf(text) == expected


@pytest.mark.parametrize(
    ("golden", "actual", "words"),
    [
        ("float32[4]", "float64[4]", "dtype changed float32 -> float64"),
        ("float32[4]", "float32[2,2]", "shape changed (4,) -> (2, 2)"),
        ("uint8[3]", "int16[4]", "dtype changed uint8 -> int16, shape changed (3,) -> (4,)"),
        ("float32", "float32[]", "numpy scalar became a numpy array of shape ()"),
        ("int64", None, "numpy type changed: golden int64, actual a Python value (no numpy type)"),
    ],
)
def test_describe_change(golden: str, actual: str | None, words: str) -> None:
    assert describe_change(golden, actual) == words

"""One difference in words, and the order fields are named in (``present.differences``)."""

from __future__ import annotations

from gym_goldens.comparison.result import Difference
from gym_goldens.format.fields import STEP_VALUES
from gym_goldens.present.differences import (
    FIELD_ORDER,
    describe_difference,
    field_name,
    first_differences,
    headline_order,
    other_field_name,
)


def test_every_value_of_a_step_has_its_place_in_the_order_a_change_of_type_first() -> None:
    assert FIELD_ORDER[0] == "dtypes"
    assert sorted(FIELD_ORDER[1:]) == sorted(STEP_VALUES)
    shuffled = [Difference((field, 0), "value", 0.0, 1.0) for field in reversed(FIELD_ORDER[1:])]
    assert [d.path[0] for d in headline_order(shuffled)] == list(FIELD_ORDER[1:])


def test_a_change_of_type_headlines_and_stands_for_the_values_it_explains() -> None:
    differences = [
        Difference(("obs", 0), "value", 1.0, 2.0),
        Difference(("reward",), "value", 1.0, 2.0),
        Difference(("dtypes",), "value", {"obs": "float32[2]"}, {"obs": "float64[2]"}),
    ]
    found = first_differences(differences)
    assert found.head.path == ("dtypes", "obs")
    assert field_name(found.head) == "obs"
    assert describe_difference(found.head) == "dtype changed float32 -> float64"
    assert [other_field_name(d) for d in found.others] == ["reward"]


def test_a_key_gone_with_its_numpy_type_is_one_difference_that_names_the_type() -> None:
    differences = [
        Difference(("info", "speed"), "missing", 1.5, None),
        Difference(("dtypes", "info", "speed"), "value", "float32", None),
    ]
    found = first_differences(differences)
    assert found.others == ()
    assert other_field_name(found.head) == "info.speed (not in the actual recording)"
    numpy_type = found.numpy_types[("info", "speed")]
    assert describe_difference(found.head, numpy_type=numpy_type) == (
        "golden 1.5 (float32), missing from the actual recording"
    )

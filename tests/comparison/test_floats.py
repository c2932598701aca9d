"""The one float rule, for scalars and for arrays: numpy.isclose's, with the golden second."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from gym_goldens.comparison.floats import arrays_match, floats_match

_EDGES = [0.0, -0.0, 1.0, -1.0, 1e-300, 1e308, -1e308, math.inf, -math.inf, math.nan, 2.5e-9]
_FLOATS = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.sampled_from(_EDGES))
_TOLERANCES = st.sampled_from([0.0, 1e-12, 1e-6, 1e-3, 0.5, 10.0])


@given(golden=_FLOATS, actual=_FLOATS, rtol=_TOLERANCES, atol=_TOLERANCES)
def test_scalars_and_arrays_follow_numpy_isclose(
    golden: float, actual: float, rtol: float, atol: float
) -> None:
    with np.errstate(invalid="ignore", over="ignore"):
        expected = bool(np.isclose(actual, golden, rtol=rtol, atol=atol, equal_nan=True))
    assert floats_match(golden, actual, rtol, atol) is expected
    (element,) = arrays_match(np.array([golden]), np.array([actual]), rtol, atol)
    assert bool(element) is expected


@pytest.mark.parametrize(
    ("golden", "actual", "matches"),
    [
        (0.0, -0.0, True),  # one zero
        (math.nan, math.nan, True),
        (math.inf, math.inf, True),
        (math.inf, -math.inf, False),
        (math.inf, 1e308, False),
        (math.nan, 0.0, False),
        (0.0, 1e-9, False),  # at zero only atol helps
        (1.0, 1.0 + 5e-7, True),
    ],
)
def test_the_rule_at_its_edges(golden: float, actual: float, matches: bool) -> None:
    assert floats_match(golden, actual, 1e-6, 1e-12) is matches


def test_integer_arrays_match_exactly() -> None:
    golden, actual = np.array([1, 2, 3]), np.array([1, 2, 4])
    assert arrays_match(golden, actual, 10.0, 10.0).tolist() == [True, True, False]

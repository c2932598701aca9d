"""The one float rule, for scalars and for arrays, whatever numpy is installed."""

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


def _rule(golden: float, actual: float, rtol: float, atol: float) -> bool:
    """The rule as the docs state it."""
    if math.isnan(golden) or math.isnan(actual):
        return math.isnan(golden) and math.isnan(actual)
    if math.isinf(golden) or math.isinf(actual):
        return golden == actual  # an infinity matches only itself
    return abs(actual - golden) <= atol + rtol * abs(golden)


@given(golden=_FLOATS, actual=_FLOATS, rtol=_TOLERANCES, atol=_TOLERANCES)
def test_scalars_and_arrays_follow_the_rule(
    golden: float, actual: float, rtol: float, atol: float
) -> None:
    expected = _rule(golden, actual, rtol, atol)
    assert floats_match(golden, actual, rtol, atol) is expected
    (element,) = arrays_match(np.array([golden]), np.array([actual]), rtol, atol)
    assert bool(element) is expected


@given(
    golden=st.one_of(st.floats(allow_nan=False, allow_infinity=False), st.sampled_from(_EDGES[:7])),
    actual=st.one_of(st.floats(allow_nan=False, allow_infinity=False), st.sampled_from(_EDGES[:7])),
    rtol=_TOLERANCES,
    atol=_TOLERANCES,
)
def test_between_finite_values_it_is_numpy_isclose(
    golden: float, actual: float, rtol: float, atol: float
) -> None:
    expected = bool(np.isclose(actual, golden, rtol=rtol, atol=atol))
    assert floats_match(golden, actual, rtol, atol) is expected


def test_an_infinity_matches_only_itself_even_where_the_limit_overflows() -> None:
    # numpy 2's isclose says True here, numpy 1's False: the verdict must not
    # depend on the numpy installed.
    assert not floats_match(1.797693134862316e307, math.inf, rtol=10.0, atol=0.0)
    (element,) = arrays_match(np.array([1.797693134862316e307]), np.array([math.inf]), 10.0, 0.0)
    assert not element


def test_complex_arrays_compare_both_parts() -> None:
    golden = np.array([1 + 1j, 1 + 1j])
    actual = np.array([1 + 1j, 1 + 2j])
    assert arrays_match(golden, actual, 1e-6, 0.0).tolist() == [True, False]


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

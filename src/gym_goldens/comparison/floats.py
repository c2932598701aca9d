"""The float rule: when a recorded float matches its golden.

One rule for every comparison the package makes (records, array
statistics, plotted series, explanations, determinism checks): an actual
value ``a`` matches a golden value ``g`` when

    |a - g| <= atol + rtol * |g|

where both are finite; infinities match only an equal infinity; NaN matches
NaN; ``-0.0`` matches ``0.0``. Between finite values it is
:func:`numpy.isclose` with the golden in the second place. It is written out
here rather than left to numpy, because numpy's own rule at infinity changed
with numpy 2 (a finite golden whose limit overflows matches an actual
infinity there, and not before), and the verdict must not depend on the
numpy installed. It is written once for scalars (:func:`floats_match`) and
once for arrays (:func:`arrays_match`).
The compiled checks of :mod:`gym_goldens.comparison.compiled` write it out
again, behind their one seam, for speed; a property test holds the three
together.

Example:
    >>> floats_match(1.0, 1.0 + 1e-7, rtol=1e-6, atol=0.0)
    True
    >>> floats_match(0.0, 1e-9, rtol=1e-6, atol=1e-12)
    False
"""

from __future__ import annotations

import math
from typing import Any, Final

import numpy as np

__all__ = ["arrays_allowed", "arrays_match", "floats_match", "tolerance_allowed"]

_INF: Final = math.inf


def floats_match(golden: float, actual: float, rtol: float, atol: float) -> bool:
    """Whether ``actual`` matches ``golden`` within ``atol + rtol * |golden|``."""
    if golden == actual:
        return True  # equal infinities, and -0.0 against 0.0
    difference = abs(actual - golden)
    if difference <= atol + rtol * abs(golden):
        # Only between finite values: an infinity makes the difference
        # infinite, which passes a limit that is infinite too (an infinite
        # golden or atol, rtol * |golden| overflowing); it matches only itself.
        # Two finite values whose difference overflows may still be within an
        # overflowing limit (rtol 10 around 1e308), as numpy says.
        return abs(golden) != _INF and abs(actual) != _INF
    return golden != golden and actual != actual  # noqa: PLR0124 - NaN matches NaN


def arrays_match(
    golden: np.ndarray[Any, Any], actual: np.ndarray[Any, Any], rtol: float, atol: float
) -> np.ndarray[Any, np.dtype[np.bool_]]:
    """Element by element, whether ``actual`` matches ``golden``: :func:`floats_match` for arrays.

    Integer and bool arrays match exactly, as their values do.
    """
    if golden.dtype.kind not in "fc" and actual.dtype.kind not in "fc":
        return np.asarray(golden == actual, dtype=np.bool_)
    wide = np.complex128 if "c" in (golden.dtype.kind, actual.dtype.kind) else np.float64
    golden, actual = golden.astype(wide), actual.astype(wide)
    with np.errstate(invalid="ignore", over="ignore"):
        difference = np.abs(actual - golden)
        within = (
            (difference <= atol + rtol * np.abs(golden)) & np.isfinite(golden) & np.isfinite(actual)
        )
        close: np.ndarray[Any, np.dtype[np.bool_]] = (
            within | (golden == actual) | (np.isnan(golden) & np.isnan(actual))
        )
    return close


def tolerance_allowed(golden: float, rtol: float, atol: float) -> float:
    """The largest difference from a finite ``golden`` that matches it."""
    return atol + rtol * abs(golden)


def arrays_allowed(
    golden: np.ndarray[Any, Any], rtol: float, atol: float
) -> np.ndarray[Any, np.dtype[np.float64]]:
    """:func:`tolerance_allowed` element by element, for finite values."""
    return np.asarray(atol + rtol * np.abs(golden.astype(np.float64)), dtype=np.float64)

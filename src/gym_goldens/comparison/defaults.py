"""The default tolerances, those of ``pytest.approx``: the one place they are written.

:class:`~gym_goldens.comparison.tolerance.Tolerance`, the plugin's ini values
(``goldens_rtol``, ``goldens_atol``) and the ``gym-goldens`` command's help
all take them from here. A module of its own, importing nothing, so that the
pytest plugin reads them at start-up without loading the comparison.
"""

from __future__ import annotations

from typing import Final

__all__ = ["DEFAULT_ATOL", "DEFAULT_RTOL"]

DEFAULT_RTOL: Final = 1e-6
"""The relative tolerance of a float field, unless a test or the ini says otherwise."""

DEFAULT_ATOL: Final = 1e-12
"""The absolute tolerance of a float field, likewise."""

"""Helpers of the plugin tests: small projects run by ``pytester``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

# pytester runs sessions in this process and afterwards drops the modules they
# imported; numpy refuses to be imported twice, hypothesis's plugin takes
# seconds to import, matplotlib (every failing golden test draws its plot with
# it) about one, and deepdiff (which explains a mismatch) a quarter. Importing
# them here keeps them loaded across sessions.
import deepdiff  # noqa: F401
import gymnasium  # noqa: F401
import hypothesis  # noqa: F401
import matplotlib.backends.backend_agg
import matplotlib.figure
import matplotlib.ticker  # noqa: F401
import numpy  # noqa: F401
import pytest

import gym_goldens.plugin.outcome
import gym_goldens.present.viz  # noqa: F401
from tests.support.suites import CARTPOLE_TEST, SCALED_TEST


@pytest.fixture
def cartpole_test(pytester: pytest.Pytester) -> Callable[..., Path]:
    """Write ``test_cp.py``: the issue's CartPole test, optionally perturbed."""

    def write(gravity: float | None = None) -> Path:
        return pytester.makepyfile(test_cp=CARTPOLE_TEST.format(gravity=gravity))

    return write


@pytest.fixture
def scaled_test(pytester: pytest.Pytester) -> Callable[..., Path]:
    """Write ``test_scaled.py``: CartPole with observations times ``factor``."""

    def write(factor: float = 1.0, *, marker: str = "", kwargs: str = "") -> Path:
        return pytester.makepyfile(
            test_scaled=SCALED_TEST.format(factor=factor, marker=marker, kwargs=kwargs)
        )

    return write


def snapshot(folder: Path) -> dict[Path, tuple[bytes, int]]:
    """Every file under ``folder`` with its bytes and mtime."""
    return {
        path: (path.read_bytes(), path.stat().st_mtime_ns)
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


@pytest.fixture
def files_under() -> Callable[[Path], dict[Path, tuple[bytes, int]]]:
    """``snapshot``, as a fixture."""
    return snapshot

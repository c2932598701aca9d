"""Recordings that the series and plot tests read."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.recordings import perturb, record_cartpole


@pytest.fixture(scope="module")
def golden(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two CartPole episodes: a pole kept upright for 60 steps, then ten random steps."""
    return record_cartpole(tmp_path_factory.mktemp("golden") / "CartPole-v1")


@pytest.fixture(scope="module")
def actual(golden: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The golden with obs[2] of its first episode off by 0.01 from step 17 on."""
    return perturb(
        golden, tmp_path_factory.mktemp("actual") / "CartPole-v1", index=2, from_t=17, delta=0.01
    )

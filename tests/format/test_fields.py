"""The fields of a record are listed once, and the writer writes those."""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

from gym_goldens import RecordTrajectory, read_recording
from gym_goldens.format.fields import (
    RESET_FIELDS,
    RESET_VALUES,
    STEP_FIELDS,
    STEP_VALUES,
    parse_pattern,
)
from tests.support.frames import needs_renderer


def test_the_writer_writes_the_fields_listed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    needs_renderer()
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    # Every field: render too (a frame at the reset and at every step).
    env = RecordTrajectory(gym.make("Pendulum-v1", render_mode="rgb_array"), tmp_path, render=1)
    for seed in (0, 1):
        env.reset(seed=seed)
        for _ in range(3):
            env.step(np.array([0.5], dtype=np.float32))
    env.close()
    for episode in read_recording(tmp_path):
        reset, *steps = episode.records
        # Pendulum's obs and action are numpy arrays: dtypes on the reset and on step 1.
        assert set(reset) == set(RESET_FIELDS)
        assert set(steps[0]) == set(STEP_FIELDS)
        assert all(set(step) == set(STEP_FIELDS) - {"dtypes"} for step in steps[1:])


def test_a_pattern_starts_with_a_field_of_a_record_but_event() -> None:
    for field in [*STEP_FIELDS, *RESET_FIELDS]:
        if field == "event":
            with pytest.raises(ValueError, match="not a record field"):
                parse_pattern(field)
        else:
            assert parse_pattern(f"{field}.x") == (field, "x")
    assert set(STEP_VALUES) < set(STEP_FIELDS)
    assert set(RESET_VALUES) < set(RESET_FIELDS)

"""An env that raises: its own error is reported, the partial recording is readable, no golden."""

from __future__ import annotations

from pathlib import Path

import hypothesis  # noqa: F401 - imported once here, not in every pytester run
import pytest

import gym_goldens.comparison.engine
import gym_goldens.plugin.check
import gym_goldens.present.report  # noqa: F401
from gym_goldens import read_recording

TEST_FILE = """
import os
from pathlib import Path

import gymnasium as gym
import numpy as np


class Fragile(gym.Env):
    observation_space = gym.spaces.Box(-1.0, 1.0, (2,), np.float32)
    action_space = gym.spaces.Discrete(2)

    def __init__(self):
        self.fail = os.environ.get("FRAGILE_FAIL", "")
        self.resets = 0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.resets += 1
        if self.fail == f"reset {self.resets}":
            raise RuntimeError(f"reset {self.resets} blew up in Fragile")
        self.t = 0
        return np.zeros(2, np.float32), {}

    def step(self, action):
        self.t += 1
        if self.fail == f"step {self.t}":
            raise RuntimeError(f"step {self.t} blew up in Fragile")
        return np.full(2, self.t / 10, np.float32), 1.0, self.t == 5, False, {}

    def close(self):
        with open("closed.txt", "a") as log:
            log.write("closed\\n")


def test_fragile(record_trajectory):
    env = record_trajectory(Fragile())
    for episode in range(2):
        env.reset(seed=episode)
        for _ in range(5):
            env.step(1)
"""

GOLDEN = Path("goldens/test_fragile/test_fragile/Fragile")


def snapshot(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()
    }


@pytest.mark.parametrize(
    "case",
    [
        pytest.param(("step 3", 1, ["reset", "step", "step"]), id="step"),
        pytest.param(("reset 1", 1, []), id="first reset"),
        pytest.param(("reset 2", 2, []), id="second reset"),
    ],
)
@pytest.mark.parametrize("had_golden", [False, True], ids=["no golden", "golden"])
def test_env_error_is_reported_and_no_golden_is_written(
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    case: tuple[str, int, list[str]],
    had_golden: bool,
) -> None:
    # What fails, how many episode files it leaves, the records of the last one.
    failure, episodes, last_records = case
    pytester.makepyfile(test_fragile=TEST_FILE)
    if had_golden:
        pytester.runpytest("--update-goldens").assert_outcomes(passed=1)
    before = snapshot(pytester.path / "goldens") if had_golden else {}
    monkeypatch.setenv("FRAGILE_FAIL", failure)
    basetemp = pytester.path / "basetemp"

    result = pytester.runpytest("--update-goldens", f"--basetemp={basetemp}")

    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([f"E*RuntimeError: {failure} blew up in Fragile"])
    assert not any(line.startswith("goldens:") for line in result.stdout.lines)
    if had_golden:
        assert snapshot(pytester.path / "goldens") == before, "the golden was left as it was"
    else:
        assert not (pytester.path / GOLDEN).exists(), "no golden was written"
    # The wrapper was closed, and so was the env under it: in each update, once
    # in each of its two runs (an update records every test twice).
    updates = 1 + had_golden
    assert (pytester.path / "closed.txt").read_text().split() == ["closed"] * 2 * updates
    # The partial recording is complete up to the error and reads back.
    # The real run's tmp_path (the update's extra run, first, records in a folder of its own).
    [recorded] = basetemp.glob("test_fragile[0-9]*/Fragile")
    recording = read_recording(recorded)
    assert len(recording) == episodes
    last = recording[episodes - 1]
    assert last.header is not None
    assert [record["event"] for record in last.records] == last_records
    for path in recording.files:
        assert path.read_bytes().endswith(b"\n"), "the last line was written in full"

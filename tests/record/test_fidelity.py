"""What a recording keeps: info values, array rewards, dtypes and shapes, real envs."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from gym_goldens import RecordTrajectory, Tolerance, compare, read_recording
from gym_goldens.present.report import format_comparison
from tests.support.envs import TAXI, MultiObjectiveEnv, ScriptedEnv, run

BOX = spaces.Box(-10.0, 10.0, (3,), dtype=np.float32)


def obs(*values: float, dtype: Any = np.float32) -> np.ndarray:
    return np.array(values, dtype=dtype)


def record_scripted(path: Path, env: ScriptedEnv) -> None:
    run(RecordTrajectory(env, path), [0] * (len(env.observations) - 1))


def message_of(golden: Path, actual: Path, tolerance: Tolerance | None = None) -> str:
    comparison = compare(golden, actual, tolerance)
    assert not comparison.equal
    return format_comparison(comparison, nodeid="test_env.py::test_it")


class TestInfoValues:
    INFO: dict[str, Any] = {  # noqa: RUF012 - read only
        "python": {"int": 3, "float": 0.25, "bool": True, "str": "go", "none": None},
        "numpy": {
            "float32": np.float32(0.1),
            "float64": np.float64(1e-300),
            "int8": np.int8(-7),
            "uint64": np.uint64(2**64 - 1),
            "bool": np.bool_(False),
        },
        "sequences": {"list": [1, [2.5, None]], "tuple": (np.int16(4), "x")},
        "action_mask": np.array([1, 0, 1], dtype=np.int8),
        "nonfinite": [float("nan"), float("inf"), np.float32("-inf")],
    }

    def test_round_trip(self, tmp_path: Path) -> None:
        observations = [obs(0, 0, 0), obs(1, 2, 3)]
        record_scripted(tmp_path, ScriptedEnv(BOX, observations, infos=[self.INFO, self.INFO]))
        reset = read_recording(tmp_path)[0].records[0]
        info = reset["info"]
        assert info["python"] == {"int": 3, "float": 0.25, "bool": True, "str": "go", "none": None}
        assert info["numpy"] == {
            "float32": 0.1,
            "float64": 1e-300,
            "int8": -7,
            "uint64": 2**64 - 1,
            "bool": False,
        }
        assert info["sequences"] == {"list": [1, [2.5, None]], "tuple": [4, "x"]}
        assert info["action_mask"] == [1, 0, 1]
        nan, inf, minus_inf = info["nonfinite"]
        assert math.isnan(nan)
        assert (inf, minus_inf) == (float("inf"), float("-inf"))
        assert reset["dtypes"]["info"] == {
            "numpy": {
                "float32": "float32",
                "float64": "float64",
                "int8": "int8",
                "uint64": "uint64",
                "bool": "bool",
            },
            "sequences": {"tuple": ["int16", None]},
            "action_mask": "int8[3]",
            "nonfinite": [None, None, "float32"],
        }

    def test_same_info_compares_equal_and_nan_matches_nan(self, tmp_path: Path) -> None:
        for name in ("one", "two"):
            env = ScriptedEnv(BOX, [obs(0, 0, 0), obs(1, 2, 3)], infos=[self.INFO, self.INFO])
            record_scripted(tmp_path / name, env)
        assert compare(tmp_path / "one", tmp_path / "two").equal


class TestArrayRewards:
    def record(self, path: Path, energy_cost: float) -> None:
        run(RecordTrajectory(MultiObjectiveEnv(energy_cost), path), [1, 1, 0, 1, 1, 1, 1, 1])

    def test_recorded_as_arrays_with_their_dtype(self, tmp_path: Path) -> None:
        self.record(tmp_path, 0.1)
        steps = read_recording(tmp_path)[0].steps
        assert steps[0]["reward"] == [1.0, -0.1]
        assert steps[0]["dtypes"]["reward"] == "float32[2]"

    def test_compared_within_tolerance(self, tmp_path: Path) -> None:
        self.record(tmp_path / "golden", 0.1)
        self.record(tmp_path / "close", 0.1 + 1e-9)
        self.record(tmp_path / "far", 0.2)
        assert compare(tmp_path / "golden", tmp_path / "close").equal
        message = message_of(tmp_path / "golden", tmp_path / "far")
        assert "first divergence: episode 0, step t=1, reward[1]" in message
        assert "golden -0.1  actual -0.2" in message
        loose = Tolerance.build(atol={"reward[1]": 0.2})
        assert compare(tmp_path / "golden", tmp_path / "far", loose).equal


class TestDtypeAndShape:
    def test_an_env_returning_float64_for_a_float32_space(self, tmp_path: Path) -> None:
        values = [(0.5, 1.0, -2.0), (0.25, 0.75, 1.5)]
        golden = ScriptedEnv(BOX, [obs(*v) for v in values])
        actual = ScriptedEnv(BOX, [obs(*v, dtype=np.float64) for v in values])
        record_scripted(tmp_path / "golden", golden)
        record_scripted(tmp_path / "actual", actual)
        message = message_of(tmp_path / "golden", tmp_path / "actual")
        # The values are exactly the same: only the recorded dtype can tell.
        assert (
            "first divergence: episode 0, reset, obs\n    dtype changed float32 -> float64"
            in message
        )

    def test_a_space_changing_dtype_is_named_in_the_header(self, tmp_path: Path) -> None:
        wide = spaces.Box(-10.0, 10.0, (3,), dtype=np.float64)
        record_scripted(tmp_path / "golden", ScriptedEnv(BOX, [obs(1, 2, 3)] * 2))
        record_scripted(
            tmp_path / "actual", ScriptedEnv(wide, [obs(1, 2, 3, dtype=np.float64)] * 2)
        )
        message = message_of(tmp_path / "golden", tmp_path / "actual")
        assert (
            "header differs: observation_space: Box(-10, 10, (3,), float32) -> "
            "Box(-10, 10, (3,), float64) (dtype changed float32 -> float64)"
        ) in message
        assert "header differs: observation_space.low" not in message

    def test_a_shape_change(self, tmp_path: Path) -> None:
        longer = spaces.Box(-10.0, 10.0, (4,), dtype=np.float32)
        record_scripted(tmp_path / "golden", ScriptedEnv(BOX, [obs(1, 2, 3)] * 2))
        record_scripted(tmp_path / "actual", ScriptedEnv(longer, [obs(1, 2, 3, 4)] * 2))
        message = message_of(tmp_path / "golden", tmp_path / "actual")
        assert (
            "header differs: observation_space: Box(-10, 10, (3,), float32) -> "
            "Box(-10, 10, (4,), float32) (shape changed (3,) -> (4,))"
        ) in message
        assert "observation_space.high" not in message
        assert "first divergence: episode 0, reset, obs\n    shape changed (3,) -> (4,)" in message

    def test_a_dict_sub_space_and_an_info_array(self, tmp_path: Path) -> None:
        def env(image_dtype: Any, mask_dtype: Any) -> ScriptedEnv:
            space = spaces.Dict(
                {
                    "image": spaces.Box(0, 255, (2, 2), dtype=image_dtype),
                    "speed": spaces.Discrete(4),
                }
            )
            observation = {"image": np.full((2, 2), 7, dtype=image_dtype), "speed": np.int64(1)}
            info = {"mask": np.array([1, 0], dtype=mask_dtype)}
            return ScriptedEnv(space, [observation] * 2, infos=[info, info])

        record_scripted(tmp_path / "golden", env(np.uint8, np.int8))
        record_scripted(tmp_path / "actual", env(np.float32, np.int64))
        message = message_of(tmp_path / "golden", tmp_path / "actual")
        assert "(spaces.image dtype changed uint8 -> float32)" in message
        assert (
            "first divergence: episode 0, reset, info.mask\n    dtype changed int8 -> int64"
            in message
        )
        assert "also differ there: obs.image (numpy type)" in message

    def test_ignoring_a_field_ignores_its_dtype(self, tmp_path: Path) -> None:
        def env(mask_dtype: Any) -> ScriptedEnv:
            info = {"mask": np.array([1, 0], dtype=mask_dtype)}
            return ScriptedEnv(BOX, [obs(1, 2, 3)] * 2, infos=[info, info])

        record_scripted(tmp_path / "golden", env(np.int8))
        record_scripted(tmp_path / "actual", env(np.int64))
        assert not compare(tmp_path / "golden", tmp_path / "actual").equal
        for ignore in (["info.mask"], ["info"], ["dtypes"], ["dtypes.info"]):
            tolerance = Tolerance.build(ignore=ignore)
            assert compare(tmp_path / "golden", tmp_path / "actual", tolerance).equal, ignore
        assert not compare(
            tmp_path / "golden", tmp_path / "actual", Tolerance.build(ignore=["dtypes.obs"])
        ).equal

    def test_a_numpy_value_becoming_a_python_value(self, tmp_path: Path) -> None:
        space = spaces.Discrete(3)
        record_scripted(tmp_path / "golden", ScriptedEnv(space, [np.int64(1)] * 2))
        record_scripted(tmp_path / "actual", ScriptedEnv(space, [1] * 2))
        message = message_of(tmp_path / "golden", tmp_path / "actual")
        assert (
            "first divergence: episode 0, reset, obs\n"
            "    numpy type changed: golden int64, actual a Python value (no numpy type)"
        ) in message


class TestRealEnvs:
    def test_blackjack_tuple_observations(self, tmp_path: Path) -> None:
        env = RecordTrajectory(gym.make("Blackjack-v1"), tmp_path)
        live, _ = env.reset(seed=4)
        env.step(0)
        env.close()
        reset = read_recording(tmp_path)[0].records[0]
        assert reset["obs"] == [int(part) for part in live]
        header = read_recording(tmp_path)[0].header
        assert header is not None
        assert [s["type"] for s in header["observation_space"]["spaces"]] == ["Discrete"] * 3

    def test_taxi_action_mask(self, tmp_path: Path) -> None:
        env = RecordTrajectory(gym.make(TAXI), tmp_path)
        env.action_space.seed(1)
        _, live = env.reset(seed=1)
        for _ in range(5):
            env.step(env.action_space.sample())
        env.close()
        reset = read_recording(tmp_path)[0].records[0]
        assert reset["info"]["action_mask"] == live["action_mask"].tolist()
        assert reset["dtypes"]["info"]["action_mask"] == "int8[6]"

    def test_frozen_lake_slip_changes_are_found(self, tmp_path: Path) -> None:
        for name, slippery in [("golden", False), ("actual", True)]:
            env = RecordTrajectory(gym.make("FrozenLake-v1", is_slippery=slippery), tmp_path / name)
            run(env, [2, 2, 1, 1, 1, 2], seed=0)
        message = message_of(tmp_path / "golden", tmp_path / "actual")
        assert "first divergence: episode 0, step t=" in message

    def test_pendulum_float32_box(self, tmp_path: Path) -> None:
        for name, gravity in [("golden", 10.0), ("actual", 9.81)]:
            env = RecordTrajectory(gym.make("Pendulum-v1", g=gravity), tmp_path / name)
            run(env, [np.array([0.5], dtype=np.float32)] * 10, seed=7)
        first_step = read_recording(tmp_path / "golden")[0].steps[0]
        assert first_step["dtypes"]["obs"] == "float32[3]"
        assert first_step["dtypes"]["action"] == "float32[1]"
        message = message_of(tmp_path / "golden", tmp_path / "actual")
        assert "first divergence: episode 0, step t=1, obs[" in message

"""The fixture with vector envs and image envs, in real pytest sessions."""

from __future__ import annotations

from pathlib import Path

import pytest

from gym_goldens.format.header import FORMAT_VERSION

VECTOR_TEST = """
import gymnasium as gym
import numpy as np

def test_cartpoles(record_trajectory):
    envs = record_trajectory(gym.make_vec("CartPole-v1", num_envs=4, **{kwargs}))
    envs.action_space.seed(0)
    envs.reset(seed=0)
    for _ in range(60):
        envs.step(envs.action_space.sample())
"""

IMAGE_TEST = """
import gymnasium as gym
import numpy as np
from gymnasium import spaces

class Frames(gym.Env):
    observation_space = spaces.Box(0, 255, (210, 160, 3), dtype=np.uint8)
    action_space = spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return self._frame(), {{}}

    def step(self, action):
        self.t += 1
        return self._frame(), 1.0, False, self.t >= {steps}, {{}}

    def _frame(self):
        frame = np.full((210, 160, 3), self.t % 200, dtype=np.uint8)
        if self.t == {poke}:
            frame[30, 40, 2] += 9
        return frame

def test_frames(record_trajectory):
    env = record_trajectory(Frames(){storage})
    env.reset(seed=0)
    for _ in range({steps}):
        env.step(0)
"""


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    # The inner sessions use no hypothesis; its plugin would be imported anew in each.
    return pytester.runpytest("-p", "no:hypothesispytest", *args)


def write_vector_test(pytester: pytest.Pytester, **kwargs: object) -> None:
    pytester.makepyfile(test_vec=VECTOR_TEST.format(kwargs=kwargs))


def write_image_test(
    pytester: pytest.Pytester, poke: int = -1, storage: str = "", steps: int = 300
) -> None:
    pytester.makepyfile(test_img=IMAGE_TEST.format(poke=poke, storage=storage, steps=steps))


class TestVectorEnvs:
    def test_goldens_per_sub_env_then_match(self, pytester: pytest.Pytester) -> None:
        write_vector_test(pytester)
        run(pytester, "--update-goldens").assert_outcomes(passed=1)
        golden = pytester.path / "goldens" / "test_vec" / "test_cartpoles" / "CartPole-v1"
        assert sorted(p.name for p in golden.iterdir()) == ["env_0", "env_1", "env_2", "env_3"]
        for index in range(4):
            assert [p.name for p in (golden / f"env_{index}").iterdir()] == ["trajectory.jsonl"]
        result = run(pytester)
        result.assert_outcomes(passed=1)
        result.stdout.fnmatch_lines(["goldens: 1 matched"])

    def test_other_vectorization_mode_fails_and_says_why(self, pytester: pytest.Pytester) -> None:
        write_vector_test(pytester)
        run(pytester, "--update-goldens").assert_outcomes(passed=1)
        write_vector_test(pytester, vectorization_mode="sync")
        result = run(pytester)
        result.assert_outcomes(failed=1)
        result.stdout.fnmatch_lines(
            [
                "*golden mismatch: goldens/test_vec/test_cartpoles/CartPole-v1/env_0/trajectory*",
                "*first divergence: sub-env 0, episode 0, reset, obs*",
                "*episodes differing: * (sub-env/episode 0/0, *",
                "*recorded with another vectorization mode (golden -> actual): "
                "vector_entry_point -> sync*",
                '*update with: pytest --update-goldens "test_vec.py::test_cartpoles"',
            ]
        )

    @pytest.mark.parametrize("mode", ["NextStep", "SameStep"])
    def test_sync_autoreset_modes_round_trip(self, pytester: pytest.Pytester, mode: str) -> None:
        write_vector_test(
            pytester, vectorization_mode="sync", vector_kwargs={"autoreset_mode": mode}
        )
        run(pytester, "--update-goldens").assert_outcomes(passed=1)
        run(pytester).assert_outcomes(passed=1)


class TestImageEnvs:
    def test_small_golden_and_one_pixel_fails(self, pytester: pytest.Pytester) -> None:
        write_image_test(pytester)
        run(pytester, "--update-goldens").assert_outcomes(passed=1)
        golden = pytester.path / "goldens" / "test_img" / "test_frames" / "Frames"
        (trajectory,) = golden.iterdir()
        assert trajectory.name == "trajectory.jsonl"
        assert trajectory.stat().st_size < 300 * 1024  # under 1 KiB a step of a 100 KiB frame
        run(pytester).assert_outcomes(passed=1)

        write_image_test(pytester, poke=123)
        result = run(pytester)
        result.assert_outcomes(failed=1)
        result.stdout.fnmatch_lines(
            [
                "*first divergence: episode 0, step t=123, obs",
                "*array uint8[[]210, 160, 3[]] (stored as a summary) changed: rows 28-40 of 210 "
                "(1 of 16 bands); sum 12398400 -> 12398409 (+9); max 123 -> 132.*",
                "*steps differing: 1 of 300 (from t=123); episode length 300 vs 300*",
            ]
        )

    def test_a_golden_of_format_2_0_keeps_comparing_until_updated(
        self, pytester: pytest.Pytester
    ) -> None:
        # Its summaries are SHA-256 ones: the test records in 2.0 to compare with them.
        write_image_test(pytester, steps=30)
        golden = pytester.path / "goldens" / "test_img" / "test_frames" / "Frames"
        pytester.makepyfile(
            make_golden=f"""
            import test_img
            from gym_goldens import RecordTrajectory
            env = RecordTrajectory(test_img.Frames(), {str(golden)!r}, format_version="2.0")
            env.reset(seed=0)
            for _ in range(30):
                env.step(0)
            env.close()
            """
        )
        assert pytester.runpython(pytester.path / "make_golden.py").ret == 0
        old = (golden / "trajectory.jsonl").read_bytes()
        assert b'"version":"2.0"' in old
        assert b'"sha256":' in old
        run(pytester).assert_outcomes(passed=1)

        write_image_test(pytester, poke=12, steps=30)
        result = run(pytester)
        result.assert_outcomes(failed=1)
        result.stdout.fnmatch_lines(["*changed: rows 28-40 of 210 (1 of 16 bands); sum*"])

        write_image_test(pytester, steps=30)
        run(pytester, "--update-goldens").assert_outcomes(passed=1)
        new = (golden / "trajectory.jsonl").read_bytes()
        assert b'"version":"%s"' % FORMAT_VERSION.encode() in new
        assert b'"digest":' in new
        assert b'"sha256":' not in new
        run(pytester).assert_outcomes(passed=1)

    def test_full_arrays_count_the_differing_elements(self, pytester: pytest.Pytester) -> None:
        # Frames kept in full are 100,800 numbers a line: a few steps are enough.
        storage = ', max_array_size={"obs": None}'
        write_image_test(pytester, storage=storage, steps=12)
        run(pytester, "--update-goldens").assert_outcomes(passed=1)
        write_image_test(pytester, poke=10, storage=storage, steps=12)
        result = run(pytester)
        result.assert_outcomes(failed=1)
        result.stdout.fnmatch_lines(
            [
                "*first divergence: episode 0, step t=10, obs[[]30[]][[]40[]][[]2[]]",
                "*golden 10  actual 19",
                "*obs: 1 of 100800 elements differ (0.000992%), largest |diff| 9, first at*",
            ]
        )

    def test_ini_compress_writes_gzip_goldens(self, pytester: pytest.Pytester) -> None:
        pytester.makeini("[pytest]\ngoldens_compress = true\n")
        write_image_test(pytester)
        run(pytester, "--update-goldens").assert_outcomes(passed=1)
        golden = pytester.path / "goldens" / "test_img" / "test_frames" / "Frames"
        assert [p.name for p in golden.iterdir()] == ["trajectory.jsonl.gz"]
        run(pytester).assert_outcomes(passed=1)
        write_image_test(pytester, poke=7)
        run(pytester).assert_outcomes(failed=1)

    def test_full_every_keeps_goldens_of_long_rollouts_small(
        self, pytester: pytest.Pytester
    ) -> None:
        write_image_test(pytester, storage=", full_every=100")
        run(pytester, "--update-goldens").assert_outcomes(passed=1)
        golden = next((pytester.path / "goldens").rglob("trajectory.jsonl"))
        assert len(golden.read_bytes().splitlines()) == 302
        assert golden.stat().st_size < 30 * 1024
        write_image_test(pytester, poke=150, storage=", full_every=100")
        result = run(pytester)
        result.assert_outcomes(failed=1)
        result.stdout.fnmatch_lines(["*step t=150, digest", "*only its digest is stored*"])


def test_bad_ini_array_size_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\ngoldens_max_array_size = lots\n")
    write_image_test(pytester)
    result = run(pytester)
    result.stderr.fnmatch_lines(
        ["*ini goldens_max_array_size must be a non-negative int or 'none'*"]
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR


def test_ini_array_size_none_keeps_arrays_in_full(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\ngoldens_max_array_size = none\n")
    write_image_test(pytester, steps=3)
    run(pytester, "--update-goldens").assert_outcomes(passed=1)
    golden: Path = next((pytester.path / "goldens").rglob("trajectory.jsonl"))
    assert b"$array" not in golden.read_bytes()

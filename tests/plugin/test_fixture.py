"""The ``record_trajectory`` fixture: names, several envs, and what is compared."""

from __future__ import annotations

from pathlib import Path

import pytest

SEVERAL_ENVS = """
import gymnasium as gym
import pytest

SHIFT = {shift!r}

def test_envs(record_trajectory):
    cart = record_trajectory(gym.make("CartPole-v1"))
    cart_again = record_trajectory(gym.make("CartPole-v1"))
    lake = record_trajectory(gym.make("FrozenLake-v1"), "lake")
    for env, seed in [(cart, 0), (cart_again, 1), (lake, 2)]:
        env.action_space.seed(seed)
        env.reset(seed=seed)
        for _ in range(15):
            _, _, terminated, truncated, _ = env.step(env.action_space.sample())
            if terminated or truncated:
                env.reset()
    if SHIFT:
        cart_again.unwrapped.gravity = 9.81
        cart_again.reset(seed=5)
        cart_again.step(0)
"""

TEST_DIR = Path("goldens/test_envs/test_envs")


def test_several_envs_and_same_name_envs_get_distinct_goldens(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_envs=SEVERAL_ENVS.format(shift=False))
    result = pytester.runpytest("--update-goldens")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["goldens: 3 created"])
    assert sorted(p.name for p in (pytester.path / TEST_DIR).iterdir()) == [
        "CartPole-v1",
        "CartPole-v1-2",
        "lake",
    ]
    first = (pytester.path / TEST_DIR / "CartPole-v1" / "trajectory.jsonl").read_bytes()
    second = (pytester.path / TEST_DIR / "CartPole-v1-2" / "trajectory.jsonl").read_bytes()
    assert first != second  # seeds 0 and 1, kept apart

    result = pytester.runpytest()
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["goldens: 3 matched"])

    # Only the second CartPole changes; the failure names its golden alone.
    pytester.makepyfile(test_envs=SEVERAL_ENVS.format(shift=True))
    result = pytester.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["goldens: 2 matched, 1 mismatched"])
    mismatches = [line for line in result.stdout.lines if line.startswith("golden mismatch: ")]
    assert len(mismatches) == 1
    assert mismatches[0].startswith(f"golden mismatch: {TEST_DIR / 'CartPole-v1-2'}")


def test_classes_and_parameters_map_to_their_own_folders(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_ids="""
        import gymnasium as gym
        import pytest

        def run(record_trajectory, seed):
            env = record_trajectory(gym.make("FrozenLake-v1"))
            env.reset(seed=seed)
            env.step(seed % 4)

        class TestA:
            def test_x(self, record_trajectory):
                run(record_trajectory, 1)

        class TestB:
            def test_x(self, record_trajectory):
                run(record_trajectory, 2)

        @pytest.mark.parametrize("env_id", ["Mountain/Car v0", "MountainCar v0"])
        def test_p(record_trajectory, env_id):
            run(record_trajectory, len(env_id))
        """
    )
    pytester.runpytest("--update-goldens").assert_outcomes(passed=4)
    found = sorted(
        str(p.parent.relative_to(pytester.path / "goldens"))
        for p in (pytester.path / "goldens").rglob("trajectory.jsonl")
    )
    assert found == [
        "test_ids/TestA/test_x/FrozenLake-v1",
        "test_ids/TestB/test_x/FrozenLake-v1",
        "test_ids/test_p[Mountain%2FCar%20v0]/FrozenLake-v1",
        "test_ids/test_p[MountainCar%20v0]/FrozenLake-v1",
    ]
    pytester.runpytest().assert_outcomes(passed=4)


def test_env_without_spec_is_named_by_its_class(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import gymnasium as gym
        import numpy as np

        class Counter(gym.Env):
            observation_space = gym.spaces.Discrete(10)
            action_space = gym.spaces.Discrete(2)

            def reset(self, *, seed=None, options=None):
                super().reset(seed=seed)
                self.n = 0
                return self.n, {}

            def step(self, action):
                self.n += int(action)
                return self.n, 0.5, self.n >= 3, False, {"n": np.int64(self.n)}

        def test_counter(record_trajectory):
            env = record_trajectory(Counter())
            env.reset(seed=0)
            for _ in range(3):
                env.step(1)
        """
    )
    result = pytester.runpytest("--update-goldens")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        ["  created: goldens/test_env_without_spec_is_named_by_its_class/test_counter/Counter"]
    )


def test_a_failing_test_is_not_compared(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_own=f"""
        import gymnasium as gym

        FAIL = {False!r}
        GRAVITY = {9.8!r}

        def test_own(record_trajectory):
            env = record_trajectory(gym.make("CartPole-v1"))
            env.unwrapped.gravity = GRAVITY
            env.reset(seed=0)
            for _ in range(5):
                env.step(0)
            assert not FAIL, "the test's own failure"
        """
    )
    pytester.runpytest("--update-goldens").assert_outcomes(passed=1)
    source = (pytester.path / "test_own.py").read_text()
    pytester.makepyfile(
        test_own=source.replace("FAIL = False", "FAIL = True").replace("9.8", "9.81")
    )
    result = pytester.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*AssertionError: the test's own failure*"])
    result.stdout.no_fnmatch_line("golden mismatch*")
    result.stdout.no_fnmatch_line("*- gym-goldens -*")


def test_an_env_never_reset_fails_with_the_fix(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import gymnasium as gym

        def test_idle(record_trajectory):
            record_trajectory(gym.make("CartPole-v1"), "idle")
        """
    )
    for args in ([], ["--update-goldens"]):
        result = pytester.runpytest(*args)
        result.assert_outcomes(failed=1)
        result.stdout.fnmatch_lines(
            [
                "nothing recorded: the env recorded as 'idle' was never reset; "
                "call env.reset(seed=...) before stepping it"
            ]
        )
    assert not (pytester.path / "goldens").exists()


def test_bad_fixture_arguments_say_what_was_expected(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import gymnasium as gym

        def test_not_an_env(record_trajectory):
            record_trajectory("CartPole-v1")

        def test_empty_name(record_trajectory):
            record_trajectory(gym.make("CartPole-v1"), "  ")
        """
    )
    result = pytester.runpytest()
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines(
        [
            "*TypeError: record_trajectory expects a gymnasium.Env or gymnasium.vector.VectorEnv,"
            " got str; pass the env itself*",
            "*ValueError: record_trajectory name must be a non-empty string, got '  '",
        ],
        consecutive=False,
    )

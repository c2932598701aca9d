"""assert_deterministic(): the same seeded rollout must give the same trajectory."""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

from gym_goldens import GoldensError, NondeterminismError, Tolerance, assert_deterministic
from tests.support import determinism_envs as envs


@pytest.mark.parametrize(
    "make_env",
    [
        "CartPole-v1",
        "MountainCar-v0",
        "Pendulum-v1",
        "Acrobot-v1",
        "Blackjack-v1",
        lambda: gym.make("FrozenLake-v1", is_slippery=True),
        envs.SeededEnv,
    ],
)
def test_deterministic_envs_pass(make_env: object) -> None:
    assert_deterministic(make_env, seed=0, steps=60, runs=3)  # type: ignore[arg-type]


def test_frozen_lake_is_not_said_to_ignore_its_seed() -> None:
    # It always starts on the same square, but its np_random does follow the seed.
    assert_deterministic(lambda: gym.make("FrozenLake-v1"), seed=0, steps=5)


def _failure(make_env: object, **kwargs: object) -> NondeterminismError:
    with pytest.raises(NondeterminismError) as info:
        assert_deterministic(make_env, seed=0, steps=20, **kwargs)  # type: ignore[arg-type]
    return info.value


@pytest.mark.parametrize(
    ("env", "lines"),
    [
        (
            envs.UnseededNumpyEnv,
            [
                "nondeterministic: run 1 vs run 2: *",
                "  first divergence: episode 0, step t=1, obs[[]0]",
            ],
        ),
        (
            envs.GlobalRandomEnv,
            [
                "env.reset(seed=0) twice gave different observations on the same env:",
                "nondeterministic: run 1 vs run 2: *",
                "  hint: the runs part at the first observation, so reset(seed=...) does not seed*",
                "  first divergence: episode 0, reset, obs[[]0]",
            ],
        ),
        (
            envs.WallClockEnv,
            [
                "nondeterministic: run 1 vs run 2: *",
                "  hint: info.time looks like a clock: *, or leave it out of the comparison "
                'with ignore=[[]"info.time"[]]',
                "  first divergence: episode 0, step t=1, info.time",
            ],
        ),
        (
            envs.GlobalCounterEnv,
            [
                "nondeterministic: run 1 vs run 2: *",
                "  first divergence: episode 0, step t=1, info.serial",
            ],
        ),
        (
            envs.LeakyResetEnv,
            [
                "nondeterministic: run 1 vs run 1 reset again: *",
                "  state leaks across resets: the same env, reset with the same seed, *",
                "  first divergence: episode 0, step t=1, info.total_steps",
                "    golden 1  actual 21",
            ],
        ),
        (
            envs.OwnRngEnv,
            [
                "env.reset(seed=0) twice gave different observations on the same env:",
                "nondeterministic: run 1 vs run 1 reset again: *",
                "  first divergence: episode 0, reset, obs[[]0]",
            ],
        ),
    ],
)
def test_each_kind_of_nondeterminism_is_caught(env: object, lines: list[str]) -> None:
    error = _failure(env)
    assert isinstance(error, AssertionError)
    assert isinstance(error, GoldensError)
    assert error.comparison is not None
    assert not error.comparison.equal
    pytest.LineMatcher(str(error).splitlines()).fnmatch_lines(
        [*lines, "  make it deterministic: draw every random number from self.np_random*"]
    )


def test_an_env_that_ignores_its_seed_is_named() -> None:
    error = _failure(envs.FixedStartEnv)
    assert error.comparison is None
    assert str(error).startswith(
        "the env ignores reset(seed=...): seeds 0 and 1 gave the same first observation "
        "and left the env's np_random as it was\n"
        "  call super().reset(seed=seed) at the start of reset()"
    )
    assert_deterministic(envs.FixedStartEnv, seed=0, steps=20, check_seeding=False)


def test_set_order_does_not_show_within_one_process() -> None:
    # The documented limit: hash order needs --goldens-determinism-mode=subprocess.
    assert_deterministic(envs.SetOrderEnv, seed=0, steps=20)


def test_a_tolerance_or_ignore_lets_small_noise_pass() -> None:
    assert_deterministic(
        envs.WallClockEnv, seed=0, steps=20, tolerance=Tolerance(ignore=("info.time",))
    )
    loose = Tolerance(atol=1.0)
    assert_deterministic(envs.UnseededNumpyEnv, seed=0, steps=20, tolerance=loose)


def test_a_deterministic_policy_is_used() -> None:
    actions: list[int] = []

    def policy(obs: np.ndarray) -> int:
        actions.append(int(obs[0] > 0))
        return actions[-1]

    assert_deterministic(envs.SeededEnv, seed=3, steps=10, policy=policy)
    # two fresh runs and one on the first env reset again
    assert len(actions) == 30


def test_recordings_go_to_the_given_folder_and_are_kept(tmp_path: Path) -> None:
    assert_deterministic("CartPole-v1", seed=0, steps=10, runs=3, output_dir=tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "run-1",
        "run-1-reset-again",
        "run-2",
        "run-3",
    ]


def test_a_failure_keeps_its_temporary_recordings() -> None:
    error = _failure(envs.UnseededNumpyEnv)
    kept = Path(str(error).rsplit("recordings kept in ", 1)[1].strip())
    assert (kept / "run-1" / "trajectory.jsonl").is_file()
    assert (kept / "run-2" / "trajectory.jsonl").is_file()


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        (
            {"make_env": "CartPole-v1", "runs": 1},
            ValueError,
            "needs runs >= 2 to compare runs, got 1",
        ),
        ({"make_env": 3}, TypeError, "expects a factory that makes an env, got int"),
        ({"make_env": lambda: "env"}, TypeError, "make_env must return a gymnasium.Env, got str"),
    ],
)
def test_bad_arguments(kwargs: dict, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        assert_deterministic(seed=0, steps=5, **kwargs)


class _RightToLeftEnv(gym.Env[str, int]):
    """Observations that change from reset to reset and hold a right-to-left override."""

    observation_space = gym.spaces.Text(max_length=8, charset="ab\u202e0123456789")
    action_space = gym.spaces.Discrete(2)

    def __init__(self) -> None:
        self.resets = 0

    def reset(
        self, *, seed: int | None = None, options: dict[str, object] | None = None
    ) -> tuple[str, dict[str, object]]:
        super().reset(seed=seed)
        self.resets += 1
        return f"a\u202e{self.resets}b", {}

    def step(self, action: int) -> tuple[str, float, bool, bool, dict[str, object]]:
        return "ab", 0.0, False, False, {}


def test_what_the_env_returned_is_escaped_in_the_findings() -> None:
    error = _failure(_RightToLeftEnv)
    text = str(error)
    assert "reset(seed=0) twice gave different observations" in text
    assert "a\\u202e1b" in text
    assert "\u202e" not in text


def test_an_env_whose_reward_is_a_vector_is_checked() -> None:
    from tests.support.envs import MultiObjectiveEnv

    assert_deterministic(MultiObjectiveEnv, seed=0, steps=30, check_seeding=False)


def test_a_mo_gymnasium_env_is_checked() -> None:
    mo_gymnasium = pytest.importorskip(
        "mo_gymnasium", reason="mo-gymnasium is not installed: pip install mo-gymnasium"
    )
    assert_deterministic(lambda: mo_gymnasium.make("minecart-v0"), seed=0, steps=30)

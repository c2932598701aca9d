"""A golden missing after a rename names the stale golden it was, and how to keep it."""

from __future__ import annotations

import shutil

import pytest

CARTPOLE = """
import gymnasium as gym
from gym_goldens import rollout


def {name}(record_trajectory):
    rollout(record_trajectory(gym.make("CartPole-v1")), seed={seed}, steps=20)


def test_other(record_trajectory):
    rollout(record_trajectory(gym.make("CartPole-v1")), seed=5, steps=20)
"""


def _cartpole(pytester: pytest.Pytester, name: str, seed: int = 0) -> None:
    pytester.makepyfile(test_cp=CARTPOLE.format(name=name, seed=seed))


def test_a_renamed_test_names_the_golden_of_its_old_name(pytester: pytest.Pytester) -> None:
    _cartpole(pytester, "test_old")
    pytester.runpytest("--update-goldens").assert_outcomes(passed=2)
    _cartpole(pytester, "test_new")
    result = pytester.runpytest()
    result.assert_outcomes(failed=1, passed=1)
    result.stdout.fnmatch_lines(
        [
            "golden missing: goldens/test_cp/test_new/CartPole-v1",
            "  no golden has been recorded for this trajectory yet",
            "  renamed? a golden that no test of this run uses holds the same trajectory: "
            "goldens/test_cp/test_old/CartPole-v1",
            "    keep it, and its history, with: mkdir -p goldens/test_cp/test_new && "
            "git mv goldens/test_cp/test_old/CartPole-v1 goldens/test_cp/test_new/CartPole-v1",
        ]
    )
    # What git mv does to the files: then the renamed test passes, nothing is stale.
    (pytester.path / "goldens/test_cp/test_new").mkdir()
    shutil.move(
        pytester.path / "goldens/test_cp/test_old/CartPole-v1",
        pytester.path / "goldens/test_cp/test_new/CartPole-v1",
    )
    passed = pytester.runpytest("--goldens-strict")
    passed.assert_outcomes(passed=2)
    assert not any("stale" in line for line in passed.stdout.lines)


def test_a_golden_of_the_same_env_with_another_trajectory_is_named(
    pytester: pytest.Pytester,
) -> None:
    _cartpole(pytester, "test_old")
    pytester.runpytest("--update-goldens").assert_outcomes(passed=2)
    _cartpole(pytester, "test_new", seed=3)
    result = pytester.runpytest("test_cp.py::test_new")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "  renamed? a golden that no test of this run uses records the same env, "
            "CartPole-v1: goldens/test_cp/test_old/CartPole-v1",
        ]
    )
    # test_other is not selected, but it exists: its golden is its own.
    assert not any("test_other/CartPole-v1" in line for line in result.stdout.lines)


TWINS = """
import gymnasium as gym
from gym_goldens import rollout


def test_other(record_trajectory):
    rollout(record_trajectory(gym.make("CartPole-v1")), seed=5, steps=20)


def test_two(record_trajectory):
    rollout(record_trajectory(gym.make("CartPole-v1")), seed=5, steps=20)
"""


def test_a_new_test_names_no_golden_of_a_test_that_exists(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_cp=TWINS.split("def test_two", maxsplit=1)[0])
    pytester.runpytest("--update-goldens").assert_outcomes(passed=1)
    # test_two records what test_other records: a twin, not a rename.
    pytester.makepyfile(test_cp=TWINS)
    for args in [(), ("test_cp.py::test_two",), ("-k", "test_two")]:
        result = pytester.runpytest(*args)
        result.stdout.fnmatch_lines(["golden missing: goldens/test_cp/test_two/CartPole-v1"])
        assert not any("renamed?" in line for line in result.stdout.lines)


REGISTERED = """
import gymnasium as gym
import numpy as np


class Walker(gym.Env):
    observation_space = gym.spaces.Box(-100.0, 100.0, (1,), np.float64)
    action_space = gym.spaces.Discrete(2)

    def __init__(self, stride=1.0):
        self.stride = stride

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.x = np.zeros(1)
        return self.x.copy(), {}

    def step(self, action):
        self.x += self.stride if action else -self.stride
        return self.x.copy(), 1.0, False, False, {}


# Walker-v4 steps further than v3; v5 steps as v3 does.
for version, stride in [(3, 1.0), (4, 1.5), (5, 1.0)]:
    if f"Walker-v{version}" not in gym.registry:
        gym.register(f"Walker-v{version}", entry_point=Walker, kwargs={"stride": stride})
"""

WALKER = """
import gymnasium as gym
import pytest
from gym_goldens import rollout


@pytest.mark.parametrize("env_id", ["{env_id}"])
def test_walker(record_trajectory, env_id):
    rollout(record_trajectory(gym.make(env_id)), seed=0, steps=20)


def test_unrelated():
    pass
"""


@pytest.mark.parametrize(
    ("new", "line"),
    [
        (
            "Walker-v4",
            "  renamed? a golden that no test of this run uses records Walker-v3, another version "
            "of Walker-v4: goldens/test_walker/test_walker[[]Walker-v3[]]/Walker-v3",
        ),
        (
            "Walker-v5",
            "  renamed? a golden that no test of this run uses holds the same trajectory: "
            "goldens/test_walker/test_walker[[]Walker-v3[]]/Walker-v3",
        ),
    ],
    ids=["changed dynamics", "same dynamics"],
)
def test_a_new_env_version_names_the_golden_of_the_old_one(
    pytester: pytest.Pytester, new: str, line: str
) -> None:
    pytester.makeconftest(REGISTERED)
    pytester.makepyfile(test_walker=WALKER.format(env_id="Walker-v3"))
    pytester.runpytest("--update-goldens").assert_outcomes(passed=2)
    pytester.makepyfile(test_walker=WALKER.format(env_id=new))
    # Also when -k deselects a test of the file: it was collected, it exists.
    for args in [(), ("-k", "not unrelated")]:
        result = pytester.runpytest(*args)
        result.assert_outcomes(failed=1, passed=1 - len(args) // 2)
        result.stdout.fnmatch_lines(
            [
                f"golden missing: goldens/test_walker/test_walker[[]{new}[]]/{new}",
                line,
                "    keep it, and its history, with: "
                f"mkdir -p 'goldens/test_walker/test_walker[[]{new}[]]' && "
                "git mv 'goldens/test_walker/test_walker[[]Walker-v3[]]/Walker-v3' "
                f"'goldens/test_walker/test_walker[[]{new}[]]/{new}'",
            ]
        )

"""record_trajectory(env, replay=True): drive the env with the golden's actions."""

from __future__ import annotations

import pytest

TEST = """
import os

import gymnasium as gym
import numpy as np
from gym_goldens import rollout

REPLAY = os.environ.get("REPLAY") == "1"


def test_pendulum(record_trajectory):
    gravity = float(os.environ.get("GRAVITY", "10.0"))
    env = record_trajectory(gym.make("Pendulum-v1", g=gravity), replay=REPLAY)
    seed = int(os.environ.get("SEED", "0"))
    rollout(env, seed=seed, steps=60)


def test_frozen_lake_two_episodes(record_trajectory):
    env = record_trajectory(gym.make("FrozenLake-v1"), replay=REPLAY)
    seed = int(os.environ.get("SEED", "0"))
    rollout(env, seed=seed, steps=40)
"""


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makepyfile(test_replay=TEST)
    pytester.runpytest("--update-goldens").assert_outcomes(passed=2)
    return pytester


def test_another_policy_fails_when_recorded(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SEED", "5")
    result = project.runpytest("-k", "frozen")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "golden mismatch: *FrozenLake-v1/trajectory.jsonl*",
            "  mode: recorded (the test's own actions)",
            "  the actions differ at the first divergence: either the policy changed, or "
            "observations within tolerance fed back into it (a controller that reads them); to "
            "compare the dynamics alone, replay the golden's actions with "
            "record_trajectory(env, replay=True)",
            "  first divergence: episode 0, step t=1, action",
        ]
    )


def test_another_policy_passes_when_replayed(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Another seed and so other actions: replay uses the golden's seeds and actions.
    monkeypatch.setenv("SEED", "5")
    monkeypatch.setenv("REPLAY", "1")
    result = project.runpytest()
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["goldens: 2 matched"])


def test_changed_dynamics_fail_in_replay_mode(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SEED", "5")
    monkeypatch.setenv("REPLAY", "1")
    monkeypatch.setenv("GRAVITY", "9.81")
    result = project.runpytest("-k", "pendulum")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "golden mismatch in replay mode: *Pendulum-v1/trajectory.jsonl*",
            "  mode: replay (the golden's own actions and reset seeds drove the env, "
            "so the dynamics changed, not the policy)",
            "  first divergence: episode 0, step t=1, obs[[]0]",
        ]
    )


def test_replay_without_a_golden_says_how_to_make_one(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import gymnasium as gym
        from gym_goldens import rollout

        def test_new(record_trajectory):
            rollout(record_trajectory(gym.make("CartPole-v1"), replay=True), seed=0, steps=5)
        """
    )
    result = pytester.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*GoldenFormatError: goldens/test_replay_without_a_golden_says_how_to_make_one/"
            "test_new/CartPole-v1: record_trajectory(env, replay=True) replays a golden, and "
            'there is none here; record it first with: pytest --update-goldens "*::test_new"',
        ]
    )
    # Under --update-goldens there is nothing to replay yet: the test's actions are recorded.
    pytester.runpytest("--update-goldens").assert_outcomes(passed=1)
    pytester.runpytest().assert_outcomes(passed=1)


def test_replay_composes_with_determinism_runs(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REPLAY", "1")
    result = project.runpytest("--goldens-determinism=1")
    result.assert_outcomes(passed=2)

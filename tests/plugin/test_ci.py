"""Running in CI: --update-goldens with CI set warns in the summary."""

from __future__ import annotations

import pytest

TEST = """
import gymnasium as gym
from gym_goldens import rollout

def test_cartpole(record_trajectory):
    rollout(record_trajectory(gym.make("CartPole-v1")), seed=0, steps=10)
"""

WARNING = (
    "warning: --update-goldens ran with CI set: goldens written in CI are usually a mistake; "
    "regenerate them locally, review the diff and commit it"
)


@pytest.mark.parametrize("value", ["true", "1", "yes"])
def test_update_in_ci_warns(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv("CI", value)
    pytester.makepyfile(TEST)
    result = pytester.runpytest("--update-goldens")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["goldens: 1 created", "*created: *", WARNING])


@pytest.mark.parametrize("value", [None, "", "false", "0"])
def test_no_warning_outside_ci(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, value: str | None
) -> None:
    if value is None:
        monkeypatch.delenv("CI", raising=False)
    else:
        monkeypatch.setenv("CI", value)
    pytester.makepyfile(TEST)
    result = pytester.runpytest("--update-goldens")
    result.assert_outcomes(passed=1)
    result.stdout.no_fnmatch_line("*--update-goldens ran with CI set*")


def test_checking_in_ci_does_not_warn(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(TEST)
    pytester.runpytest("--update-goldens").assert_outcomes(passed=1)
    monkeypatch.setenv("CI", "true")
    result = pytester.runpytest()
    result.assert_outcomes(passed=1)
    result.stdout.no_fnmatch_line("*--update-goldens ran with CI set*")

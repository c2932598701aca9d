"""Values a recording cannot hold, and odd recording names: the test's own clean failure.

A record longer than a reader accepts (an info string over 16 MiB) is refused
when it is recorded, with the limit, not written and then found unreadable
(an update called the test nondeterministic). A recording name with a lone
surrogate gets a folder like any other name.
"""

from __future__ import annotations

import pytest

BIG_INFO = """
import gymnasium as gym


class BigInfo(gym.Wrapper):
    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        return obs, reward, terminated, truncated, {"text": "x" * (17 << 20)}


def test_big(record_trajectory):
    env = record_trajectory(BigInfo(gym.make("CartPole-v1")))
    env.reset(seed=0)
    env.step(0)
"""

SURROGATE_NAME = """
import os

import gymnasium as gym


def test_name(record_trajectory):
    env = record_trajectory(gym.make("CartPole-v1"), name="\\ud800")
    env.unwrapped.gravity = float(os.environ.get("GRAVITY", "9.8"))
    env.reset(seed=0)
    for _ in range(5):
        env.step(0)
"""


@pytest.mark.parametrize("update", [False, True])
def test_a_record_past_the_line_limit_fails_the_test_with_the_limit(
    pytester: pytest.Pytester, update: bool
) -> None:
    pytester.makepyfile(test_big=BIG_INFO)

    result = pytester.runpytest(*(["--update-goldens"] if update else []))

    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            ">       env.step(0)",
            "E       gym_goldens.errors.UnrecordableValueError: the record of step t=1 is "
            "17,825,9* bytes, longer than 16 MiB, the longest line a reader accepts: info.text "
            "holds 17,825,* bytes of it; *",
        ]
    )
    result.stdout.no_fnmatch_line("*nondeterministic*")
    result.stdout.no_fnmatch_line("*gym_goldens/*.py:*")  # no frame of ours
    assert not (pytester.path / "goldens").exists()


def test_a_recording_name_with_a_lone_surrogate_is_recorded_and_checked(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(test_name=SURROGATE_NAME)
    golden = "goldens/test_name/test_name/%ED%A0%80"

    created = pytester.runpytest("--update-goldens")

    created.assert_outcomes(passed=1)
    created.stdout.fnmatch_lines([f"  created: {golden}"])
    pytester.runpytest().assert_outcomes(passed=1)
    monkeypatch.setenv("GRAVITY", "12.0")
    failed = pytester.runpytest("--goldens-report", "report", "--goldens-artifacts", "artifacts")
    failed.assert_outcomes(failed=1)
    failed.stdout.fnmatch_lines([f"golden mismatch: {golden}/trajectory.jsonl:3"])
    assert (pytester.path / "report" / "index.html").is_file()

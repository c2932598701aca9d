"""A golden mismatch whose evidence points to nondeterminism says so."""

from __future__ import annotations

from pathlib import Path

import pytest

ENVS = Path(__file__).parent.parent / "support" / "determinism_envs.py"

TEST = """
import pytest

import determinism_envs
from gym_goldens import rollout

{marker}
def test_env(record_trajectory):
    rollout(record_trajectory(determinism_envs.{env}()), seed=0, steps=20)
"""


def _project(pytester: pytest.Pytester, env: str, marker: str = "") -> None:
    pytester.makepyfile(determinism_envs=ENVS.read_text())
    pytester.makepyfile(test_env=TEST.format(env=env, marker=marker))


def test_strings_in_another_order_hint_at_an_iteration_order(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    _project(pytester, "SetOrderEnv")
    monkeypatch.setenv("PYTHONHASHSEED", "0")
    pytester.runpytest_subprocess("--update-goldens", "--update-goldens-once").assert_outcomes(
        passed=1
    )
    monkeypatch.setenv("PYTHONHASHSEED", "1")
    result = pytester.runpytest_subprocess()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "golden mismatch: goldens/test_env/test_env/SetOrderEnv/trajectory.jsonl:*",
            "  hint: info.visiting holds the golden's values in another order: an iteration "
            "order? Iterating over a set of strings follows PYTHONHASHSEED, which differs "
            "between processes: iterate over sorted(...) instead",
            "  first divergence: *",
        ]
    )


def test_a_unix_time_hints_at_a_clock(pytester: pytest.Pytester) -> None:
    _project(pytester, "TimestampEnv", marker="@pytest.mark.goldens(rtol=0)")
    pytester.runpytest("--update-goldens", "--update-goldens-once").assert_outcomes(passed=1)
    result = pytester.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "golden mismatch: goldens/test_env/test_env/TimestampEnv/trajectory.jsonl:*",
            "  hint: info.stamp holds values like a Unix time (*): a clock? leave it out of the "
            'comparison with @pytest.mark.goldens(ignore=[[]"info.stamp"[]])',
            "  first divergence: episode 0, step t=1, info.stamp",
        ]
    )

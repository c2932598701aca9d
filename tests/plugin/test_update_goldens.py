"""``--update-goldens``: create, then pass; rewrite nothing that did not change."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from gym_goldens.format.reader import read_recording
from tests.support.legacy import split_into_episode_files

GOLDEN = Path("goldens/test_cp/test_cartpole/CartPole-v1")


def test_update_creates_goldens_then_plain_run_passes(
    pytester: pytest.Pytester, cartpole_test: Callable[..., Path]
) -> None:
    cartpole_test()
    result = pytester.runpytest("--update-goldens")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        [
            "*- gym-goldens -*",
            "goldens: 1 created",
            f"  created: {GOLDEN}",
        ]
    )
    assert [p.name for p in (pytester.path / GOLDEN).iterdir()] == ["trajectory.jsonl"]
    assert len(read_recording(pytester.path / GOLDEN)) > 1  # 300 random steps end several

    result = pytester.runpytest()
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["goldens: 1 matched"])
    result.stdout.no_fnmatch_line("*created*")


def test_second_update_rewrites_nothing(
    pytester: pytest.Pytester,
    cartpole_test: Callable[..., Path],
    files_under: Callable[[Path], dict[Path, tuple[bytes, int]]],
) -> None:
    cartpole_test()
    pytester.runpytest("--update-goldens").assert_outcomes(passed=1)
    goldens = pytester.path / "goldens"
    # Put the mtimes in the past, so that a rewrite could not keep them by chance.
    past = 1_000_000_000_000_000_000
    for path in goldens.rglob("*.jsonl"):
        os.utime(path, ns=(past, past))
    before = files_under(goldens)

    result = pytester.runpytest("--update-goldens")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["goldens: 1 unchanged"])
    result.stdout.no_fnmatch_line("*created:*")
    result.stdout.no_fnmatch_line("*updated:*")
    assert files_under(goldens) == before
    assert all(mtime == past for _, mtime in before.values())


def test_update_replaces_a_changed_golden(
    pytester: pytest.Pytester, cartpole_test: Callable[..., Path]
) -> None:
    cartpole_test()
    pytester.runpytest("--update-goldens").assert_outcomes(passed=1)
    cartpole_test(gravity=9.81)
    pytester.runpytest().assert_outcomes(failed=1)
    result = pytester.runpytest("--update-goldens")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["goldens: 1 updated", f"  updated: {GOLDEN}"])
    pytester.runpytest().assert_outcomes(passed=1)


def test_a_golden_of_format_1_matches_until_the_update_migrates_it(
    pytester: pytest.Pytester, cartpole_test: Callable[..., Path]
) -> None:
    cartpole_test()
    pytester.runpytest("--update-goldens").assert_outcomes(passed=1)
    golden = pytester.path / GOLDEN
    trajectory = golden / "trajectory.jsonl"
    content = trajectory.read_bytes()
    # The same episodes, as gym-goldens 1.x kept them: one file per episode.
    split_into_episode_files(trajectory, golden)
    trajectory.unlink()
    names = sorted(p.name for p in golden.iterdir())
    assert names[:2] == ["episode_00000.jsonl", "episode_00001.jsonl"]

    check = pytester.runpytest()
    check.assert_outcomes(passed=1)
    check.stdout.fnmatch_lines(["goldens: 1 matched"])
    cartpole_test(gravity=9.81)
    mismatch = pytester.runpytest()
    mismatch.assert_outcomes(failed=1)
    mismatch.stdout.fnmatch_lines([f"golden mismatch: {GOLDEN}/episode_00000.jsonl*"])

    cartpole_test()
    update = pytester.runpytest("--update-goldens")
    update.assert_outcomes(passed=1)
    update.stdout.fnmatch_lines(["goldens: 1 updated", f"  updated: {GOLDEN}"])
    assert [p.name for p in golden.iterdir()] == ["trajectory.jsonl"]
    assert trajectory.read_bytes() == content
    pytester.runpytest("--update-goldens").stdout.fnmatch_lines(["goldens: 1 unchanged"])


def test_a_test_failing_on_its_own_writes_no_golden(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import gymnasium as gym

        def test_broken(record_trajectory):
            env = record_trajectory(gym.make("FrozenLake-v1"))
            env.reset(seed=0)
            env.step(1)
            assert 1 == 2, "the test's own failure"
        """
    )
    result = pytester.runpytest("--update-goldens")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*the test's own failure*"])
    assert not (pytester.path / "goldens").exists()
    result.stdout.no_fnmatch_line("*- gym-goldens -*")


def test_nothing_is_printed_when_no_golden_was_touched(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_plain():\n    assert True\n")
    for args in ([], ["--update-goldens"]):
        result = pytester.runpytest(*args)
        result.assert_outcomes(passed=1)
        result.stdout.no_fnmatch_line("*- gym-goldens -*")
        result.stdout.no_fnmatch_line("*goldens:*")
    assert not (pytester.path / "goldens").exists()

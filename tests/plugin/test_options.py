"""Command-line options and ini values: goldens folder, disabling the plugin."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

GOLDEN_PART = Path("test_cp/test_cartpole/CartPole-v1/trajectory.jsonl")


def test_goldens_dir_option(pytester: pytest.Pytester, cartpole_test: Callable[..., Path]) -> None:
    cartpole_test()
    result = pytester.runpytest("--update-goldens", "--goldens-dir", "elsewhere/goldens")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["  created: elsewhere/goldens/test_cp/test_cartpole/CartPole-v1"])
    assert (pytester.path / "elsewhere" / "goldens" / GOLDEN_PART).is_file()
    assert not (pytester.path / "goldens").exists()
    pytester.runpytest("--goldens-dir", "elsewhere/goldens").assert_outcomes(passed=1)
    # Without the option the default folder is used, and has no golden.
    result = pytester.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["golden missing: goldens/test_cp/test_cartpole/CartPole-v1"])


def test_goldens_dir_ini_is_relative_to_the_rootdir(
    pytester: pytest.Pytester, cartpole_test: Callable[..., Path]
) -> None:
    pytester.makeini("[pytest]\ngoldens_dir = snapshots/trajectories\n")
    cartpole_test()
    pytester.runpytest("--update-goldens").assert_outcomes(passed=1)
    assert (pytester.path / "snapshots" / "trajectories" / GOLDEN_PART).is_file()
    # Started from a subfolder, the ini path still resolves against the rootdir.
    sub = pytester.mkdir("sub")
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(sub)
        result = pytester.runpytest(str(pytester.path / "test_cp.py"), f"--rootdir={pytester.path}")
    result.assert_outcomes(passed=1)
    # The option wins over the ini value.
    result = pytester.runpytest("--goldens-dir", "other")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["golden missing: other/test_cp/test_cartpole/CartPole-v1"])


def test_options_are_listed_in_help(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--help")
    result.stdout.fnmatch_lines(
        [
            "golden trajectories of Gymnasium envs:",
            "  --update-goldens*",
            "  --goldens-dir=DIR*",
        ]
    )
    result.stdout.fnmatch_lines(
        ["  goldens_dir (string):*", "  goldens_rtol (string):*", "  goldens_atol (string):*"]
    )


def test_plugin_can_be_disabled(
    pytester: pytest.Pytester, cartpole_test: Callable[..., Path]
) -> None:
    cartpole_test()
    result = pytester.runpytest("-p", "no:gym_goldens")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*fixture 'record_trajectory' not found*"])
    result = pytester.runpytest("-p", "no:gym_goldens", "--update-goldens")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*unrecognized arguments: --update-goldens*"])
    assert not (pytester.path / "goldens").exists()

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


@pytest.mark.parametrize("how", ["default", "--goldens-dir", "ini"])
def test_a_goldens_folder_that_is_a_symlink_is_refused(
    pytester: pytest.Pytester,
    tmp_path_factory: pytest.TempPathFactory,
    cartpole_test: Callable[..., Path],
    how: str,
) -> None:
    # A pull request replaces goldens/ by a symlink: every read, write and prune
    # would happen wherever it points.
    outside = tmp_path_factory.mktemp("outside")
    (outside / "precious.txt").write_text("keep me")
    cartpole_test()
    (pytester.path / "goldens").symlink_to(outside, target_is_directory=True)
    arguments = {"default": [], "--goldens-dir": ["--goldens-dir=goldens"], "ini": []}[how]
    if how == "ini":
        pytester.makeini("[pytest]\ngoldens_dir = goldens\n")
    result = pytester.runpytest("--update-goldens", *arguments)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [f"*goldens is a symlink to {outside}; gym-goldens does not follow a symlinked folder*"]
    )
    assert sorted(p.name for p in outside.iterdir()) == ["precious.txt"]
    # Named itself, on purpose, the folder is used.
    deliberate = pytester.runpytest("--update-goldens", f"--goldens-dir={outside}")
    deliberate.assert_outcomes(passed=1)
    assert (outside / GOLDEN_PART).is_file()


def test_a_symlinked_ancestor_of_the_goldens_folder_is_fine(
    pytester: pytest.Pytester,
    tmp_path_factory: pytest.TempPathFactory,
    cartpole_test: Callable[..., Path],
) -> None:
    real = tmp_path_factory.mktemp("real")
    (pytester.path / "linked").symlink_to(real, target_is_directory=True)
    cartpole_test()
    pytester.runpytest("--update-goldens", "--goldens-dir=linked/goldens").assert_outcomes(passed=1)
    assert (real / "goldens" / "test_cp" / "test_cartpole" / "CartPole-v1").is_dir()
    pytester.runpytest("--goldens-dir=linked/goldens").assert_outcomes(passed=1)

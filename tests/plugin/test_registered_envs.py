"""registered_envs in a pytest run: skips, failures, ids left out in verbose output, no match."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import gym_goldens.audit.registry  # noqa: F401 - imported once here, not in every pytester run
from tests.support import planted

EVERY_ENV = """
import gymnasium as gym
import pytest

from gym_goldens import registered_envs, rollout


@pytest.mark.parametrize(
    "env_id", registered_envs("Loading/*", "Sound/*", import_modules=["planted_envs"])
)
def test_every_env(record_trajectory, env_id):
    rollout(record_trajectory(gym.make(env_id)), seed=0, steps=20)
"""

LEFT_OUT = [
    "registered_envs left out 2 ids: deprecated or legacy, their entry points cannot load",
    "  Loading/Old-v0: out of date (Loading/Old-v1 is registered); planted_absent_dependency is "
    "not installed (No module named 'planted_absent_dependency')",
    "  Loading/VectorOnly-v0: registered for gymnasium.make_vec only (no entry_point)",
]


@pytest.fixture
def project(pytester: pytest.Pytester) -> Iterator[pytest.Pytester]:
    """A project with the planted env package and a golden test of its envs."""
    planted.install(pytester.path)
    pytester.makepyfile(test_every_env=EVERY_ENV)
    try:
        yield pytester
    finally:
        planted.forget()


def test_every_registered_env_gets_a_test(project: pytest.Pytester) -> None:
    result = project.runpytest("--update-goldens", "-v", "-rs")
    result.assert_outcomes(passed=3, skipped=2, failed=2)
    result.stdout.fnmatch_lines(
        [
            "*::test_every_env[[]Loading/Broken-v0[]] FAILED*",
            "*::test_every_env[[]Loading/BrokenSubmodule-v0[]] FAILED*",
            "*::test_every_env[[]Loading/MissingDependency-v0[]] SKIPPED*",
            "*::test_every_env[[]Loading/NeedsExtra-v0[]] SKIPPED*",
            "*::test_every_env[[]Loading/Old-v1[]] PASSED*",
            "*::test_every_env[[]Sound/NewActionSpace-v0[]] PASSED*",
            "*::test_every_env[[]Sound/Walker-v0[]] PASSED*",
        ]
    )
    # A broken package fails, with the error gym.make meets.
    result.stdout.fnmatch_lines(
        ["E *AttributeError: module 'planted_envs' has no attribute 'NoSuchWalker'"]
    )
    # A missing dependency skips, at the test (its location) with the reason.
    result.stdout.fnmatch_lines(
        [
            "SKIPPED [[]1[]] test_every_env.py:*: planted_absent_dependency is not installed (No "
            "module named 'planted_absent_dependency')",
            "SKIPPED [[]1[]] test_every_env.py:*: the walker needs its extra: pip install "
            '"planted[[]extra[]]"',
        ]
    )
    result.stdout.fnmatch_lines(["goldens: 3 created", *LEFT_OUT])
    goldens = project.path / "goldens"
    assert sorted(
        path.parent.relative_to(goldens).as_posix() for path in goldens.rglob("trajectory.jsonl")
    ) == [
        "test_every_env/test_every_env[Loading%2FOld-v1]/Loading%2FOld-v1",
        "test_every_env/test_every_env[Sound%2FNewActionSpace-v0]/Sound%2FNewActionSpace-v0",
        "test_every_env/test_every_env[Sound%2FWalker-v0]/Sound%2FWalker-v0",
    ]


def test_ids_left_out_are_listed_in_verbose_output_only(project: pytest.Pytester) -> None:
    project.runpytest("--update-goldens")
    result = project.runpytest("--goldens-strict")
    result.assert_outcomes(passed=3, skipped=2, failed=2)
    result.stdout.no_fnmatch_line("*left out*")
    result = project.runpytest("--goldens-strict", "-v")
    result.stdout.fnmatch_lines(["goldens: 3 matched", *LEFT_OUT])


def test_ids_left_out_are_listed_once_under_xdist(project: pytest.Pytester) -> None:
    result = project.runpytest("-n", "2", "-v", "--update-goldens")
    result.assert_outcomes(passed=3, skipped=2, failed=2)
    result.stdout.fnmatch_lines(LEFT_OUT)
    assert sum("registered_envs left out" in line for line in result.stdout.lines) == 1


def test_a_missing_dependency_skips_only_tests_of_registered_envs(
    project: pytest.Pytester,
) -> None:
    project.makepyfile(
        test_by_hand="""
        import gymnasium as gym
        import pytest

        import planted_envs


        @pytest.mark.parametrize("env_id", ["Loading/NeedsExtra-v0"])
        def test_by_hand(env_id):
            gym.make(env_id)
        """
    )
    result = project.runpytest("test_by_hand.py")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["E *gymnasium.error.DependencyNotInstalled: the walker needs*"])


def test_no_match_is_a_collection_error(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_none="""
        import pytest

        from gym_goldens import registered_envs


        @pytest.mark.parametrize("env_id", registered_envs("Planted/*"))
        def test_every_env(env_id):
            pass
        """
    )
    result = pytester.runpytest()
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        [
            "*ERROR collecting test_none.py*",
            "E   gym_goldens.audit.registry.NoRegisteredEnvsError: no registered env id matches "
            "'Planted/[*]' (* ids are registered)",
            "E     gymnasium registers an env package's ids only when the package is imported: "
            "name the package that registers them, as in import_modules=[[]'<the package>'[]]",
        ]
    )
    # Our frames are hidden: the user sees their own line.
    result.stdout.no_fnmatch_line("*registry.py*")

"""--goldens-determinism: extra runs of each recording test must record the same."""

from __future__ import annotations

from pathlib import Path

import pytest

ENVS = Path(__file__).parent.parent / "support" / "determinism_envs.py"

TESTS = """
import gymnasium as gym
import pytest

import determinism_envs
from gym_goldens import rollout


@pytest.mark.parametrize("name", [{names}])
def test_env(record_trajectory, name):
    env = record_trajectory(getattr(determinism_envs, name)(), name=name)
    rollout(env, seed=0, steps=20)
"""


def _project(pytester: pytest.Pytester, *names: str) -> None:
    pytester.makepyfile(determinism_envs=ENVS.read_text())
    pytester.makepyfile(test_envs=TESTS.format(names=", ".join(repr(n) for n in names)))


def test_deterministic_envs_pass_with_and_without_goldens(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        determinism_envs=ENVS.read_text(),
        test_real="""
        import gymnasium as gym
        from gym_goldens import rollout

        def test_cartpole(record_trajectory):
            rollout(record_trajectory(gym.make("CartPole-v1")), seed=0, steps=100)

        def test_frozen_lake(record_trajectory):
            env = record_trajectory(gym.make("FrozenLake-v1", is_slippery=True))
            rollout(env, seed=3, steps=60)
        """,
    )
    _project(pytester, "SeededEnv")
    created = pytester.runpytest("--goldens-determinism=2", "--update-goldens")
    created.assert_outcomes(passed=3)
    created.stdout.fnmatch_lines(["goldens: 3 created"])
    checked = pytester.runpytest("--goldens-determinism=2")
    checked.assert_outcomes(passed=3)
    checked.stdout.fnmatch_lines(["goldens: 3 matched"])


@pytest.mark.parametrize(
    ("name", "where"),
    [
        ("UnseededNumpyEnv", "episode 0, step t=1, obs[[]0]"),
        ("GlobalRandomEnv", "episode 0, reset, obs[[]0]"),
        ("WallClockEnv", "episode 0, step t=1, info.time"),
        ("GlobalCounterEnv", "episode 0, step t=1, info.serial"),
    ],
)
def test_nondeterminism_is_caught_in_process(
    pytester: pytest.Pytester, name: str, where: str
) -> None:
    _project(pytester, name)
    result = pytester.runpytest("--goldens-determinism=1")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*nondeterministic: run 1 vs run 2: *run-1*trajectory.jsonl*",
            "*run 1 is shown as golden, run 2 as actual",
            "*run 1: in this process, with fresh function-scoped fixtures",
            "*run 2: in this process, checked against the golden",
            f"*first divergence: {where}",
            "*make it deterministic: draw every random number from self.np_random*",
        ]
    )
    result.stdout.fnmatch_lines(
        [
            "goldens: 1 nondeterministic",
            f"  nondeterministic: goldens/test_envs/test_env[[]{name}[]]/{name}",
        ]
    )
    result.stdout.no_fnmatch_line("*golden missing*")


@pytest.mark.parametrize(
    ("name", "hint"),
    [
        (
            "GlobalRandomEnv",
            "*hint: the runs part at the first observation, so reset(seed=...) does not seed "
            "everything: look for np.random, random or an RNG made outside reset()",
        ),
        (
            "UnseededResetInfoEnv",
            "*hint: the runs part in reset()'s info (info.action) while the first observation "
            "matches: the env puts an unseeded value in its reset info, such as a sample of a "
            "space it never seeds; if it is no part of the dynamics, leave it out with "
            '@pytest.mark.goldens(ignore=[[]"info.action"[]])',
        ),
    ],
)
def test_a_divergence_at_reset_names_its_likely_source(
    pytester: pytest.Pytester, name: str, hint: str
) -> None:
    _project(pytester, name)
    result = pytester.runpytest("--goldens-determinism=1")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([hint])


@pytest.mark.parametrize(
    "key",
    [
        'stamp "time"',  # a quote, which Python needs escaped inside the quotes
        "time\\stamp",  # a backslash
        "time\tstamp",  # a control character, escaped for the terminal
    ],
)
def test_a_suggested_ignore_pasted_as_it_is_makes_the_test_pass(
    pytester: pytest.Pytester, key: str
) -> None:
    # Keys named by the env: what the hint suggests must be Python that means that key.
    pytester.makepyfile(
        determinism_envs=ENVS.read_text(),
        test_keys=f"""
        import determinism_envs
        from gym_goldens import rollout

        class Env(determinism_envs.WallClockEnv):
            def _info(self):
                return {{{key!r}: super()._info()["time"]}}

        # MARKER
        def test_env(record_trajectory):
            rollout(record_trajectory(Env()), seed=0, steps=5)
        """,
    )
    failed = pytester.runpytest("--goldens-determinism=1")
    failed.assert_outcomes(failed=1)
    hints = [line for line in failed.outlines if "looks like a clock" in line]
    assert hints, failed.stdout.str()
    suggested = hints[0].rpartition(" with ")[2]
    assert suggested.startswith("ignore=[")
    test_file = pytester.path / "test_keys.py"
    test_file.write_text(
        test_file.read_text()
        .replace("# MARKER", f"@pytest.mark.goldens({suggested})")
        .replace("import determinism_envs", "import determinism_envs\nimport pytest")
    )
    passed = pytester.runpytest("--goldens-determinism=1", "--update-goldens")
    passed.assert_outcomes(passed=1)
    assert pytester.runpytest("--goldens-determinism=1").ret == 0


@pytest.mark.fresh_process  # the message of an update as it is by default
def test_an_update_writes_no_golden_the_env_cannot_reproduce(pytester: pytest.Pytester) -> None:
    # Recorded once, such a golden would fail the very next run, blaming nothing.
    _project(pytester, "UnseededNumpyEnv", "WallClockEnv", "SeededEnv")
    result = pytester.runpytest("--update-goldens")
    result.assert_outcomes(passed=1, failed=2)
    result.stdout.fnmatch_lines(
        [
            "nondeterministic: run 1 vs run 2: *",
            "*--update-goldens records each golden test twice in this process and the goldens it "
            "is about to write once more in a fresh process; it writes a golden only if its "
            "recordings agree exactly: the golden was left as it is (record once, at your own "
            "risk, with --update-goldens-once or @pytest.mark.goldens(update_once=True))",
        ]
    )
    goldens = sorted(p.parent.name for p in (pytester.path / "goldens").rglob("trajectory.jsonl"))
    assert goldens == ["SeededEnv"]


def test_update_once_records_each_test_once(pytester: pytest.Pytester) -> None:
    _project(pytester, "UnseededNumpyEnv", "WallClockEnv")
    assert pytester.runpytest("--update-goldens", "--update-goldens-once").ret == 0


def test_the_marker_records_one_test_once(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        determinism_envs=ENVS.read_text(),
        test_envs="""
        import pytest
        from determinism_envs import UnseededNumpyEnv
        from gym_goldens import rollout

        @pytest.mark.goldens(update_once=True)
        def test_expensive(record_trajectory):
            rollout(record_trajectory(UnseededNumpyEnv(), "once"), seed=0, steps=20)

        def test_checked(record_trajectory):
            rollout(record_trajectory(UnseededNumpyEnv(), "twice"), seed=0, steps=20)
        """,
    )
    result = pytester.runpytest("--update-goldens")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*created: goldens/test_envs/test_expensive/once"])


def test_time_in_info_passes_when_ignored(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        determinism_envs=ENVS.read_text(),
        test_clock="""
        import pytest
        from determinism_envs import WallClockEnv
        from gym_goldens import rollout

        @pytest.mark.goldens(ignore=["info.time"])
        def test_clock(record_trajectory):
            rollout(record_trajectory(WallClockEnv()), seed=0, steps=20)
        """,
    )
    result = pytester.runpytest("--goldens-determinism=2", "--update-goldens")
    result.assert_outcomes(passed=1)


def test_state_leaking_across_resets_of_a_shared_env(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        determinism_envs=ENVS.read_text(),
        test_leak="""
        import pytest
        from determinism_envs import LeakyResetEnv
        from gym_goldens import rollout

        @pytest.fixture(scope="module")
        def shared_env():
            return LeakyResetEnv()

        def test_leak(record_trajectory, shared_env):
            rollout(record_trajectory(shared_env), seed=0, steps=20)
        """,
    )
    result = pytester.runpytest("--goldens-determinism=1")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*nondeterministic: run 1 vs run 2*",
            "*first divergence: episode 0, step t=1, info.total_steps",
            "*golden 1  actual 21",
        ]
    )


def test_function_fixtures_are_made_afresh_for_each_run(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(
        """
        import gymnasium as gym
        import pytest

        MADE = []

        @pytest.fixture
        def make_env():
            MADE.append("env")
            yield lambda: gym.make("CartPole-v1")
            MADE.append("closed")
        """
    )
    pytester.makepyfile(
        test_a="""
        from gym_goldens import rollout

        def test_recorded(record_trajectory, make_env):
            rollout(record_trajectory(make_env()), seed=1, steps=30)

        def test_not_recorded(make_env):
            pass

        def test_count():
            from conftest import MADE
            # 3 runs of the recording test, 1 of the other, each set up and torn down.
            assert MADE == ["env", "closed"] * 4
        """
    )
    result = pytester.runpytest("--goldens-determinism=2", "--update-goldens", "-p", "no:randomly")
    result.assert_outcomes(passed=3)


def test_a_nondeterministic_test_never_writes_a_golden(pytester: pytest.Pytester) -> None:
    _project(pytester, "SeededEnv", "UnseededNumpyEnv")
    result = pytester.runpytest("--goldens-determinism=1", "--update-goldens")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["goldens: 1 nondeterministic, 1 created"])
    tests = pytester.path / "goldens" / "test_envs"
    assert (tests / "test_env[SeededEnv]" / "SeededEnv" / "trajectory.jsonl").is_file()
    assert not (tests / "test_env[UnseededNumpyEnv]").exists()


def test_nondeterminism_is_reported_before_a_golden_mismatch(pytester: pytest.Pytester) -> None:
    _project(pytester, "UnseededNumpyEnv")
    pytester.runpytest("--update-goldens", "--update-goldens-once").assert_outcomes(passed=1)
    result = pytester.runpytest("--goldens-determinism=1")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*nondeterministic: run 1 vs run 2*"])
    result.stdout.no_fnmatch_line("*golden mismatch*")


def test_a_test_failing_in_one_run_only(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import gymnasium as gym
        from gym_goldens import rollout

        CALLS = []

        def test_flaky(record_trajectory):
            CALLS.append(1)
            rollout(record_trajectory(gym.make("CartPole-v1")), seed=0, steps=10)
            assert len(CALLS) > 1, "fails on its first run"
        """
    )
    result = pytester.runpytest("--goldens-determinism=1", "--update-goldens")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*nondeterministic: run 1 failed, run 2 passed",
            "*run 1: in this process, with fresh function-scoped fixtures; its call failed:",
            "*fails on its first run*",
        ]
    )
    assert not (pytester.path / "goldens").exists()


def test_skipped_tests_stay_skipped(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.skip(reason="not today")
        def test_skipped(record_trajectory):
            raise AssertionError("never runs")
        """
    )
    result = pytester.runpytest("--goldens-determinism=2")
    result.assert_outcomes(skipped=1)


def test_a_negative_count_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_x(): pass")
    result = pytester.runpytest("--goldens-determinism=-1")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--goldens-determinism must be 0 or more, got -1*"])


def test_set_order_passes_in_process(pytester: pytest.Pytester) -> None:
    # One process hashes strings one way throughout, so the repeat cannot see it.
    _project(pytester, "SetOrderEnv")
    pytester.runpytest("--goldens-determinism=2", "--update-goldens").assert_outcomes(passed=1)


def test_set_order_is_caught_across_processes(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTHONHASHSEED", "0")
    _project(pytester, "SetOrderEnv")
    result = pytester.runpytest_subprocess(
        "--goldens-determinism=1", "--goldens-determinism-mode=subprocess"
    )
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*nondeterministic: run 1 (this process) vs run 2 (subprocess): *",
            "*run 1 (this process) is shown as golden, run 2 (subprocess) as actual",
            "*run 1: in this process, checked against the golden",
            "*run 2: in a fresh process, PYTHONHASHSEED=1",
            "*a difference that only a fresh process shows often comes from iterating over a set*",
            "*first divergence: episode 0, step t=1, info.index",
            "*also differ there: info.visiting",
        ]
    )


def test_subprocess_runs_of_deterministic_envs_pass(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\naddopts = -p no:cacheprovider\n")
    _project(pytester, "SeededEnv")
    pytester.runpytest("--update-goldens").assert_outcomes(passed=1)
    result = pytester.runpytest("--goldens-determinism=2", "--goldens-determinism-mode=subprocess")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["goldens: 1 matched"])


def test_a_failing_subprocess_run_is_reported(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTHONHASHSEED", "7")
    pytester.makepyfile(
        """
        import os
        import gymnasium as gym
        from gym_goldens import rollout

        def test_parent_only(record_trajectory):
            rollout(record_trajectory(gym.make("CartPole-v1")), seed=0, steps=10)
            assert os.environ["PYTHONHASHSEED"] == "7", "hash seed changed"
        """
    )
    result = pytester.runpytest_subprocess(
        "--goldens-determinism=1", "--goldens-determinism-mode=subprocess", "--update-goldens"
    )
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*nondeterministic: run 2 (subprocess) failed, run 1 (this process) passed",
            "*run 2: in a fresh process, PYTHONHASHSEED=8; python -m pytest exited with code 1:",
            "*hash seed changed*",
        ]
    )
    assert not (pytester.path / "goldens").exists()


@pytest.mark.parametrize(
    ("mode", "env", "field"),
    [
        ("inprocess", "GlobalCounterEnv", "info.serial"),
        ("subprocess", "UnseededNumpyEnv", "obs[[]0]"),
    ],
)
def test_runs_on_xdist_workers(pytester: pytest.Pytester, mode: str, env: str, field: str) -> None:
    _project(pytester, "SeededEnv", env)
    result = pytester.runpytest(
        "-n",
        "2",
        "--goldens-determinism=1",
        f"--goldens-determinism-mode={mode}",
        "--update-goldens",
    )
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*nondeterministic: run 1* vs run 2*",
            f"*first divergence: episode 0, step t=1, {field}",
            "goldens: 1 nondeterministic, 1 created",
        ]
    )


def test_output_of_the_extra_runs_is_not_shown_twice(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import gymnasium as gym
        from gym_goldens import rollout

        def test_noisy(record_trajectory):
            print("printed by the test")
            rollout(record_trajectory(gym.make("CartPole-v1")), seed=0, steps=5)
            assert False, "fails in every run"
        """
    )
    result = pytester.runpytest("--goldens-determinism=2")
    result.assert_outcomes(failed=1)
    assert result.stdout.lines.count("printed by the test") == 1  # not 3


SHARED_STATE_CONFTEST = """
import pytest


@pytest.fixture(scope="session", autouse=True)
def _apply_ide_patches():
    # As syrupy's _syrupy_apply_ide_patches: autouse, of a wider scope, no part of any env.
    yield


@pytest.fixture(scope="session")
def visits():
    return []


@pytest.fixture(scope="module")
def start(visits):
    visits.append(1)
    return visits
"""

SHARED_STATE_TEST = """
import gymnasium as gym
import numpy as np
from gym_goldens import rollout


class Counter(gym.Env):
    observation_space = gym.spaces.Box(0.0, 100.0, (1,), np.float64)
    action_space = gym.spaces.Discrete(2)

    def __init__(self, visits):
        self.visits = visits

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.visits.append(1)  # state of the session fixture, left for the next run
        return np.array([float(len(self.visits))]), {}

    def step(self, action):
        return np.array([float(len(self.visits))]), 0.0, False, False, {}


def test_counter(record_trajectory, start):
    rollout(record_trajectory(Counter(start)), seed=0, steps=3)
"""


def test_a_report_names_only_the_wider_fixtures_the_test_uses(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(SHARED_STATE_CONFTEST)
    pytester.makepyfile(test_counter=SHARED_STATE_TEST)
    result = pytester.runpytest("--goldens-determinism=1")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*both runs share the fixtures start (module), visits (session) (of a wider scope "
            "than the test): state they keep may be the difference"
        ]
    )
    result.stdout.no_fnmatch_line("*_apply_ide_patches*")

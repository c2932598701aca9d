"""--update-goldens: the goldens about to be written are re-recorded in one fresh process."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ENVS = Path(__file__).parent.parent / "support" / "determinism_envs.py"

# Each run of a test logs the process it ran in, to count the interpreters.
TESTS = """
import os

import pytest

import determinism_envs
from gym_goldens import rollout


@pytest.mark.parametrize("name", [{names}])
def test_env(record_trajectory, name):
    with open(os.path.join(os.path.dirname(__file__), "runs.log"), "a") as log:
        log.write(f"{{os.getpid()}} {{name}}\\n")
    env = record_trajectory(getattr(determinism_envs, name)(), name=name)
    rollout(env, seed=0, steps=20)
"""


# The other plugin tests turn the fresh process off (tests/conftest.py).
pytestmark = pytest.mark.fresh_process


def _project(pytester: pytest.Pytester, *names: str) -> None:
    pytester.makepyfile(determinism_envs=ENVS.read_text())
    pytester.makepyfile(test_envs=TESTS.format(names=", ".join(repr(n) for n in names)))


def _runs(pytester: pytest.Pytester) -> dict[str, list[str]]:
    """The tests run in each process, by process id, from runs.log (which it then empties)."""
    log = pytester.path / "runs.log"
    runs: dict[str, list[str]] = {}
    for line in log.read_text().splitlines() if log.exists() else []:
        pid, name = line.split()
        runs.setdefault(pid, []).append(name)
    log.unlink(missing_ok=True)
    return runs


def _goldens(pytester: pytest.Pytester) -> list[str]:
    files = (pytester.path / "goldens").rglob("trajectory.jsonl")
    return sorted(path.parent.name for path in files)


def test_a_golden_a_fresh_process_records_otherwise_is_not_written(
    pytester: pytest.Pytester,
) -> None:
    # One process hashes strings one way: its two recordings agree on a set's order.
    _project(pytester, "SeededEnv", "SetOrderEnv", "FixedStartEnv")
    result = pytester.runpytest("--update-goldens")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines(
        [
            "*test_envs.py::test_env[[]SetOrderEnv[]]: checked after the tests, its golden not "
            "written",
            "nondeterministic: run 2 vs run 3: *",
            "  run 2: in this process, its recording written as the golden if every run agrees",
            "  run 3: in a fresh process, PYTHONHASHSEED=*, which re-recorded every golden "
            "this update was about to write",
            "  a difference that only a fresh process shows often comes from iterating over a set*",
            "  hint: info.visiting holds run 2's values in another order: an iteration order? *",
            "  first divergence: episode 0, step t=*, info.*",
            "goldens: 1 nondeterministic, 2 created",
            "  nondeterministic: goldens/test_envs/test_env[[]SetOrderEnv[]]/SetOrderEnv",
        ]
    )
    assert _goldens(pytester) == ["FixedStartEnv", "SeededEnv"]
    runs = _runs(pytester)
    # This process ran each test twice; one fresh process ran all three once.
    assert sorted((sorted(names) for names in runs.values()), key=len) == [
        ["FixedStartEnv", "SeededEnv", "SetOrderEnv"],
        ["FixedStartEnv", "FixedStartEnv", "SeededEnv", "SeededEnv", "SetOrderEnv", "SetOrderEnv"],
    ]


def test_only_the_goldens_being_written_are_recorded_again(pytester: pytest.Pytester) -> None:
    _project(pytester, "SeededEnv", "FixedStartEnv")
    pytester.runpytest("--update-goldens").assert_outcomes(passed=2)
    _runs(pytester)
    # SeededEnv changes (FixedStartEnv does not draw its start), and a test is added.
    start = "self.np_random.uniform(-1.0, 1.0, size=2)"
    pytester.makepyfile(
        determinism_envs=ENVS.read_text().replace(start, start.replace("1.0,", "1.5,"))
    )
    pytester.makepyfile(
        test_more=TESTS.format(names="'OwnRngEnv'").replace("test_env", "test_more")
    )
    result = pytester.runpytest("--update-goldens")
    assert result.ret == 0
    result.stdout.fnmatch_lines(["goldens: 1 created, 1 updated, 1 kept"])
    fresh = [names for names in _runs(pytester).values() if len(names) < 6]
    assert fresh == [["SeededEnv", "OwnRngEnv"]]


def test_nothing_runs_again_when_every_golden_is_kept(pytester: pytest.Pytester) -> None:
    _project(pytester, "SeededEnv")
    pytester.runpytest("--update-goldens").assert_outcomes(passed=1)
    _runs(pytester)
    result = pytester.runpytest("--update-goldens")
    result.stdout.fnmatch_lines(["goldens: 1 kept"])
    assert len(_runs(pytester)) == 1


def test_an_update_makes_no_tmp_path_it_does_not_record_in(pytester: pytest.Pytester) -> None:
    # An update's recordings wait in folders of their own until the fresh process
    # agrees, and the fresh process records into its own: a tmp_path made for each
    # run of each test (this process's two, the fresh process's one) would hold nothing.
    _project(pytester, "SeededEnv")
    basetemp = pytester.path / "basetemp"
    result = pytester.runpytest("--update-goldens", f"--basetemp={basetemp}")
    result.assert_outcomes(passed=1)
    assert _goldens(pytester) == ["SeededEnv"]
    tmp_paths = [*basetemp.glob("test_env*"), *basetemp.glob("fresh*/tmp/test_env*")]
    assert tmp_paths == []


@pytest.mark.parametrize("opt_out", ["--update-goldens-once", "marker"])
def test_recording_once_skips_the_fresh_process(pytester: pytest.Pytester, opt_out: str) -> None:
    _project(pytester, "SetOrderEnv")
    args = ["--update-goldens"]
    if opt_out == "marker":
        test_file = pytester.path / "test_envs.py"
        test_file.write_text(
            test_file.read_text().replace(
                "def test_env", "@pytest.mark.goldens(update_once=True)\ndef test_env"
            )
        )
    else:
        args.append(opt_out)
    pytester.runpytest(*args).assert_outcomes(passed=1)
    assert _goldens(pytester) == ["SetOrderEnv"]
    assert list(_runs(pytester).values()) == [["SetOrderEnv"]]


def test_a_unix_time_within_tolerance_is_nondeterministic(pytester: pytest.Pytester) -> None:
    # 1.8e9 x rtol 1e-6 is half an hour: the two recordings match within
    # tolerance, and the golden would fail a run an hour later.
    _project(pytester, "TimestampEnv")
    result = pytester.runpytest("--update-goldens")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "nondeterministic: run 1 vs run 2: *",
            "  the runs differ within the test's tolerance, but two recordings on one machine "
            "must agree exactly: info.stamp differs",
            "  hint: info.stamp holds values like a Unix time (*): a clock? leave it out of the "
            'comparison with @pytest.mark.goldens(ignore=[[]"info.stamp"[]])',
            "  first divergence: episode 0, step t=1, info.stamp",
        ]
    )
    assert _goldens(pytester) == []


def test_the_fresh_process_runs_once_per_xdist_worker(pytester: pytest.Pytester) -> None:
    _project(pytester, "SeededEnv", "SetOrderEnv", "FixedStartEnv", "OwnRngEnv")
    result = pytester.runpytest("-n", "2", "--update-goldens")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        [
            "*test_envs.py::test_env[[]SetOrderEnv[]]: checked after the tests, its golden not "
            "written",
            "nondeterministic: run 2 vs run 3: *",
            "goldens: 1 nondeterministic, 3 created",
        ]
    )
    assert _goldens(pytester) == ["FixedStartEnv", "OwnRngEnv", "SeededEnv"]
    # Each worker ran its tests twice, and its fresh process each once.
    runs = list(_runs(pytester).values())
    fresh = [names for names in runs if len(names) == len(set(names))]
    assert len(runs) <= 4
    assert sorted(name for names in fresh for name in names) == [
        "FixedStartEnv",
        "OwnRngEnv",
        "SeededEnv",
        "SetOrderEnv",
    ]


ONLY_HERE = """
import sys

import gymnasium as gym
import pytest
from gym_goldens import rollout


def test_here(record_trajectory):
    if any(arg.startswith("--goldens-record-into") for arg in sys.argv):
        {outcome}
    rollout(record_trajectory(gym.make("CartPole-v1")), seed=0, steps=10)
"""


@pytest.mark.parametrize(
    ("outcome", "why"),
    [
        ('assert False, "fails in the fresh process"', "exited with code 1:"),
        ('pytest.skip("not in the fresh process")', "did not run the test through (exit code 0):"),
    ],
    ids=["failed", "skipped"],
)
def test_a_test_the_fresh_process_does_not_record_writes_no_golden(
    pytester: pytest.Pytester, outcome: str, why: str
) -> None:
    pytester.makepyfile(test_here=ONLY_HERE.format(outcome=outcome))
    result = pytester.runpytest("--update-goldens")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        [
            "test_here.py::test_here: checked after the tests, its golden not written",
            "nondeterministic: run 3 failed, run 2 passed",
            f"  run 3: in a fresh process, PYTHONHASHSEED=*, which re-recorded every golden this "
            f"update was about to write; python -m pytest {why}",
            "goldens: 1 nondeterministic",
            "--update-goldens: 1 test whose goldens were not written after the tests fail the "
            "session",
        ]
    )
    assert not (pytester.path / "goldens").exists()


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_a_golden_the_fresh_process_refused_is_in_the_html_report(
    pytester: pytest.Pytester, workers: list[str]
) -> None:
    # The fresh process runs after the tests (under xdist, at each worker's end):
    # its verdict reaches the page all the same.
    _project(pytester, "SeededEnv", "SetOrderEnv")
    result = pytester.runpytest("--update-goldens", "--goldens-report=report", *workers)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    page = (pytester.path / "report" / "index.html").read_text(encoding="utf-8")
    assert "<title>gym-goldens: 1 golden mismatch</title>" in page
    (section,) = re.findall(r"<section.*?</section>", page, flags=re.DOTALL)
    assert "test_envs.py::test_env[SetOrderEnv]" in section
    assert '<span class="status nondeterministic">nondeterministic</span>' in section
    assert "checked after the tests, its golden not written" in section
    assert "run 3: in a fresh process, PYTHONHASHSEED=" in section
    assert "SeededEnv" not in section

"""Stale goldens: listed after a complete run only, --goldens-strict, --prune-goldens."""

from __future__ import annotations

import shutil
from pathlib import Path

import gymnasium as gym
import hypothesis  # noqa: F401 - imported once here, not in every pytester run
import pytest

# Imported once here, not in every pytester run: registered_envs' parameters
# and the plugin must see one and the same module.
import gym_goldens.audit.registry
import gym_goldens.comparison.engine
import gym_goldens.plugin.check
import gym_goldens.present.report  # noqa: F401
from gym_goldens.plugin.session import StaleTracker
from tests.support import planted

EXAMPLES = """
import os
import gymnasium as gym
import pytest

def test_one(record_trajectory):
    env = record_trajectory(gym.make("CartPole-v1"))
    env.reset(seed=0)
    for _ in range(3):
        env.step(0)

@pytest.mark.slow
def test_two(record_trajectory):
    env = record_trajectory(gym.make("MountainCar-v0"))
    env.reset(seed=0)
    env.step(1)
    assert not os.environ.get("FAIL_TWO"), "test_two was told to fail"

@pytest.mark.skipif("os.environ.get('SKIP_THREE')")
def test_three(record_trajectory):
    env = record_trajectory(gym.make("FrozenLake-v1"))
    env.reset(seed=0)
    env.step(1)
"""

OTHER = """
import gymnasium as gym

def test_other(record_trajectory):
    env = record_trajectory(gym.make("CartPole-v1"))
    env.reset(seed=1)
    env.step(1)
"""

STALE_RECORDING = Path("goldens/examples/test_a/test_one/OldName")
STALE_TEST = Path("goldens/examples/test_a/test_removed/CartPole-v1")
NOT_A_GOLDEN = Path("goldens/examples/test_a/notes/README.txt")


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    """Two test folders with goldens, plus two stale goldens in ``examples``."""
    gym.make("MountainCar-v0"), gym.make("FrozenLake-v1")  # imported before the runs
    pytester.makeini("[pytest]\nmarkers =\n    slow: a slow test\n")
    pytester.makepyfile(**{"examples/test_a": EXAMPLES, "tests/test_b": OTHER})
    pytester.runpytest("--update-goldens").assert_outcomes(passed=4)
    used = pytester.path / "goldens/examples/test_a/test_one/CartPole-v1"
    for stale in (STALE_RECORDING, STALE_TEST):
        shutil.copytree(used, pytester.path / stale)
    (pytester.path / NOT_A_GOLDEN).parent.mkdir(parents=True)
    (pytester.path / NOT_A_GOLDEN).write_text("not a golden")
    return pytester


def goldens(project: pytest.Pytester) -> list[str]:
    root = project.path
    return sorted(p.relative_to(root).as_posix() for p in (root / "goldens").rglob("*.jsonl"))


STALE_LINES = [
    "stale goldens: 2 (no test of this complete run used them)",
    f"  stale: {STALE_RECORDING.as_posix()}",
    f"  stale: {STALE_TEST.as_posix()}",
    "  delete them with: pytest --update-goldens --prune-goldens",
]


def test_a_complete_run_lists_the_stale_goldens(project: pytest.Pytester) -> None:
    result = project.runpytest()
    result.assert_outcomes(passed=4)
    assert result.ret == 0
    result.stdout.fnmatch_lines(STALE_LINES)
    assert "notes" not in result.stdout.str()


def test_goldens_strict_fails_the_session(project: pytest.Pytester) -> None:
    result = project.runpytest("--goldens-strict")
    result.assert_outcomes(passed=4)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines([*STALE_LINES, "--goldens-strict: 2 stale goldens fail the run"])


def test_prune_deletes_stale_goldens_and_empty_folders(project: pytest.Pytester) -> None:
    before = goldens(project)
    result = project.runpytest("--update-goldens", "--prune-goldens")
    result.assert_outcomes(passed=4)
    result.stdout.fnmatch_lines(
        [
            "pruned goldens: 2 stale goldens deleted",
            f"  deleted: {STALE_RECORDING.as_posix()}",
            f"  deleted: {STALE_TEST.as_posix()}",
        ]
    )
    after = goldens(project)
    assert set(before) - set(after) == {
        f"{STALE_RECORDING.as_posix()}/trajectory.jsonl",
        f"{STALE_TEST.as_posix()}/trajectory.jsonl",
    }
    assert not (project.path / STALE_TEST).parent.exists(), "empty folders are removed"
    assert (project.path / NOT_A_GOLDEN).is_file(), "other files are kept"
    strict = project.runpytest("--goldens-strict")
    assert strict.ret == 0
    assert "stale goldens" not in strict.stdout.str()


def test_stale_goldens_of_format_1_are_listed_and_pruned(project: pytest.Pytester) -> None:
    # Episode files instead of trajectory.jsonl, and what a killed update left.
    for stale in (STALE_RECORDING, STALE_TEST):
        folder = project.path / stale
        trajectory = folder / "trajectory.jsonl"
        (folder / "episode_00000.jsonl").write_bytes(trajectory.read_bytes())
        (folder / ".episode_00001.jsonl.a8c1x0.tmp").write_bytes(b'{"event":')
        trajectory.unlink()

    listed = project.runpytest()
    listed.assert_outcomes(passed=4)
    listed.stdout.fnmatch_lines(STALE_LINES)

    pruned = project.runpytest("--update-goldens", "--prune-goldens")
    pruned.stdout.fnmatch_lines(["pruned goldens: 2 stale goldens deleted"])
    assert not (project.path / STALE_TEST).parent.exists()
    assert not (project.path / STALE_RECORDING).exists()
    assert (
        project.path / "goldens/examples/test_a/test_one/CartPole-v1/trajectory.jsonl"
    ).is_file()


def test_prune_needs_update(project: pytest.Pytester) -> None:
    result = project.runpytest("--prune-goldens")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--prune-goldens*use it with --update-goldens*"])


@pytest.mark.parametrize(
    ("args", "reason"),
    [
        pytest.param(["-k", "one"], "3 tests were deselected", id="-k"),
        pytest.param(["-m", "not slow"], "1 test was deselected", id="-m"),
        pytest.param(
            ["--deselect", "examples/test_a.py::test_two"], "1 test was deselected", id="deselect"
        ),
        pytest.param(
            ["examples/test_a.py::test_one"], "tests were picked by node id", id="node id"
        ),
        pytest.param(["-x", "--update-goldens"], "the run did not pass", id="failure"),
    ],
)
def test_a_partial_run_calls_nothing_stale(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, args: list[str], reason: str
) -> None:
    if "-x" in args:
        monkeypatch.setenv("FAIL_TWO", "1")
    result = project.runpytest("--goldens-strict", "--prune-goldens", "--update-goldens", *args)
    assert "stale goldens:" not in result.stdout.str()
    result.stdout.fnmatch_lines([f"stale goldens not checked: {reason}"])
    assert (project.path / STALE_TEST).is_dir(), "nothing is pruned"
    if "-x" not in args:
        assert result.ret == 0


def test_last_failed_run_calls_nothing_stale(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAIL_TWO", "1")
    project.runpytest().assert_outcomes(passed=3, failed=1)
    monkeypatch.delenv("FAIL_TWO")
    result = project.runpytest("--lf", "--goldens-strict")
    result.assert_outcomes(passed=1)
    assert result.ret == 0
    assert "stale goldens:" not in result.stdout.str()
    result.stdout.fnmatch_lines(["stale goldens not checked: --lf runs the tests that failed*"])


def test_a_collection_error_calls_nothing_stale(project: pytest.Pytester) -> None:
    project.makepyfile(**{"examples/test_broken": "import no_such_module_here"})
    result = project.runpytest("--goldens-strict")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    assert "stale goldens:" not in result.stdout.str()


def test_a_skipped_test_keeps_its_goldens(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SKIP_THREE", "1")
    result = project.runpytest()
    result.assert_outcomes(passed=3, skipped=1)
    result.stdout.fnmatch_lines(STALE_LINES)
    assert "test_three" not in result.stdout.str()


def test_only_the_collected_files_are_in_scope(project: pytest.Pytester) -> None:
    shutil.copytree(
        project.path / "goldens/tests/test_b/test_other",
        project.path / "goldens/tests/test_b/test_gone",
    )
    examples = project.runpytest("examples", "--goldens-strict")
    examples.stdout.fnmatch_lines(["stale goldens: 2 *"])
    assert "tests/test_b" not in examples.stdout.str()

    tests = project.runpytest("tests")
    tests.stdout.fnmatch_lines(
        ["stale goldens: 1 *", "  stale: goldens/tests/test_b/test_gone/CartPole-v1"]
    )
    assert "examples/" not in tests.stdout.str()


def test_no_stale_goldens_prints_nothing_about_them(project: pytest.Pytester) -> None:
    shutil.rmtree(project.path / STALE_TEST.parent)
    shutil.rmtree(project.path / STALE_RECORDING)
    result = project.runpytest("--goldens-strict")
    assert result.ret == 0
    assert "stale goldens" not in result.stdout.str()


@pytest.mark.parametrize("extra", [[], ["-k", "one"]], ids=["complete", "partial"])
def test_the_verdict_is_the_same_under_xdist(project: pytest.Pytester, extra: list[str]) -> None:
    serial = project.runpytest("--goldens-strict", *extra)
    parallel = project.runpytest("--goldens-strict", "-n", "2", *extra)
    assert parallel.ret == serial.ret
    assert stale_section(parallel) == stale_section(serial)
    assert stale_section(serial) == (STALE_LINES if not extra else [])


def stale_section(result: pytest.RunResult) -> list[str]:
    lines = result.stdout.lines
    return [
        line
        for line in lines
        if line.startswith(("stale goldens:", "  stale:", "  delete them with:"))
    ]


def test_prune_under_xdist_deletes_the_same_goldens(project: pytest.Pytester) -> None:
    result = project.runpytest("--update-goldens", "--prune-goldens", "-n", "2")
    result.assert_outcomes(passed=4)
    result.stdout.fnmatch_lines(["pruned goldens: 2 stale goldens deleted"])
    assert not (project.path / STALE_TEST).exists()
    assert not (project.path / STALE_RECORDING).exists()
    assert (project.path / "goldens/examples/test_a/test_one/CartPole-v1").is_dir()


def test_vector_goldens_are_one_golden_when_used_and_when_pruned(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_vec="""
        import gymnasium as gym
        import pytest

        @pytest.mark.parametrize("n", [2])
        def test_vec(record_trajectory, n):
            env = record_trajectory(gym.make_vec("CartPole-v1", num_envs=n))
            env.action_space.seed(0)
            env.reset(seed=0)
            for _ in range(5):
                env.step(env.action_space.sample())
        """
    )
    pytester.runpytest("--update-goldens").assert_outcomes(passed=1)
    golden = pytester.path / "goldens" / "test_vec" / "test_vec[2]" / "CartPole-v1"
    assert sorted(p.name for p in golden.iterdir()) == ["env_0", "env_1"]

    used = pytester.runpytest("--goldens-strict")
    used.assert_outcomes(passed=1)
    assert "stale" not in used.stdout.str()

    pytester.makepyfile(test_vec="def test_other():\n    pass\n")
    stale = pytester.runpytest("--goldens-strict")
    stale.stdout.fnmatch_lines(["*stale: goldens/test_vec/test_vec?2?/CartPole-v1"])
    assert "env_0" not in stale.stdout.str()
    pytester.runpytest("--update-goldens", "--prune-goldens").assert_outcomes(passed=1)
    assert not golden.exists()


def test_the_goldens_of_a_deleted_test_file_are_stale(project: pytest.Pytester) -> None:
    # test_b.py is deleted (or renamed): its goldens belong to no test any more.
    (project.path / "tests" / "test_b.py").unlink()
    gone = "goldens/tests/test_b/test_other/CartPole-v1"
    result = project.runpytest("--goldens-strict")
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines(["stale goldens: 3 *", f"  stale: {gone}"])
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    # The same verdict when pytest-xdist workers collect.
    workers = project.runpytest("--goldens-strict", "-n", "2")
    workers.stdout.fnmatch_lines(["stale goldens: 3 *", f"  stale: {gone}"])
    # Running one file, or a folder beside, calls none of them stale.
    one = project.runpytest("examples/test_a.py")
    one.stdout.no_fnmatch_line(f"*{gone}*")
    beside = project.runpytest("examples", "--goldens-strict")
    beside.stdout.no_fnmatch_line(f"*{gone}*")

    pruned = project.runpytest("--update-goldens", "--prune-goldens")
    pruned.stdout.fnmatch_lines(["pruned goldens: 3 stale goldens deleted", f"  deleted: {gone}"])
    assert not (project.path / "goldens" / "tests" / "test_b").exists()


def test_the_goldens_of_an_ignored_folder_are_not_stale(project: pytest.Pytester) -> None:
    result = project.runpytest("--ignore=tests", "--goldens-strict")
    result.stdout.fnmatch_lines(["stale goldens: 2 *"])
    result.stdout.no_fnmatch_line("*goldens/tests/*")


def test_recordings_named_like_sub_env_folders_are_goldens_of_their_own(
    pytester: pytest.Pytester,
) -> None:
    # env_0 and env_1 are recording names here, not the sub-env folders of a
    # vector golden: the goldens are in use, and so never stale.
    pytester.makepyfile(
        test_named="""
        import gymnasium as gym

        def test_two_envs(record_trajectory):
            for index in range(2):
                env = record_trajectory(gym.make("CartPole-v1"), name=f"env_{index}")
                env.reset(seed=index)
                env.step(0)
        """
    )
    pytester.runpytest("--update-goldens").assert_outcomes(passed=1)
    test_dir = pytester.path / "goldens" / "test_named" / "test_two_envs"
    assert sorted(p.name for p in test_dir.iterdir()) == ["env_0", "env_1"]

    strict = pytester.runpytest("--goldens-strict")
    strict.assert_outcomes(passed=1)
    assert strict.ret == pytest.ExitCode.OK
    strict.stdout.no_fnmatch_line("stale goldens*")

    pruned = pytester.runpytest("--update-goldens", "--prune-goldens")
    pruned.assert_outcomes(passed=1)
    pruned.stdout.no_fnmatch_line("pruned goldens*")
    assert sorted(p.parent.name for p in test_dir.rglob("trajectory.jsonl")) == ["env_0", "env_1"]


LEFT_OUT_ENVS = """
import gymnasium as gym
import pytest

from gym_goldens import registered_envs, rollout


@pytest.mark.parametrize("seed", [0])
@pytest.mark.parametrize(
    "env_id", registered_envs("Loading/Old-*", "Sound/Walker-v0", import_modules=["planted_envs"])
)
def test_env(record_trajectory, env_id, seed):
    rollout(record_trajectory(gym.make(env_id)), seed=seed, steps=5)
"""


def test_goldens_of_ids_left_out_on_this_machine_are_not_stale(pytester: pytest.Pytester) -> None:
    # Loading/Old-v0 lacks a dependency here and is out of date, so
    # registered_envs leaves it out; another machine recorded its golden.
    # Like a skipped test's, that golden is not stale, nor pruned.
    planted.install(pytester.path)
    try:
        pytester.makepyfile(test_left=LEFT_OUT_ENVS)
        pytester.runpytest("--update-goldens").assert_outcomes(passed=2)
        test_dir = pytester.path / "goldens" / "test_left"
        recorded = test_dir / "test_env[Loading%2FOld-v1-0]"
        assert recorded.is_dir()
        other_machine = test_dir / "test_env[Loading%2FOld-v0-0]" / "Loading%2FOld-v0"
        shutil.copytree(recorded / "Loading%2FOld-v1", other_machine)

        strict = pytester.runpytest("--goldens-strict")
        strict.assert_outcomes(passed=2)
        strict.stdout.no_fnmatch_line("stale goldens*")
        assert strict.ret == pytest.ExitCode.OK

        pruned = pytester.runpytest("--update-goldens", "--prune-goldens")
        pruned.assert_outcomes(passed=2)
        pruned.stdout.no_fnmatch_line("pruned goldens*")
        assert (other_machine / "trajectory.jsonl").is_file()
    finally:
        planted.forget()


def test_a_worker_sends_back_the_node_ids_whose_goldens_are_not_stale() -> None:
    # Under pytest-xdist the workers collect: the node ids of the ids that
    # registered_envs left out travel back with what they collected.
    worker = StaleTracker(test_files={"t.py"}, skipped={"t.py::test_env[Old-v0]"})
    controller = StaleTracker()
    controller.merge_worker_output(worker.worker_output())
    assert controller.skipped == {"t.py::test_env[Old-v0]"}
    assert controller.test_files == {"t.py"}


def test_a_run_whose_every_golden_test_is_skipped_says_so(pytester: pytest.Pytester) -> None:
    # A module that skips itself when its env package is missing collects no test:
    # pytest exits 5, which is no failure of the run.
    pytester.makepyfile(
        test_envs="""
        import pytest

        pytest.importorskip("no_such_env_package")

        def test_env(record_trajectory):
            pass
        """
    )
    result = pytester.runpytest("--goldens-strict")
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines(
        ["stale goldens not checked: no test ran (every test was skipped, or none was collected)"]
    )
    result.stdout.no_fnmatch_line("*did not pass*")

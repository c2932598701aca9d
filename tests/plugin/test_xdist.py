"""pytest-xdist: the same outcomes, files and one summary as a serial run."""

from __future__ import annotations

import shutil
from pathlib import Path

import gymnasium as gym
import hypothesis  # noqa: F401 - imported once here, not in every pytester run
import pytest

import gym_goldens.comparison.engine
import gym_goldens.plugin.check
import gym_goldens.present.report  # noqa: F401

ENVS = """
import gymnasium as gym
import pytest

@pytest.mark.parametrize("seed", [0, 1, 2])
def test_cartpole(record_trajectory, seed):
    env = record_trajectory(gym.make("CartPole-v1"))
    env.action_space.seed(seed)
    env.reset(seed=seed)
    for _ in range(20):
        _, _, terminated, truncated, _ = env.step(env.action_space.sample())
        if terminated or truncated:
            env.reset()

@pytest.mark.xdist_group("lakes")
def test_two_lakes(record_trajectory):
    for seed in (3, 4):
        env = record_trajectory(gym.make("FrozenLake-v1"))
        env.reset(seed=seed)
        env.step(seed % 4)

@pytest.mark.xdist_group("lakes")
class TestGrouped:
    def test_lake(self, record_trajectory):
        env = record_trajectory(gym.make("FrozenLake-v1"), name="grouped lake")
        env.reset(seed=5)
        env.step(2)
"""

MORE = """
import gymnasium as gym

def test_mountain_car(record_trajectory):
    env = record_trajectory(gym.make("MountainCar-v0"))
    env.reset(seed=0)
    for _ in range(10):
        env.step(2)

def test_not_a_golden_test():
    assert True
"""


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    gym.make("MountainCar-v0"), gym.make("FrozenLake-v1")  # imported before the runs
    pytester.makeini("[pytest]\n")
    pytester.makepyfile(test_envs=ENVS, test_more=MORE)
    return pytester


def snapshot(folder: Path) -> dict[str, bytes]:
    return {
        path.relative_to(folder).as_posix(): path.read_bytes()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


def summary(result: pytest.RunResult) -> list[str]:
    """The gym-goldens section of the terminal summary."""
    lines = result.stdout.lines
    start = [i for i, line in enumerate(lines) if "gym-goldens" in line and line.startswith("---")]
    assert len(start) == 1, f"expected one gym-goldens section, found {len(start)}"
    section = []
    for line in lines[start[0] + 1 :]:
        if not line or line.startswith(("===", "---")):
            break
        section.append(line)
    return section


def run(project: pytest.Pytester, *args: str) -> pytest.RunResult:
    return project.runpytest("-p", "no:randomly", *args)


DIST_MODES = [
    pytest.param(["-n", "4"], id="-n 4"),
    pytest.param(["-n", "2", "--dist", "loadfile"], id="loadfile"),
    pytest.param(["-n", "2", "--dist", "loadgroup"], id="loadgroup"),
]


@pytest.mark.parametrize("xdist_args", DIST_MODES)
def test_update_writes_the_same_files(project: pytest.Pytester, xdist_args: list[str]) -> None:
    goldens = project.path / "goldens"
    serial = run(project, "--update-goldens")
    serial.assert_outcomes(passed=7)
    serial_files = snapshot(goldens)
    serial_summary = summary(serial)
    assert serial_summary[0] == "goldens: 7 created"
    shutil.rmtree(goldens)

    parallel = run(project, "--update-goldens", *xdist_args)

    parallel.assert_outcomes(passed=7)
    assert snapshot(goldens) == serial_files
    assert summary(parallel) == serial_summary
    # The grouped tests keep their goldens under their own node ids.
    assert not any("@" in name for name in serial_files)
    assert "test_envs/TestGrouped/test_lake/grouped%20lake/trajectory.jsonl" in serial_files


@pytest.mark.parametrize("xdist_args", DIST_MODES)
def test_check_gives_the_same_outcomes_and_summary(
    project: pytest.Pytester, xdist_args: list[str]
) -> None:
    run(project, "--update-goldens").assert_outcomes(passed=7)
    goldens = project.path / "goldens"
    # One mismatch, one missing golden, the rest matching.
    golden = goldens / "test_envs/test_cartpole[1]/CartPole-v1/trajectory.jsonl"
    golden.write_bytes(golden.read_bytes().replace(b'"t":3,', b'"t":3,"extra":1,', 1))
    shutil.rmtree(goldens / "test_more/test_mountain_car")
    before = snapshot(goldens)

    serial = run(project)
    parallel = run(project, *xdist_args)

    assert serial.parseoutcomes() == parallel.parseoutcomes() == {"passed": 5, "failed": 2}
    assert summary(parallel) == summary(serial)
    assert summary(serial) == [
        "goldens: 5 matched, 1 mismatched, 1 missing",
        "  record the missing goldens with: pytest --update-goldens",
        "  the recordings and plots of these failures are in pytest's temporary folders, "
        "which it deletes after three more runs: keep them with --goldens-artifacts=DIR",
    ]
    for result in (serial, parallel):
        # Failures are listed in the order they finish, which xdist does not keep.
        result.stdout.fnmatch_lines(
            ["golden mismatch: goldens/test_envs/test_cartpole?1?/CartPole-v1/trajectory.jsonl*"]
        )
        result.stdout.fnmatch_lines(
            ["golden missing: goldens/test_more/test_mountain_car/MountainCar-v0"]
        )
    assert snapshot(goldens) == before


def test_report_attributes_survive_serialisation(project: pytest.Pytester) -> None:
    # What xdist does to every report: to JSON and back, through the hooks.
    run(project, "--update-goldens")
    reprec = project.inline_run("test_more.py")
    (report,) = [
        r
        for r in reprec.getreports("pytest_runtest_logreport")
        if r.when == "call" and r.nodeid.endswith("test_mountain_car")
    ]
    config = project.parseconfigure()
    data = config.hook.pytest_report_to_serializable(config=config, report=report)
    back = config.hook.pytest_report_from_serializable(config=config, data=data)
    assert (
        back.gym_goldens
        == report.gym_goldens
        == [["passed", "goldens/test_more/test_mountain_car/MountainCar-v0"]]
    )
    assert back.gym_goldens_used == ["test_more/test_mountain_car/MountainCar-v0"]


def test_workers_are_really_used(project: pytest.Pytester) -> None:
    # Guards the comparisons above: a run that silently stayed serial proves nothing.
    project.makeconftest(
        "import os\n"
        "def pytest_runtest_setup(item):\n"
        "    with open(os.path.join(str(item.config.rootpath), 'workers.txt'), 'a') as f:\n"
        "        f.write(os.environ.get('PYTEST_XDIST_WORKER', 'main') + '\\n')\n"
    )
    run(project, "--update-goldens", "--update-goldens-once", "-n", "2").assert_outcomes(passed=7)
    workers = (project.path / "workers.txt").read_text().split()
    assert len(workers) == 7
    assert set(workers) <= {"gw0", "gw1"}

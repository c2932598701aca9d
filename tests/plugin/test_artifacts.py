"""--goldens-artifacts=DIR: the recordings of failing goldens, laid out like the goldens."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from gym_goldens.format.layout import golden_dir_for
from gym_goldens.format.reader import read_recording
from gym_goldens.plugin.artifacts import artifact_dir

NODEID = "tests/test_envs.py::TestCart::test_x[Mountain/Car v0]"
ENVS = Path(__file__).parent.parent / "support" / "determinism_envs.py"

TESTS = """
import os

import gymnasium as gym
from gym_goldens import rollout


def test_cartpole(record_trajectory):
    env = record_trajectory(gym.make("CartPole-v1"))
    rollout(env, seed=int(os.environ.get("SEED", "0")), steps=40)


def test_passing(record_trajectory):
    rollout(record_trajectory(gym.make("Acrobot-v1")), seed=1, steps=20)
"""


def _recording_files(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.glob("*.jsonl*"))


def test_mismatching_recordings_are_copied_and_accepted_by_copying_back(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(test_envs=TESTS)
    pytester.runpytest("--update-goldens").assert_outcomes(passed=2)
    monkeypatch.setenv("SEED", "3")
    result = pytester.runpytest("--goldens-artifacts=artifacts")
    result.assert_outcomes(passed=1, failed=1)

    artifact = pytester.path / "artifacts" / "test_envs" / "test_cartpole" / "CartPole-v1"
    golden = pytester.path / "goldens" / "test_envs" / "test_cartpole" / "CartPole-v1"
    assert _recording_files(artifact) == ["trajectory.jsonl"]
    report = (artifact / "report.txt").read_text()
    assert report.startswith("test_envs.py::test_cartpole\n\ngolden mismatch: ")
    assert "first divergence: episode 0, reset, obs[0]" in report
    assert not (pytester.path / "artifacts" / "test_envs" / "test_passing").exists()

    # A reviewer accepts the new trajectory by copying its file over the golden's.
    shutil.copy(artifact / "trajectory.jsonl", golden / "trajectory.jsonl")
    pytester.runpytest().assert_outcomes(passed=2)


def test_missing_goldens_are_copied(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_envs=TESTS)
    sub = pytester.mkdir("sub")
    result = pytester.runpytest("--goldens-artifacts=sub/out")
    result.assert_outcomes(failed=2)
    out = sub / "out" / "test_envs"
    assert _recording_files(out / "test_cartpole" / "CartPole-v1") == ["trajectory.jsonl"]
    assert "golden missing" in (out / "test_passing" / "Acrobot-v1" / "report.txt").read_text()


def test_nondeterministic_runs_are_kept_side_by_side(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        determinism_envs=ENVS.read_text(),
        test_noise="""
        from determinism_envs import UnseededNumpyEnv
        from gym_goldens import rollout

        def test_noise(record_trajectory):
            rollout(record_trajectory(UnseededNumpyEnv(), "noisy"), seed=0, steps=20)
        """,
    )
    result = pytester.runpytest("--goldens-determinism=1", "--goldens-artifacts=out")
    result.assert_outcomes(failed=1)
    artifact = pytester.path / "out" / "test_noise" / "test_noise" / "noisy"
    assert _recording_files(artifact) == ["trajectory.jsonl"]
    assert _recording_files(artifact / "run-1") == ["trajectory.jsonl"]
    assert len(read_recording(artifact)) == len(read_recording(artifact / "run-1")) == 2
    assert "nondeterministic: run 1 vs run 2" in (artifact / "report.txt").read_text()


def test_nothing_is_written_when_everything_passes(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_envs=TESTS)
    pytester.runpytest("--update-goldens").assert_outcomes(passed=2)
    pytester.runpytest("--goldens-artifacts=out").assert_outcomes(passed=2)
    assert not (pytester.path / "out").exists()


@pytest.mark.parametrize("link", ["test_envs", "test_envs/test_cartpole/CartPole-v1"])
def test_a_symlink_in_the_artifacts_folder_is_never_followed(
    pytester: pytest.Pytester, tmp_path_factory: pytest.TempPathFactory, link: str
) -> None:
    # A pull request can commit a symlink where an artifact will be written:
    # the stale copy is removed and the new one written there, outside DIR.
    outside = tmp_path_factory.mktemp("outside")
    (outside / "precious.txt").write_text("keep me")
    (outside / "test_cartpole" / "CartPole-v1").mkdir(parents=True)
    (outside / "test_cartpole" / "CartPole-v1" / "precious.txt").write_text("keep me too")
    pytester.makepyfile(test_envs=TESTS)
    link_path = pytester.path / "out" / link
    link_path.parent.mkdir(parents=True)
    target = outside if link == "test_envs" else outside / "test_cartpole" / "CartPole-v1"
    link_path.symlink_to(target, target_is_directory=True)
    before = sorted(str(p.relative_to(outside)) for p in outside.rglob("*"))

    result = pytester.runpytest("--goldens-artifacts=out")

    result.assert_outcomes(failed=2)
    assert sorted(str(p.relative_to(outside)) for p in outside.rglob("*")) == before
    assert (outside / "precious.txt").read_text() == "keep me"
    assert link_path.is_symlink()  # not ours to remove either
    result.stdout.fnmatch_lines(
        [f"*artifacts not saved: out/{link} is a symlink*not follow*remove it*"]
    )


def test_a_plain_golden_maps_like_golden_dir_for(tmp_path: Path) -> None:
    goldens = tmp_path / "goldens"
    golden = golden_dir_for(goldens, NODEID, "CartPole-v1")
    target = artifact_dir(tmp_path / "out", goldens, golden, NODEID, "CartPole-v1")
    assert target == golden_dir_for(tmp_path / "out", NODEID, "CartPole-v1")
    assert target.relative_to(tmp_path / "out").parts == (
        "tests",
        "test_envs",
        "TestCart",
        "test_x[Mountain%2FCar%20v0]",
        "CartPole-v1",
    )


def test_a_variant_keeps_its_folder(tmp_path: Path) -> None:
    goldens = tmp_path / "goldens"
    golden = golden_dir_for(goldens, NODEID, "CartPole-v1") / "machine=x86_64"
    target = artifact_dir(tmp_path / "out", goldens, golden, NODEID, "CartPole-v1")
    assert target == golden_dir_for(tmp_path / "out", NODEID, "CartPole-v1") / "machine=x86_64"


def test_a_golden_outside_the_goldens_folder_falls_back_to_the_node_id(tmp_path: Path) -> None:
    target = artifact_dir(tmp_path / "out", tmp_path / "goldens", Path("/elsewhere/x"), NODEID, "n")
    assert target == golden_dir_for(tmp_path / "out", NODEID, "n")

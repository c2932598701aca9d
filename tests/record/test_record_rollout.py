"""Seeded random rollouts, recorded."""

from __future__ import annotations

from pathlib import Path

import pytest

from gym_goldens.errors import GoldensError
from gym_goldens.format.reader import read_recording
from gym_goldens.record.rollouts import EnvCreationError, record_rollout


def test_no_episode_is_a_bare_reset(tmp_path: Path) -> None:
    # Find where the first episode of this seed ends, then stop exactly there.
    probe = record_rollout("CartPole-v1", tmp_path / "probe", seed=2, steps=100)
    first = len(read_recording(probe.output_dir)[0].steps)
    rollout = record_rollout("CartPole-v1", tmp_path / "exact", seed=2, steps=first)
    assert rollout.episodes == 1
    recording = read_recording(tmp_path / "exact")
    assert len(recording) == 1
    assert recording[0].complete


def test_zero_steps_records_the_reset(tmp_path: Path) -> None:
    rollout = record_rollout("Acrobot-v1", tmp_path / "r", seed=0, steps=0)
    assert (rollout.episodes, rollout.steps, rollout.status) == (1, 0, "created")
    (episode,) = read_recording(tmp_path / "r")
    assert [r["event"] for r in episode.records] == ["reset"]


def test_advance_is_called_once_per_step(tmp_path: Path) -> None:
    calls: list[int] = []
    record_rollout("MountainCar-v0", tmp_path / "r", seed=0, steps=25, advance=calls.append)
    assert calls == [1] * 25


def test_errors_say_what_could_not_be_made(tmp_path: Path) -> None:
    with pytest.raises(EnvCreationError, match="cannot make env 'CartPole-v99'") as info:
        record_rollout("CartPole-v99", tmp_path / "r", seed=0, steps=1)
    assert isinstance(info.value, GoldensError)
    assert isinstance(info.value, ValueError)
    with pytest.raises(ValueError, match="steps must be 0 or more"):
        record_rollout("CartPole-v1", tmp_path / "r", seed=0, steps=-3)
    assert not (tmp_path / "r").exists()


def test_a_recording_made_again_is_unchanged_and_a_different_one_updated(tmp_path: Path) -> None:
    target = tmp_path / "r"
    assert record_rollout("CartPole-v1", target, seed=0, steps=40).status == "created"
    before = (target / "trajectory.jsonl").stat().st_mtime_ns
    assert record_rollout("CartPole-v1", target, seed=0, steps=40).status == "unchanged"
    assert (target / "trajectory.jsonl").stat().st_mtime_ns == before
    assert record_rollout("CartPole-v1", target, seed=1, steps=40).status == "updated"

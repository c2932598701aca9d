"""Numeric leaves of episodes as time series, and where golden and actual part."""

from __future__ import annotations

import warnings
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

from gym_goldens import RecordTrajectory, Tolerance
from gym_goldens.errors import GoldensError
from gym_goldens.format.reader import read_recording
from gym_goldens.present.series import compare_series, episode_series, read_episode_series
from tests.support.envs import ImageEnv
from tests.support.recordings import record_extremes, record_gauge


def test_episode_series_holds_the_recorded_values(golden: Path) -> None:
    episode = read_recording(golden)[0]
    series = {s.label: s for s in episode_series(golden)}
    assert list(series) == ["obs[0]", "obs[1]", "obs[2]", "obs[3]", "action", "reward"]
    steps = episode.steps
    reset = episode.records[0]
    assert series["obs[1]"].t.tolist() == list(range(len(steps) + 1))
    assert series["obs[1]"].values.tolist() == [reset["obs"][1]] + [s["obs"][1] for s in steps]
    assert series["action"].t.tolist() == [s["t"] for s in steps]
    assert series["action"].values.tolist() == [float(s["action"]) for s in steps]
    assert series["action"].discrete
    assert not series["obs[1]"].discrete


def test_episode_series_reads_the_episode_asked_for(golden: Path) -> None:
    first, second = read_recording(golden)
    assert (len(first.steps), len(second.steps)) == (60, 10)
    for source in (golden, golden / "trajectory.jsonl", second):
        (action,) = episode_series(source, ["action"], episode=1)
        assert action.t.tolist() == list(range(1, 11))
        assert action.values.tolist() == [float(s["action"]) for s in second.steps]
    with pytest.raises(GoldensError, match="there is no episode 2; this recording has episodes 0"):
        episode_series(golden, episode=2)


def test_an_episode_already_read_gives_the_same_series(golden: Path) -> None:
    from_file = episode_series(golden, None)
    from_episode = episode_series(read_recording(golden)[0], None)
    assert [s.label for s in from_file] == [s.label for s in from_episode]
    for a, b in zip(from_file, from_episode, strict=True):
        assert np.array_equal(a.t, b.t)
        assert np.array_equal(a.values, b.values, equal_nan=True)


def test_episode_series_selects_fields_by_pattern(golden: Path) -> None:
    labels = [s.label for s in episode_series(golden, ["reward", "obs[3]", "terminated"])]
    assert labels == ["reward", "obs[3]", "terminated"]
    with pytest.raises(ValueError, match="not a record field"):
        episode_series(golden, ["observation"])


def test_compare_series_finds_the_first_step_out_of_tolerance(golden: Path, actual: Path) -> None:
    fields = {f.label: f for f in compare_series(episode_series(golden), episode_series(actual))}
    assert fields["obs[2]"].first == 17
    assert [label for label, f in fields.items() if f.diverges] == ["obs[2]"]
    difference = fields["obs[2]"].actual - fields["obs[2]"].golden
    assert np.allclose(difference[fields["obs[2]"].t >= 17], 0.01)
    assert np.all(difference[fields["obs[2]"].t < 17] == 0)
    # The next episode of the file was left alone.
    later = compare_series(episode_series(golden, episode=1), episode_series(actual, episode=1))
    assert not any(f.diverges for f in later)


def test_compare_series_honours_tolerance_and_ignore(golden: Path, actual: Path) -> None:
    golden_series = episode_series(golden)
    actual_series = episode_series(actual)
    loose = compare_series(golden_series, actual_series, Tolerance.build(atol={"obs[2]": 0.02}))
    assert not any(f.diverges for f in loose)
    ignored = compare_series(golden_series, actual_series, Tolerance.build(ignore=["obs"]))
    assert [f.label for f in ignored] == ["action", "reward"]


def test_a_step_held_by_one_side_diverges(golden: Path, tmp_path: Path) -> None:
    shorter = tmp_path / "shorter"
    shorter.mkdir()
    lines = (golden / "trajectory.jsonl").read_bytes().splitlines()
    second = read_recording(golden)[1].line - 1  # the index of episode 1's header line
    # Episode 0 loses its last five steps; episode 1 follows it in the file as before.
    kept = lines[: second - 5] + lines[second:]
    (shorter / "trajectory.jsonl").write_bytes(b"\n".join(kept) + b"\n")
    last_common = second - 5 - 2  # header and reset lines are not steps
    fields = compare_series(episode_series(golden), episode_series(shorter))
    assert {f.first_unpaired for f in fields} == {last_common + 1}
    assert all(f.first is None and f.differs for f in fields)  # no step held by both differs
    later = compare_series(episode_series(golden, episode=1), episode_series(shorter, episode=1))
    assert not any(f.diverges for f in later)


def test_arrays_stored_as_summaries_give_their_mean(tmp_path: Path) -> None:
    env = RecordTrajectory(gym.make("CartPole-v1"), tmp_path / "rec", max_array_size=2)
    env.reset(seed=0)
    env.step(1)
    env.close()
    (series,) = episode_series(tmp_path / "rec", ["obs"])
    episode = read_recording(tmp_path / "rec")[0]
    assert series.label == "mean(obs)"
    assert series.values.tolist() == [episode.records[0]["obs"].mean, episode.steps[0]["obs"].mean]


def test_nested_fields_become_one_series_per_number(tmp_path: Path) -> None:
    path = record_gauge(tmp_path / "g")
    series = {s.label: s for s in episode_series(path, ["obs", "info"])}
    assert list(series) == ["obs.mode", "obs.pos[0]", "obs.pos[1]", "info.energy"]
    assert series["obs.mode"].discrete
    assert series["obs.mode"].values.tolist() == [t % 3 for t in range(9)]
    assert np.isnan(series["info.energy"].values[3])


def test_nan_matches_nan_and_a_drift_is_found(tmp_path: Path) -> None:
    golden = record_gauge(tmp_path / "g")
    same = record_gauge(tmp_path / "s")
    drifted = record_gauge(tmp_path / "d", drift=1e-3)
    fields = ["obs", "info"]
    assert not any(
        f.diverges
        for f in compare_series(episode_series(golden, fields), episode_series(same, fields))
    )
    found = compare_series(episode_series(golden, fields), episode_series(drifted, fields))
    assert [(f.label, f.first) for f in found if f.diverges] == [("info.energy", 6)]


def test_values_whose_difference_overflows_diverge_without_a_warning(tmp_path: Path) -> None:
    golden = episode_series(record_extremes(tmp_path / "g", sign=1.0), ["obs"])
    actual = episode_series(record_extremes(tmp_path / "a", sign=-1.0), ["obs"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # as under pytest -W error
        found = compare_series(golden, actual)
        same = compare_series(golden, golden)
    assert [(f.label, f.first) for f in found] == [("obs[0]", 0), ("obs[1]", 0)]
    assert not any(f.diverges for f in same)


def _pendulum(path: Path, steps: int, *, torque: float = 0.0, from_t: int = 0) -> Path:
    """One long Pendulum episode (no time limit), the torque changed from step ``from_t``."""
    env = RecordTrajectory(gym.make("Pendulum-v1", max_episode_steps=steps + 1), path)
    env.reset(seed=0)
    for t in range(1, steps + 1):
        env.step(np.array([torque if t >= from_t else 0.0], dtype=np.float32))
    env.close()
    return path


def test_a_long_episode_keeps_every_kth_step_and_every_step_around_a_divergence(
    tmp_path: Path,
) -> None:
    golden = _pendulum(tmp_path / "golden", 5_000)
    actual = _pendulum(tmp_path / "actual", 5_000, torque=1.0, from_t=3_333)
    keep = (3_300, 3_400)
    read = [
        read_episode_series(path, 0, ["obs[0]"], None, max_points=500, keep=keep)
        for path in (golden, actual)
    ]
    (golden_series,), (actual_series,) = (found.series for found in read if found)
    assert golden_series.stride == actual_series.stride == 16  # 5,001 steps in about 500
    assert len(golden_series.t) <= 500 + 101
    assert set(range(3_300, 3_401)) <= set(golden_series.t.tolist())
    assert set(golden_series.t.tolist()) - set(range(3_300, 3_401)) <= set(range(0, 5_001, 16))
    # The first divergence is exact: every step around it was kept.
    (field,) = compare_series([golden_series], [actual_series])
    assert field.first == 3_333  # the observation after the first step with a torque


def test_series_of_episodes_kept_at_different_strides_compare_at_the_larger_one(
    tmp_path: Path,
) -> None:
    short = _pendulum(tmp_path / "short", 900)
    long = _pendulum(tmp_path / "long", 3_000)
    (short_series,) = episode_series(short, ["reward"], max_points=1_000)
    (long_series,) = episode_series(long, ["reward"], max_points=1_000)
    assert (short_series.stride, long_series.stride) == (1, 4)
    (field,) = compare_series([short_series], [long_series])
    assert set(field.t.tolist()) <= set(range(0, 3_001, 4))
    assert field.first is None
    assert field.first_unpaired == 904  # the first step the short episode lacks, at stride 4


def test_a_large_array_is_one_series_of_its_mean_unless_its_elements_are_named(
    tmp_path: Path,
) -> None:
    env = RecordTrajectory(ImageEnv(shape=(10, 10, 3)), tmp_path / "frames", max_array_size=None)
    env.reset(seed=0)
    for _ in range(3):
        env.step(0)
    env.close()
    frames = read_recording(tmp_path / "frames")[0]
    means = [float(np.mean(record["obs"])) for record in frames.records]
    (mean,) = episode_series(tmp_path / "frames", ["obs"])
    assert mean.label == "mean(obs)"
    assert mean.values.tolist() == pytest.approx(means)
    (pixel,) = episode_series(tmp_path / "frames", ["obs[3][4][2]"])
    assert pixel.label == "obs[3][4][2]"
    assert pixel.values.tolist() == [record["obs"][3][4][2] for record in frames.records]


def _steps_renumbered(golden: Path, tmp_path: Path, numbers: dict[int, int]) -> Path:
    """A copy of ``golden`` whose steps ``t`` (of the first episode) are renumbered."""
    copy = tmp_path / "renumbered" / "trajectory.jsonl"
    copy.parent.mkdir()
    lines = (golden / "trajectory.jsonl").read_bytes().split(b"\n")
    for old, new in numbers.items():
        line = old + 2  # the header, the reset, then steps from t=1
        lines[line - 1] = lines[line - 1].replace(b'"t":%d,' % old, b'"t":%d,' % new)
    copy.write_bytes(b"\n".join(lines))
    return copy


@pytest.mark.parametrize(
    ("numbers", "message"),
    [
        ({3: 2}, "trajectory.jsonl:5: step t=2 follows t=2"),
        ({3: 2**64 - 1}, "trajectory.jsonl:5: step t=18446744073709551615 follows t=2"),
        ({1: 0}, "trajectory.jsonl:3: step t=0 follows the reset"),
    ],
)
def test_steps_that_do_not_follow_each_other_are_refused(
    golden: Path, tmp_path: Path, numbers: dict[int, int], message: str
) -> None:
    # A repeated t kept every record around a divergence and thinned the rest
    # at each one (quadratic time); a t past int64 overflowed the time axis.
    damaged = _steps_renumbered(golden, tmp_path, numbers)
    with pytest.raises(GoldensError, match=message.replace("[", r"\[")):
        episode_series(damaged, ["reward"])
    with pytest.raises(GoldensError, match="follows"):
        read_episode_series(damaged, 0, ["reward"], None, keep=(1, 100), max_points=4)

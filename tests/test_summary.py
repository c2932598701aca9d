"""Summaries of recordings, spaces and step tables."""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

import gymnasium as gym
import pytest
from gymnasium import spaces

from gym_goldens import RecordTrajectory
from gym_goldens.errors import GoldenFormatError
from gym_goldens.header import describe_space
from gym_goldens.reader import read_recording
from gym_goldens.summary import (
    count_records,
    find_recordings,
    format_space,
    format_steps,
    summarize,
)


@pytest.fixture(scope="module")
def recording(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("rec") / "Blackjack-v1"
    env = RecordTrajectory(gym.make("Blackjack-v1", sab=True), out)
    env.action_space.seed(4)
    env.reset(seed=4)
    for _ in range(30):
        _, _, terminated, truncated, _ = env.step(env.action_space.sample())
        if terminated or truncated:
            env.reset()
    env.close()
    return out


def test_summary_counts_steps_and_returns(recording: Path) -> None:
    summary = summarize(recording)
    episodes = list(read_recording(recording))
    assert [e.steps for e in summary.episodes] == [len(e.steps) for e in episodes]
    assert [e.total_reward for e in summary.episodes] == [e.total_reward for e in episodes]
    assert summary.steps == 30
    assert [e.ending for e in summary.episodes[:-1]] == ["terminated"] * (len(episodes) - 1)
    assert summary.header is not None
    assert summary.header["env"]["id"] == "Blackjack-v1"


def test_summary_reports_progress_in_records(recording: Path) -> None:
    counted: list[int] = []
    summarize(recording, advance=counted.append)
    lines = count_records(list(recording.iterdir()))
    assert sum(counted) == lines
    assert lines == 30 + 2 * len(read_recording(recording))  # steps, plus a header and a reset each


def test_gzipped_episode_files_are_read(recording: Path, tmp_path: Path) -> None:
    zipped = tmp_path / "zipped"
    zipped.mkdir()
    for path in sorted(recording.iterdir()):
        (zipped / f"{path.name}.gz").write_bytes(gzip.compress(path.read_bytes()))
    assert summarize(zipped).steps == 30
    assert count_records(sorted(zipped.iterdir())) == count_records(sorted(recording.iterdir()))


def test_find_recordings_walks_a_goldens_tree(recording: Path, tmp_path: Path) -> None:
    for name in ("a/x", "b/c/y"):
        shutil.copytree(recording, tmp_path / name)
    (tmp_path / "notes").mkdir()
    assert find_recordings(tmp_path) == [tmp_path / "a/x", tmp_path / "b/c/y"]
    with pytest.raises(GoldenFormatError, match="expected a folder of recordings"):
        find_recordings(tmp_path / "a/x/episode_00000.jsonl")


def test_an_empty_folder_is_no_recording(tmp_path: Path) -> None:
    with pytest.raises(GoldenFormatError, match="no episode files"):
        summarize(tmp_path)


@pytest.mark.parametrize(
    ("space", "text"),
    [
        (spaces.Discrete(4), "Discrete(4)"),
        (spaces.Discrete(3, start=-1), "Discrete(3, start=-1)"),
        (spaces.Box(-1.0, 1.0, (2, 3)), "Box(float32, shape (2, 3), low -1, high 1)"),
        (spaces.Box(0, 255, (2,), dtype="uint8"), "Box(uint8, shape (2,), low 0, high 255)"),
        (spaces.MultiDiscrete([3, 2]), "MultiDiscrete([3 2])"),
        (spaces.MultiBinary(5), "MultiBinary(5)"),
        (
            spaces.Dict({"pos": spaces.Discrete(2), "goal": spaces.MultiBinary(2)}),
            "Dict(goal: MultiBinary(2), pos: Discrete(2))",
        ),
        (spaces.Tuple((spaces.Discrete(2), spaces.Discrete(3))), "Tuple(Discrete(2), Discrete(3))"),
        (spaces.Text(8, min_length=1), "Text(1..8 chars)"),
        (spaces.Sequence(spaces.Discrete(2)), "Sequence(Discrete(2))"),
    ],
)
def test_spaces_read_like_gymnasium_writes_them(space: gym.Space[object], text: str) -> None:
    from gym_goldens.codec import Encoder, decode_line

    # As stored in a header and read back.
    description = decode_line(Encoder().encode(describe_space(space)))
    assert format_space(description) == text


def test_box_bounds_are_cut_short() -> None:
    low = [float(i) for i in range(10)]
    text = format_space({"type": "Box", "dtype": "float64", "shape": [10], "low": low, "high": low})
    assert "low [0 1 2 3 4 5 ...]" in text


def test_format_steps_shows_the_range_asked_for(recording: Path) -> None:
    first = sorted(recording.iterdir())[0]
    episode = read_recording(first)[0]
    lines = format_steps(first, 1, None)
    assert len(lines) == 1 + len(episode.steps)
    assert lines[1].split()[0] == "1"
    assert format_steps(first, 50, 60) == [f"no steps with 50 <= t < 60 in {first}"]

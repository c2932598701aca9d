"""Summaries of recordings, spaces and step tables.

A recording is a folder holding ``trajectory.jsonl`` (every episode, each
opening with its header); folders of format 1, a file per episode, still read.
"""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces

from gym_goldens import RecordTrajectory
from gym_goldens.errors import GoldenFormatError
from gym_goldens.format.header import describe_space
from gym_goldens.format.reader import (
    count_episode_records,
    count_records,
    episode_lines,
    find_recordings,
    read_recording,
)
from gym_goldens.present.summary import (
    format_folder,
    format_recording,
    format_space,
    format_steps,
    summarize,
)
from tests.support.bombs import episode_bomb, header_line
from tests.support.envs import MultiObjectiveEnv, ScriptedEnv, run


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


def test_the_recording_is_one_file_of_several_episodes(recording: Path) -> None:
    assert [p.name for p in recording.iterdir()] == ["trajectory.jsonl"]
    assert len(read_recording(recording)) > 2


def test_summary_counts_steps_and_returns(recording: Path) -> None:
    summary = summarize(recording)
    episodes = list(read_recording(recording))
    assert [e.index for e in summary.episodes] == list(range(len(episodes)))
    assert [e.steps for e in summary.episodes] == [len(e.steps) for e in episodes]
    assert [e.total_reward for e in summary.episodes] == [e.total_reward for e in episodes]
    assert summary.steps == 30
    assert [e.ending for e in summary.episodes[:-1]] == ["terminated"] * (len(episodes) - 1)
    assert summary.header is not None
    assert summary.header["env"]["id"] == "Blackjack-v1"
    # Each episode opens with its own header, at the line the reader finds it.
    assert [e.line for e in summary.episodes] == [e.line for e in episodes]
    seeds = [e.seed for e in summary.episodes]
    assert seeds == [4] + [None] * (len(episodes) - 1)
    assert all(e.path == recording / "trajectory.jsonl" for e in summary.episodes)


def test_a_trajectory_file_summarises_as_its_folder(recording: Path) -> None:
    folder, file = summarize(recording), summarize(recording / "trajectory.jsonl")
    assert file.path == recording / "trajectory.jsonl"
    assert file.episodes == folder.episodes


def test_summary_reports_progress_in_records(recording: Path) -> None:
    counted: list[int] = []
    summarize(recording, advance=counted.append)
    lines = count_records([recording / "trajectory.jsonl"])
    assert sum(counted) == lines
    assert lines == 30 + 2 * len(read_recording(recording))  # steps, plus a header and a reset each


def test_records_are_counted_per_episode(recording: Path, tmp_path: Path) -> None:
    counts = list(count_episode_records([recording / "trajectory.jsonl"]))
    assert counts == [1 + len(e.records) for e in read_recording(recording)]


def test_a_gzipped_trajectory_file_is_read(recording: Path, tmp_path: Path) -> None:
    zipped = tmp_path / "zipped"
    zipped.mkdir()
    plain = recording / "trajectory.jsonl"
    (zipped / "trajectory.jsonl.gz").write_bytes(gzip.compress(plain.read_bytes()))
    assert summarize(zipped).steps == 30
    assert len(summarize(zipped).episodes) == len(summarize(recording).episodes)
    assert count_records([zipped / "trajectory.jsonl.gz"]) == count_records([plain])


def test_find_recordings_walks_a_goldens_tree(recording: Path, tmp_path: Path) -> None:
    for name in ("a/x", "b/c/y"):
        shutil.copytree(recording, tmp_path / name)
    zipped = tmp_path / "z"
    zipped.mkdir()
    (zipped / "trajectory.jsonl.gz").write_bytes(
        gzip.compress((recording / "trajectory.jsonl").read_bytes())
    )
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "trajectory.txt").write_text("not a recording")
    assert find_recordings(tmp_path) == [
        tmp_path / "a/x",
        tmp_path / "b/c/y",
        tmp_path / "z",
    ]
    with pytest.raises(GoldenFormatError, match="expected a folder of recordings"):
        find_recordings(tmp_path / "a/x/trajectory.jsonl")


def test_an_empty_folder_is_no_recording(tmp_path: Path) -> None:
    with pytest.raises(GoldenFormatError, match=r"no recording file \(trajectory.jsonl\)"):
        summarize(tmp_path)
    (tmp_path / "env_0").mkdir()
    with pytest.raises(GoldenFormatError, match="give one of its sub-env folders"):
        summarize(tmp_path)


def test_episodes_are_found_by_number_in_the_file(recording: Path) -> None:
    episodes = list(read_recording(recording))
    for source in (recording, recording / "trajectory.jsonl"):
        found = episode_lines(source, 2)
        assert found is not None
        path, lines = found
        numbers = [number for number, _ in lines]
        assert path == recording / "trajectory.jsonl"
        assert numbers[0] == episodes[2].line
        assert len(numbers) == 1 + len(episodes[2].records)
    assert episode_lines(recording, len(episodes)) is None
    assert episode_lines(recording, -1) is None


@pytest.mark.parametrize(
    ("space", "text"),
    [
        (spaces.Discrete(4), "Discrete(4)"),
        (spaces.Discrete(3, start=-1), "Discrete(3, start=-1)"),
        (spaces.Box(-1.0, 1.0, (2, 3)), "Box(-1, 1, (2, 3), float32)"),
        (spaces.Box(0, 255, (2,), dtype="uint8"), "Box(0, 255, (2,), uint8)"),
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
    from gym_goldens.format.codec import Encoder, decode_line

    # As stored in a header and read back.
    description = decode_line(Encoder().encode(describe_space(space)))
    assert format_space(description) == text


def test_multi_discrete_keeps_every_count() -> None:
    # Gymnasium writes MultiDiscrete([3 3]): one 3 would read as a single count of 3.
    from gym_goldens.format.codec import Encoder, decode_line

    description = decode_line(Encoder().encode(describe_space(spaces.MultiDiscrete([3, 3]))))
    assert format_space(description) == "MultiDiscrete([3 3])"
    many = decode_line(Encoder().encode(describe_space(spaces.MultiDiscrete([2] * 9))))
    assert format_space(many) == "MultiDiscrete([2 2 2 2 2 2 ...])"


def test_box_bounds_are_cut_short() -> None:
    low = [float(i) for i in range(10)]
    text = format_space({"type": "Box", "dtype": "float64", "shape": [10], "low": low, "high": low})
    assert text == "Box([0 1 2 3 4 5 ...], [0 1 2 3 4 5 ...], (10,), float64)"


def test_format_steps_shows_the_range_asked_for(recording: Path) -> None:
    episode = read_recording(recording)[1]
    lines = format_steps(recording, 1, None, episode=1)
    assert len(lines) == 1 + len(episode.steps)
    assert [line.split()[0] for line in lines[1:]] == [str(s["t"]) for s in episode.steps]
    first_action = str(episode.steps[0]["action"])
    assert first_action in lines[1]
    # The same episode, addressed in the file.
    assert format_steps(recording / "trajectory.jsonl", 1, None, episode=1) == lines
    assert format_steps(recording, 0, 1)[1].lstrip().startswith("0 (reset)")
    file = recording / "trajectory.jsonl"
    assert format_steps(recording, 50, 60, episode=1) == [
        f"no steps with 50 <= t < 60 in episode 1 of {file} (from line {episode.line})"
    ]


def test_format_steps_of_a_missing_episode_names_those_there_are(recording: Path) -> None:
    count = len(read_recording(recording))
    with pytest.raises(
        GoldenFormatError,
        match=rf"there is no episode {count}; this recording has episodes 0 to "
        rf"{count - 1}",
    ):
        format_steps(recording, 0, None, episode=count)


def test_a_vector_reward_has_a_return_per_objective(tmp_path: Path) -> None:
    out = tmp_path / "goldens" / "chain"
    # Five steps right end the first episode (distance 5, energy 5 x -0.25); two more are open.
    run(RecordTrajectory(MultiObjectiveEnv(energy_cost=0.25), out), [1, 1, 1, 1, 1, 0, 0])
    summary = summarize(out)
    assert [e.total_reward for e in summary.episodes] == [(5.0, -1.25), (-2.0, -0.5)]
    lines = format_recording(summary)
    assert "    reward      float[2]" in lines
    table = lines[lines.index("") + 1 :]
    assert table[1].split() == ["0", "5", "[5,", "-1.25]", "terminated", "0"]
    assert table[2].split() == ["1", "2", "[-2,", "-0.5]", "open", "-"]
    folder = format_folder(tmp_path / "goldens", [summary])
    assert folder[4].split()[-2:] == ["[1.5,", "-0.875]"]


def _record_dict_env(out: Path) -> Path:
    """Three steps of an env whose obs and info are dicts of long values."""
    space = spaces.Dict(
        {
            "agent": spaces.Box(0.0, 100.0, (4,), np.float64),
            "target": spaces.Box(0.0, 100.0, (4,), np.float64),
            "lidar": spaces.Box(0.0, 100.0, (16,), np.float64),
        }
    )
    observations = [
        {
            "agent": np.full(4, 10.125 + t),
            "target": np.full(4, 70.0625 - t),
            "lidar": np.linspace(0.0, 1.0, 16),
        }
        for t in range(4)
    ]
    infos = [{"distance": 60.0 - 2 * t, "phase": f"approach {t}"} for t in range(4)]
    run(RecordTrajectory(ScriptedEnv(space, observations, infos=infos), out), [0, 1, 0])
    return out


def test_format_steps_gives_each_key_of_a_dict_its_own_column(tmp_path: Path) -> None:
    lines = format_steps(_record_dict_env(tmp_path / "dict"), 0, None)
    assert lines[0].split() == [
        "t", "action", "reward", "term", "trunc", "obs.agent", "obs.lidar", "obs.target",
        "info.distance", "info.phase",
    ]  # fmt: skip
    # Each key's value is whole, where it fits a column.
    assert "[13.125, 13.125, 13.125, 13.125]" in lines[4]
    assert "[67.0625, 67.0625, 67.0625, 67.0625]" in lines[4]
    # One that does not is cut, and the last line says how to see it whole.
    assert lines[4].count("...") == 1
    assert lines[-1] == (
        "(cells are cut at 48 characters: show a field whole with --fields, such as "
        "--fields obs.lidar)"
    )
    whole = format_steps(tmp_path / "dict", 3, 4, fields=["obs.lidar"])
    assert whole[1].split()[1:3] == ["[0,", "0.0666667,"]
    assert whole[1].endswith(", 1]")


def test_format_steps_shows_the_fields_chosen_by_pattern(tmp_path: Path) -> None:
    out = _record_dict_env(tmp_path / "dict")
    lines = format_steps(out, 1, 3, fields=["obs.agent[0]", "info.*", "reward"])
    assert lines[0].split() == ["t", "obs.agent[0]", "info.distance", "info.phase", "reward"]
    assert lines[1].split() == ["1", "11.125", "58", "approach", "1", "0"]
    assert lines[2].split() == ["2", "12.125", "56", "approach", "2", "0"]
    with pytest.raises(ValueError, match="not a record field"):
        format_steps(out, 1, 3, fields=["position"])


@pytest.mark.parametrize("compress", [False, True])
def test_a_summary_keeps_counts_and_a_bounded_number_of_episodes(
    tmp_path: Path, compress: bool
) -> None:
    header = header_line(tmp_path / "recorded")
    bomb = episode_bomb(tmp_path / "bomb", header, 3000, compress=compress)

    summary = summarize(bomb)

    assert (summary.episode_count, summary.steps, summary.total_reward) == (3000, 0, 0.0)
    assert summary.header is not None
    assert summary.header["env"]["id"] == "CartPole-v1"
    # The rows `show` prints, not one object per episode.
    assert [e.index for e in summary.episodes] == list(range(40))
    listed = summarize(bomb, rows=100)
    assert [e.index for e in listed.episodes] == list(range(100))
    text = "\n".join(format_recording(summary))
    assert "  episodes: 3000, steps: 0\n" in text
    assert "... 2,960 more episodes (show them all with --all)" in text

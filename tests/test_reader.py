"""Tests of reading recordings back (``gym_goldens.reader``)."""

from __future__ import annotations

import gzip
import math
from pathlib import Path

import gymnasium as gym
import pytest

from gym_goldens import (
    GoldenFormatError,
    RecordTrajectory,
    UnsupportedFormatVersionError,
    read_recording,
)
from gym_goldens.reader import episode_files, iter_lines, read_episode

_HEADER = b'{"event":"header","format":"gym-goldens","version":"1.0"}'
_RESET = b'{"event":"reset","episode":0,"obs":[0.5],"info":{}}'
_STEP = (
    b'{"event":"step","t":1,"action":0,"obs":[{"$float":"nan"}],"reward":1.0,'
    b'"terminated":true,"truncated":false,"info":{}}'
)


def _write(path: Path, *lines: bytes) -> Path:
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


def test_reads_a_real_recording(tmp_path: Path) -> None:
    env = RecordTrajectory(gym.make("Taxi-v4"), tmp_path)
    env.reset(seed=5)
    for action in (0, 1, 2):
        env.step(action)
    env.reset(seed=6)
    env.step(3)
    env.close()
    recording = read_recording(tmp_path)
    assert len(recording) == 2
    first, second = list(recording)
    assert (first.index, second.index) == (0, 1)
    assert first.header is not None
    assert first.header["env"]["id"] == "Taxi-v4"
    assert [r["event"] for r in first.records] == ["reset", "step", "step", "step"]
    assert [r["action"] for r in first.steps] == [0, 1, 2]
    assert first.total_reward == sum(r["reward"] for r in first.steps)
    assert recording[1].steps[0]["action"] == 3


def test_episode_files_are_ordered_by_number_not_by_name(tmp_path: Path) -> None:
    for index in (10, 2, 0, 1):
        _write(tmp_path / f"episode_{index:05d}.jsonl", _RESET)
    (tmp_path / "notes.txt").write_text("not an episode")
    (tmp_path / "episode_x.jsonl").write_text("not an episode either")
    assert [p.name for p in episode_files(tmp_path)] == [
        "episode_00000.jsonl",
        "episode_00001.jsonl",
        "episode_00002.jsonl",
        "episode_00010.jsonl",
    ]


def test_the_same_episode_twice_is_refused(tmp_path: Path) -> None:
    _write(tmp_path / "episode_00000.jsonl", _RESET)
    with gzip.open(tmp_path / "episode_00000.jsonl.gz", "wb") as handle:
        handle.write(_RESET + b"\n")
    with pytest.raises(GoldenFormatError, match="episode 0 is also stored as"):
        episode_files(tmp_path)


def test_gzip_files_without_header_with_crlf_and_bom_read(tmp_path: Path) -> None:
    path = tmp_path / "episode_00000.jsonl.gz"
    with gzip.open(path, "wb") as handle:
        handle.write(b"\xef\xbb\xbf" + _RESET + b"\r\n\r\n" + _STEP + b"\r\n")
    episode = read_recording(path)[0]
    assert episode.header is None
    assert [r["event"] for r in episode.records] == ["reset", "step"]
    assert math.isnan(episode.steps[0]["obs"][0])
    assert episode.complete
    assert [number for number, _ in iter_lines(path)] == [1, 3]


def test_missing_path_is_an_error_naming_it(tmp_path: Path) -> None:
    with pytest.raises(GoldenFormatError, match="nowhere: no such file or folder"):
        read_recording(tmp_path / "nowhere")


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        (b'{"event": "st', "invalid JSON"),
        (b"[1, 2]", "expected a JSON object"),
        (b'{"event": "jump"}', 'expected "event" to be'),
        (b'{"event": "step", "t": "1"}', 'a step record needs an integer "t"'),
        (b'{"event":"header","format":"other","version":"1.0"}', "expected format 'gym-goldens'"),
        (b'{"event":"header","format":"gym-goldens","version":"x"}', "unreadable format version"),
        (b"[" * 100_000 + b"]" * 100_000, "nested too deeply|invalid JSON"),
    ],
)
def test_bad_records_name_file_and_line(tmp_path: Path, line: bytes, reason: str) -> None:
    path = _write(tmp_path / "episode_00000.jsonl", _RESET, line)
    with pytest.raises(GoldenFormatError, match=reason) as info:
        read_episode(path)
    assert info.value.path == str(path)
    assert info.value.line == 2
    assert str(info.value).startswith(f"{path}:2: ")


def test_newer_major_version_is_refused_with_the_fix(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "episode_00000.jsonl",
        b'{"event":"header","format":"gym-goldens","version":"2.0"}',
        _RESET,
    )
    with pytest.raises(UnsupportedFormatVersionError, match="upgrade pytest-gym-goldens"):
        read_episode(path)
    newer_minor = _write(
        tmp_path / "episode_00001.jsonl",
        b'{"event":"header","format":"gym-goldens","version":"1.9"}',
        _RESET,
    )
    assert read_episode(newer_minor).records[0]["event"] == "reset"


def test_header_must_come_first(tmp_path: Path) -> None:
    path = _write(tmp_path / "episode_00000.jsonl", _RESET, _HEADER)
    with pytest.raises(GoldenFormatError, match="header record must come first") as info:
        read_episode(path)
    assert info.value.line == 2


def test_truncated_last_line_is_an_error_on_that_line(tmp_path: Path) -> None:
    path = tmp_path / "episode_00000.jsonl"
    path.write_bytes(_HEADER + b"\n" + _RESET + b"\n" + _STEP[:40])
    with pytest.raises(GoldenFormatError, match="invalid JSON") as info:
        read_episode(path)
    assert info.value.line == 3

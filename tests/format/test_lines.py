"""Line reading: chunks, odd line endings, and files cut short by a crash."""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym
import pytest

from gym_goldens.errors import GoldenFormatError
from gym_goldens.format import lines
from gym_goldens.format.reader import iter_lines, read_recording
from gym_goldens.present.report import format_unreadable
from gym_goldens.record.single import RecordTrajectory

LINES = [b'{"a":1}', b'{"b":[1,2,3]}', b'{"c":"' + b"x" * 40 + b'"}', b'{"d":null}']


@pytest.mark.parametrize("chunk", [1, 2, 3, 7, 64, 1 << 20])
@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b"\n".join(LINES) + b"\n", [(i + 1, line) for i, line in enumerate(LINES)]),
        (b"\n".join(LINES), [(i + 1, line) for i, line in enumerate(LINES)]),
        (b"\r\n".join(LINES) + b"\r\n", [(i + 1, line) for i, line in enumerate(LINES)]),
        (b"\xef\xbb\xbf" + LINES[0] + b"\n\n\n" + LINES[1] + b"\n", [(1, LINES[0]), (4, LINES[1])]),
        (b"\n" + LINES[0] + b"\n", [(2, LINES[0])]),
        (b"", []),
        (b"{}\n", [(1, b"{}")]),
        (b"\n\n", []),
        (b"1\n2", [(1, b"1"), (2, b"2")]),
    ],
)
def test_lines_are_the_same_for_every_chunk_size(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    chunk: int,
    content: bytes,
    expected: list[tuple[int, bytes]],
) -> None:
    monkeypatch.setattr(lines, "_READ_CHUNK", chunk)
    path = tmp_path / "trajectory.jsonl"
    path.write_bytes(content)
    assert list(iter_lines(path)) == expected


def test_a_too_long_line_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lines, "_READ_CHUNK", 4)
    monkeypatch.setattr(lines, "_MAX_LINE_BYTES", 10)
    path = tmp_path / "trajectory.jsonl"
    path.write_bytes(b'{"a":1}\n{"b":"' + b"y" * 30 + b'"}\n')
    with pytest.raises(GoldenFormatError, match=r"trajectory.jsonl:2: line is longer than 16 MiB"):
        list(iter_lines(path))


def _crashed_recording(tmp_path: Path) -> Path:
    env = RecordTrajectory(gym.make("CartPole-v1"), tmp_path / "run")
    env.reset(seed=0)
    for _ in range(5):
        env.step(0)
    env.close()
    path = tmp_path / "run" / "trajectory.jsonl"
    data = path.read_bytes()
    path.write_bytes(data[: len(data) - 40])  # the process died mid-write
    return path


def test_a_last_line_cut_short_is_reported_as_such(tmp_path: Path) -> None:
    path = _crashed_recording(tmp_path)
    with pytest.raises(GoldenFormatError) as caught:
        read_recording(path.parent)[0]
    assert caught.value.line == 7
    assert "the last line is cut short" in str(caught.value)
    assert "as when the process writing it crashed" in str(caught.value)


def test_an_unreadable_actual_recording_is_not_blamed_on_the_golden(tmp_path: Path) -> None:
    path = _crashed_recording(tmp_path)
    with pytest.raises(GoldenFormatError) as caught:
        list(iter_lines(path))
    message = format_unreadable(caught.value, nodeid="t.py::t", actual_dir=path.parent)
    assert message.splitlines()[0].startswith("recording unreadable: ")
    assert "the actual recording is damaged, not the golden" in message
    golden_message = format_unreadable(
        caught.value, nodeid="t.py::t", actual_dir=tmp_path / "other"
    )
    assert golden_message.startswith("golden unreadable: ")


def test_an_episode_that_stops_early_is_incomplete(tmp_path: Path) -> None:
    env = RecordTrajectory(gym.make("CartPole-v1"), tmp_path)
    env.reset(seed=0)
    for _ in range(3):
        env.step(0)
    env.close()  # before the pole fell
    (episode,) = read_recording(tmp_path)
    assert not episode.complete
    assert len(episode.steps) == 3

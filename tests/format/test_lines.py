"""Line reading: chunks, odd line endings, and files cut short by a crash."""

from __future__ import annotations

import gzip
import tracemalloc
from pathlib import Path

import gymnasium as gym
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gym_goldens.errors import GoldenFormatError
from gym_goldens.format import lines
from gym_goldens.format.lines import iter_episodes
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
        (b"\r\n\r\n" + LINES[0] + b"\r\n\r\r\n\n" + LINES[1], [(3, LINES[0]), (6, LINES[1])]),
        (b"\n" * 50 + LINES[0] + b"\n" * 50, [(51, LINES[0])]),
        (b"\r" + LINES[0] + b"\n", [(1, b"\r" + LINES[0])]),
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
    monkeypatch.setattr(lines, "MAX_LINE_BYTES", 10)
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


def _reference_lines(content: bytes) -> list[tuple[int, bytes]]:
    """What iter_lines yields, the slow and obvious way."""
    content = content.removeprefix(b"\xef\xbb\xbf")
    numbered = enumerate((line.rstrip(b"\r") for line in content.split(b"\n")), start=1)
    return [(number, line) for number, line in numbered if line]


@settings(max_examples=300, deadline=None)
@given(
    pieces=st.lists(
        st.sampled_from([b"\n", b"\r\n", b"\r", b"\n\n\n", b"{}", b'{"a":[1,2]}']),
        max_size=40,
    ),
    chunk=st.integers(1, 64),
)
def test_blank_lines_and_line_endings_read_the_same_for_any_chunk_size(
    tmp_path_factory: pytest.TempPathFactory, pieces: list[bytes], chunk: int
) -> None:
    content = b"".join(pieces) + b"\n"
    path = tmp_path_factory.mktemp("blank") / "trajectory.jsonl"
    path.write_bytes(content)
    blocks = lines._line_blocks(path, chunk_size=chunk)
    found = [item for block, _ in blocks for item in block]
    assert found == _reference_lines(content)


def test_blank_lines_cost_no_memory_per_line(tmp_path: Path) -> None:
    # 16 million blank lines between two records: skipped in C, not split
    # into a list of 16 million empty lines (128 MB of pointers).
    path = tmp_path / "trajectory.jsonl"
    with path.open("wb") as handle:
        handle.write(LINES[0] + b"\n")
        for _ in range(16):
            handle.write(b"\n" * (1 << 20))
        handle.write(LINES[1] + b"\n")
    tracemalloc.start()
    try:
        found = list(iter_lines(path))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert found == [(1, LINES[0]), (2 + 16 * (1 << 20), LINES[1])]
    assert peak < 4 * (1 << 20), f"reading blank lines took {peak / (1 << 20):.0f} MiB"


def _gzip(path: Path, content: bytes) -> Path:
    path.write_bytes(gzip.compress(content, mtime=0))
    return path


def test_a_compressed_file_that_expands_past_the_limit_is_refused(tmp_path: Path) -> None:
    path = _gzip(tmp_path / "trajectory.jsonl.gz", b'{"a":1}\n' * 100_000)  # 800,000 bytes
    assert path.stat().st_size < 10_000

    with pytest.raises(GoldenFormatError) as caught:
        list(iter_lines(path, max_decompressed_size=64 * 1024))

    assert caught.value.path == str(path)
    assert caught.value.reason.startswith("decompresses to more than 64 KiB, the limit")
    assert "goldens_max_decompressed_size" in caught.value.reason
    assert "--max-decompressed-size" in caught.value.reason
    # At the limit or under it, the same file reads.
    assert len(list(iter_lines(path, max_decompressed_size=800_000))) == 100_000


def test_blank_lines_count_towards_the_limit(tmp_path: Path) -> None:
    path = _gzip(tmp_path / "trajectory.jsonl.gz", LINES[0] + b"\n" * (1 << 20))
    with pytest.raises(GoldenFormatError, match="decompresses to more than 512 KiB"):
        list(iter_lines(path, max_decompressed_size=512 * 1024))
    assert list(iter_lines(path)) == [(1, LINES[0])]


def test_a_plain_file_is_not_held_to_the_limit(tmp_path: Path) -> None:
    # Its size on disk bounds it already, and is in plain sight in a review.
    path = tmp_path / "trajectory.jsonl"
    path.write_bytes(b'{"a":1}\n' * 100_000)
    assert len(list(iter_lines(path, max_decompressed_size=1024))) == 100_000


def test_the_limit_holds_for_the_files_of_a_recording_together(tmp_path: Path) -> None:
    # Many files read as one: small bombs must not add up unchecked.
    files = []
    for i in range(3):
        (tmp_path / f"env_{i}").mkdir()
        content = b'{"event":"header"}\n' + b"\n" * 40_000
        files.append(_gzip(tmp_path / f"env_{i}" / "trajectory.jsonl.gz", content))
    episodes = iter_episodes(files, max_decompressed_size=100_000)
    with pytest.raises(GoldenFormatError) as caught:
        [list(episode) for _, episode in episodes]
    assert caught.value.path == str(files[2])
    assert "with the files before it" in caught.value.reason
    assert len(read_recording(tmp_path, max_decompressed_size=120_100)) == 3

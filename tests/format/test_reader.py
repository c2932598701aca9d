"""Tests of reading recordings back (``gym_goldens.format.reader``)."""

from __future__ import annotations

import gzip
import itertools
import json
import math
import re
from pathlib import Path

import gymnasium as gym
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gym_goldens import (
    Episode,
    GoldenFormatError,
    RecordTrajectory,
    UnsupportedFormatVersionError,
    read_recording,
)
from gym_goldens.format.header import FORMAT_VERSION
from gym_goldens.format.lines import (
    _line_blocks,
    _split_blocks,
    count_episodes,
    iter_lines,
    split_episodes,
)
from gym_goldens.format.reader import read_header, recording_files
from tests.support.envs import TAXI

_HEADER = b'{"event":"header","format":"gym-goldens","version":"%s"}' % FORMAT_VERSION.encode()
_HEADER_2 = _HEADER
_RESET = b'{"event":"reset","episode":0,"obs":[0.5],"info":{}}'
_STEP = (
    b'{"event":"step","t":1,"action":0,"obs":[{"$float":"nan"}],"reward":1.0,'
    b'"terminated":true,"truncated":false,"info":{}}'
)


def _write(path: Path, *lines: bytes) -> Path:
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


def _first_episode(path: Path) -> Episode:
    return read_recording(path)[0]


def test_reads_a_real_recording(tmp_path: Path) -> None:
    env = RecordTrajectory(gym.make(TAXI), tmp_path)
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
    assert first.header["env"]["id"] == TAXI
    assert [r["event"] for r in first.records] == ["reset", "step", "step", "step"]
    assert [r["action"] for r in first.steps] == [0, 1, 2]
    assert first.total_reward == sum(r["reward"] for r in first.steps)
    assert recording[1].steps[0]["action"] == 3
    assert recording[-1].line == first.line + 1 + len(first.records)
    assert recording.files == [tmp_path / "trajectory.jsonl"]
    with pytest.raises(IndexError, match="episode 2 of a recording of 2 episodes"):
        recording[2]


def test_episodes_split_at_header_lines_only(tmp_path: Path) -> None:
    # An info dict holding {"event": "header"} is data, not the start of an episode.
    nested = (
        b'{"event":"step","t":1,"action":0,"obs":[1.0],"reward":0.0,"terminated":false,'
        b'"truncated":false,"info":{"event":"header"}}'
    )
    path = _write(tmp_path / "trajectory.jsonl", _HEADER_2, _RESET, nested, _HEADER_2, _RESET)
    assert [[n for n, _ in lines] for lines in split_episodes(iter_lines(path))] == [
        [1, 2, 3],
        [4, 5],
    ]
    assert count_episodes(path) == 2
    first, second = read_recording(tmp_path)
    assert first.steps[0]["info"] == {"event": "header"}
    assert (first.line, second.line) == (1, 4)
    assert second.records[0]["event"] == "reset"


def test_a_file_without_headers_is_one_episode(tmp_path: Path) -> None:
    path = _write(tmp_path / "trajectory.jsonl", _RESET, _STEP)
    assert count_episodes(path) == 1
    assert [r["event"] for r in read_recording(path)[0].records] == ["reset", "step"]


def test_both_compressions_in_one_folder_read_the_plain_file(tmp_path: Path) -> None:
    _write(tmp_path / "trajectory.jsonl", _HEADER_2, _RESET)
    with gzip.open(tmp_path / "trajectory.jsonl.gz", "wb") as handle:
        handle.write(_RESET + b"\n")
    # Both compressions (an update killed between the two): the plain file is read.
    assert recording_files(tmp_path) == [tmp_path / "trajectory.jsonl"]
    assert read_recording(tmp_path)[0].header is not None


_PRE_RELEASE = "recorded by a pre-release format ({}): rewrite it with pytest --update-goldens-all"


@pytest.mark.parametrize("version", ["1.0", "1.1", "2.0"])
def test_a_header_of_a_pre_release_format_is_refused_with_the_fix(
    tmp_path: Path, version: str
) -> None:
    header = b'{"event":"header","format":"gym-goldens","version":"%s"}' % version.encode()
    path = _write(tmp_path / "trajectory.jsonl", header, _RESET)
    with pytest.raises(UnsupportedFormatVersionError) as caught:
        _first_episode(path)
    assert caught.value.reason == _PRE_RELEASE.format(version)


def test_a_folder_of_format_1_episode_files_is_refused_with_the_fix(tmp_path: Path) -> None:
    _write(tmp_path / "episode_00000.jsonl", _RESET)
    with pytest.raises(GoldenFormatError) as caught:
        recording_files(tmp_path)
    assert caught.value.reason == _PRE_RELEASE.format("1.0")


def test_gzip_files_without_header_with_crlf_and_bom_read(tmp_path: Path) -> None:
    path = tmp_path / "trajectory.jsonl.gz"
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
    path = _write(tmp_path / "trajectory.jsonl", _RESET, line)
    with pytest.raises(GoldenFormatError, match=reason) as info:
        list(read_recording(path))
    assert info.value.path == str(path)
    assert info.value.line == 2
    assert str(info.value).startswith(f"{path}:2: ")


def test_newer_major_version_is_refused_with_the_fix(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "trajectory.jsonl",
        b'{"event":"header","format":"gym-goldens","version":"3.0"}',
        _RESET,
    )
    with pytest.raises(UnsupportedFormatVersionError, match="upgrade pytest-gym-goldens"):
        _first_episode(path)
    newer_minor = _write(
        tmp_path / "newer.jsonl",
        b'{"event":"header","format":"gym-goldens","version":"2.9"}',
        _RESET,
    )
    with pytest.raises(UnsupportedFormatVersionError, match="upgrade pytest-gym-goldens"):
        _first_episode(newer_minor)


def test_truncated_last_line_is_an_error_on_that_line(tmp_path: Path) -> None:
    path = tmp_path / "trajectory.jsonl"
    path.write_bytes(_HEADER + b"\n" + _RESET + b"\n" + _STEP[:40])
    with pytest.raises(GoldenFormatError, match="invalid JSON") as info:
        _first_episode(path)
    assert info.value.line == 3


_LINE_KINDS = {
    "header": _HEADER_2,
    "reset": _RESET,
    "step": _STEP,
    # Holds the header mark as data: not the start of an episode.
    "fake": b'{"event":"step","info":{"event":"header"},"t":2}',
}


def _reference_split(lines: list[tuple[int, bytes]]) -> list[list[tuple[int, bytes]]]:
    episodes: list[list[tuple[int, bytes]]] = []
    for number, raw in lines:
        if not episodes or json.loads(raw)["event"] == "header":
            episodes.append([])
        episodes[-1].append((number, raw))
    return episodes


@settings(max_examples=300, deadline=None)
@given(
    kinds=st.lists(st.sampled_from(sorted(_LINE_KINDS)), max_size=40),
    cuts=st.lists(st.integers(0, 40), max_size=8),
    reads=st.lists(st.integers(0, 12), max_size=12),
)
def test_episodes_split_the_same_across_any_blocks_and_partial_reads(
    kinds: list[str], cuts: list[int], reads: list[int]
) -> None:
    """Episodes start at header lines wherever blocks end; an episode left
    part-read is skipped, and one left behind gives nothing more."""
    lines = [(number, _LINE_KINDS[kind]) for number, kind in enumerate(kinds, start=1)]
    bounds = sorted({0, len(lines), *(cut for cut in cuts if cut <= len(lines))})
    blocks = [(lines[a:b], None) for a, b in itertools.pairwise(bounds)]
    expected = _reference_split(lines)
    assert [list(episode) for episode in _split_blocks(iter(blocks))] == expected
    # Read only the first `reads[i]` lines of episode i (all when reads runs out).
    count = 0
    for index, episode in enumerate(_split_blocks(iter(blocks))):
        wanted = reads[index] if index < len(reads) else None
        assert list(itertools.islice(episode, wanted)) == expected[index][:wanted]
        count += 1
    assert count == len(expected)
    left_behind = list(_split_blocks(iter(blocks)))
    assert len(left_behind) == len(expected)
    assert all(list(episode) == [] for episode in left_behind)


@settings(max_examples=200, deadline=None)
@given(
    kinds=st.lists(st.sampled_from(sorted(_LINE_KINDS)), max_size=40),
    chunk_size=st.integers(1, 400),
)
def test_episodes_of_a_file_split_the_same_for_any_read_size(
    tmp_path_factory: pytest.TempPathFactory, kinds: list[str], chunk_size: int
) -> None:
    """Header lines found by a search of each read chunk (marks cut by a
    chunk's end included) split a file as a look at every line would."""
    raws = [_LINE_KINDS[kind] for kind in kinds]
    path = tmp_path_factory.mktemp("split") / "trajectory.jsonl"
    path.write_bytes(b"".join(raw + b"\n" for raw in raws))
    expected = _reference_split(list(enumerate(raws, start=1)))
    episodes = _split_blocks(_line_blocks(path, chunk_size=chunk_size))
    assert [list(episode) for episode in episodes] == expected


def test_an_episode_read_after_the_next_one_was_asked_for_leaves_that_one_intact() -> None:
    lines = [(n, raw) for n, raw in enumerate([_HEADER_2, _RESET, _STEP, _HEADER_2, _RESET], 1)]
    episodes = _split_blocks(iter([(lines[:2], None), (lines[2:], None)]))
    first = next(episodes)
    assert next(first) == lines[0]
    second = next(episodes)
    list(first)  # too late: must not move the split on
    assert list(second) == lines[3:]
    assert next(episodes, None) is None


_HEADER_WITH = '{"event":"header","format":"gym-goldens","version":"2.1",%s}'


@pytest.mark.parametrize(
    ("field", "reason"),
    [
        ('"versions":[1,2]', 'expected "versions" to be an object of strings, found an array'),
        ('"versions":{"numpy":2}', 'expected "versions" to be an object of strings, found'),
        ('"platform":"x"', 'expected "platform" to be an object of strings, found a string'),
        ('"storage":[1]', 'expected "storage" to be an object, found an array'),
        ('"reset":[1]', 'expected "reset" to be an object, found an array'),
        ('"env":7', 'expected "env" to be an object, found a number'),
        ('"wrappers":{"a":1}', 'expected "wrappers" to be an array of strings, found an object'),
        ('"wrappers":[1]', 'expected "wrappers" to be an array of strings'),
        ('"observation_space":null', 'expected "observation_space" to be an object, found null'),
        ('"vector":true', 'expected "vector" to be an object, found true'),
        ('"vectorization_mode":[]', 'expected "vectorization_mode" to be a string'),
    ],
)
def test_header_fields_of_the_wrong_type_are_refused_with_the_field(
    tmp_path: Path, field: str, reason: str
) -> None:
    path = _write(tmp_path / "trajectory.jsonl", (_HEADER_WITH % field).encode(), _RESET)
    with pytest.raises(GoldenFormatError) as info:
        read_header(path)
    assert str(info.value).startswith(f"{path}:1: {reason}")
    assert str(info.value).endswith("record it again")
    with pytest.raises(GoldenFormatError, match=re.escape(reason)):
        list(read_recording(path))

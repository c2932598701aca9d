"""Tests of golden paths and golden writes (``gym_goldens.plugin.store``)."""

from __future__ import annotations

import os
from pathlib import Path

import orjson
import pytest

from gym_goldens.errors import GoldenFormatError
from gym_goldens.format.files import remove_dead_leftovers
from gym_goldens.format.reader import read_recording
from gym_goldens.plugin.store import update_golden
from tests.support.recordings import record_alternating

ROOT = Path("goldens")


def test_update_creates_then_leaves_unchanged_goldens_alone(tmp_path: Path) -> None:
    golden = tmp_path / "goldens" / "env"
    created = update_golden(record_alternating(tmp_path / "run1", resets=2), golden)
    assert created.status == "created"
    assert [p.name for p in created.written] == ["trajectory.jsonl"]
    assert len(read_recording(golden)) == 2
    before = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in golden.iterdir()}
    past = 1_000_000_000  # 2001: an unchanged golden keeps its old mtime
    for path in before:
        os.utime(path, ns=(past, past))

    again = update_golden(record_alternating(tmp_path / "run2", resets=2), golden)
    assert (again.status, again.written, again.removed) == ("unchanged", (), ())
    for path, (content, _) in before.items():
        assert path.read_bytes() == content
        assert path.stat().st_mtime_ns == past


def test_update_ignores_informational_header_fields(tmp_path: Path) -> None:
    golden = tmp_path / "goldens" / "env"
    update_golden(record_alternating(tmp_path / "run1", resets=2), golden)
    path = golden / "trajectory.jsonl"
    # The header of the second episode, in the middle of the file, too.
    lines = path.read_bytes().splitlines()
    headers = [n for n, line in enumerate(lines) if b'"event":"header"' in line]
    assert len(headers) == 2
    for number in headers:
        parsed = orjson.loads(lines[number])
        parsed["versions"]["numpy"] = "0.0.1"
        lines[number] = orjson.dumps(parsed)
    old = b"\n".join(lines) + b"\n"
    path.write_bytes(old)
    again = record_alternating(tmp_path / "run2", resets=2)
    assert update_golden(again, golden).status == "unchanged"
    assert path.read_bytes() == old


def test_update_rewrites_the_file_with_fewer_episodes(tmp_path: Path) -> None:
    golden = tmp_path / "goldens" / "env"
    update_golden(record_alternating(tmp_path / "run1", resets=3), golden)
    first = (golden / "trajectory.jsonl").read_bytes()
    actual = record_alternating(tmp_path / "run2", seed=0, steps=7, resets=2)
    result = update_golden(actual, golden)
    assert result.status == "updated"
    assert (result.written, result.removed) == ((golden / "trajectory.jsonl",), ())
    assert [p.name for p in golden.iterdir()] == ["trajectory.jsonl"]
    content = (golden / "trajectory.jsonl").read_bytes()
    assert content != first
    assert content == (actual / "trajectory.jsonl").read_bytes()
    assert len(read_recording(golden)) == 2


def test_a_killed_update_leaves_the_old_golden_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # One file, one rename: every episode of the golden is old, or every one is new.
    golden = tmp_path / "goldens" / "env"
    update_golden(record_alternating(tmp_path / "run1", resets=3), golden)
    old = (golden / "trajectory.jsonl").read_bytes()

    def killed(source: object, target: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", killed)
    with pytest.raises(KeyboardInterrupt):
        update_golden(record_alternating(tmp_path / "run2", steps=7, resets=2), golden)
    monkeypatch.undo()
    assert [p.name for p in golden.iterdir()] == ["trajectory.jsonl"]
    assert (golden / "trajectory.jsonl").read_bytes() == old


def test_update_replaces_an_unreadable_golden(tmp_path: Path) -> None:
    golden = tmp_path / "goldens" / "env"
    golden.mkdir(parents=True)
    (golden / "trajectory.jsonl").write_bytes(b'{"event": "res')
    result = update_golden(record_alternating(tmp_path / "run"), golden)
    assert result.status == "updated"
    assert (golden / "trajectory.jsonl").read_bytes() == (
        tmp_path / "run" / "trajectory.jsonl"
    ).read_bytes()


def _episode_files(recording: Path, folder: Path) -> list[Path]:
    """The episodes of a recording as format 1 kept them: one file each, in ``folder``."""
    folder.mkdir(parents=True)
    episodes = [episode.path for episode in read_recording(recording)]
    lines = (recording / "trajectory.jsonl").read_bytes().splitlines(keepends=True)
    starts = [n for n, line in enumerate(lines) if line.startswith(b'{"action_space"')]
    files = []
    for index, (start, end) in enumerate(zip(starts, [*starts[1:], len(lines)], strict=True)):
        files.append(folder / f"episode_{index:05d}.jsonl")
        files[-1].write_bytes(b"".join(lines[start:end]))
    assert len(files) == len(episodes)
    return files


@pytest.mark.parametrize("same", [True, False], ids=["same episodes", "other episodes"])
def test_update_rewrites_a_golden_of_format_1(tmp_path: Path, same: bool) -> None:
    golden = tmp_path / "goldens" / "env"
    episode_files = _episode_files(record_alternating(tmp_path / "old", resets=2), golden)
    assert [p.name for p in episode_files] == ["episode_00000.jsonl", "episode_00001.jsonl"]
    leftover = golden / ".episode_00001.jsonl.x7f2k.tmp"
    leftover.write_bytes(b"half")
    actual = record_alternating(tmp_path / "new", resets=2, steps=5 if same else 6)

    result = update_golden(actual, golden)

    # Also when the episodes are the same: the layout changes.
    assert result.status == "updated"
    assert result.written == (golden / "trajectory.jsonl",)
    assert result.removed == tuple(episode_files)
    # A temporary file may be another update's in flight: the update leaves it;
    # the sweep at the start of an update run removes it once its writer is gone.
    assert sorted(p.name for p in golden.iterdir()) == [leftover.name, "trajectory.jsonl"]
    assert remove_dead_leftovers(tmp_path / "goldens") == [leftover]
    assert (golden / "trajectory.jsonl").read_bytes() == (actual / "trajectory.jsonl").read_bytes()
    assert update_golden(actual, golden).status == "unchanged"


def test_update_switches_compression_and_removes_the_other_file(tmp_path: Path) -> None:
    golden = tmp_path / "goldens" / "env"
    update_golden(record_alternating(tmp_path / "plain"), golden)
    result = update_golden(record_alternating(tmp_path / "gz", compress=True), golden)
    assert result.status == "updated"
    assert result.written == (golden / "trajectory.jsonl.gz",)
    assert result.removed == (golden / "trajectory.jsonl",)
    assert [p.name for p in golden.iterdir()] == ["trajectory.jsonl.gz"]
    back = update_golden(record_alternating(tmp_path / "plain2"), golden)
    assert (back.written, back.removed) == (
        (golden / "trajectory.jsonl",),
        (golden / "trajectory.jsonl.gz",),
    )


def test_update_refuses_a_folder_where_the_file_should_be(tmp_path: Path) -> None:
    golden = tmp_path / "goldens" / "env"
    (golden / "trajectory.jsonl").mkdir(parents=True)
    actual = record_alternating(tmp_path / "run")
    with pytest.raises(GoldenFormatError, match="expected a recording file, found a folder"):
        update_golden(actual, golden, goldens_dir=tmp_path / "goldens")
    assert [p.name for p in golden.iterdir()] == ["trajectory.jsonl"]
    assert (golden / "trajectory.jsonl").is_dir()

"""Tests of golden paths and golden writes (``gym_goldens.plugin.store``)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import gymnasium as gym
import orjson
import pytest

from gym_goldens import RecordTrajectory
from gym_goldens.errors import GoldenFormatError, UnsafeGoldenPathError
from gym_goldens.format.files import atomic_write_bytes, checked_recording_files
from gym_goldens.format.layout import golden_dir_for, safe_segment
from gym_goldens.format.reader import read_recording
from gym_goldens.plugin.store import update_golden
from tests.support.legacy import split_into_episode_files

ROOT = Path("goldens")


def _record(
    path: Path, *, seed: int = 0, steps: int = 5, resets: int = 1, compress: bool = False
) -> Path:
    env = RecordTrajectory(gym.make("CartPole-v1"), path, compress=compress)
    for episode in range(resets):
        env.reset(seed=seed + episode)
        for t in range(steps):
            env.step(t % 2)
    env.close()
    return path


def test_golden_dir_follows_the_node_id() -> None:
    assert golden_dir_for(ROOT, "tests/test_envs.py::test_cartpole", "CartPole-v1") == Path(
        "goldens/tests/test_envs/test_cartpole/CartPole-v1"
    )
    assert golden_dir_for(ROOT, "test_a.py::TestCart::test_x[0-fast]", "Env") == Path(
        "goldens/test_a/TestCart/test_x[0-fast]/Env"
    )


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("t.py::TestA::test_x", "t.py::TestB::test_x"),
        ("t.py::test_x[Mountain/Car v0]", "t.py::test_x[MountainCar v0]"),
        ("t.py::test_x[a/b]", "t.py::test_x[a%2Fb]"),
        ("t.py::test_x[a b]", "t.py::test_x[a_b]"),
        ("t.py::TestA::test_x", "t.py::TestA__test_x"),
        ("a/t.py::test_x", "a_t.py::test_x"),
        ("t.py::test_x[..]", "t.py::test_x[%2E%2E]"),
    ],
)
def test_distinct_tests_never_share_a_golden(first: str, second: str) -> None:
    assert golden_dir_for(ROOT, first, "env") != golden_dir_for(ROOT, second, "env")


def test_awkward_ids_are_safe_and_stable() -> None:
    assert safe_segment("test_x[Mountain/Car v0]") == "test_x[Mountain%2FCar%20v0]"
    assert safe_segment("test_x[MountainCar v0]") == "test_x[MountainCar%20v0]"
    assert safe_segment("100%") == "100%25"
    assert safe_segment("..") == "%2E%2E"
    assert safe_segment(".hidden") == "%2Ehidden"
    assert safe_segment("") == "%"
    assert safe_segment("CON") == "%CON"
    assert safe_segment("naïve") == "na%C3%AFve"
    long_id = "test_x[" + "a" * 300 + "]"
    cut = safe_segment(long_id)
    assert len(cut) == 120
    assert "~" in cut
    assert safe_segment(long_id) == cut
    assert safe_segment(long_id[:-2] + "b]") != cut
    directory = golden_dir_for(ROOT, "t.py::test_x[../../etc]", "../up")
    assert ".." not in directory.parts
    assert directory.parent.parent.parent == ROOT


def test_atomic_write_leaves_no_temporary_file(tmp_path: Path) -> None:
    target = tmp_path / "deep" / "trajectory.jsonl"
    atomic_write_bytes(target, b"one\n")
    atomic_write_bytes(target, b"two\n")
    assert target.read_bytes() == b"two\n"
    assert sorted(p.name for p in target.parent.iterdir()) == ["trajectory.jsonl"]


def test_atomic_write_keeps_the_old_file_when_writing_fails(tmp_path: Path) -> None:
    target = tmp_path / "trajectory.jsonl"
    target.write_bytes(b"old\n")
    with pytest.raises(TypeError):
        atomic_write_bytes(target, "not bytes")  # type: ignore[arg-type]
    assert target.read_bytes() == b"old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["trajectory.jsonl"]


def test_update_creates_then_leaves_unchanged_goldens_alone(tmp_path: Path) -> None:
    golden = tmp_path / "goldens" / "env"
    created = update_golden(_record(tmp_path / "run1", resets=2), golden)
    assert created.status == "created"
    assert [p.name for p in created.written] == ["trajectory.jsonl"]
    assert len(read_recording(golden)) == 2
    before = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in golden.iterdir()}
    past = 1_000_000_000  # 2001: an unchanged golden keeps its old mtime
    for path in before:
        os.utime(path, ns=(past, past))

    again = update_golden(_record(tmp_path / "run2", resets=2), golden)
    assert (again.status, again.written, again.removed) == ("unchanged", (), ())
    for path, (content, _) in before.items():
        assert path.read_bytes() == content
        assert path.stat().st_mtime_ns == past


def test_update_ignores_informational_header_fields(tmp_path: Path) -> None:
    golden = tmp_path / "goldens" / "env"
    update_golden(_record(tmp_path / "run1", resets=2), golden)
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
    assert update_golden(_record(tmp_path / "run2", resets=2), golden).status == "unchanged"
    assert path.read_bytes() == old


def test_update_rewrites_the_file_with_fewer_episodes(tmp_path: Path) -> None:
    golden = tmp_path / "goldens" / "env"
    update_golden(_record(tmp_path / "run1", resets=3), golden)
    first = (golden / "trajectory.jsonl").read_bytes()
    actual = _record(tmp_path / "run2", seed=0, steps=7, resets=2)
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
    update_golden(_record(tmp_path / "run1", resets=3), golden)
    old = (golden / "trajectory.jsonl").read_bytes()

    def killed(source: object, target: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", killed)
    with pytest.raises(KeyboardInterrupt):
        update_golden(_record(tmp_path / "run2", steps=7, resets=2), golden)
    monkeypatch.undo()
    assert [p.name for p in golden.iterdir()] == ["trajectory.jsonl"]
    assert (golden / "trajectory.jsonl").read_bytes() == old


def test_update_replaces_an_unreadable_golden(tmp_path: Path) -> None:
    golden = tmp_path / "goldens" / "env"
    golden.mkdir(parents=True)
    (golden / "trajectory.jsonl").write_bytes(b'{"event": "res')
    result = update_golden(_record(tmp_path / "run"), golden)
    assert result.status == "updated"
    assert (golden / "trajectory.jsonl").read_bytes() == (
        tmp_path / "run" / "trajectory.jsonl"
    ).read_bytes()


@pytest.mark.parametrize("same", [True, False], ids=["same episodes", "other episodes"])
def test_update_migrates_a_golden_of_format_1(tmp_path: Path, same: bool) -> None:
    golden = tmp_path / "goldens" / "env"
    episode_files = split_into_episode_files(
        _record(tmp_path / "old", resets=2) / "trajectory.jsonl", golden
    )
    assert [p.name for p in episode_files] == ["episode_00000.jsonl", "episode_00001.jsonl"]
    leftover = golden / ".episode_00001.jsonl.x7f2k.tmp"
    leftover.write_bytes(b"half")
    actual = _record(tmp_path / "new", resets=2, steps=5 if same else 6)

    result = update_golden(actual, golden)

    # Also when the episodes are the same: the layout changes.
    assert result.status == "updated"
    assert result.written == (golden / "trajectory.jsonl",)
    assert result.removed == tuple(episode_files)
    assert [p.name for p in golden.iterdir()] == ["trajectory.jsonl"]
    assert (golden / "trajectory.jsonl").read_bytes() == (actual / "trajectory.jsonl").read_bytes()
    assert update_golden(actual, golden).status == "unchanged"


def test_update_switches_compression_and_removes_the_other_file(tmp_path: Path) -> None:
    golden = tmp_path / "goldens" / "env"
    update_golden(_record(tmp_path / "plain"), golden)
    result = update_golden(_record(tmp_path / "gz", compress=True), golden)
    assert result.status == "updated"
    assert result.written == (golden / "trajectory.jsonl.gz",)
    assert result.removed == (golden / "trajectory.jsonl",)
    assert [p.name for p in golden.iterdir()] == ["trajectory.jsonl.gz"]
    back = update_golden(_record(tmp_path / "plain2"), golden)
    assert (back.written, back.removed) == (
        (golden / "trajectory.jsonl",),
        (golden / "trajectory.jsonl.gz",),
    )


def test_update_clears_a_folder_left_with_both_layouts(tmp_path: Path) -> None:
    # What an update killed after writing the new file and before removing the old ones leaves.
    golden = tmp_path / "goldens" / "env"
    actual = _record(tmp_path / "run", resets=2)
    split_into_episode_files(actual / "trajectory.jsonl", golden)
    (golden / "trajectory.jsonl").write_bytes((actual / "trajectory.jsonl").read_bytes())
    with pytest.raises(GoldenFormatError, match=r"holds both trajectory\.jsonl and episode files"):
        checked_recording_files(tmp_path / "goldens", golden)

    result = update_golden(actual, golden, goldens_dir=tmp_path / "goldens")

    assert (result.status, result.written) == ("updated", ())
    assert [p.name for p in result.removed] == ["episode_00000.jsonl", "episode_00001.jsonl"]
    assert checked_recording_files(tmp_path / "goldens", golden) == [golden / "trajectory.jsonl"]


def test_update_refuses_a_folder_where_the_file_should_be(tmp_path: Path) -> None:
    golden = tmp_path / "goldens" / "env"
    (golden / "trajectory.jsonl").mkdir(parents=True)
    with pytest.raises(GoldenFormatError, match="expected a recording file, found a folder"):
        update_golden(_record(tmp_path / "run"), golden, goldens_dir=tmp_path / "goldens")
    assert [p.name for p in golden.iterdir()] == ["trajectory.jsonl"]
    assert (golden / "trajectory.jsonl").is_dir()


def test_recording_files_of_a_golden(tmp_path: Path) -> None:
    goldens = tmp_path / "goldens"
    assert checked_recording_files(goldens, goldens / "none") == []
    new = goldens / "new"
    update_golden(_record(tmp_path / "run", resets=2), new)
    assert checked_recording_files(goldens, new) == [new / "trajectory.jsonl"]
    legacy = goldens / "legacy"
    files = split_into_episode_files(tmp_path / "run" / "trajectory.jsonl", legacy)
    assert checked_recording_files(goldens, legacy) == files


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        pytest.param(
            lambda golden, outside: (golden / "trajectory.jsonl").write_bytes(b""),
            "the file is empty",
            id="empty",
        ),
        pytest.param(
            lambda golden, outside: (golden / "trajectory.jsonl").mkdir(),
            "expected a recording file, found a folder",
            id="folder",
        ),
        pytest.param(
            lambda golden, outside: (golden / "trajectory.jsonl.gz").write_bytes(b"x"),
            "holds both trajectory.jsonl and trajectory.jsonl.gz",
            id="both compressions",
        ),
        pytest.param(
            lambda golden, outside: (golden / "episode_00000.jsonl").write_bytes(b"{}\n"),
            "holds both trajectory.jsonl and episode files",
            id="both layouts",
        ),
    ],
)
def test_recording_files_refuse_a_damaged_golden(
    tmp_path: Path, damage: object, message: str
) -> None:
    goldens = tmp_path / "goldens"
    golden = goldens / "env"
    golden.mkdir(parents=True)
    if "both" in message:
        (golden / "trajectory.jsonl").write_bytes(b"{}\n")
    damage(golden, tmp_path)  # type: ignore[operator]
    with pytest.raises(GoldenFormatError, match=re.escape(message)):
        checked_recording_files(goldens, golden)


def test_recording_files_refuse_paths_out_of_the_goldens_dir(tmp_path: Path) -> None:
    goldens = tmp_path / "goldens"
    golden = goldens / "env"
    golden.mkdir(parents=True)
    outside = tmp_path / "outside.jsonl"
    outside.write_bytes(b"{}\n")
    (golden / "trajectory.jsonl").symlink_to(outside)
    with pytest.raises(UnsafeGoldenPathError, match="outside the goldens dir"):
        checked_recording_files(goldens, golden)
    with pytest.raises(UnsafeGoldenPathError):
        update_golden(_record(tmp_path / "run"), golden, goldens_dir=goldens)
    assert outside.read_bytes() == b"{}\n"
    (goldens / "file").write_bytes(b"x")
    with pytest.raises(GoldenFormatError, match="expected a golden folder, found a file"):
        checked_recording_files(goldens, goldens / "file")


def test_an_actual_recording_of_format_1_is_written_as_one_file(tmp_path: Path) -> None:
    recording = _record(tmp_path / "run", resets=3)
    old_layout = tmp_path / "old"
    files = split_into_episode_files(recording / "trajectory.jsonl", old_layout)
    golden = tmp_path / "goldens" / "env"
    result = update_golden(old_layout, golden)
    assert (result.status, result.written) == ("created", (golden / "trajectory.jsonl",))
    assert (golden / "trajectory.jsonl").read_bytes() == (
        recording / "trajectory.jsonl"
    ).read_bytes()

    files[1].rename(files[1].with_name("episode_00001.jsonl.gz"))
    with pytest.raises(GoldenFormatError, match="holds both compressed and plain episode files"):
        update_golden(old_layout, golden)

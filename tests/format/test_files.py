"""Recording files on disk: atomic writes and the one path check (``gym_goldens.format.files``)."""

from __future__ import annotations

import gzip
import re
import tracemalloc
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

from gym_goldens import RecordTrajectory, RecordVectorTrajectory
from gym_goldens.errors import GoldenFormatError, GoldenWriteError, UnsafeGoldenPathError
from gym_goldens.format import lock
from gym_goldens.format.files import atomic_write_bytes, install_recording, same_bytes
from gym_goldens.format.frames import read_frame, referenced_frames
from gym_goldens.format.layout import UPDATE_LOCK
from gym_goldens.format.lock import golden_lock
from gym_goldens.format.paths import (
    GoldenFolder,
    ensure_inside,
    is_sub_env_folder,
    resolve_golden,
    resolve_recording,
)
from gym_goldens.plugin.store import update_golden
from tests.support.frames import PaintedEnv
from tests.support.recordings import record_alternating


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


def test_recording_files_of_a_golden(tmp_path: Path) -> None:
    goldens = tmp_path / "goldens"
    assert resolve_golden(goldens, goldens / "none").files == ()
    assert not resolve_golden(goldens, goldens / "none").recorded
    new = goldens / "new"
    update_golden(record_alternating(tmp_path / "run", resets=2), new)
    golden = resolve_golden(goldens, new)
    assert golden.files == golden.all_files == (new / "trajectory.jsonl",)
    assert golden.header is not None
    assert golden.version == golden.header["version"]


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
            lambda golden, outside: (golden / "episode_00000.jsonl").write_bytes(b"{}\n"),
            "recorded by a pre-release format (1.0)",
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
        resolve_golden(goldens, golden)


def test_recording_files_refuse_paths_out_of_the_goldens_dir(tmp_path: Path) -> None:
    goldens = tmp_path / "goldens"
    golden = goldens / "env"
    golden.mkdir(parents=True)
    outside = tmp_path / "outside.jsonl"
    outside.write_bytes(b"{}\n")
    (golden / "trajectory.jsonl").symlink_to(outside)
    with pytest.raises(UnsafeGoldenPathError, match=r"trajectory\.jsonl: a symlink \(to .*outside"):
        resolve_golden(goldens, golden)
    with pytest.raises(UnsafeGoldenPathError):
        update_golden(record_alternating(tmp_path / "run"), golden, goldens_dir=goldens)
    assert outside.read_bytes() == b"{}\n"
    (goldens / "file").write_bytes(b"x")
    with pytest.raises(GoldenFormatError, match="expected a golden folder, found a file"):
        resolve_golden(goldens, goldens / "file")
    with pytest.raises(GoldenFormatError, match="file: expected a folder, found a file"):
        resolve_golden(goldens, goldens / "file" / "env")


def test_a_folder_holding_both_compressions_reads_the_plain_file(tmp_path: Path) -> None:
    # What an update that changed the compression leaves when it is killed
    # between installing the new file and removing the old one.
    goldens = tmp_path / "goldens"
    golden = goldens / "env"
    update_golden(record_alternating(tmp_path / "run"), golden)
    plain = golden / "trajectory.jsonl"
    compressed = golden / "trajectory.jsonl.gz"
    compressed.write_bytes(gzip.compress(plain.read_bytes()))
    resolved = resolve_golden(goldens, golden)
    assert resolved.files == (plain,)
    assert resolved.left == (compressed,)
    # The next update, of either compression, leaves one file.
    run = record_alternating(tmp_path / "zipped", compress=True)
    update = update_golden(run, golden, goldens_dir=goldens)
    assert update.removed == (plain,)
    assert sorted(p.name for p in golden.iterdir()) == ["trajectory.jsonl.gz"]


LINKED = ["goldens/a", "goldens/a/b", "goldens/a/b/env", "goldens/a/b/env/trajectory.jsonl"]


@pytest.mark.parametrize("linked", LINKED)
@pytest.mark.parametrize("inside", [True, False], ids=["to inside", "to outside"])
def test_a_symlink_at_any_depth_below_the_root_is_refused(
    tmp_path: Path, linked: str, inside: bool
) -> None:
    # A golden whose folders are copied elsewhere, in the goldens dir or out
    # of it, and the copy linked in place of one of its parts.
    goldens = tmp_path / "goldens"
    golden = goldens / "a" / "b" / "env"
    update_golden(record_alternating(tmp_path / "run"), golden)
    part = tmp_path / linked
    elsewhere = (goldens / "elsewhere" if inside else tmp_path / "elsewhere") / part.name
    elsewhere.parent.mkdir(parents=True)
    part.rename(elsewhere)
    part.symlink_to(elsewhere, target_is_directory=elsewhere.is_dir())
    run = record_alternating(tmp_path / "run2", seed=3)
    before = sorted(p.as_posix() for p in tmp_path.rglob("*"))

    with pytest.raises(UnsafeGoldenPathError, match=f"^{re.escape(str(part))}: a symlink"):
        ensure_inside(goldens, golden / "trajectory.jsonl")
    with pytest.raises(UnsafeGoldenPathError, match=f"^{re.escape(str(part))}: a symlink"):
        resolve_golden(goldens, golden)
    with pytest.raises(UnsafeGoldenPathError, match=f"^{re.escape(str(part))}: a symlink"):
        update_golden(run, golden, goldens_dir=goldens)
    assert sorted(p.as_posix() for p in tmp_path.rglob("*")) == before
    # The root itself is the caller's to choose: it may be a link.
    if part.is_dir():
        assert ensure_inside(part, part / "x") == elsewhere.resolve() / "x"


def test_a_symlinked_sub_env_folder_is_refused(tmp_path: Path) -> None:
    goldens = tmp_path / "goldens"
    golden = goldens / "vec"
    (golden / "env_0").mkdir(parents=True)
    (golden / "env_1").symlink_to(golden / "env_0", target_is_directory=True)
    with pytest.raises(UnsafeGoldenPathError, match="env_1: a symlink"):
        resolve_golden(goldens, golden)


def test_a_path_out_of_the_root_is_refused(tmp_path: Path) -> None:
    with pytest.raises(UnsafeGoldenPathError, match="lies outside the goldens dir"):
        ensure_inside(tmp_path / "goldens", tmp_path / "goldens" / ".." / "elsewhere")
    with pytest.raises(UnsafeGoldenPathError, match="lies outside the goldens dir"):
        ensure_inside(tmp_path / "goldens", tmp_path / "elsewhere")


def test_sub_env_folders_are_told_by_their_header_not_their_name(tmp_path: Path) -> None:
    vector = tmp_path / "vec"
    env = RecordVectorTrajectory(gym.make_vec("CartPole-v1", num_envs=2), vector)
    env.reset(seed=0)
    env.step(np.zeros(2, dtype=np.int64))
    env.close()
    assert is_sub_env_folder(vector / "env_0")
    assert is_sub_env_folder(vector / "env_1")
    # A recording of one env that is named env_0 is a golden of its own.
    named = record_alternating(tmp_path / "test_x" / "env_0")
    assert not is_sub_env_folder(named)
    assert not is_sub_env_folder(vector)


def test_an_update_waits_for_another_update_of_the_same_golden(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(lock, "_WAIT", 0.0)  # give up at once, rather than in 10 minutes
    golden = tmp_path / "goldens" / "env"
    golden.mkdir(parents=True)
    run = resolve_recording(record_alternating(tmp_path / "run"))
    with golden_lock(golden):
        # Held by this process: a second holder (another open file) waits,
        # then gives up naming the owner, and the golden is not touched.
        with pytest.raises(GoldenWriteError, match=r"another update of this golden \(process "):
            install_recording(run, golden, is_current=_never_current, root=None)
        assert sorted(p.name for p in golden.iterdir()) == [UPDATE_LOCK]
    assert list(golden.iterdir()) == [], "the lock file goes with its holder"


def _never_current(existing: Path, recording: GoldenFolder) -> bool:
    return False


MiB = 1 << 20


def test_a_large_recording_is_installed_byte_for_byte_without_being_held_in_memory(
    tmp_path: Path,
) -> None:
    source = tmp_path / "run"
    source.mkdir()
    # Not a valid recording, which the copy does not need: bytes that differ
    # from chunk to chunk, so that a copy out of order shows.
    content = b"".join(i.to_bytes(4, "little") * (MiB // 16) for i in range(24 * 4))
    (source / "trajectory.jsonl").write_bytes(content)
    target = tmp_path / "goldens" / "CartPole-v1"

    tracemalloc.start()
    try:
        installed = install_recording(resolve_recording(source), target, is_current=_never_current)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()

    assert installed.status == "created"
    assert (target / "trajectory.jsonl").read_bytes() == content
    assert [p.name for p in target.iterdir()] == ["trajectory.jsonl"]
    assert peak < 4 * MiB, f"installing a 24 MiB recording took {peak / MiB:.0f} MiB"


def test_same_bytes_tells_files_apart_by_every_byte(tmp_path: Path) -> None:
    content = bytes(range(256)) * (MiB // 64)  # four chunks of the comparison
    one, other = tmp_path / "one", tmp_path / "other"
    one.write_bytes(content)
    other.write_bytes(content)
    assert same_bytes(one, other)
    other.write_bytes(content[:-1] + b"x")  # the last byte of the last chunk
    assert not same_bytes(one, other)
    other.write_bytes(content + b"\n")  # one byte more
    assert not same_bytes(one, other)
    other.write_bytes(b"")
    assert not same_bytes(one, other)
    assert same_bytes(other, other)
    assert not same_bytes(one, tmp_path / "missing")  # not the same: read it the long way


def test_same_bytes_reads_large_files_a_chunk_at_a_time(tmp_path: Path) -> None:
    content = b"".join(i.to_bytes(4, "little") * (MiB // 16) for i in range(24 * 4))
    one, other = tmp_path / "one", tmp_path / "other"
    one.write_bytes(content)
    other.write_bytes(content)
    del content
    tracemalloc.start()
    try:
        same = same_bytes(one, other)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert same
    assert peak < 4 * MiB, f"comparing two 24 MiB files took {peak / MiB:.0f} MiB"


def _painted(folder: Path, steps: int, patch: object = None) -> Path:
    """A recording of PaintedEnv's frames in ``folder``."""
    env = RecordTrajectory(PaintedEnv(patch=patch), folder, render=True)  # type: ignore[arg-type]
    env.reset(seed=0)
    for t in range(steps):
        env.step(t % 2)
    env.close()
    return folder


def test_a_recording_is_installed_with_its_frames_and_without_the_frames_it_dropped(
    tmp_path: Path,
) -> None:
    target = tmp_path / "goldens" / "Painted"
    long = resolve_recording(_painted(tmp_path / "long", 4))
    installed = install_recording(long, target, is_current=_never_current)
    names = sorted(p.name for p in (target / "frames").iterdir())
    assert names == [f"e00000_t{t:06d}_render.png" for t in range(5)]
    assert {p.name for p in installed.written} == {*names, "trajectory.jsonl"}
    # Another recording: 2 steps, the second one's frame changed.
    patch = (2, slice(0, 8), slice(0, 8), 9)
    short = resolve_recording(_painted(tmp_path / "short", 2, patch))
    installed = install_recording(short, target, is_current=_never_current)
    assert sorted(p.name for p in installed.written) == [
        "e00000_t000002_render.png",
        "trajectory.jsonl",
    ]
    assert sorted(p.name for p in installed.removed) == [
        "e00000_t000003_render.png",
        "e00000_t000004_render.png",
    ]
    assert sorted(p.name for p in (target / "frames").iterdir()) == names[:3]
    for ref in referenced_frames(target / "trajectory.jsonl").values():
        read_frame(target, ref)  # each frame the golden names holds its pixels


def test_a_symlink_in_a_golden_s_frames_folder_is_refused(tmp_path: Path) -> None:
    golden = _painted(tmp_path / "goldens" / "Painted", 1)
    outside = tmp_path / "outside.png"
    outside.write_bytes(b"precious")
    (golden / "frames" / "e00000_t000001_render.png").unlink()
    (golden / "frames" / "e00000_t000001_render.png").symlink_to(outside)
    with pytest.raises(UnsafeGoldenPathError, match=r"e00000_t000001_render\.png: a symlink"):
        resolve_golden(tmp_path / "goldens", golden)
    new = resolve_recording(_painted(tmp_path / "new", 1))
    with pytest.raises(UnsafeGoldenPathError):
        install_recording(new, golden, is_current=_never_current)
    assert outside.read_bytes() == b"precious"

"""Recording files on disk: atomic writes and the one path check (``gym_goldens.format.files``)."""

from __future__ import annotations

import re
import tracemalloc
from pathlib import Path

import pytest

from gym_goldens.errors import GoldenFormatError, UnsafeGoldenPathError
from gym_goldens.format.files import (
    atomic_write_bytes,
    checked_recording_files,
    install_recording,
)
from gym_goldens.plugin.store import update_golden
from tests.support.legacy import split_into_episode_files
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
    assert checked_recording_files(goldens, goldens / "none") == []
    new = goldens / "new"
    update_golden(record_alternating(tmp_path / "run", resets=2), new)
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
        update_golden(record_alternating(tmp_path / "run"), golden, goldens_dir=goldens)
    assert outside.read_bytes() == b"{}\n"
    (goldens / "file").write_bytes(b"x")
    with pytest.raises(GoldenFormatError, match="expected a golden folder, found a file"):
        checked_recording_files(goldens, goldens / "file")


def _never_current(existing: Path, recording: Path) -> bool:
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
        installed = install_recording(source, target, is_current=_never_current)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()

    assert installed.status == "created"
    assert (target / "trajectory.jsonl").read_bytes() == content
    assert [p.name for p in target.iterdir()] == ["trajectory.jsonl"]
    assert peak < 4 * MiB, f"installing a 24 MiB recording took {peak / MiB:.0f} MiB"


@pytest.mark.parametrize("compress", [False, True])
def test_the_episode_files_of_format_1_are_concatenated(tmp_path: Path, compress: bool) -> None:
    legacy = tmp_path / "legacy"
    legacy.mkdir()
    suffix = ".jsonl.gz" if compress else ".jsonl"
    parts = [bytes([65 + i]) * (MiB + i) for i in range(3)]
    for i, part in enumerate(parts):
        (legacy / f"episode_{i:05d}{suffix}").write_bytes(part)
    target = tmp_path / "goldens" / "CartPole-v1"

    install_recording(legacy, target, is_current=_never_current)

    assert [p.name for p in target.iterdir()] == [f"trajectory{suffix}"]
    assert (target / f"trajectory{suffix}").read_bytes() == b"".join(parts)

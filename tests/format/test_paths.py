"""The one path check (format/paths.py): a golden resolved once, nothing odd in it followed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gym_goldens.errors import GoldenFormatError
from gym_goldens.format.paths import resolve_golden, resolve_recording
from tests.support.recordings import record_cartpole


def test_a_sub_env_folder_inside_a_sub_env_folder_is_refused_at_any_depth(
    tmp_path: Path,
) -> None:
    # A vector env's golden has one level of sub-env folders; a pull request
    # may nest them 600 deep (past Python's recursion limit, within PATH_MAX).
    data = (record_cartpole(tmp_path / "CartPole-v1", steps=3) / "trajectory.jsonl").read_bytes()
    golden = tmp_path / "goldens" / "test_x" / "CartPole-v1"
    deepest = golden.joinpath(*["env_0"] * 600)
    os.makedirs(deepest)
    (deepest / "trajectory.jsonl").write_bytes(data)
    (golden / "env_0" / "trajectory.jsonl").write_bytes(data)

    for resolve in (
        lambda: resolve_golden(tmp_path / "goldens", golden),
        lambda: resolve_recording(golden),
    ):
        with pytest.raises(GoldenFormatError) as raised:
            resolve()
        assert raised.value.path == str(golden / "env_0" / "env_0")
        assert "a sub-env's folder holds no sub-env folder" in raised.value.reason


def test_a_named_pipe_given_as_a_recording_is_named_for_what_it_is(tmp_path: Path) -> None:
    pipe = tmp_path / "trajectory.jsonl"
    os.mkfifo(pipe)
    with pytest.raises(GoldenFormatError) as raised:
        resolve_recording(pipe)
    assert raised.value.path == str(pipe)
    assert raised.value.reason == (
        "expected a recording file or folder, found another kind of entry (a named pipe, a "
        "device); give the recording's file or folder"
    )
    with pytest.raises(GoldenFormatError, match="no such file or folder"):
        resolve_recording(tmp_path / "missing")

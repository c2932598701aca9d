"""Where artifacts go: the golden's own place under the artifacts folder."""

from __future__ import annotations

from pathlib import Path

from gym_goldens.artifacts import artifact_dir
from gym_goldens.store import golden_dir_for

NODEID = "tests/test_envs.py::TestCart::test_x[Mountain/Car v0]"


def test_a_plain_golden_maps_like_golden_dir_for(tmp_path: Path) -> None:
    goldens = tmp_path / "goldens"
    golden = golden_dir_for(goldens, NODEID, "CartPole-v1")
    target = artifact_dir(tmp_path / "out", goldens, golden, NODEID, "CartPole-v1")
    assert target == golden_dir_for(tmp_path / "out", NODEID, "CartPole-v1")
    assert target.relative_to(tmp_path / "out").parts == (
        "tests",
        "test_envs",
        "TestCart",
        "test_x[Mountain%2FCar%20v0]",
        "CartPole-v1",
    )


def test_a_variant_keeps_its_folder(tmp_path: Path) -> None:
    goldens = tmp_path / "goldens"
    golden = golden_dir_for(goldens, NODEID, "CartPole-v1") / "machine=x86_64"
    target = artifact_dir(tmp_path / "out", goldens, golden, NODEID, "CartPole-v1")
    assert target == golden_dir_for(tmp_path / "out", NODEID, "CartPole-v1") / "machine=x86_64"


def test_a_golden_outside_the_goldens_folder_falls_back_to_the_node_id(tmp_path: Path) -> None:
    target = artifact_dir(tmp_path / "out", tmp_path / "goldens", Path("/elsewhere/x"), NODEID, "n")
    assert target == golden_dir_for(tmp_path / "out", NODEID, "n")

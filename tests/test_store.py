"""Tests of golden paths and golden writes (``gym_goldens.store``)."""

from __future__ import annotations

import os
from pathlib import Path

import gymnasium as gym
import orjson
import pytest

from gym_goldens import RecordTrajectory
from gym_goldens.store import atomic_write_bytes, golden_dir_for, safe_segment, update_golden

ROOT = Path("goldens")


def _record(path: Path, *, seed: int = 0, steps: int = 5, resets: int = 1) -> Path:
    env = RecordTrajectory(gym.make("CartPole-v1"), path)
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
    target = tmp_path / "deep" / "episode_00000.jsonl"
    atomic_write_bytes(target, b"one\n")
    atomic_write_bytes(target, b"two\n")
    assert target.read_bytes() == b"two\n"
    assert sorted(p.name for p in target.parent.iterdir()) == ["episode_00000.jsonl"]


def test_atomic_write_keeps_the_old_file_when_writing_fails(tmp_path: Path) -> None:
    target = tmp_path / "episode_00000.jsonl"
    target.write_bytes(b"old\n")
    with pytest.raises(TypeError):
        atomic_write_bytes(target, "not bytes")  # type: ignore[arg-type]
    assert target.read_bytes() == b"old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["episode_00000.jsonl"]


def test_update_creates_then_leaves_unchanged_goldens_alone(tmp_path: Path) -> None:
    golden = tmp_path / "goldens" / "env"
    created = update_golden(_record(tmp_path / "run1", resets=2), golden)
    assert created.status == "created"
    assert [p.name for p in created.written] == ["episode_00000.jsonl", "episode_00001.jsonl"]
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
    update_golden(_record(tmp_path / "run1"), golden)
    path = golden / "episode_00000.jsonl"
    header, *rest = path.read_bytes().splitlines()
    parsed = orjson.loads(header)
    parsed["versions"]["numpy"] = "0.0.1"
    old = b"\n".join([orjson.dumps(parsed), *rest]) + b"\n"
    path.write_bytes(old)
    assert update_golden(_record(tmp_path / "run2"), golden).status == "unchanged"
    assert path.read_bytes() == old


def test_update_rewrites_changed_and_removes_surplus_episodes(tmp_path: Path) -> None:
    golden = tmp_path / "goldens" / "env"
    update_golden(_record(tmp_path / "run1", resets=3), golden)
    first = (golden / "episode_00000.jsonl").read_bytes()
    result = update_golden(_record(tmp_path / "run2", seed=0, steps=7, resets=2), golden)
    assert result.status == "updated"
    assert [p.name for p in result.written] == ["episode_00000.jsonl", "episode_00001.jsonl"]
    assert [p.name for p in result.removed] == ["episode_00002.jsonl"]
    assert sorted(p.name for p in golden.iterdir()) == [
        "episode_00000.jsonl",
        "episode_00001.jsonl",
    ]
    assert (golden / "episode_00000.jsonl").read_bytes() != first


def test_update_replaces_an_unreadable_golden(tmp_path: Path) -> None:
    golden = tmp_path / "goldens" / "env"
    golden.mkdir(parents=True)
    (golden / "episode_00000.jsonl").write_bytes(b'{"event": "res')
    result = update_golden(_record(tmp_path / "run"), golden)
    assert result.status == "updated"
    assert (golden / "episode_00000.jsonl").read_bytes() == (
        tmp_path / "run" / "episode_00000.jsonl"
    ).read_bytes()

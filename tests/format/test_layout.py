"""Golden paths from awkward test ids: safe, unique, stable, inside the goldens dir."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest

from gym_goldens.errors import UnsafeGoldenPathError
from gym_goldens.format.layout import (
    golden_dir_for,
    golden_file_dir,
    golden_test_dir,
    safe_segment,
)
from gym_goldens.format.paths import ensure_inside

AWKWARD_IDS = [
    "plain",
    "a/b",
    "a\\b",
    "..",
    ".",
    "../../etc/passwd",
    "..\\..\\windows",
    "c:",
    "C:\\Users",
    "a:b",
    "with space",
    " leading and trailing ",
    "trailing.",
    "MountainCar-v0",
    "über-straße",
    "日本語",
    "emoji-🤖",
    "tab\there",
    "new\nline",
    "nul\x00byte",
    "bell\x07",
    "del\x7f",
    "%",
    "%2F",
    "a%2Fb",
    "",
    "con",
    "CON.txt",
    "nul",
    "com1",
    "lpt9",
    "x" * 300,
    "x" * 299 + "y",
    "é" * 200,
    "~",
    "*?<>|\"'",
]

# Characters no file system or archive format has trouble with.
_PORTABLE = re.compile(r"^[A-Za-z0-9_\-.\[\]=+,@%~]+$")


@pytest.mark.parametrize("text", AWKWARD_IDS, ids=repr)
def test_segment_is_a_safe_name(text: str) -> None:
    segment = safe_segment(text)
    assert _PORTABLE.match(segment), segment
    assert segment not in {".", ".."}
    assert not segment.startswith(".")
    assert not segment.endswith((".", " "))
    assert len(segment.encode("utf-8")) <= 120
    assert segment.split(".")[0].lower() not in {"con", "prn", "aux", "nul", "com1", "lpt9"}


def test_segments_are_unique() -> None:
    segments = [safe_segment(text) for text in AWKWARD_IDS]
    assert len(set(segments)) == len(AWKWARD_IDS)


def test_segments_are_stable() -> None:
    # Pinned: goldens committed by one version are found by the next.
    assert safe_segment("test_x[Mountain/Car v0]") == "test_x[Mountain%2FCar%20v0]"
    assert safe_segment("..") == "%2E%2E"
    assert safe_segment("a\\b") == "a%5Cb"
    assert safe_segment("c:") == "c%3A"
    assert safe_segment("über") == "%C3%BCber"
    assert safe_segment("tab\there") == "tab%09here"
    assert safe_segment("") == "%"
    assert safe_segment("con") == "%con"
    digest = hashlib.sha256(b"x" * 300).hexdigest()[:10]
    assert safe_segment("x" * 300) == "x" * 109 + "~" + digest


def test_long_names_keep_a_readable_prefix_and_a_hash_suffix() -> None:
    first, second = safe_segment("x" * 300), safe_segment("x" * 299 + "y")
    assert first != second
    assert first.startswith("x" * 100)
    assert re.fullmatch(r"x+~[0-9a-f]{10}", first)
    # A short name never contains "~", so it cannot meet a cut one.
    assert "~" not in safe_segment("x" * 50)
    assert safe_segment("~") == "%7E"


def test_distinct_parametrize_ids_get_distinct_folders() -> None:
    root = Path("goldens")
    folders = {
        golden_dir_for(root, f"tests/test_envs.py::test_x[{text}]", "CartPole-v1")
        for text in AWKWARD_IDS
    }
    names = {golden_dir_for(root, "tests/test_envs.py::test_x", text) for text in AWKWARD_IDS}
    assert len(folders) == len(names) == len(AWKWARD_IDS)


@pytest.mark.parametrize("text", AWKWARD_IDS, ids=repr)
def test_golden_folder_stays_inside_the_goldens_dir(tmp_path: Path, text: str) -> None:
    root = tmp_path / "goldens"
    root.mkdir()
    for nodeid, name in [
        (f"tests/test_envs.py::test_x[{text}]", "CartPole-v1"),
        (f"tests/test_envs.py::TestA::test_x[{text}]", text),
        (f"tests/{text or 'x'}/test_envs.py::test_x", text),
    ]:
        golden = golden_dir_for(root, nodeid, name)
        assert ensure_inside(root, golden).is_relative_to(root.resolve())
        assert golden.relative_to(root).parts  # never the root itself
        golden.mkdir(parents=True)  # a real file system takes the name


def test_node_id_parts_become_folders() -> None:
    root = Path("goldens")
    golden = golden_dir_for(root, "tests/envs/test_a.py::TestCart::test_x[a-1]", "CartPole-v1")
    assert golden == Path("goldens/tests/envs/test_a/TestCart/test_x[a-1]/CartPole-v1")
    assert golden_file_dir(root, "tests/envs/test_a.py::TestCart::test_x") == Path(
        "goldens/tests/envs/test_a"
    )
    assert golden_test_dir(root, "tests/test_a.py::test_x") == Path("goldens/tests/test_a/test_x")


def test_separators_inside_a_parametrize_id_do_not_split_it() -> None:
    root = Path("goldens")
    # "a::::b" and "a::b" used to lose the empty part and share a folder.
    one = golden_test_dir(root, "t.py::test_x[a::b]")
    two = golden_test_dir(root, "t.py::test_x[a::::b]")
    three = golden_test_dir(root, "t.py::test_x[a/b]")
    assert len({one, two, three}) == 3
    assert one == Path("goldens/t/test_x[a%3A%3Ab]")
    assert three == Path("goldens/t/test_x[a%2Fb]")


def test_a_class_and_a_parametrize_id_do_not_meet() -> None:
    root = Path("goldens")
    assert golden_test_dir(root, "t.py::C::test[x]") != golden_test_dir(root, "t.py::test[C::x]")


def test_a_symlink_out_of_the_goldens_dir_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "goldens"
    outside = tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (root / "tests").symlink_to(outside, target_is_directory=True)
    with pytest.raises(UnsafeGoldenPathError, match="tests: a symlink"):
        ensure_inside(root, golden_dir_for(root, "tests/test_a.py::test_x", "CartPole-v1"))


def test_a_symlink_inside_the_goldens_dir_is_refused_too(tmp_path: Path) -> None:
    root = tmp_path / "goldens"
    (root / "real").mkdir(parents=True)
    (root / "tests").symlink_to(root / "real", target_is_directory=True)
    with pytest.raises(UnsafeGoldenPathError, match="tests: a symlink"):
        ensure_inside(root, root / "tests" / "x")


ROOT = Path("goldens")


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


@pytest.mark.parametrize("text", ["\ud800", "a\udfffb", "\udc80" * 50, "x\ud83d"], ids=repr)
def test_a_lone_surrogate_gets_a_safe_unique_name(text: str) -> None:
    # A Python str may hold one (a name decoded with surrogateescape); UTF-8 has no bytes for it.
    segment = safe_segment(text)
    assert _PORTABLE.match(segment), segment
    assert len(segment.encode("utf-8")) <= 120
    others = {safe_segment(other) for other in AWKWARD_IDS}
    assert segment not in others
    assert safe_segment("\ud800") == "%ED%A0%80"

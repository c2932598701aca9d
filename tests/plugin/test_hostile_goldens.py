"""Damaged and hostile goldens: a clear test failure naming the file and line, nothing else.

Each case damages the golden of a real CartPole recording (two episodes in
one ``trajectory.jsonl``), runs the test session with pytester, and checks
that the test fails (not errors) with a message that names the file (and
line), that no internal traceback is shown, and that nothing inside or
outside the goldens dir was written.
"""

from __future__ import annotations

import errno
import gzip
import os
import re
import shutil
import subprocess
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import gymnasium as gym
import hypothesis  # noqa: F401
import pytest

import gym_goldens.comparison.engine

# Imported here so that pytester's in-process runs, which drop the modules
# they import, do not import them again each time (hypothesis's pytest plugin
# imports hypothesis in every session: 3 s a run).
import gym_goldens.plugin.check
import gym_goldens.present.report  # noqa: F401
from gym_goldens import RecordTrajectory

TEST_FILE = """
import gymnasium as gym

def test_cartpole(record_trajectory):
    env = record_trajectory(gym.make("CartPole-v1"))
    env.action_space.seed(0)
    for episode in range(2):
        env.reset(seed=episode)
        for _ in range(5):
            env.step(env.action_space.sample())
"""

GOLDEN_DIR = Path("goldens/test_hostile/test_cartpole/CartPole-v1")
GOLDEN_FILE = GOLDEN_DIR / "trajectory.jsonl"
# Each episode is a header, a reset and 5 steps: episode 1 starts at line 8.
SECOND_EPISODE = 8
MiB = 1024 * 1024


@pytest.fixture(scope="module")
def recorded_golden(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The golden of the project's test, recorded once through the library API."""
    folder = tmp_path_factory.mktemp("golden") / "CartPole-v1"
    env = RecordTrajectory(gym.make("CartPole-v1"), folder)
    env.action_space.seed(0)
    for episode in range(2):
        env.reset(seed=episode)
        for _ in range(5):
            env.step(env.action_space.sample())
    env.close()
    return folder


@pytest.fixture
def project(pytester: pytest.Pytester, recorded_golden: Path) -> pytest.Pytester:
    """A project whose one test has its golden in place."""
    pytester.makepyfile(test_hostile=TEST_FILE)
    shutil.copytree(recorded_golden, pytester.path / GOLDEN_DIR)
    return pytester


def test_the_undamaged_golden_matches(project: pytest.Pytester) -> None:
    lines = (project.path / GOLDEN_FILE).read_bytes().splitlines()
    assert [n + 1 for n, line in enumerate(lines) if b'"event":"header"' in line] == [
        1,
        SECOND_EPISODE,
    ]
    result = project.runpytest()
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["goldens: 1 matched"])


def snapshot(folder: Path) -> dict[str, object]:
    """Every entry under ``folder``, symlinks not followed: file bytes, link targets.

    The goldens folder's own ``.gitignore``, which a run that writes goldens
    adds when it is missing, is left out.
    """
    entries: dict[str, object] = {}
    for current, dirs, files in os.walk(folder):
        for name in dirs + files:
            path = Path(current, name)
            key = path.relative_to(folder).as_posix()
            if key == ".gitignore":
                continue
            if path.is_symlink():
                entries[key] = ("link", os.readlink(path))
            elif path.is_dir():
                entries[key] = "dir"
            else:
                entries[key] = path.read_bytes()
    return entries


def replace_line(path: Path, number: int, new: bytes) -> None:
    lines = path.read_bytes().split(b"\n")
    lines[number - 1] = new
    path.write_bytes(b"\n".join(lines))


def assert_clean_failure(result: pytest.RunResult) -> None:
    """The test failed through our message, with no traceback of our internals."""
    result.assert_outcomes(failed=1)
    text = result.stdout.str() + result.stderr.str()
    assert "INTERNALERROR" not in text
    assert "Traceback" not in text
    assert "gym_goldens/" not in text
    assert "site-packages" not in text


def _empty(golden: Path, outside: Path) -> None:
    golden.write_bytes(b"")


def _cut_in_the_second_episode(golden: Path, outside: Path) -> None:
    content = golden.read_bytes()
    start = 0
    for _ in range(SECOND_EPISODE + 1):  # to the start of its first step, line 10
        start = content.index(b"\n", start) + 1
    golden.write_bytes(content[: start + 20])


def _second_episode_step_t_is_a_string(golden: Path, outside: Path) -> None:
    content = golden.read_bytes().split(b"\n")
    content[SECOND_EPISODE + 1] = content[SECOND_EPISODE + 1].replace(b'"t":1', b'"t":"1"')
    golden.write_bytes(b"\n".join(content))


def _both_layouts(golden: Path, outside: Path) -> None:
    shutil.copyfile(golden, golden.parent / "episode_00000.jsonl")


def _truncated(golden: Path, outside: Path) -> None:
    content = golden.read_bytes()
    cut = content.index(b"\n", content.index(b"\n") + 1) + 20  # 20 bytes into line 3
    golden.write_bytes(content[:cut])


def _invalid_utf8(golden: Path, outside: Path) -> None:
    content = golden.read_bytes().split(b"\n")
    content[1] = content[1].replace(b'"event":"reset"', b'"event":"res\xff\xfeet"')
    golden.write_bytes(b"\n".join(content))


def _deeply_nested(golden: Path, outside: Path) -> None:
    # Deeper than orjson parses.
    replace_line(golden, 2, b'{"event":"reset","obs":' + b"[" * 100_000 + b"]" * 100_000 + b"}")


def _nested_within_parser_limit(golden: Path, outside: Path) -> None:
    # orjson parses 1000 levels; comparing them must not blow Python's stack.
    replace_line(golden, 2, b'{"event":"reset","obs":' + b"[" * 1000 + b"]" * 1000 + b"}")


def _huge_float(golden: Path, outside: Path) -> None:
    replace_line(golden, 2, b'{"event":"reset","episode":0,"obs":[1e999999],"info":{}}')


def _huge_tagged_int(golden: Path, outside: Path) -> None:
    digits = b"9" * 100_000
    replace_line(
        golden, 2, b'{"event":"reset","episode":0,"obs":{"$int":"' + digits + b'"},"info":{}}'
    )


def _step_t_is_a_string(golden: Path, outside: Path) -> None:
    content = golden.read_bytes().split(b"\n")
    content[2] = content[2].replace(b'"t":1', b'"t":"1"')
    golden.write_bytes(b"\n".join(content))


def _event_is_a_number(golden: Path, outside: Path) -> None:
    content = golden.read_bytes().split(b"\n")
    content[2] = content[2].replace(b'"event":"step"', b'"event":7')
    golden.write_bytes(b"\n".join(content))


def _record_is_a_list(golden: Path, outside: Path) -> None:
    replace_line(golden, 3, b'["step", 1]')


def _header_version_is_a_dict(golden: Path, outside: Path) -> None:
    content = golden.read_bytes().split(b"\n")
    start = content[0].index(b'"version":')
    end = content[0].index(b",", start)
    content[0] = content[0][:start] + b'"version":{"major":1}' + content[0][end:]
    golden.write_bytes(b"\n".join(content))


def _obs_is_a_string(golden: Path, outside: Path) -> None:
    content = golden.read_bytes().split(b"\n")
    start = content[1].index(b'"obs":[')
    end = content[1].index(b"]", start) + 1
    content[1] = content[1][:start] + b'"obs":"not an array"' + content[1][end:]
    golden.write_bytes(b"\n".join(content))


def _unknown_format_version(golden: Path, outside: Path) -> None:
    content = golden.read_bytes().split(b"\n")
    start = content[0].index(b'"version":')
    end = content[0].index(b",", start)
    content[0] = content[0][:start] + b'"version":"99.0"' + content[0][end:]
    golden.write_bytes(b"\n".join(content))


def _foreign_format(golden: Path, outside: Path) -> None:
    replace_line(golden, 1, b'{"event":"header","format":"something-else","version":"1.0"}')


def _folder_instead_of_file(golden: Path, outside: Path) -> None:
    golden.unlink()
    golden.mkdir()
    (golden / "x").write_bytes(b"{}")


def _file_instead_of_folder(golden: Path, outside: Path) -> None:
    shutil.rmtree(golden.parent)
    golden.parent.write_bytes(b"not a folder")


def _file_symlink_outside(golden: Path, outside: Path) -> None:
    # Same content outside: following the link would make the test pass.
    target = outside / "trajectory.jsonl"
    shutil.copyfile(golden, target)
    golden.unlink()
    golden.symlink_to(target)


def _folder_symlink_outside(golden: Path, outside: Path) -> None:
    target = outside / "CartPole-v1"
    shutil.copytree(golden.parent, target)
    shutil.rmtree(golden.parent)
    golden.parent.symlink_to(target, target_is_directory=True)


def _parent_symlink_outside(golden: Path, outside: Path) -> None:
    test_dir = golden.parent.parent
    target = outside / "test_cartpole"
    shutil.copytree(test_dir, target)
    shutil.rmtree(test_dir)
    test_dir.symlink_to(target, target_is_directory=True)


Damage = Callable[[Path, Path], None]

FAILING_CASES: list[tuple[str, Damage, str]] = [
    ("empty", _empty, "*trajectory.jsonl: the file is empty*"),
    ("truncated mid-line", _truncated, "*trajectory.jsonl:3: invalid JSON*"),
    (
        "truncated in episode 1",
        _cut_in_the_second_episode,
        "*trajectory.jsonl:10: invalid JSON*the last line is cut short*",
    ),
    (
        "invalid UTF-8",
        _invalid_utf8,
        "*trajectory.jsonl:2: invalid JSON*not valid UTF-8*",
    ),
    (
        "deeply nested",
        _deeply_nested,
        "*trajectory.jsonl:2: invalid JSON*depth*exceeded*",
    ),
    ("nested 1000 levels", _nested_within_parser_limit, "golden mismatch: *trajectory.jsonl*"),
    ("huge float", _huge_float, "*trajectory.jsonl:2: invalid JSON*number is infinity*"),
    ("huge tagged int", _huge_tagged_int, "golden mismatch: *trajectory.jsonl*"),
    (
        "t is a string",
        _step_t_is_a_string,
        '*trajectory.jsonl:3: a step record needs an integer "t"*',
    ),
    (
        "t is a string in episode 1",
        _second_episode_step_t_is_a_string,
        '*trajectory.jsonl:10: a step record needs an integer "t"*',
    ),
    (
        "event is a number",
        _event_is_a_number,
        '*trajectory.jsonl:3: expected "event" to be*found 7*',
    ),
    (
        "record is a list",
        _record_is_a_list,
        "*trajectory.jsonl:3: expected a JSON object*found list*",
    ),
    (
        "version is a dict",
        _header_version_is_a_dict,
        "*trajectory.jsonl:1: unreadable format version*",
    ),
    ("obs is a string", _obs_is_a_string, "golden mismatch: *trajectory.jsonl*"),
    (
        "unknown version",
        _unknown_format_version,
        "*trajectory.jsonl:1: format version 99.0 is newer*",
    ),
    ("foreign format", _foreign_format, "*trajectory.jsonl:1: expected format 'gym-goldens'*"),
    (
        "both layouts",
        _both_layouts,
        "*CartPole-v1: recorded by a pre-release format (1.0): rewrite it with pytest*",
    ),
    (
        "folder for file",
        _folder_instead_of_file,
        "*trajectory.jsonl: expected a recording file, found a folder*",
    ),
    (
        "file for folder",
        _file_instead_of_folder,
        "*CartPole-v1: expected a golden folder, found a file*",
    ),
    (
        "file symlink out",
        _file_symlink_outside,
        "*CartPole-v1/trajectory.jsonl: a symlink (to *), which gym-goldens does not follow*",
    ),
    (
        "folder symlink out",
        _folder_symlink_outside,
        "*test_cartpole/CartPole-v1: a symlink (to *), which gym-goldens does not follow*",
    ),
    (
        "parent symlink out",
        _parent_symlink_outside,
        "*test_hostile/test_cartpole: a symlink (to *), which gym-goldens does not follow*",
    ),
]


@pytest.mark.parametrize(
    ("damage", "expected"),
    [pytest.param(damage, expected, id=name) for name, damage, expected in FAILING_CASES],
)
def test_damaged_golden_fails_the_test_clearly(
    project: pytest.Pytester, tmp_path: Path, damage: Damage, expected: str
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    damage(project.path / GOLDEN_FILE, outside)
    before, outside_before = snapshot(project.path / "goldens"), snapshot(outside)

    result = project.runpytest()

    assert_clean_failure(result)
    result.stdout.fnmatch_lines(
        [f"*{expected}", "*pytest --update-goldens*"]
        if not expected.startswith("golden mismatch")
        else [expected, "*update with: pytest --update-goldens*"]
    )
    assert snapshot(project.path / "goldens") == before, "a golden changed without --update-goldens"
    assert snapshot(outside) == outside_before


_REFUSED = [
    "*golden refused: *: a symlink (to *), which gym-goldens does not follow inside the goldens*",
    "*nothing was read from or written to it*",
]
_NOT_UPDATED = ["*golden not updated: *", "*the golden was left as it is*"]


@pytest.mark.parametrize(
    ("damage", "expected"),
    [
        pytest.param(_file_symlink_outside, _REFUSED, id="file symlink out"),
        pytest.param(_folder_symlink_outside, _REFUSED, id="folder symlink out"),
        pytest.param(_parent_symlink_outside, _REFUSED, id="parent symlink out"),
        pytest.param(_folder_instead_of_file, _NOT_UPDATED, id="folder for file"),
        pytest.param(_file_instead_of_folder, _NOT_UPDATED, id="file for folder"),
    ],
)
def test_update_refuses_a_golden_in_the_way(
    project: pytest.Pytester, tmp_path: Path, damage: Damage, expected: list[str]
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    damage(project.path / GOLDEN_FILE, outside)
    # Make the new recording differ, so an update would have to write.
    project.makepyfile(test_hostile=TEST_FILE.replace("seed=0", "seed=1"))
    before, outside_before = snapshot(project.path / "goldens"), snapshot(outside)

    result = project.runpytest("--update-goldens")

    assert_clean_failure(result)
    result.stdout.fnmatch_lines(expected)
    assert snapshot(project.path / "goldens") == before
    assert snapshot(outside) == outside_before


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda data: b"\xef\xbb\xbf" + data, id="BOM"),
        pytest.param(lambda data: data.replace(b"\n", b"\r\n"), id="CRLF"),
        pytest.param(
            lambda data: b"\xef\xbb\xbf" + data.replace(b"\n", b"\r\n"), id="BOM and CRLF"
        ),
    ],
)
def test_bom_and_crlf_are_tolerated(
    project: pytest.Pytester, damage: Callable[[bytes], bytes]
) -> None:
    # Editors and git's autocrlf add these; the records are the same.
    golden = project.path / GOLDEN_FILE
    golden.write_bytes(damage(golden.read_bytes()))

    result = project.runpytest()

    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["goldens: 1 matched"])


def test_a_100_mb_line_is_refused_without_reading_it_whole(
    project: pytest.Pytester,
) -> None:
    golden = project.path / GOLDEN_FILE
    lines = golden.read_bytes().split(b"\n")
    with golden.open("wb") as handle:
        handle.write(lines[0] + b"\n")
        handle.write(b'{"event":"reset","obs":"')
        chunk = b"a" * MiB
        for _ in range(100):
            handle.write(chunk)
        handle.write(b'"}\n')
        handle.write(b"\n".join(lines[2:]))
    assert golden.stat().st_size > 100 * MiB

    tracemalloc.start()
    try:
        result = project.runpytest()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()

    assert_clean_failure(result)
    result.stdout.fnmatch_lines(["*trajectory.jsonl:2: line is longer than 16 MiB*"])
    assert peak < 48 * MiB, f"reading the golden took {peak / MiB:.0f} MiB"


VARIANT_TEST_FILE = TEST_FILE.replace(
    "def test_cartpole", '@pytest.mark.goldens(variant_by=["machine"])\ndef test_cartpole'
).replace("import gymnasium as gym", "import gymnasium as gym\nimport pytest")


def test_the_plain_golden_of_a_variant_is_read_only_inside_the_goldens_dir(
    pytester: pytest.Pytester, recorded_golden: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    # No golden for this machine's variant: under --update-goldens the plain
    # golden is read to see if it serves. It is a symlink to a file outside.
    outside = tmp_path_factory.mktemp("outside") / "trajectory.jsonl"
    shutil.copy(recorded_golden / "trajectory.jsonl", outside)
    pytester.makepyfile(test_hostile=VARIANT_TEST_FILE)
    (pytester.path / GOLDEN_DIR).mkdir(parents=True)
    (pytester.path / GOLDEN_FILE).symlink_to(outside)
    result = pytester.runpytest("--update-goldens")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*golden refused: *trajectory.jsonl: a symlink (to *)*"])
    result.stdout.no_fnmatch_line("*unchanged*")


def test_replay_reads_no_sub_env_folder_outside_the_goldens_dir(
    pytester: pytest.Pytester, tmp_path_factory: pytest.TempPathFactory
) -> None:
    # A replayed golden whose env_0 folder leads outside: nothing of it is read.
    outside = tmp_path_factory.mktemp("outside")
    (outside / "trajectory.jsonl").write_text("this is not read\n")
    pytester.makepyfile(
        test_hostile=TEST_FILE.replace(
            'record_trajectory(gym.make("CartPole-v1"))',
            'record_trajectory(gym.make("CartPole-v1"), replay=True)',
        )
    )
    (pytester.path / GOLDEN_DIR).mkdir(parents=True)
    (pytester.path / GOLDEN_DIR / "env_0").symlink_to(outside, target_is_directory=True)
    result = pytester.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*CartPole-v1/env_0: a symlink (to *)*"])
    result.stdout.no_fnmatch_line("*not read*")
    result.stdout.no_fnmatch_line("*invalid JSON*")


def _compressed_bomb(project: pytest.Pytester, filler: bytes, size: int) -> Path:
    """Replace the golden by a gzip of itself followed by ``size`` bytes of ``filler`` lines."""
    golden = project.path / GOLDEN_FILE
    bomb = golden.with_name("trajectory.jsonl.gz")
    # One gzip member of 1 MiB, repeated: a few kB on disk for each MiB it holds.
    member = gzip.compress(filler * (MiB // len(filler)), mtime=0)
    with bomb.open("wb") as handle:
        handle.write(gzip.compress(golden.read_bytes(), mtime=0))
        for _ in range(size // MiB):
            handle.write(member)
    golden.unlink()
    assert bomb.stat().st_size < size / 100
    return bomb


STEP_LINE = (
    b'{"action":0,"event":"step","info":{},"obs":[0.0,0.0,0.0,0.0],"reward":1.0,"t":6,'
    b'"terminated":false,"truncated":false}\n'
)


@pytest.mark.parametrize(
    "filler", [pytest.param(STEP_LINE, id="step lines"), pytest.param(b"\n", id="blank lines")]
)
def test_a_compressed_golden_that_expands_past_the_limit_fails_clearly(
    project: pytest.Pytester, filler: bytes
) -> None:
    bomb = _compressed_bomb(project, filler, 8 * MiB)
    project.makeini("[pytest]\ngoldens_max_decompressed_size = 1 MiB\n")
    before = snapshot(project.path / "goldens")

    result = project.runpytest()

    assert_clean_failure(result)
    result.stdout.fnmatch_lines(
        [
            f"*golden unreadable: {bomb.relative_to(project.path)}: decompresses to more than "
            "1 MiB, the limit for a compressed recording; *raise the limit: ini "
            "goldens_max_decompressed_size*",
            "*regenerate it with: pytest --update-goldens*",
        ]
    )
    assert snapshot(project.path / "goldens") == before


def test_blank_lines_stay_valid_and_the_ini_raises_the_limit(project: pytest.Pytester) -> None:
    # 8 MiB of blank lines after the golden's records: the same golden, as
    # docs/format.md says; past a lowered limit it is refused, within it read.
    _compressed_bomb(project, b"\n", 8 * MiB)
    project.makeini("[pytest]\ngoldens_max_decompressed_size = 16MiB\n")
    result = project.runpytest()
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["goldens: 1 matched"])


def test_an_update_replaces_a_golden_past_the_limit(project: pytest.Pytester) -> None:
    bomb = _compressed_bomb(project, STEP_LINE, 8 * MiB)
    project.makeini("[pytest]\ngoldens_max_decompressed_size = 1 MiB\n")

    result = project.runpytest("--update-goldens")

    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["goldens: 1 updated"])
    assert not bomb.exists()
    project.runpytest().assert_outcomes(passed=1)


def test_a_limit_that_is_not_a_size_is_a_usage_error(project: pytest.Pytester) -> None:
    project.makeini("[pytest]\ngoldens_max_decompressed_size = lots\n")
    result = project.runpytest()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*ini goldens_max_decompressed_size: expected a size such as *512 MiB*got 'lots'*"]
    )


# What a terminal acts on: C0 and C1 control characters, but the newline.
CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f]")


def test_info_nested_1000_levels_is_reported_not_a_recursion_error(
    project: pytest.Pytester,
) -> None:
    # Within orjson's limit of 1024 levels, beyond Python's for repr().
    nested = b'{"a":' * 999 + b"1" + b"}" * 999
    golden = project.path / GOLDEN_FILE
    replace_line(
        golden, 3, golden.read_bytes().split(b"\n")[2].replace(b'"info":{}', b'"info":' + nested)
    )

    result = project.runpytest()

    assert_clean_failure(result)
    result.stdout.fnmatch_lines(
        ["golden mismatch: *trajectory.jsonl:3", "  first divergence: episode 0, step t=1, info.a"]
    )
    assert "    golden {'a': {'a': {'a': " in result.stdout.str()


def _escapes(golden: Path) -> None:
    """Terminal escapes in a header field; NUL and CR in an info key; ESC in its value."""
    lines = golden.read_bytes().split(b"\n")
    lines[0] = lines[0].replace(b'"gymnasium":"', b'"gymnasium":"\\u001b[2K\\u001b[1A', 1)
    lines[2] = lines[2].replace(b'"info":{}', b'"info":{"a\\u0000b\\rc":"\\u001b]0;owned\\u0007"}')
    golden.write_bytes(b"\n".join(lines))


def test_control_characters_from_a_golden_never_reach_the_terminal(
    project: pytest.Pytester,
) -> None:
    _escapes(project.path / GOLDEN_FILE)

    result = project.runpytest("--goldens-report=report")

    assert_clean_failure(result)
    text = result.stdout.str()
    assert not CONTROL.search(text), repr(text)
    assert "  first divergence: episode 0, step t=1, info.a\\x00b\\rc" in text
    assert "    golden '\\x1b]0;owned\\x07', missing from the actual recording" in text
    assert "gymnasium \\x1b[2K\\x1b[1A1." in text
    page = (project.path / "report" / "index.html").read_text()
    assert not CONTROL.search(page.replace("\n", "")), "a control character reached the page"
    assert "info.a\\x00b\\rc" in page


def test_a_golden_folder_name_with_escapes_is_escaped_in_the_summary(
    project: pytest.Pytester, recorded_golden: Path
) -> None:
    stale = project.path / "goldens" / "test_hostile" / "test_gone\x1b[2K" / "CartPole-v1"
    shutil.copytree(recorded_golden, stale)

    result = project.runpytest()

    result.assert_outcomes(passed=1)
    text = result.stdout.str()
    assert not CONTROL.search(text), repr(text)
    assert "test_gone\\x1b[2K" in text


def test_a_golden_folder_name_with_a_newline_cannot_forge_a_summary_line(
    project: pytest.Pytester, recorded_golden: Path
) -> None:
    # git keeps a newline in a file name: a pull request can add such a folder.
    stale = project.path / "goldens" / "test_hostile" / "test_gone\n  forged line" / "CartPole-v1"
    shutil.copytree(recorded_golden, stale)

    result = project.runpytest()

    result.assert_outcomes(passed=1)
    assert "test_gone\\n  forged line" in result.stdout.str()
    assert not [line for line in result.outlines if line.startswith("  forged line")]


REPLAY_TEST = TEST_FILE.replace(
    'record_trajectory(gym.make("CartPole-v1"))',
    'record_trajectory(gym.make("CartPole-v1"), replay=True)',
)


@pytest.mark.parametrize(
    ("line", "old", "new", "expected"),
    [
        pytest.param(
            4,
            b'"action":',
            b'"action":7,"x":',
            "E *GoldenFormatError: */goldens/test_hostile/test_cartpole/CartPole-v1/"
            "trajectory.jsonl:4: the env raised AssertionError when it replayed the golden's "
            "action of episode 0, step t=2 (7): *invalid*; the golden does not fit the env*",
            id="action the env rejects",
        ),
        pytest.param(
            SECOND_EPISODE,
            b'"seed":1',
            b'"seed":"one"',
            "E *GoldenFormatError: */goldens/test_hostile/test_cartpole/CartPole-v1/"
            f"trajectory.jsonl:{SECOND_EPISODE}: the env raised Error when it was reset with the "
            "golden's seed and options of episode 1 (seed 'one', options None): \"Seed must be "
            "a python integer*",
            id="seed the env rejects",
        ),
        pytest.param(
            3,
            b'"action":',
            b'"action":"left","x":',
            "E *GoldenFormatError: */goldens/test_hostile/test_cartpole/CartPole-v1/"
            "trajectory.jsonl:3: the golden's action of episode 0, step t=1 ('left') does not "
            "fit the env's action space Discrete(2): ValueError: *",
            id="action that does not decode",
        ),
    ],
)
def test_a_golden_the_env_cannot_replay_names_its_file_and_line(
    project: pytest.Pytester, line: int, old: bytes, new: bytes, expected: str
) -> None:
    golden = project.path / GOLDEN_FILE
    original = golden.read_bytes().split(b"\n")[line - 1]
    assert old in original
    replace_line(golden, line, original.replace(old, new, 1))
    project.makepyfile(test_hostile=REPLAY_TEST)
    before = snapshot(project.path / "goldens")

    result = project.runpytest()

    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([expected])
    text = result.stdout.str()
    assert "gym_goldens/" not in text
    assert "site-packages" not in text
    assert "INTERNALERROR" not in text
    assert snapshot(project.path / "goldens") == before


def _changed_recording(project: pytest.Pytester) -> None:
    # Another seed: an update must write the golden.
    project.makepyfile(test_hostile=TEST_FILE.replace("seed=episode", "seed=episode + 10"))


def _immutable(folder: Path) -> Callable[[], None]:
    """Make ``folder`` refuse new files, as a read-only folder would; undo with the result.

    ``chmod`` does not stop root, and CI often runs as root (in containers):
    there the folder gets the immutable attribute, which stops root too.
    """
    if os.name != "posix":
        pytest.skip("read-only folders are made with chmod or chattr, on POSIX systems only")
    if os.geteuid() != 0:
        folder.chmod(0o555)
        return lambda: folder.chmod(0o755)
    chattr = shutil.which("chattr")
    if chattr is None:
        pytest.skip("running as root, where chmod does not stop writes, and chattr is missing")
    made = subprocess.run([chattr, "+i", str(folder)], check=False, capture_output=True, text=True)
    if made.returncode != 0:
        pytest.skip(
            "running as root, where chmod does not stop writes, and chattr +i is refused "
            f"here: {made.stderr.strip()}"
        )
    return lambda: subprocess.run([chattr, "-i", str(folder)], check=True)


def test_an_update_into_a_read_only_folder_fails_the_test_and_keeps_the_golden(
    project: pytest.Pytester,
) -> None:
    _changed_recording(project)
    folder = project.path / GOLDEN_DIR
    before = snapshot(project.path / "goldens")
    undo = _immutable(folder)
    try:
        result = project.runpytest("--update-goldens")
    finally:
        undo()

    assert_clean_failure(result)
    result.stdout.fnmatch_lines(
        [
            f"*golden not updated: {GOLDEN_FILE}: cannot write it (*ermi*)",
            "*the golden was left as it is",
            "*actual recording: *",
            "*free space or fix the permissions of the goldens dir, then run pytest "
            "--update-goldens again",
        ]
    )
    assert snapshot(project.path / "goldens") == before


def test_an_update_on_a_full_disk_fails_the_test_and_keeps_the_golden(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A full disk cannot be had without privileges: writes into the goldens
    # dir fail as the kernel fails them (ENOSPC), in os.write itself; the
    # rest of the run (the recording under tmp_path) writes as usual.
    if not Path("/proc/self/fd").is_dir():
        pytest.skip("the fault is injected by file descriptor, through /proc/self/fd (Linux)")
    goldens = os.path.realpath(project.path / "goldens")
    write = os.write
    refused: list[str] = []

    def full_disk_write(descriptor: int, data: bytes) -> int:
        target = os.readlink(f"/proc/self/fd/{descriptor}")
        if target.startswith(goldens):
            refused.append(target)
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return write(descriptor, data)

    _changed_recording(project)
    before = snapshot(project.path / "goldens")
    monkeypatch.setattr(os, "write", full_disk_write)

    result = project.runpytest("--update-goldens")

    monkeypatch.undo()
    assert refused, "the golden was not written through os.write: the fault was not injected"
    assert_clean_failure(result)
    result.stdout.fnmatch_lines(
        [
            f"*golden not updated: {GOLDEN_FILE}: cannot write it (No space left on device)",
            "*the golden was left as it is",
        ]
    )
    assert snapshot(project.path / "goldens") == before

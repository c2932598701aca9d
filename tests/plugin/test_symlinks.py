"""No symlink is followed anywhere inside the goldens dir: reads, updates, variants, replay, prune.

A pull request can commit a symlink at any depth of the goldens tree: the
golden's file, its folder, the folder of its test file. A link that leads to
another golden of the same tree would make a test compare with, or an update
overwrite, another test's golden; one that leads out would send a prune to
delete files anywhere. Each is refused with a message naming the link, and
nothing is read, written or deleted through it.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

import gym_goldens.comparison.engine
import gym_goldens.plugin.check
import gym_goldens.present.report  # noqa: F401
from gym_goldens.format.header import platform_facts

TEST_FILE = """
import gymnasium as gym
import pytest

{marker}
def test_x(record_trajectory):
    env = record_trajectory(gym.make("CartPole-v1"){replay})
    env.reset(seed={seed})
    for _ in range(3):
        env.step(0)
"""


def project_file(seed: int, *, marker: str = "", replay: bool = False) -> str:
    return TEST_FILE.format(seed=seed, marker=marker, replay=", replay=True" if replay else "")


GOLDEN_A = Path("goldens/test_a/test_x/CartPole-v1")
GOLDEN_B = Path("goldens/test_b/test_x/CartPole-v1")


@pytest.fixture
def two_tests(pytester: pytest.Pytester) -> pytest.Pytester:
    """Two test files whose goldens differ (seeds 0 and 1), recorded."""
    pytester.makepyfile(test_a=project_file(0), test_b=project_file(1))
    pytester.runpytest("--update-goldens").assert_outcomes(passed=2)
    return pytester


def files_of(folder: Path) -> dict[str, bytes]:
    """The files under ``folder``, symlinks not followed."""
    found = {}
    for current, _, names in os.walk(folder):
        for name in names:
            path = Path(current, name)
            if not path.is_symlink():
                found[path.relative_to(folder).as_posix()] = path.read_bytes()
    return found


def link(path: Path, target: Path) -> None:
    """Replace ``path`` (a file or folder) by a relative symlink to ``target``."""
    if path.is_dir():
        shutil.rmtree(path)
    else:
        path.unlink()
    path.symlink_to(os.path.relpath(target, path.parent), target_is_directory=target.is_dir())


@pytest.mark.parametrize(
    ("linked", "target"),
    [
        pytest.param(
            GOLDEN_A / "trajectory.jsonl", GOLDEN_B / "trajectory.jsonl", id="the golden's file"
        ),
        pytest.param(GOLDEN_A, GOLDEN_B, id="the golden's folder"),
        pytest.param(Path("goldens/test_a"), Path("goldens/test_b"), id="the test file's folder"),
    ],
)
def test_a_symlink_to_another_golden_is_neither_read_nor_written(
    two_tests: pytest.Pytester, linked: Path, target: Path
) -> None:
    root = two_tests.path
    link(root / linked, root / target)
    before = files_of(root / "goldens")

    update = two_tests.runpytest("test_a.py", "--update-goldens")
    assert files_of(root / "goldens") == before, "test_b's golden was written through the link"
    update.assert_outcomes(failed=1)
    update.stdout.fnmatch_lines([f"*golden refused: {linked.as_posix()}: a symlink*"])

    check = two_tests.runpytest("test_a.py")
    check.assert_outcomes(failed=1)
    check.stdout.fnmatch_lines(
        [
            f"*golden refused: {linked.as_posix()}: a symlink (to *), which gym-goldens does not "
            "follow inside the goldens dir*"
        ]
    )


def test_a_symlinks_target_is_shown_escaped_on_one_line(two_tests: pytest.Pytester) -> None:
    # A link's target is any text a pull request chose, a newline included.
    golden = two_tests.path / GOLDEN_A
    shutil.rmtree(golden)
    golden.symlink_to("nowhere\nFORGED \x1b[2Kline")

    result = two_tests.runpytest("test_a.py")

    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*a symlink (to 'nowhere\\nFORGED \\x1b[2Kline'), which*"])
    assert not [line for line in result.outlines if line.startswith("FORGED")]


def test_a_variant_folder_that_is_a_symlink_is_refused(pytester: pytest.Pytester) -> None:
    marker = '@pytest.mark.goldens(variant_by=["machine"])'
    pytester.makepyfile(test_a=project_file(0, marker=marker), test_b=project_file(1))
    pytester.runpytest("--update-goldens").assert_outcomes(passed=2)
    # This machine's variant folder, planted as a link to test_b's golden.
    variant = f"machine={platform_facts()['machine']}"
    (pytester.path / GOLDEN_A / variant).symlink_to(
        Path("../../../test_b/test_x/CartPole-v1"), target_is_directory=True
    )
    before = files_of(pytester.path / "goldens")
    for options in [(), ("--update-goldens",)]:
        result = pytester.runpytest("test_a.py", *options)
        result.assert_outcomes(failed=1)
        result.stdout.fnmatch_lines([f"*golden refused: *CartPole-v1/{variant}: a symlink*"])
    assert files_of(pytester.path / "goldens") == before


def test_prune_follows_no_symlink_at_any_depth(
    pytester: pytest.Pytester, tmp_path_factory: pytest.TempPathFactory
) -> None:
    # goldens/tests/unit is a link out; tests/unit/test_plain.py records
    # nothing, so its goldens folder, through the link, looks all stale.
    victim = tmp_path_factory.mktemp("victim")
    precious = victim / "test_plain" / "precious" / "trajectory.jsonl"
    precious.parent.mkdir(parents=True)
    precious.write_bytes(b'{"event":"header","format":"gym-goldens","version":"2.1"}\n')
    pytester.makepyfile(**{"tests/unit/test_plain": "def test_plain():\n    pass\n"})
    (pytester.path / "goldens" / "tests").mkdir(parents=True)
    (pytester.path / "goldens" / "tests" / "unit").symlink_to(victim, target_is_directory=True)

    strict = pytester.runpytest("--goldens-strict")
    strict.assert_outcomes(passed=1)
    strict.stdout.no_fnmatch_line("*stale: *precious*")
    strict.stdout.fnmatch_lines(["*goldens/tests/unit: a symlink (to *), which gym-goldens does*"])
    assert strict.stdout.str().count("goldens/tests/unit: a symlink") == 1

    pruned = pytester.runpytest("--update-goldens", "--prune-goldens")
    pruned.assert_outcomes(passed=1)
    pruned.stdout.fnmatch_lines(["*goldens/tests/unit: a symlink (to *), which gym-goldens does*"])
    assert precious.is_file(), "a prune deleted a file outside the goldens dir"


def test_replay_refuses_a_symlinked_golden_in_one_line(
    pytester: pytest.Pytester, tmp_path_factory: pytest.TempPathFactory
) -> None:
    pytester.makepyfile(test_a=project_file(0, replay=True))
    pytester.runpytest("--update-goldens").assert_outcomes(passed=1)
    outside = tmp_path_factory.mktemp("outside") / "CartPole-v1"
    shutil.copytree(pytester.path / GOLDEN_A, outside)
    link(pytester.path / GOLDEN_A, outside)

    result = pytester.runpytest()

    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["*goldens/test_a/test_x/CartPole-v1: a symlink (to *), which gym-goldens does not*"]
    )
    text = result.stdout.str()
    # The test's own line and the error, not the frames of the plugin.
    assert "gym_goldens/" not in text
    assert "Traceback" not in text

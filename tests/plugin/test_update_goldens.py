"""``--update-goldens``: create, then pass; rewrite nothing that did not change."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from gym_goldens.format.header import FORMAT_VERSION
from gym_goldens.format.reader import read_recording

GOLDEN = Path("goldens/test_cp/test_cartpole/CartPole-v1")


def test_update_creates_goldens_then_plain_run_passes(
    pytester: pytest.Pytester, cartpole_test: Callable[..., Path]
) -> None:
    cartpole_test()
    result = pytester.runpytest("--update-goldens")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        [
            "*- gym-goldens -*",
            "goldens: 1 created",
            f"  created: {GOLDEN}",
        ]
    )
    assert [p.name for p in (pytester.path / GOLDEN).iterdir()] == ["trajectory.jsonl"]
    assert len(read_recording(pytester.path / GOLDEN)) > 1  # 300 random steps end several

    result = pytester.runpytest()
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["goldens: 1 matched"])
    result.stdout.no_fnmatch_line("*created*")


def test_second_update_rewrites_nothing(
    pytester: pytest.Pytester,
    cartpole_test: Callable[..., Path],
    files_under: Callable[[Path], dict[Path, tuple[bytes, int]]],
) -> None:
    cartpole_test()
    pytester.runpytest("--update-goldens").assert_outcomes(passed=1)
    goldens = pytester.path / "goldens"
    # Put the mtimes in the past, so that a rewrite could not keep them by chance.
    past = 1_000_000_000_000_000_000
    for path in goldens.rglob("*"):
        os.utime(path, ns=(past, past))
    before = files_under(goldens)

    result = pytester.runpytest("--update-goldens")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["goldens: 1 kept"])
    result.stdout.no_fnmatch_line("*created:*")
    result.stdout.no_fnmatch_line("*updated:*")
    assert files_under(goldens) == before
    assert all(mtime == past for _, mtime in before.values())


def test_update_replaces_a_changed_golden(
    pytester: pytest.Pytester, cartpole_test: Callable[..., Path]
) -> None:
    cartpole_test()
    pytester.runpytest("--update-goldens").assert_outcomes(passed=1)
    cartpole_test(gravity=9.81)
    pytester.runpytest().assert_outcomes(failed=1)
    result = pytester.runpytest("--update-goldens")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["goldens: 1 updated", f"  updated: {GOLDEN}"])
    pytester.runpytest().assert_outcomes(passed=1)


def _as_format_2_0(golden: Path) -> bytes:
    """Make a golden folder say it was recorded by format 2.0; its bytes before."""
    trajectory = golden / "trajectory.jsonl"
    content = trajectory.read_bytes()
    current = f'"version":"{FORMAT_VERSION}"'.encode()
    trajectory.write_bytes(content.replace(current, b'"version":"2.0"'))
    return content


def _as_format_1(golden: Path) -> bytes:
    """Make a golden folder hold one file per episode, as format 1 kept them; its bytes before."""
    trajectory = golden / "trajectory.jsonl"
    content = trajectory.read_bytes()
    current = f'"version":"{FORMAT_VERSION}"'.encode()
    episodes = content.replace(current, b'"version":"1.1"').split(b'{"action_space"')
    for index, episode in enumerate(part for part in episodes if part):
        (golden / f"episode_{index:05d}.jsonl").write_bytes(b'{"action_space"' + episode)
    trajectory.unlink()
    return content


@pytest.mark.parametrize(
    ("older", "version"), [(_as_format_2_0, "2.0"), (_as_format_1, "1.0")], ids=["2.0", "1"]
)
@pytest.mark.parametrize("update", ["--update-goldens", "--update-goldens-all"])
def test_a_golden_of_a_pre_release_format_is_refused_until_an_update_rewrites_it(
    pytester: pytest.Pytester,
    cartpole_test: Callable[..., Path],
    older: Callable[[Path], bytes],
    version: str,
    update: str,
) -> None:
    cartpole_test()
    pytester.runpytest("--update-goldens").assert_outcomes(passed=1)
    golden = pytester.path / GOLDEN
    content = older(golden)

    check = pytester.runpytest()
    check.assert_outcomes(failed=1)
    check.stdout.fnmatch_lines(
        [
            f"*recorded by a pre-release format ({version}): "
            "rewrite it with pytest --update-goldens-all*"
        ]
    )
    result = pytester.runpytest(update)
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["goldens: 1 updated", f"  updated: {GOLDEN}"])
    assert [p.name for p in golden.iterdir()] == ["trajectory.jsonl"]
    assert (golden / "trajectory.jsonl").read_bytes() == content
    pytester.runpytest().assert_outcomes(passed=1)


def test_a_test_failing_on_its_own_writes_no_golden(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import gymnasium as gym

        def test_broken(record_trajectory):
            env = record_trajectory(gym.make("FrozenLake-v1"))
            env.reset(seed=0)
            env.step(1)
            assert 1 == 2, "the test's own failure"
        """
    )
    result = pytester.runpytest("--update-goldens")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*the test's own failure*"])
    assert not (pytester.path / "goldens").exists()
    result.stdout.no_fnmatch_line("*- gym-goldens -*")


def test_nothing_is_printed_when_no_golden_was_touched(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_plain():\n    assert True\n")
    for args in ([], ["--update-goldens"]):
        result = pytester.runpytest(*args)
        result.assert_outcomes(passed=1)
        result.stdout.no_fnmatch_line("*- gym-goldens -*")
        result.stdout.no_fnmatch_line("*goldens:*")
    assert not (pytester.path / "goldens").exists()


SCALED = Path("goldens/test_scaled/test_scaled/CartPole-v1")


def _age(folder: Path) -> int:
    """Put the mtimes of the recording files under ``folder`` in the past; that time."""
    past = 1_000_000_000_000_000_000
    for path in folder.rglob("*"):
        os.utime(path, ns=(past, past))
    return past


@pytest.mark.parametrize(
    ("factor", "marker"),
    [
        pytest.param(1 + 1e-9, "", id="noise within the default tolerance"),
        pytest.param(1 + 1e-4, '@pytest.mark.goldens(rtol={"obs": 1e-3})', id="the test's rtol"),
        pytest.param(2.0, '@pytest.mark.goldens(ignore=["obs"])', id="an ignored field"),
    ],
)
def test_a_golden_that_still_matches_within_the_tests_tolerance_is_left_alone(
    pytester: pytest.Pytester,
    scaled_test: Callable[..., Path],
    files_under: Callable[[Path], dict[Path, tuple[bytes, int]]],
    factor: float,
    marker: str,
) -> None:
    scaled_test(1.0, marker=marker)
    pytester.runpytest("--update-goldens").assert_outcomes(passed=1)
    past = _age(pytester.path / "goldens")
    before = files_under(pytester.path / "goldens")

    scaled_test(factor, marker=marker)
    result = pytester.runpytest("--update-goldens")

    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["goldens: 1 kept", f"  kept: {SCALED}", "  kept: they still*"])
    assert files_under(pytester.path / "goldens") == before
    assert all(mtime == past for _, mtime in before.values())
    # Rewritten only when asked for: everything whose bytes are not the recording's.
    rewritten = pytester.runpytest("--update-goldens-all")
    rewritten.stdout.fnmatch_lines(["goldens: 1 updated", f"  updated: {SCALED}"])
    assert files_under(pytester.path / "goldens") != before


def test_a_golden_beyond_the_tolerance_is_rewritten(
    pytester: pytest.Pytester, scaled_test: Callable[..., Path]
) -> None:
    scaled_test(1.0)
    pytester.runpytest("--update-goldens").assert_outcomes(passed=1)
    scaled_test(1 + 1e-4)
    result = pytester.runpytest("--update-goldens")
    result.stdout.fnmatch_lines(["goldens: 1 updated", f"  updated: {SCALED}"])


@pytest.mark.parametrize(
    "storage",
    [", max_array_size=2", ", full_every=5", ", compress=True"],
    ids=["max_array_size", "full_every", "compression"],
)
def test_other_storage_settings_always_rewrite(
    pytester: pytest.Pytester, scaled_test: Callable[..., Path], storage: str
) -> None:
    scaled_test(1.0)
    pytester.runpytest("--update-goldens").assert_outcomes(passed=1)
    scaled_test(1.0, kwargs=storage)
    result = pytester.runpytest("--update-goldens")
    result.stdout.fnmatch_lines(["goldens: 1 updated", f"  updated: {SCALED}"])
    pytester.runpytest().assert_outcomes(passed=1)

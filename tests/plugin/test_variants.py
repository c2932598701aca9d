"""@pytest.mark.goldens(variant_by=[...]): one golden per platform or version."""

from __future__ import annotations

import importlib.metadata
import platform
import shutil

import pytest

MACHINE = f"machine={platform.machine()}"

TEST = """
import os

import gymnasium as gym
import pytest
from gym_goldens import rollout


{marker}
def test_pendulum(record_trajectory):
    env = record_trajectory(gym.make("Pendulum-v1", g=float(os.environ.get("GRAVITY", "10.0"))))
    rollout(env, seed=0, steps=30)
"""

PLAIN = "goldens/test_pendulum/test_pendulum/Pendulum-v1"


def _write(pytester: pytest.Pytester, marker: str) -> None:
    pytester.makepyfile(test_pendulum=TEST.format(marker=marker))


def test_the_plain_golden_is_the_fallback(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write(pytester, "")
    pytester.runpytest("--update-goldens").assert_outcomes(passed=1)
    _write(pytester, '@pytest.mark.goldens(variant_by=["machine"])')
    pytester.runpytest().assert_outcomes(passed=1)
    # An update that matches the plain golden writes no variant.
    updated = pytester.runpytest("--update-goldens")
    updated.stdout.fnmatch_lines(["goldens: 1 unchanged"])
    assert not (pytester.path / PLAIN / MACHINE).exists()

    monkeypatch.setenv("GRAVITY", "9.81")
    result = pytester.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            f"golden mismatch: {PLAIN}/trajectory.jsonl*",
            "  mode: recorded (the test's own actions)",
            f"  golden variant: {MACHINE} has no golden of its own, so the plain golden was used "
            "(create the variant with --update-goldens)",
        ]
    )


def test_a_variant_golden_is_written_and_used(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write(pytester, "")
    pytester.runpytest("--update-goldens").assert_outcomes(passed=1)
    _write(pytester, '@pytest.mark.goldens(variant_by=["machine", "numpy"])')
    monkeypatch.setenv("GRAVITY", "9.81")
    updated = pytester.runpytest("--update-goldens")
    updated.assert_outcomes(passed=1)
    variant = f"{MACHINE},numpy={importlib.metadata.version('numpy')}"
    updated.stdout.fnmatch_lines(["goldens: 1 created", f"  created: {PLAIN}/{variant}"])
    assert (pytester.path / PLAIN / variant / "trajectory.jsonl").is_file()
    assert (pytester.path / PLAIN / "trajectory.jsonl").is_file()  # the plain golden stays
    pytester.runpytest().assert_outcomes(passed=1)

    monkeypatch.setenv("GRAVITY", "10.0")  # back to what the plain golden holds
    result = pytester.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            f"golden mismatch: {PLAIN}/{variant}/trajectory.jsonl*",
            f"  golden variant: {variant} ({PLAIN}/{variant})",
        ]
    )


def test_a_new_test_with_variants_records_its_variant(pytester: pytest.Pytester) -> None:
    _write(pytester, '@pytest.mark.goldens(variant_by="machine")')
    missing = pytester.runpytest()
    missing.stdout.fnmatch_lines([f"golden missing: {PLAIN}/{MACHINE}"])
    pytester.runpytest("--update-goldens").assert_outcomes(passed=1)
    assert (pytester.path / PLAIN / MACHINE / "trajectory.jsonl").is_file()
    assert not (pytester.path / PLAIN / "trajectory.jsonl").exists()
    pytester.runpytest().assert_outcomes(passed=1)


@pytest.mark.parametrize(
    ("marker", "message"),
    [
        (
            '@pytest.mark.goldens(variant_by=["mujuco"])',
            "*variant_by=...) names 'mujuco', which is neither a platform fact (*machine*) "
            "nor an installed distribution; check the spelling",
        ),
        (
            "@pytest.mark.goldens(variant_by=[1])",
            "*variant_by=...) takes a list of fact names, "
            '*such as [[]"mujoco", "machine"[]], got [[]1[]]',
        ),
    ],
)
def test_bad_variant_names_fail_at_setup(
    pytester: pytest.Pytester, marker: str, message: str
) -> None:
    _write(pytester, marker)
    result = pytester.runpytest()
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines([message])


def test_other_machines_variants_are_never_stale_nor_pruned(pytester: pytest.Pytester) -> None:
    _write(pytester, '@pytest.mark.goldens(variant_by=["machine"])')
    pytester.runpytest("--update-goldens").assert_outcomes(passed=1)
    golden = pytester.path / PLAIN
    mine = golden / MACHINE
    # The goldens of the other runners of an OS matrix, committed beside this one's.
    others = [golden / "machine=other-arch", golden]
    shutil.copytree(mine, others[0])
    shutil.copy(mine / "trajectory.jsonl", golden / "trajectory.jsonl")

    strict = pytester.runpytest("--goldens-strict")
    strict.assert_outcomes(passed=1)
    assert strict.ret == 0
    strict.stdout.no_fnmatch_line("stale goldens*")

    pruned = pytester.runpytest("--update-goldens", "--prune-goldens")
    pruned.assert_outcomes(passed=1)
    pruned.stdout.no_fnmatch_line("pruned goldens*")
    for folder in [mine, *others]:
        assert (folder / "trajectory.jsonl").is_file(), folder


def test_variants_of_a_removed_test_are_stale(pytester: pytest.Pytester) -> None:
    _write(pytester, '@pytest.mark.goldens(variant_by=["machine"])')
    pytester.runpytest("--update-goldens").assert_outcomes(passed=1)
    other = pytester.path / PLAIN / "machine=other-arch"
    shutil.copytree(pytester.path / PLAIN / MACHINE, other)
    pytester.makepyfile(test_pendulum="def test_other():\n    pass\n")  # the golden test is gone
    result = pytester.runpytest("--goldens-strict")
    result.stdout.fnmatch_lines(
        [
            "stale goldens: 2 *",
            f"  stale: {PLAIN}/machine=other-arch",
            f"  stale: {PLAIN}/{MACHINE}",
        ]
    )

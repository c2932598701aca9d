"""@pytest.mark.goldens(variant_by=[...]): one golden per platform or version."""

from __future__ import annotations

import importlib.metadata
import platform
import shutil
from pathlib import Path

import pytest

from gym_goldens.plugin.variants import (
    check_variant_by,
    choose_golden,
    variant_facts,
    variant_label,
)

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


def _as_recorded_elsewhere(golden: Path, machine: str = "other-arch") -> None:
    """Make a golden's headers say it was recorded on another machine."""
    path = golden / "trajectory.jsonl"
    here = f'"machine":"{platform.machine()}"'.encode()
    path.write_bytes(path.read_bytes().replace(here, f'"machine":"{machine}"'.encode()))


def test_the_first_update_writes_the_plain_golden_which_serves_every_machine(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write(pytester, '@pytest.mark.goldens(variant_by=["machine"])')
    missing = pytester.runpytest()
    missing.stdout.fnmatch_lines([f"golden missing: {PLAIN}"])
    created = pytester.runpytest("--update-goldens")
    created.stdout.fnmatch_lines(["goldens: 1 created", f"  created: {PLAIN}"])
    assert (pytester.path / PLAIN / "trajectory.jsonl").is_file()
    assert not (pytester.path / PLAIN / MACHINE).exists()
    pytester.runpytest().assert_outcomes(passed=1)

    monkeypatch.setenv("GRAVITY", "9.81")
    result = pytester.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            f"golden mismatch: {PLAIN}/trajectory.jsonl*",
            "  mode: recorded (the test's own actions)",
            f"  golden variant: {MACHINE} has no golden of its own, so the plain golden serves "
            "(variants: none)",
        ]
    )


def test_a_variant_golden_is_written_where_this_machine_differs_from_another_machines(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write(pytester, '@pytest.mark.goldens(variant_by=["machine"])')
    pytester.runpytest("--update-goldens").assert_outcomes(passed=1)
    plain = pytester.path / PLAIN
    _as_recorded_elsewhere(plain)
    before = (plain / "trajectory.jsonl").read_bytes()
    # Within tolerance the other machine's golden serves this one: nothing written.
    kept = pytester.runpytest("--update-goldens")
    kept.stdout.fnmatch_lines(["goldens: 1 kept"])
    assert not (plain / MACHINE).exists()

    monkeypatch.setenv("GRAVITY", "9.81")
    updated = pytester.runpytest("--update-goldens")
    updated.assert_outcomes(passed=1)
    updated.stdout.fnmatch_lines(["goldens: 1 created", f"  created: {PLAIN}/{MACHINE}"])
    assert (plain / MACHINE / "trajectory.jsonl").is_file()
    assert (plain / "trajectory.jsonl").read_bytes() == before  # the other machine's stays
    pytester.runpytest().assert_outcomes(passed=1)

    monkeypatch.setenv("GRAVITY", "10.0")  # back to what the plain golden holds
    result = pytester.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            f"golden mismatch: {PLAIN}/{MACHINE}/trajectory.jsonl*",
            f"  golden variant: {MACHINE} ({PLAIN}/{MACHINE}; variants: {MACHINE})",
        ]
    )


def test_this_machines_own_plain_golden_is_updated_in_place(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    _write(pytester, '@pytest.mark.goldens(variant_by=["machine", "numpy"])')
    pytester.runpytest("--update-goldens").assert_outcomes(passed=1)
    monkeypatch.setenv("GRAVITY", "9.81")  # the env itself changed, here where it was recorded
    updated = pytester.runpytest("--update-goldens")
    updated.stdout.fnmatch_lines(["goldens: 1 updated", f"  updated: {PLAIN}"])
    assert [p.name for p in (pytester.path / PLAIN).iterdir()] == ["trajectory.jsonl"]
    pytester.runpytest().assert_outcomes(passed=1)


def test_the_plain_golden_serves_a_machine_whose_variant_was_renamed_away(
    pytester: pytest.Pytester,
) -> None:
    _write(pytester, '@pytest.mark.goldens(variant_by=["numpy"])')
    pytester.runpytest("--update-goldens").assert_outcomes(passed=1)
    plain = pytester.path / PLAIN
    mine = plain / f"numpy={importlib.metadata.version('numpy')}"
    shutil.copytree(plain, mine)
    pytester.runpytest().assert_outcomes(passed=1)
    # The variant of another numpy version: this one has none, and the plain golden serves.
    mine.rename(plain / "numpy=1.0.0")
    pytester.runpytest().assert_outcomes(passed=1)


def test_a_missing_golden_lists_the_variants_there_are(pytester: pytest.Pytester) -> None:
    _write(pytester, '@pytest.mark.goldens(variant_by=["machine"])')
    pytester.runpytest("--update-goldens").assert_outcomes(passed=1)
    plain = pytester.path / PLAIN
    (plain / "machine=other-arch").mkdir()
    (plain / "trajectory.jsonl").rename(plain / "machine=other-arch" / "trajectory.jsonl")
    result = pytester.runpytest()
    result.stdout.fnmatch_lines(
        [
            f"golden missing: {PLAIN}",
            f"  golden variant: {MACHINE} has no golden of its own, so the plain golden serves "
            "(variants: machine=other-arch)",
        ]
    )


def test_the_variants_listed_are_escaped_and_bounded(pytester: pytest.Pytester) -> None:
    # A pull request may add any number of variant folders, of any name.
    _write(pytester, '@pytest.mark.goldens(variant_by=["machine"])')
    pytester.runpytest("--update-goldens").assert_outcomes(passed=1)
    plain = pytester.path / PLAIN
    (plain / "trajectory.jsonl").unlink()
    for name in [*(f"machine=a{index:02d}" for index in range(40)), "machine=\nFORGED"]:
        (plain / name).mkdir()
        (plain / name / "trajectory.jsonl").write_text("{}\n")
    result = pytester.runpytest()
    result.stdout.fnmatch_lines(
        [
            f"  golden variant: {MACHINE} has no golden of its own, so the plain golden serves "
            "(variants: machine=\\nFORGED, machine=a00, *, machine=a10 and 29 more)",
        ]
    )
    assert not [line for line in result.outlines if line.startswith("FORGED")]


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
    shutil.copytree(golden, mine)
    shutil.copytree(golden, others[0], ignore=shutil.ignore_patterns("machine=*"))

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
    shutil.copytree(pytester.path / PLAIN, other)
    pytester.makepyfile(test_pendulum="def test_other():\n    pass\n")  # the golden test is gone
    result = pytester.runpytest("--goldens-strict")
    result.stdout.fnmatch_lines(
        ["stale goldens: 2 *", f"  stale: {PLAIN}", f"  stale: {PLAIN}/machine=other-arch"]
    )


def test_facts_come_from_the_platform_and_installed_distributions() -> None:
    facts = variant_facts(["machine", "system", "python", "gymnasium", "orjson"])
    assert facts == {
        "machine": platform.machine(),
        "system": platform.system(),
        "python": platform.python_version(),
        "gymnasium": importlib.metadata.version("gymnasium"),
        "orjson": importlib.metadata.version("orjson"),
    }
    assert variant_label(facts).startswith(f"machine={platform.machine()},system=")


def test_an_unknown_fact_is_refused() -> None:
    with pytest.raises(
        ValueError, match="names 'no-such-package-xyz', which is neither a platform fact"
    ):
        variant_facts(["no-such-package-xyz"])


@pytest.mark.parametrize(
    ("value", "names"), [("machine", ("machine",)), (["a", "b", "a"], ("a", "b"))]
)
def test_variant_by_takes_a_name_or_a_list(value: object, names: tuple[str, ...]) -> None:
    assert check_variant_by(value) == names


@pytest.mark.parametrize("value", [3, [""], ["machine", 2], None])
def test_variant_by_refuses_other_values(value: object) -> None:
    with pytest.raises(TypeError, match="takes a list of fact names"):
        check_variant_by(value)


def test_the_variant_wins_over_the_plain_golden_which_serves_without_one(
    tmp_path: Path,
) -> None:
    plain = tmp_path / "Pendulum-v1"
    variant = plain / f"machine={platform.machine()}"
    choice = choose_golden(tmp_path, plain, ["machine"])
    assert (choice.path, choice.fallback) == (plain, True)  # nothing yet: the plain is made

    plain.mkdir()
    (plain / "trajectory.jsonl").write_text("{}\n")
    choice = choose_golden(tmp_path, plain, ["machine"])
    assert (choice.path, choice.variant_path, choice.fallback) == (plain, variant, True)
    assert "has no golden of its own, so the plain golden serves (variants: none)" in (
        choice.describe()
    )

    variant.mkdir()
    (variant / "trajectory.jsonl").write_text("{}\n")
    choice = choose_golden(tmp_path, plain, ["machine"])
    assert (choice.path, choice.fallback) == (variant, False)
    assert choice.describe() == (
        f"golden variant: {variant.name} ({variant}; variants: {variant.name})"
    )


@pytest.mark.parametrize(
    "files",
    [
        pytest.param(["episode_00000.jsonl", "episode_00001.jsonl"], id="format 1"),
        pytest.param(["env_0/trajectory.jsonl", "env_1/trajectory.jsonl"], id="vector"),
        pytest.param(["trajectory.jsonl", "episode_00000.jsonl"], id="damaged"),
    ],
)
def test_any_golden_of_the_variant_wins(tmp_path: Path, files: list[str]) -> None:
    # A damaged variant golden is still chosen: the check then says what is wrong with it.
    plain = tmp_path / "CartPole-v1"
    plain.mkdir()
    (plain / "trajectory.jsonl").write_text("{}\n")
    variant = plain / f"machine={platform.machine()}"
    for name in files:
        (variant / name).parent.mkdir(parents=True, exist_ok=True)
        (variant / name).write_text("{}\n")
    choice = choose_golden(tmp_path, plain, ["machine"])
    assert (choice.path, choice.fallback) == (variant, False)


def test_awkward_values_make_safe_folder_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from gym_goldens.plugin import variants

    monkeypatch.setattr(variants, "platform_facts", lambda: {"machine": "x86/64 v2"})
    choice = choose_golden(tmp_path, tmp_path / "env", ["machine"])
    assert choice.variant_path == tmp_path / "env" / "machine=x86%2F64%20v2"
    assert choice.label == "machine=x86/64 v2"

"""Signs of nondeterminism at a divergence: strings in another order, a Unix-time clock."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from gymnasium import spaces

from gym_goldens import RecordTrajectory, Tolerance, compare
from gym_goldens.comparison.evidence import Evidence, nondeterminism_evidence
from gym_goldens.present.report import format_evidence
from tests.support.envs import ScriptedEnv, run

NAMES = ["alpha", "bravo", "charlie", "delta"]
STEPS = 8


def _record(folder: Path, infos: list[dict[str, Any]]) -> Path:
    observations = [np.zeros(1, np.float32)] * len(infos)
    env = ScriptedEnv(spaces.Box(-1.0, 1.0, (1,), np.float32), observations, infos=infos)
    run(RecordTrajectory(env, folder), [0] * (len(infos) - 1))
    return folder


def _evidence(
    tmp_path: Path,
    golden: list[dict[str, Any]],
    actual: list[dict[str, Any]],
    tolerance: Tolerance | None = None,
) -> Any:
    comparison = compare(
        _record(tmp_path / "golden", golden),
        _record(tmp_path / "actual", actual),
        tolerance or Tolerance(),
    )
    assert not comparison.equal
    return nondeterminism_evidence(comparison)


def _walk(order: list[str]) -> list[dict[str, Any]]:
    """Infos that visit the names in ``order``, one a step, round and round."""
    return [{}] + [{"visiting": order[t % len(order)]} for t in range(1, STEPS + 1)]


def test_the_same_strings_in_another_order_are_an_iteration_order(tmp_path: Path) -> None:
    shuffled = ["charlie", "alpha", "delta", "bravo"]
    found = _evidence(tmp_path, _walk(NAMES), _walk(shuffled))
    assert found == (Evidence("order", ("info", "visiting")),)
    assert format_evidence(found, golden="run 1") == [
        "hint: info.visiting holds run 1's values in another order: an iteration order? "
        "Iterating over a set of strings follows PYTHONHASHSEED, which differs between "
        "processes: iterate over sorted(...) instead"
    ]


def test_a_list_of_the_same_strings_in_another_order_is_an_iteration_order(
    tmp_path: Path,
) -> None:
    golden = [{"names": NAMES}] * (STEPS + 1)
    actual = [{"names": NAMES[::-1]}] * (STEPS + 1)
    assert _evidence(tmp_path, golden, actual) == (Evidence("order", ("info", "names")),)


def test_other_strings_are_a_change_not_an_order(tmp_path: Path) -> None:
    other = ["alpha", "bravo", "charlie", "echo"]
    assert _evidence(tmp_path, _walk(NAMES), _walk(other)) == ()
    assert _evidence(tmp_path, [{"names": NAMES}] * 3, [{"names": other}] * 3) == ()


def test_a_unix_time_is_a_clock(tmp_path: Path) -> None:
    # Half a second apart: within the default tolerance, so compared exactly.
    golden = [{"stamp": 1.75e9 + t} for t in range(STEPS)]
    actual = [{"stamp": 1.75e9 + t + 0.25} for t in range(STEPS)]
    found = _evidence(tmp_path, golden, actual, Tolerance(rtol=0.0, atol=0.0))
    assert found == (Evidence("clock", ("info", "stamp"), 1.75e9 + 0.25),)
    (line,) = format_evidence(found)
    assert line == (
        "hint: info.stamp holds values like a Unix time (1750000000 s, 2025-06-15 15:06 UTC): "
        'a clock? leave it out of the comparison with @pytest.mark.goldens(ignore=["info.stamp"])'
    )
    # Named like a clock, it is hinted at by the nondeterminism report already.
    named = (Evidence("clock", ("info", "time"), 1.75e9),)
    assert format_evidence(named, named_clocks=False) == []


def test_small_numbers_are_no_clock(tmp_path: Path) -> None:
    golden = [{"x": 0.5 + t} for t in range(STEPS)]
    actual = [{"x": 0.75 + t} for t in range(STEPS)]
    assert _evidence(tmp_path, golden, actual) == ()

"""Header fields of the wrong type in a golden: a clean failure naming the field, no traceback.

The recorder writes ``versions`` and ``platform`` as objects of strings,
``storage`` and ``reset`` as objects; a golden from a pull request may hold
anything there. Reading it refuses such a header (``format/header.py``), so a
test, an update and a variant update each fail with the file, the line and
the field, never an internal traceback of the report that would have shown it.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import gymnasium as gym
import orjson
import pytest

from gym_goldens import RecordTrajectory, rollout
from tests.plugin.test_variants import PLAIN, TEST

RECORDING = Path(PLAIN) / "trajectory.jsonl"
CASES = [
    ("versions", [1, 2], "an object of strings, found an array"),
    ("platform", "x", "an object of strings, found a string"),
    ("storage", [1], "an object, found an array"),
    ("reset", [1], "an object, found an array"),
]


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The golden of the project's test, recorded as the test records it."""
    folder = tmp_path_factory.mktemp("recorded") / "Pendulum-v1"
    env = RecordTrajectory(gym.make("Pendulum-v1", g=10.0), folder)
    rollout(env, seed=0, steps=30)
    env.close()
    return folder


def plant(project: Path, recorded: Path, name: str, value: object) -> Path:
    """The golden in place with ``value`` as the header field ``name``, and a step changed."""
    golden = Path(shutil.copytree(recorded, project / PLAIN))
    path = golden / "trajectory.jsonl"
    header, reset, step, *rest = path.read_bytes().split(b"\n")
    fields = orjson.loads(header)
    fields[name] = value
    step = step.replace(b'"t":1,', b'"t":1,"x":1,')  # a mismatch, whose report shows the header
    path.write_bytes(b"\n".join([orjson.dumps(fields), reset, step, *rest]))
    return path


@pytest.mark.parametrize(("name", "value", "kind"), CASES)
def test_a_golden_header_field_of_the_wrong_type_fails_the_test_cleanly(
    pytester: pytest.Pytester, recorded: Path, name: str, value: object, kind: str
) -> None:
    pytester.makepyfile(test_pendulum=TEST.format(marker=""))
    plant(pytester.path, recorded, name, value)

    result = pytester.runpytest()

    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [f'*golden unreadable: {RECORDING}:1: expected "{name}" to be {kind}*record it again*']
    )
    result.stdout.no_fnmatch_line("*gym_goldens/*.py:*")  # no frame of ours


@pytest.mark.parametrize(("name", "value", "kind"), CASES)
def test_a_variant_update_over_such_a_golden_is_refused_cleanly(
    pytester: pytest.Pytester, recorded: Path, name: str, value: object, kind: str
) -> None:
    pytester.makepyfile(
        test_pendulum=TEST.format(marker='@pytest.mark.goldens(variant_by=["machine"])')
    )
    path = plant(pytester.path, recorded, name, value)
    before = path.read_bytes()

    result = pytester.runpytest("--update-goldens")

    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [f'*golden not updated: {RECORDING}:1: expected "{name}" to be {kind}*']
    )
    result.stdout.no_fnmatch_line("*gym_goldens/*.py:*")
    assert path.read_bytes() == before

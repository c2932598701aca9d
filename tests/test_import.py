"""Guards of the public surface and of the plugin's import cost."""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys

import pytest

import gym_goldens

# The public API, all of it: a name added to gym_goldens.__all__ (or taken out)
# is a decision, made here too. The subpackages are internal.
PUBLIC = [
    "ArraySummary",
    "Comparison",
    "Difference",
    "Divergence",
    "Episode",
    "EpisodeComparison",
    "GoldenFormatError",
    "GoldensError",
    "GoldensWarning",
    "NondeterminismError",
    "RecordTrajectory",
    "RecordVectorTrajectory",
    "Recording",
    "ReplayActions",
    "RolloutResult",
    "Tolerance",
    "UnsupportedFormatVersionError",
    "assert_deterministic",
    "compare",
    "pettingzoo_envs",
    "read_recording",
    "registered_envs",
    "rollout",
]


def test_public_surface_is_sorted_and_complete() -> None:
    assert gym_goldens.__all__ == sorted(gym_goldens.__all__)
    assert gym_goldens.__all__ == PUBLIC
    for name in gym_goldens.__all__:
        assert getattr(gym_goldens, name) is not None
        assert name in dir(gym_goldens)


def test_public_names_come_from_their_modules() -> None:
    from gym_goldens.comparison.engine import compare
    from gym_goldens.record.single import RecordTrajectory

    assert gym_goldens.compare is compare
    assert gym_goldens.RecordTrajectory is RecordTrajectory


def test_errors_derive_from_the_package_base_and_a_builtin() -> None:
    assert issubclass(gym_goldens.GoldenFormatError, gym_goldens.GoldensError)
    assert issubclass(gym_goldens.GoldenFormatError, ValueError)
    assert issubclass(gym_goldens.UnsupportedFormatVersionError, gym_goldens.GoldenFormatError)
    assert issubclass(gym_goldens.GoldensWarning, UserWarning)


def test_a_refused_path_is_no_format_error() -> None:
    # A symlink in the goldens is refused, not unreadable: a handler of one is
    # never a handler of the other by accident, whatever order they come in.
    from gym_goldens.errors import UnsafeGoldenPathError

    assert issubclass(UnsafeGoldenPathError, gym_goldens.GoldensError)
    assert issubclass(UnsafeGoldenPathError, ValueError)
    assert not issubclass(UnsafeGoldenPathError, gym_goldens.GoldenFormatError)
    error = UnsafeGoldenPathError("goldens/t/x", "a symlink (to /etc), which is not followed")
    assert (error.path, error.reason) == (
        "goldens/t/x",
        "a symlink (to /etc), which is not followed",
    )
    assert str(error) == "goldens/t/x: a symlink (to /etc), which is not followed"


def test_unknown_attribute_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        gym_goldens.nope  # noqa: B018


def test_version_is_the_distribution_version() -> None:
    assert gym_goldens.__version__ == importlib.metadata.version("pytest-gym-goldens")


def test_plugin_entry_point_is_registered() -> None:
    points = importlib.metadata.entry_points(group="pytest11")
    (point,) = [p for p in points if p.name == "gym_goldens"]
    assert point.value == "gym_goldens.pytest_plugin"


@pytest.mark.parametrize("module", ["gym_goldens", "gym_goldens.pytest_plugin"])
def test_importing_the_plugin_loads_nothing_heavy(module: str) -> None:
    script = (
        f"import sys, {module}\n"
        "heavy = ('gymnasium', 'numpy', 'deepdiff', 'orjson', 'matplotlib')\n"
        "heavy = [m for m in heavy if m in sys.modules]\n"
        "print(','.join(heavy))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == ""

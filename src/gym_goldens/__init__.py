"""pytest-gym-goldens: golden-trajectory regression tests for Gymnasium envs.

The public API loads lazily, so that the pytest plugin costs nothing at
start-up for suites that do not use it.
"""

from __future__ import annotations

import importlib
import importlib.metadata
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gym_goldens.codec import ArraySummary
    from gym_goldens.determinism import NondeterminismError, assert_deterministic
    from gym_goldens.diff import Comparison, Difference, Divergence, EpisodeComparison, compare
    from gym_goldens.errors import (
        GoldenFormatError,
        GoldensError,
        GoldensWarning,
        UnsupportedFormatVersionError,
    )
    from gym_goldens.reader import Episode, Recording, read_recording
    from gym_goldens.recorder import RecordTrajectory
    from gym_goldens.replay import ReplayActions
    from gym_goldens.rollouts import RolloutResult, rollout
    from gym_goldens.tolerance import Tolerance
    from gym_goldens.vector import RecordVectorTrajectory

__all__ = [
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
    "read_recording",
    "rollout",
]

_LOCATIONS = {
    "ArraySummary": "codec",
    "Comparison": "diff",
    "Difference": "diff",
    "Divergence": "diff",
    "Episode": "reader",
    "EpisodeComparison": "diff",
    "GoldenFormatError": "errors",
    "GoldensError": "errors",
    "GoldensWarning": "errors",
    "NondeterminismError": "determinism",
    "RecordTrajectory": "recorder",
    "RecordVectorTrajectory": "vector",
    "Recording": "reader",
    "ReplayActions": "replay",
    "RolloutResult": "rollouts",
    "Tolerance": "tolerance",
    "UnsupportedFormatVersionError": "errors",
    "assert_deterministic": "determinism",
    "compare": "diff",
    "read_recording": "reader",
    "rollout": "rollouts",
}


def _version() -> str:
    # Looked up on first use: reading the package metadata costs milliseconds
    # at every pytest start-up otherwise.
    try:
        return importlib.metadata.version("pytest-gym-goldens")
    except importlib.metadata.PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "0+unknown"


def __getattr__(name: str) -> Any:
    if name == "__version__":
        version = globals()["__version__"] = _version()
        return version
    module = _LOCATIONS.get(name)
    if module is None:
        raise AttributeError(f"module 'gym_goldens' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"gym_goldens.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])

"""pytest-gym-goldens: golden-trajectory regression tests for Gymnasium envs.

The public API loads lazily, so that the pytest plugin costs nothing at
start-up for suites that do not use it.
"""

from __future__ import annotations

import importlib
import importlib.metadata
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gym_goldens.audit.determinism import NondeterminismError, assert_deterministic
    from gym_goldens.comparison.engine import compare
    from gym_goldens.comparison.result import Comparison, Difference, Divergence, EpisodeComparison
    from gym_goldens.comparison.tolerance import Tolerance
    from gym_goldens.errors import (
        GoldenFormatError,
        GoldensError,
        GoldensWarning,
        UnsupportedFormatVersionError,
    )
    from gym_goldens.format.codec import ArraySummary
    from gym_goldens.format.reader import Episode, Recording, read_recording
    from gym_goldens.record.replay import ReplayActions
    from gym_goldens.record.rollouts import RolloutResult, rollout
    from gym_goldens.record.single import RecordTrajectory
    from gym_goldens.record.vector import RecordVectorTrajectory

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
    "ArraySummary": "format.codec",
    "Comparison": "comparison.result",
    "Difference": "comparison.result",
    "Divergence": "comparison.result",
    "Episode": "format.reader",
    "EpisodeComparison": "comparison.result",
    "GoldenFormatError": "errors",
    "GoldensError": "errors",
    "GoldensWarning": "errors",
    "NondeterminismError": "audit.determinism",
    "RecordTrajectory": "record.single",
    "RecordVectorTrajectory": "record.vector",
    "Recording": "format.reader",
    "ReplayActions": "record.replay",
    "RolloutResult": "record.rollouts",
    "Tolerance": "comparison.tolerance",
    "UnsupportedFormatVersionError": "errors",
    "assert_deterministic": "audit.determinism",
    "compare": "comparison.engine",
    "read_recording": "format.reader",
    "rollout": "record.rollouts",
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

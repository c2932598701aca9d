"""Renamed tests and env ids: the stale golden a missing golden may have been.

A golden goes missing when what names it is renamed: a test function, or an
env id that a new version bumps (``CliffWalking-v0`` -> ``v1``, ``Taxi-v3`` ->
``v4``, as a parametrize id and a recording name). The old golden is still
there, under its old name, in the folder of the same test file. When a golden
is missing, the goldens of that folder that no test can own
(:func:`gym_goldens.plugin.stale.find_stale`) are looked at, and those that
hold the same trajectory (within the test's tolerance), record the same env,
or another version of it are named, with the ``git mv`` that keeps them.

A golden no test can own: one in the test's own folder under a name it did
not record, or one of a test the session did not collect. When the run
collected only part of the file (tests picked by node id, ``--lf``, ``-k``),
a test that was not collected may still exist: its golden is named only when
the test module has no such test (no function of the name, with any
parameters), so a golden of a test that was merely not selected never is.
"""

from __future__ import annotations

import dataclasses
import types
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any, Final
from urllib.parse import unquote

from gymnasium.envs.registration import parse_env_id

from gym_goldens.comparison.engine import compare
from gym_goldens.comparison.tolerance import Tolerance
from gym_goldens.errors import GoldenFormatError, UnsafeGoldenPathError
from gym_goldens.format.layout import golden_dir_for, golden_file_dir, golden_test_dir
from gym_goldens.format.limits import DEFAULT_MAX_DECOMPRESSED_SIZE
from gym_goldens.format.paths import resolve_golden, resolve_recording
from gym_goldens.plugin.stale import find_stale
from gym_goldens.present.report import RenamedGolden

__all__ = ["KnownTests", "renamed_goldens"]

_MAX_LOOKED_AT: Final = 20
_MAX_NAMED: Final = 3
_RANKS: Final = {"trajectory": 0, "env": 1, "version": 2}


@dataclasses.dataclass(frozen=True)
class KnownTests:
    """What a session knows of the tests of one test file.

    Attributes:
        collected: Gives the golden node ids of the tests collected (asked
            only when a golden is missing).
        complete: Whether every test of the file was collected.
        module: The test module, to look for a test that was not collected.
    """

    collected: Callable[[], Collection[str]]
    complete: bool
    module: types.ModuleType | None = None

    def exists(self, test_dir: Path, file_dir: Path) -> bool:
        """Whether the test module defines the test of a golden test folder (any parameters)."""
        if self.module is None:
            return True
        parts = [unquote(part) for part in test_dir.relative_to(file_dir).parts]
        if not parts or any("~" in part for part in parts):
            return True  # a name cut short: which test it was is not known
        parts[-1] = parts[-1].partition("[")[0]
        found: Any = self.module
        for part in parts:
            found = getattr(found, part, None)
            if found is None:
                return False
        return True


def renamed_goldens(
    goldens_dir: Path,
    nodeid: str,
    missing: Path,
    actual_dir: Path,
    tolerance: Tolerance,
    *,
    recorded: Collection[str],
    known: KnownTests,
    max_decompressed_size: int = DEFAULT_MAX_DECOMPRESSED_SIZE,
) -> list[RenamedGolden]:
    """The stale goldens of the test's file that ``missing`` may have been, best first.

    Args:
        goldens_dir: The goldens root.
        nodeid: The golden node id of the test.
        missing: The golden folder that does not exist.
        actual_dir: The recording that has no golden.
        tolerance: The test's tolerance of the recording.
        recorded: The names of the test's recordings.
        known: The tests of the session.
        max_decompressed_size: What a golden may expand to when read.
    """
    limit = max_decompressed_size
    try:
        actual = resolve_recording(actual_dir, max_decompressed_size=limit)
        actual_env = _env_of(actual.header)
    except (GoldenFormatError, UnsafeGoldenPathError):
        return []
    found: list[tuple[int, RenamedGolden]] = []
    for candidate in _candidates(goldens_dir, nodeid, recorded, known):
        try:
            golden = resolve_golden(goldens_dir, candidate, max_decompressed_size=limit)
            if compare(golden, actual, tolerance, max_decompressed_size=limit).equal:
                kind: str | None = "trajectory"
                env = None
            else:
                env = _env_of(golden.header)
                kind = _kinship(env, actual_env)
        except (GoldenFormatError, UnsafeGoldenPathError):
            continue  # a damaged golden is no one's older self
        if kind is not None:
            renamed = RenamedGolden(
                candidate,
                missing,
                kind,
                env,
                actual_env,
                make_parent=not missing.parent.is_dir(),
                remove_empty=missing.is_dir(),
            )
            found.append((_RANKS[kind], renamed))
    return [renamed for _, renamed in sorted(found, key=lambda pair: pair[0])][:_MAX_NAMED]


def _candidates(
    goldens_dir: Path, nodeid: str, recorded: Collection[str], known: KnownTests
) -> list[Path]:
    """The goldens of the test's file that no test can own, nested variants left out."""
    file_dir = golden_file_dir(goldens_dir, nodeid)
    own_dir = golden_test_dir(goldens_dir, nodeid)
    relative = file_dir.relative_to(goldens_dir).as_posix()
    own = own_dir.relative_to(goldens_dir).as_posix()
    used = [
        golden_dir_for(goldens_dir, nodeid, name).relative_to(goldens_dir).as_posix()
        for name in recorded
    ]
    others = {
        golden_test_dir(goldens_dir, other).relative_to(goldens_dir).as_posix()
        for other in known.collected()
    }
    kept: list[Path] = []
    for golden in find_stale(goldens_dir, [relative], used, others - {own}).goldens:
        path = goldens_dir / golden
        if path.parent != own_dir and not known.complete and known.exists(path.parent, file_dir):
            continue  # a test that exists but was not collected
        if not any(other in path.parents for other in kept):
            kept.append(path)
    return kept[:_MAX_LOOKED_AT]


def _env_of(header: dict[str, Any] | None) -> str | None:
    """The env id a header names, or the class of an env made without one."""
    env = (header or {}).get("env")
    if not isinstance(env, dict):
        return None
    named = env.get("id") or env.get("class")
    return named if isinstance(named, str) else None


def _kinship(old: str | None, new: str | None) -> str | None:
    """``env`` for the same env, ``version`` for another version of it, else None."""
    if old is None or new is None:
        return None
    if old == new:
        return "env"
    try:
        old_ns, old_name, old_version = parse_env_id(old)
        new_ns, new_name, new_version = parse_env_id(new)
    except Exception:  # an id of another form (a class name) has no version
        return None
    same = (old_ns, old_name) == (new_ns, new_name)
    return "version" if same and old_version != new_version else None

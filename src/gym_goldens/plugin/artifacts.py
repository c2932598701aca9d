"""Artifacts for CI: the actual recordings of failing goldens, in one folder.

With ``--goldens-artifacts=DIR``, the recording of every golden that
mismatched, was missing or was nondeterministic is copied into DIR at the
golden's own place (:func:`gym_goldens.format.layout.golden_dir_for` with DIR as the
root), with every file of the recording folder (plots included, where made)
and a ``report.txt`` holding the failure text. A CI job uploads DIR, and a
reviewer copies its ``trajectory.jsonl`` over the golden's to accept it. For a
nondeterministic recording, the other runs that differ are kept beside it in
``run-<n>/`` folders.

Nothing is written or removed outside DIR: a symlink inside DIR (one a pull
request committed, say) is never followed, and the artifact that would go
through it is not saved; the failure message says so, as it does for a file
where an artifact's folder should be. The failure text itself is kept whole.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterable
from pathlib import Path
from typing import Final

from gym_goldens.errors import GoldenFormatError, GoldenWriteError, UnsafeGoldenPathError
from gym_goldens.format.files import atomic_write_bytes
from gym_goldens.format.layout import ARTIFACT_REPORT, golden_dir_for
from gym_goldens.format.paths import ensure_inside
from gym_goldens.plugin.check import CheckResult
from gym_goldens.plugin.settings import GoldensSettings

__all__ = ["artifact_dir", "save_artifacts"]

_KEPT: Final = frozenset({"failed", "missing", "nondeterministic"})
_WITHIN: Final = "the artifacts folder"


def save_artifacts(
    results: Iterable[CheckResult], settings: GoldensSettings, nodeid: str
) -> tuple[list[Path], list[str]]:
    """Copy the recordings of the failing results.

    Returns:
        The folders written, and a note for each artifact that was not
        saved: a symlink stands on its way, an entry is in the way, or the
        file system refused.
    """
    root = settings.artifacts_dir
    if root is None:
        return [], []
    written: list[Path] = []
    notes: list[str] = []
    for result in results:
        if result.status not in _KEPT or result.actual_dir is None:
            continue
        target = artifact_dir(root, settings.goldens_dir, result.golden_dir, nodeid, result.name)
        try:
            _save(result, result.actual_dir, root, target, nodeid)
        except UnsafeGoldenPathError as error:
            notes.append(
                f"artifacts not saved: {settings.display(Path(error.path))} is a symlink, which "
                "gym-goldens does not follow (it writes and removes files only inside the "
                "artifacts folder); remove it"
            )
            continue
        except (GoldenFormatError, OSError) as error:
            where, reason = _where_and_why(error, target)
            notes.append(f"artifacts not saved: {settings.display(where)}: {reason}")
            continue
        written.append(target)
    return written, notes


def _save(result: CheckResult, actual_dir: Path, root: Path, target: Path, nodeid: str) -> None:
    """Copy one result's recordings (and the other runs') to ``target``, with its report."""
    ensure_inside(root, target, within=_WITHIN)
    if target.exists() and not target.is_dir():
        raise GoldenFormatError(target, "expected a folder, found a file; remove the file")
    if target.exists():
        shutil.rmtree(target)  # a stale copy from an earlier session; links in it are not followed
    shutil.copytree(actual_dir, target)
    for folder, path in result.other_runs:
        if path != actual_dir:
            shutil.copytree(path, target / folder, dirs_exist_ok=True)
    report = f"{nodeid}\n\n{result.message or result.status}\n"
    atomic_write_bytes(target / ARTIFACT_REPORT, report.encode("utf-8"))


def _where_and_why(error: GoldenFormatError | OSError, target: Path) -> tuple[Path, str]:
    if isinstance(error, (GoldenFormatError, GoldenWriteError)):
        return Path(error.path), error.reason
    return Path(error.filename or target), error.strerror or str(error)


def artifact_dir(root: Path, goldens_dir: Path, golden_dir: Path, nodeid: str, name: str) -> Path:
    """Where the recording of ``golden_dir`` goes under ``root``: the same place.

    A golden variant keeps its variant folder.
    """
    try:
        return root / golden_dir.relative_to(goldens_dir)
    except ValueError:
        return golden_dir_for(root, nodeid, name)

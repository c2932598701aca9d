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
through it is not saved; the failure message says so.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterable
from pathlib import Path
from typing import Final

from gym_goldens.format.layout import ARTIFACT_REPORT, golden_dir_for
from gym_goldens.plugin.check import CheckResult
from gym_goldens.plugin.settings import GoldensSettings

__all__ = ["artifact_dir", "save_artifacts"]

_KEPT: Final = frozenset({"failed", "missing", "nondeterministic"})


def save_artifacts(
    results: Iterable[CheckResult], settings: GoldensSettings, nodeid: str
) -> tuple[list[Path], list[str]]:
    """Copy the recordings of the failing results.

    Returns:
        The folders written, and a note for each artifact that was not
        saved because a symlink stands on its way.
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
        link = _first_symlink(root, target)
        if link is not None:
            notes.append(
                f"artifacts not saved: {settings.display(link)} is a symlink, which gym-goldens "
                "does not follow (it writes and removes files only inside the artifacts folder); "
                "remove it"
            )
            continue
        if target.exists():
            shutil.rmtree(target)  # a stale copy from an earlier session
        shutil.copytree(result.actual_dir, target)
        for folder, path in result.other_runs:
            if path != result.actual_dir:
                shutil.copytree(path, target / folder, dirs_exist_ok=True)
        report = f"{nodeid}\n\n{result.message or result.status}\n"
        (target / ARTIFACT_REPORT).write_text(report, encoding="utf-8")
        written.append(target)
    return written, notes


def _first_symlink(root: Path, target: Path) -> Path | None:
    """The first entry from ``root`` (excluded) down to ``target`` that is a symlink."""
    current = root
    for part in target.relative_to(root).parts:
        current = current / part
        if current.is_symlink():
            return current
        if not current.exists():
            return None  # nothing below a missing folder exists yet
    return None


def artifact_dir(root: Path, goldens_dir: Path, golden_dir: Path, nodeid: str, name: str) -> Path:
    """Where the recording of ``golden_dir`` goes under ``root``: the same place.

    A golden variant keeps its variant folder.
    """
    try:
        return root / golden_dir.relative_to(goldens_dir)
    except ValueError:
        return golden_dir_for(root, nodeid, name)

"""Tests recorded again by a fresh ``python -m pytest``, with another ``PYTHONHASHSEED``.

The parent writes the golden node ids of the tests into a JSON file (hidden
option ``--goldens-record-tests``) and names their test files on the command
line; the child collects those files, keeps the tests listed, and records
each test's envs into ``<into>/<test file>/<test>/<name>`` (the golden layout,
:func:`~gym_goldens.format.layout.golden_test_dir`, with ``into`` as the root;
hidden option ``--goldens-record-into``), checking nothing. A test whose body
passed leaves :data:`~gym_goldens.format.layout.FRESH_RECORDED` in its folder.
The child runs in the rootdir, with the parent's ini file, goldens folder and
``-p``/``-o`` options, without pytest-xdist workers.

Both fresh-process checks of the plugin go through :func:`record_in_fresh_pytest`:
the goldens an update is about to write (all of a session's in one process,
see :mod:`gym_goldens.plugin.pending`), and each run of
``--goldens-determinism-mode=subprocess``.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Final

import pytest

from gym_goldens.format.layout import FRESH_RECORDED, golden_test_dir, safe_segment
from gym_goldens.plugin.settings import settings_key
from gym_goldens.record.fresh import FreshProcess

__all__ = [
    "FreshRun",
    "mark_recorded",
    "passed_through",
    "record_in_fresh_pytest",
    "recorded_folder",
]

_MAX_OUTPUT_LINES: Final = 40
_TESTS_FILE: Final = "tests.json"


@dataclasses.dataclass(frozen=True)
class FreshRun:
    """What a fresh pytest recorded.

    Attributes:
        into: The folder it recorded into.
        note: How it ran: ``in a fresh process, PYTHONHASHSEED=8``.
        returncode: Its exit code.
        output: The end of what it printed.
    """

    into: Path
    note: str
    returncode: int
    output: tuple[str, ...]

    def recordings(self, nodeid: str, names: Sequence[str]) -> dict[str, Path] | None:
        """The folders of a test's recordings by name; None unless its body passed there."""
        folder = recorded_folder(self.into, nodeid)
        if not (folder / FRESH_RECORDED).is_file():
            return None
        return {name: folder / safe_segment(name) for name in names}

    @property
    def failure(self) -> str:
        """Why a test left no recordings: the exit code and the end of the output."""
        lines = "\n".join(f"    {line}" for line in self.output)
        if self.returncode == 0:
            # The run passed, without this test's body: skipped or not collected there.
            return f"python -m pytest did not run the test through (exit code 0):\n{lines}"
        return f"python -m pytest exited with code {self.returncode}:\n{lines}"


def recorded_folder(into: Path, nodeid: str) -> Path:
    """Where a fresh process records the test ``nodeid`` (a golden node id)."""
    return golden_test_dir(into, nodeid)


def mark_recorded(into: Path, nodeid: str) -> None:
    """In the fresh process: the body of test ``nodeid`` passed, its recordings are written."""
    folder = recorded_folder(into, nodeid)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / FRESH_RECORDED).touch()


def record_in_fresh_pytest(
    config: pytest.Config,
    nodeids: Sequence[str],
    base: Path,
    *,
    offset: int = 1,
    as_update: bool = False,
) -> FreshRun:
    """Run the tests ``nodeids`` once more in a fresh pytest, recording into ``base/into``.

    Args:
        config: This session's config: its rootdir, ini file and options.
        nodeids: Golden node ids of the tests (the same files' tests, or others').
        base: A folder of its own (emptied first).
        offset: Which other hash seed (see :func:`~gym_goldens.record.fresh.other_hash_seed`).
        as_update: Record as an update does (see ``GoldensSettings.record_as_update``).
    """
    shutil.rmtree(base, ignore_errors=True)
    into = base / "into"
    into.mkdir(parents=True)
    tests_file = base / _TESTS_FILE
    tests_file.write_text(json.dumps({"tests": list(nodeids), "as_update": as_update}))
    process = FreshProcess(
        _arguments(config, nodeids, into, tests_file, base / "tmp"),
        offset=offset,
        cwd=config.rootpath,
    )
    try:
        finished = process.wait()
    finally:
        process.stop()
    return FreshRun(
        into, process.note, finished.returncode, tuple(finished.tail(_MAX_OUTPUT_LINES))
    )


def _arguments(
    config: pytest.Config, nodeids: Sequence[str], into: Path, tests_file: Path, basetemp: Path
) -> list[str]:
    settings = config.stash[settings_key]
    files = list(dict.fromkeys(nodeid.partition("::")[0] for nodeid in nodeids))
    arguments = [
        "-m",
        "pytest",
        f"--goldens-record-into={into}",
        f"--goldens-record-tests={tests_file}",
        f"--goldens-dir={settings.goldens_dir}",
        "--goldens-determinism=0",
        f"--basetemp={basetemp}",
        "-p",
        "no:cacheprovider",
        "-q",
        f"--rootdir={config.rootpath}",
    ]
    if config.inipath is not None:
        arguments += ["-c", str(config.inipath)]
    if config.pluginmanager.hasplugin("xdist"):
        arguments += ["-n", "0"]  # no workers, whatever addopts say
    return [*arguments, *passed_through(config.invocation_params.args), *files]


def passed_through(args: Sequence[str]) -> list[str]:
    """The options of the parent that load plugins or set ini values."""
    kept: list[str] = []
    taking = False
    for arg in args:
        if taking:
            kept.append(arg)
            taking = False
        elif arg in ("-p", "-o", "--override-ini"):
            kept.append(arg)
            taking = True
        elif arg.startswith(("-p", "--override-ini=", "--import-mode=")) or (
            arg.startswith("-o") and len(arg) > 2
        ):
            kept.append(arg)
    return kept

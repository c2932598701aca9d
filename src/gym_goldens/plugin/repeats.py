"""Determinism runs under pytest: ``--goldens-determinism=N``.

Each test that uses ``record_trajectory`` runs N more times, and the
recordings of all its runs must match within the test's tolerance before any
golden is compared or written.

In-process (the default), the extra runs come first: the whole test protocol
(setup, call, teardown) runs N times without being reported, through
``runtestprotocol(item, log=False)`` as pytest-rerunfailures does, so every
function-scoped fixture (an env factory, ``tmp_path``) is made afresh for each
run. Fixtures of a wider scope (class, module, session) are shared by the runs,
as they are by the tests. Then the test runs once more as usual, and that run,
the last, is compared with the first.

Cross-process (``--goldens-determinism-mode=subprocess``), the test first runs
as usual, then N times in a fresh ``python -m pytest <nodeid>``, each with
another ``PYTHONHASHSEED``, recording into a folder given by the hidden option
``--goldens-record-into``. This catches what one process hides: the order of a
set of strings, and state left in modules by an earlier run.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Final

import pytest
from _pytest.runner import runtestprotocol

from gym_goldens.comparison.engine import compare
from gym_goldens.comparison.tolerance import Tolerance
from gym_goldens.errors import GoldenFormatError
from gym_goldens.format.layout import run_dirname, safe_segment
from gym_goldens.format.limits import DEFAULT_MAX_DECOMPRESSED_SIZE
from gym_goldens.plugin.settings import GoldensSettings, settings_key
from gym_goldens.present.report import format_nondeterminism

Flush = Callable[[], Mapping[str, Path]]
"""Writes what a test's recorders buffer; gives each recording's folder by name."""

__all__ = ["Run", "find_nondeterminism", "run_in_process"]

_FIXTURE: Final = "record_trajectory"
_MAX_FAILURE_LINES: Final = 40
_HASH_SEED_RANGE: Final = 2**32
# Variables that would make the subprocess think it is an xdist worker or mid-test.
_CHILD_ENV_DROP: Final = ("PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT", "PYTEST_CURRENT_TEST")
_IN_PROCESS_NOTE: Final = "in this process, with fresh function-scoped fixtures"
_SUBPROCESS_NOTE: Final = "in a fresh subprocess"
_SUBPROCESS_HINT: Final = (
    "a difference that only a fresh process shows often comes from iterating over a set "
    "(or set-ordered dict) of strings, or from module state left by earlier tests"
)


@dataclasses.dataclass(frozen=True)
class Run:
    """One run of a test in a determinism check.

    Attributes:
        number: Its place in the check, from 1.
        note: How it ran, for messages.
        dirs: Its recordings by name; None for the run being checked, whose
            recordings the checks hold.
        failure: Why the run failed, if the test failed in it.
    """

    number: int
    note: str
    dirs: Mapping[str, Path] | None = None
    failure: str | None = None

    @property
    def label(self) -> str:
        """``run 2``."""
        return f"run {self.number}"


@dataclasses.dataclass
class _State:
    """The determinism runs of one test item."""

    runs: list[Run] = dataclasses.field(default_factory=list)
    collecting: int = 0
    """The number of the extra in-process run under way; 0 outside one."""
    base: Path | None = None


_state_key: Final = pytest.StashKey[_State]()


def applies(item: pytest.Item) -> bool:
    """Whether ``item`` gets determinism runs in this session."""
    settings = item.config.stash[settings_key]
    return (
        settings.determinism > 0
        and settings.record_into is None
        and _FIXTURE in getattr(item, "fixturenames", ())
    )


def run_in_process(item: pytest.Item) -> None:
    """Run the test ``--goldens-determinism`` times, unreported, before its real run."""
    settings = item.config.stash[settings_key]
    state = _State()
    item.stash[_state_key] = state
    for number in range(1, settings.determinism + 1):
        state.collecting = number
        try:
            # Tearing down to the parent re-creates function-scoped fixtures
            # for the next run and keeps the wider ones, as between two tests.
            reports = runtestprotocol(item, log=False, nextitem=item.parent)  # type: ignore[arg-type]
        finally:
            state.collecting = 0
        if any(report.skipped for report in reports):
            state.runs.clear()  # a skipped test is not compared
            break
        failed = next((report for report in reports if report.failed), None)
        if failed is not None:
            state.runs = [run for run in state.runs if run.number != number]
            failure = f"its {failed.when} failed:\n{_tail(failed.longreprtext)}"
            state.runs.append(Run(number, _IN_PROCESS_NOTE, {}, failure))
            break
    # Output captured in the extra runs would otherwise show under the real run.
    sections = getattr(item, "_report_sections", None)
    if isinstance(sections, list):
        sections.clear()


def output_dir(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    """Where the ``record_trajectory`` fixture records in this run."""
    settings = request.config.stash[settings_key]
    if settings.record_into is not None:
        return settings.record_into
    state = request.node.stash.get(_state_key, None)
    if state is not None and state.collecting:
        return _base(state, request) / run_dirname(state.collecting)
    if applies(request.node) and settings.determinism_mode == "subprocess":
        request.node.stash[_state_key] = state = _State()
        _base(state, request)
    return tmp_path


def intercept(item: pytest.Item, flush: Flush) -> bool:
    """Keep the recordings of an extra run; True when this call is one."""
    settings = item.config.stash[settings_key]
    if settings.record_into is not None:
        flush()
        return True
    state = item.stash.get(_state_key, None)
    if state is None or not state.collecting:
        return False
    state.runs.append(Run(state.collecting, _IN_PROCESS_NOTE, flush()))
    return True


def runs_of(item: pytest.Item, flush: Flush) -> list[Run]:
    """Every run of the test, the one being checked included; empty when none."""
    if not applies(item):
        return []
    settings = item.config.stash[settings_key]
    state = item.stash.get(_state_key, None)
    if state is None:
        return []
    if settings.determinism_mode == "subprocess":
        assert state.base is not None
        names = list(flush())
        this = Run(1, "in this process, checked against the golden")
        return [this, *_run_subprocesses(item, settings, state.base, names)]
    if not state.runs:
        return []
    this = Run(settings.determinism + 1, "in this process, checked against the golden")
    return [*state.runs, this]


def find_nondeterminism(
    recordings: Sequence[tuple[str, Path, Tolerance]],
    runs: Sequence[Run],
    *,
    display: Callable[[Path], str] = str,
    max_decompressed_size: int = DEFAULT_MAX_DECOMPRESSED_SIZE,
) -> dict[str, tuple[str | None, tuple[tuple[str, Path], ...]]]:
    """Compare each recording across runs.

    Args:
        recordings: ``(name, folder in the checked run, tolerance)``.
        runs: Every run, the checked one with ``dirs=None``.
        display: Turns a path into the text shown.
        max_decompressed_size: What a compressed recording may expand to
            when read, in bytes.

    Returns:
        For each recording that is not the same in every run: the failure
        text (None when another recording's text says it all) and the other
        runs' folders that differ, as ``(folder name, path)``.
    """
    ordered = sorted(runs, key=lambda run: run.number)
    failed = next((run for run in ordered if run.failure), None)
    if failed is not None:
        checked = next(run for run in ordered if run.dirs is None)
        message = (
            f"nondeterministic: {failed.label} failed, {checked.label} passed\n"
            f"  {failed.label}: {failed.note}; {failed.failure}"
        )
        return {
            name: (message if index == 0 else None, ())
            for index, (name, _, _) in enumerate(recordings)
        }
    found: dict[str, tuple[str | None, tuple[tuple[str, Path], ...]]] = {}
    first = ordered[0]
    for name, this_dir, tolerance in recordings:

        def folder(run: Run, name: str = name, this_dir: Path = this_dir) -> Path | None:
            if run.dirs is None:
                return this_dir
            path = run.dirs.get(name)
            return path if path is not None and path.is_dir() else None

        reference = folder(first)
        for other in ordered[1:]:
            other_dir = folder(other)
            kept = tuple(
                (run_dirname(run.number), path)
                for run, path in [(first, reference), (other, other_dir)]
                if run.dirs is not None and path is not None
            )
            if reference is None or other_dir is None:
                missing, present = (first, other) if reference is None else (other, first)
                found[name] = (
                    f"nondeterministic: {missing.label} did not record {name!r}, "
                    f"{present.label} did\n"
                    f"  {first.label}: {first.note}\n  {other.label}: {other.note}",
                    kept,
                )
                break
            try:
                comparison = compare(
                    reference, other_dir, tolerance, max_decompressed_size=max_decompressed_size
                )
            except GoldenFormatError as error:
                found[name] = (f"nondeterministic: a run's recording is unreadable: {error}", kept)
                break
            if not comparison.equal:
                notes = [f"{first.label}: {first.note}", f"{other.label}: {other.note}"]
                if _SUBPROCESS_NOTE in other.note:
                    notes.append(_SUBPROCESS_HINT)
                text = format_nondeterminism(
                    comparison, first=first.label, second=other.label, notes=notes, display=display
                )
                found[name] = (text, kept)
                break
    return found


def _base(state: _State, request: pytest.FixtureRequest) -> Path:
    if state.base is None:
        factory: pytest.TempPathFactory = request.getfixturevalue("tmp_path_factory")
        state.base = factory.mktemp("determinism")
    return state.base


def _run_subprocesses(
    item: pytest.Item, settings: GoldensSettings, base: Path, names: Sequence[str]
) -> list[Run]:
    runs: list[Run] = []
    parent_seed = os.environ.get("PYTHONHASHSEED", "")
    for number in range(2, settings.determinism + 2):
        hash_seed = _hash_seed(parent_seed, number)
        into = base / run_dirname(number)
        basetemp = into.with_name(f"{into.name}-tmp")
        shutil.rmtree(into, ignore_errors=True)
        env = {key: value for key, value in os.environ.items() if key not in _CHILD_ENV_DROP}
        env["PYTHONHASHSEED"] = str(hash_seed)
        completed = subprocess.run(
            _command(item, into, basetemp),
            cwd=settings.rootdir,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        note = f"{_SUBPROCESS_NOTE}, PYTHONHASHSEED={hash_seed}"
        if completed.returncode != 0:
            output = _tail(completed.stdout + completed.stderr)
            failure = f"python -m pytest exited with code {completed.returncode}:\n{output}"
            runs.append(Run(number, note, {}, failure))
            break
        runs.append(Run(number, note, {name: into / safe_segment(name) for name in names}))
    return runs


def _command(item: pytest.Item, into: Path, basetemp: Path) -> list[str]:
    config = item.config
    command = [
        sys.executable,
        "-m",
        "pytest",
        item.nodeid,
        f"--goldens-record-into={into}",
        "--goldens-determinism=0",
        f"--basetemp={basetemp}",
        "-p",
        "no:cacheprovider",
        "-q",
        f"--rootdir={config.rootpath}",
    ]
    if config.inipath is not None:
        command += ["-c", str(config.inipath)]
    if config.pluginmanager.hasplugin("xdist"):
        command += ["-n", "0"]  # one test: no workers, whatever addopts say
    command += _passed_through(config.invocation_params.args)
    return command


def _passed_through(args: Sequence[str]) -> list[str]:
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


def _hash_seed(parent: str, number: int) -> int:
    """A PYTHONHASHSEED other than this process's for run ``number``."""
    if parent.isdigit():
        return (int(parent) + number - 1) % _HASH_SEED_RANGE
    return number - 1  # this process hashes with a random seed


def _tail(text: str) -> str:
    lines = text.rstrip().splitlines()
    if len(lines) > _MAX_FAILURE_LINES:
        lines = ["...", *lines[-_MAX_FAILURE_LINES:]]
    return "\n".join(f"    {line}" for line in lines)

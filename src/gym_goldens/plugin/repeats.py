"""Determinism runs under pytest: ``--goldens-determinism=N``, and every update.

Each test that uses ``record_trajectory`` runs N more times, and the
recordings of all its runs must match within the test's tolerance before any
golden is compared or written. Under ``--update-goldens`` every such test runs
once more in this process (unless ``--update-goldens-once`` or the marker's
``update_once=True``), so that a golden the env cannot reproduce is never
written.

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
from gym_goldens.comparison.result import Comparison
from gym_goldens.comparison.tolerance import Tolerance
from gym_goldens.errors import GoldenFormatError
from gym_goldens.format.layout import run_dirname, safe_segment
from gym_goldens.format.limits import DEFAULT_MAX_DECOMPRESSED_SIZE
from gym_goldens.plugin.settings import GoldensSettings, settings_key
from gym_goldens.present.report import format_nondeterminism

Flush = Callable[[], Mapping[str, Path]]
"""Writes what a test's recorders buffer; gives each recording's folder by name."""

__all__ = ["Plan", "Run", "find_nondeterminism", "plan", "run_in_process"]

_FIXTURE: Final = "record_trajectory"
_MAX_FAILURE_LINES: Final = 40
_HASH_SEED_RANGE: Final = 2**32
# Variables that would make the subprocess think it is an xdist worker or mid-test.
_CHILD_ENV_DROP: Final = ("PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT", "PYTEST_CURRENT_TEST")
_IN_PROCESS_NOTE: Final = "in this process, with fresh function-scoped fixtures"
_PLUGIN_MODULES: Final = ("_pytest", "pytest", "xdist", "hypothesis", "gym_goldens")
_SUBPROCESS_NOTE: Final = "in a fresh subprocess"
_SUBPROCESS_WHERE: Final = "subprocess"
_SUBPROCESS_HINT: Final = (
    "a difference that only a fresh process shows often comes from iterating over a set "
    "(or set-ordered dict) of strings, or from module state left by earlier tests"
)


@dataclasses.dataclass(frozen=True)
class Plan:
    """The extra runs of one test.

    Attributes:
        runs: How many extra runs.
        mode: ``inprocess`` or ``subprocess``.
        on_update: Whether they are the check every update makes (rather
            than ``--goldens-determinism``'s).
    """

    runs: int
    mode: str
    on_update: bool = False


@dataclasses.dataclass(frozen=True)
class Run:
    """One run of a test in a determinism check.

    Attributes:
        number: Its place in the check, from 1.
        note: How it ran, for messages.
        dirs: Its recordings by name; None for the run being checked, whose
            recordings the checks hold.
        failure: Why the run failed, if the test failed in it.
        context: Lines a report of a difference adds (what the runs share,
            why they ran); on the run being checked.
        where: Where it ran, in a word or two, when the runs ran in
            different places (``this process``, ``subprocess``).
    """

    number: int
    note: str
    dirs: Mapping[str, Path] | None = None
    failure: str | None = None
    context: tuple[str, ...] = ()
    where: str | None = None

    @property
    def name(self) -> str:
        """``run 2``."""
        return f"run {self.number}"

    @property
    def label(self) -> str:
        """``run 2``, or ``run 2 (subprocess)`` where runs ran in different places."""
        return self.name + (f" ({self.where})" if self.where else "")


@dataclasses.dataclass
class _State:
    """The determinism runs of one test item."""

    runs: list[Run] = dataclasses.field(default_factory=list)
    collecting: int = 0
    """The number of the extra in-process run under way; 0 outside one."""
    base: Path | None = None


_state_key: Final = pytest.StashKey[_State]()


def plan(item: pytest.Item) -> Plan | None:
    """The extra runs ``item`` gets in this session, or None."""
    settings = item.config.stash[settings_key]
    if settings.record_into is not None or _FIXTURE not in getattr(item, "fixturenames", ()):
        return None
    if settings.determinism > 0:
        return Plan(settings.determinism, settings.determinism_mode)
    if settings.update and not settings.update_once and not _updated_once(item):
        return Plan(1, "inprocess", on_update=True)
    return None


def _updated_once(item: pytest.Item) -> bool:
    marker = item.get_closest_marker("goldens")
    return bool(marker is not None and marker.kwargs.get("update_once") is True)


def run_in_process(item: pytest.Item, extra: Plan) -> None:
    """Run the test ``extra.runs`` times, unreported, before its real run."""
    state = _State()
    item.stash[_state_key] = state
    for number in range(1, extra.runs + 1):
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
    extra = plan(request.node)
    if extra is not None and extra.mode == "subprocess":
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
    extra = plan(item)
    if extra is None:
        return []
    settings = item.config.stash[settings_key]
    state = item.stash.get(_state_key, None)
    if state is None:
        return []
    if extra.mode == "subprocess":
        assert state.base is not None
        names = list(flush())
        this = Run(1, "in this process, checked against the golden", where="this process")
        return [this, *_run_subprocesses(item, settings, extra, state.base, names)]
    if not state.runs:
        return []
    checked = "in this process, its recording written as the golden if both agree"
    if not extra.on_update:
        checked = "in this process, checked against the golden"
    this = Run(extra.runs + 1, checked, context=_context(item, extra))
    return [*state.runs, this]


def _context(item: pytest.Item, extra: Plan) -> tuple[str, ...]:
    """What a report of in-process runs that differ should say about them."""
    lines = []
    if extra.on_update:
        lines.append(
            "--update-goldens records each golden test twice and writes a golden only if both "
            "recordings agree: the golden was left as it is (record once, at your own risk, "
            "with --update-goldens-once or @pytest.mark.goldens(update_once=True))"
        )
    shared = _wider_fixtures(item)
    if shared:
        lines.append(
            f"both runs share the fixtures {', '.join(shared)} (of a wider scope than the "
            "test): state they keep may be the difference"
        )
    return tuple(lines)


def _wider_fixtures(item: pytest.Item) -> list[str]:
    """The fixtures this test uses with a wider scope than the function.

    Those it asks for (its arguments, ``usefixtures``) and those they ask
    for, in turn; not the autouse fixtures of plugins and conftests that it
    never asks for (syrupy's ``_syrupy_apply_ide_patches``), nor pytest's own.
    """
    info = getattr(item, "_fixtureinfo", None)
    definitions = getattr(info, "name2fixturedefs", {})
    asked = [*getattr(info, "argnames", ())]
    asked += [name for mark in item.iter_markers("usefixtures") for name in mark.args]
    used: set[str] = set()
    while asked:
        name = asked.pop()
        if name in used or not definitions.get(name):
            continue
        used.add(name)
        asked += definitions[name][-1].argnames
    found = []
    for name in used:
        definition = definitions[name][-1]
        module = getattr(definition.func, "__module__", "") or ""
        # pytest's own and plugins' session fixtures (tmp_path_factory, ...) keep no env state.
        if definition.scope != "function" and not module.startswith(_PLUGIN_MODULES):
            found.append(f"{name} ({definition.scope})")
    return sorted(found)


def find_nondeterminism(
    recordings: Sequence[tuple[str, Path, Tolerance]],
    runs: Sequence[Run],
    *,
    display: Callable[[Path], str] = str,
    plot: Callable[[Comparison, Path, tuple[str, str]], str | None] | None = None,
    max_decompressed_size: int = DEFAULT_MAX_DECOMPRESSED_SIZE,
) -> dict[str, tuple[str | None, tuple[tuple[str, Path], ...]]]:
    """Compare each recording across runs.

    Args:
        recordings: ``(name, folder in the checked run, tolerance)``.
        runs: Every run, the checked one with ``dirs=None``.
        display: Turns a path into the text shown.
        plot: Draws where two runs part, into the checked run's folder,
            given the runs' names; gives the line that names the plot, if it
            drew one.
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
            f"  {failed.name}: {failed.note}; {failed.failure}"
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
                    f"  {first.name}: {first.note}\n  {other.name}: {other.note}",
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
                notes = [f"{first.name}: {first.note}", f"{other.name}: {other.note}"]
                if _SUBPROCESS_NOTE in other.note:
                    notes.append(_SUBPROCESS_HINT)
                notes += [line for run in ordered for line in run.context]
                text = format_nondeterminism(
                    comparison, first=first.label, second=other.label, notes=notes, display=display
                )
                names = (first.label, other.label)
                plot_line = plot(comparison, this_dir, names) if plot is not None else None
                if plot_line:
                    # Before the last line, the fix, as in a golden mismatch.
                    head, _, fix = text.rpartition("\n")
                    text = f"{head}\n  {plot_line}\n{fix}"
                found[name] = (text, kept)
                break
    return found


def _base(state: _State, request: pytest.FixtureRequest) -> Path:
    if state.base is None:
        factory: pytest.TempPathFactory = request.getfixturevalue("tmp_path_factory")
        state.base = factory.mktemp("determinism")
    return state.base


def _run_subprocesses(
    item: pytest.Item, settings: GoldensSettings, extra: Plan, base: Path, names: Sequence[str]
) -> list[Run]:
    runs: list[Run] = []
    parent_seed = os.environ.get("PYTHONHASHSEED", "")
    for number in range(2, extra.runs + 2):
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
            runs.append(Run(number, note, {}, failure, where=_SUBPROCESS_WHERE))
            break
        folders = {name: into / safe_segment(name) for name in names}
        runs.append(Run(number, note, folders, where=_SUBPROCESS_WHERE))
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

"""Determinism runs under pytest: ``--goldens-determinism=N``, and every update.

Each test that uses ``record_trajectory`` runs N more times, and the
recordings of all its runs must match within the test's tolerance before any
golden is compared or written. Under ``--update-goldens`` every such test runs
once more in this process (unless ``--update-goldens-once`` or the marker's
``update_once=True``), and its recordings must agree exactly (the test's
``ignore`` patterns apart: two recordings on one machine differ only where the
env is nondeterministic), so that a golden the env cannot reproduce is never
written; the goldens about to be written are then recorded once more in a
fresh process (:mod:`gym_goldens.plugin.pending`).

In-process (the default), the extra runs come first: the whole test protocol
(setup, call, teardown) runs N times without being reported, through
``runtestprotocol(item, log=False)`` as pytest-rerunfailures does, so every
function-scoped fixture (an env factory, ``tmp_path``) is made afresh for each
run. Fixtures of a wider scope (class, module, session) are shared by the runs,
as they are by the tests. Then the test runs once more as usual, and that run,
the last, is compared with the first.

Cross-process (``--goldens-determinism-mode=subprocess``), the test first runs
as usual, then N times in a fresh ``python -m pytest`` (:mod:`.fresh`), each
with another ``PYTHONHASHSEED``. This catches what one process hides: the
order of a set of strings, and state left in modules by an earlier run.
"""

from __future__ import annotations

import dataclasses
import itertools
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Final

import pytest
from _pytest.runner import runtestprotocol

from gym_goldens.comparison.engine import compare
from gym_goldens.comparison.evidence import nondeterminism_evidence
from gym_goldens.comparison.result import Comparison
from gym_goldens.comparison.tolerance import Tolerance
from gym_goldens.errors import GoldenFormatError, UnsafeGoldenPathError
from gym_goldens.format.layout import run_dirname
from gym_goldens.format.limits import DEFAULT_MAX_DECOMPRESSED_SIZE
from gym_goldens.plugin.fresh import mark_recorded, record_in_fresh_pytest, recorded_folder
from gym_goldens.plugin.settings import (
    GoldensSettings,
    fresh_base_key,
    golden_nodeid,
    settings_key,
)
from gym_goldens.present.report import (
    Report,
    failed_run_report,
    format_evidence,
    nondeterminism_report,
    unreadable_run_report,
    unrecorded_run_report,
)
from gym_goldens.present.text import escape, python_string

Flush = Callable[[], Mapping[str, Path]]
"""Writes what a test's recorders buffer; gives each recording's folder by name."""

PlotRuns = Callable[[Comparison, Path, tuple[str, str]], str | None]
"""Draws where two runs part into a folder, given the runs' names; the line naming the plot."""

__all__ = [
    "FRESH_HINT",
    "Nondeterminism",
    "Plan",
    "Run",
    "exactly",
    "find_nondeterminism",
    "plan",
    "run_in_process",
    "update_context",
    "verifies_fresh",
]

_FIXTURE: Final = "record_trajectory"
_MAX_FAILURE_LINES: Final = 40
_MAX_FIELDS_NAMED: Final = 3
_IN_PROCESS_NOTE: Final = "in this process, with fresh function-scoped fixtures"
_PLUGIN_MODULES: Final = ("_pytest", "pytest", "xdist", "hypothesis", "gym_goldens")
_SUBPROCESS_WHERE: Final = "subprocess"
_FRESH_NOTE: Final = "in a fresh process"
FRESH_HINT: Final = (
    "a difference that only a fresh process shows often comes from iterating over a set "
    "(or set-ordered dict) of strings, or from module state left by earlier tests"
)
"""The note of a report of runs that part only in a fresh process."""
_ONCE: Final = (
    "the golden was left as it is (record once, at your own risk, with --update-goldens-once "
    "or @pytest.mark.goldens(update_once=True))"
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


def verifies_fresh(item: pytest.Item) -> bool:
    """Whether the goldens ``item`` is about to write wait for a fresh process to agree.

    Under ``--update-goldens``, unless recorded once, or the ini
    ``goldens_update_fresh_process`` is false, or its runs ran in fresh
    processes already (``--goldens-determinism-mode=subprocess``).
    """
    settings = item.config.stash[settings_key]
    extra = plan(item)
    return (
        settings.update
        and settings.update_fresh
        and extra is not None
        and extra.mode != "subprocess"
    )


def _updated_once(item: pytest.Item) -> bool:
    marker = item.get_closest_marker("goldens")
    return bool(marker is not None and marker.kwargs.get("update_once") is True)


def exactly(tolerance: Tolerance) -> Tolerance:
    """No tolerance, the same ignored fields: how two recordings on one machine must agree."""
    return Tolerance(rtol=0.0, atol=0.0, ignore=tolerance.ignore)


def update_context(settings: GoldensSettings) -> str:
    """The line a report of an update's runs that differ adds: what the update does."""
    if settings.update_fresh:
        return (
            "--update-goldens records each golden test twice in this process and the goldens it "
            "is about to write once more in a fresh process; it writes a golden only if its "
            f"recordings agree exactly: {_ONCE}"
        )
    return (
        "--update-goldens records each golden test twice and writes a golden only if both "
        f"recordings agree exactly: {_ONCE}"
    )


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


def output_dir(request: pytest.FixtureRequest) -> Path:
    """Where the ``record_trajectory`` fixture records in this run.

    The test's ``tmp_path``, made only here, when the recordings go there: an
    update's runs and a fresh process record into folders of their own, and
    a ``tmp_path`` for each of them (a folder and a link, numbered) would cost
    a hundred golden tests a tenth of a second for nothing.
    """
    settings = request.config.stash[settings_key]
    node = request.node
    if settings.record_into is not None:
        return recorded_folder(settings.record_into, golden_nodeid(node, settings))
    state = node.stash.get(_state_key, None)
    if state is not None and state.collecting:
        return _base(state, request) / run_dirname(state.collecting)
    extra = plan(node)
    if extra is not None and extra.mode == "subprocess":
        node.stash[_state_key] = state = _State()
        _base(state, request)
    if verifies_fresh(node):
        # Not tmp_path: its golden is written after the test, when the fresh
        # process agreed, and tmp_path_retention_policy = "failed" removes
        # the tmp_path of a test that passed when it ends.
        if fresh_base_key not in request.config.stash:
            factory: pytest.TempPathFactory = request.getfixturevalue("tmp_path_factory")
            request.config.stash[fresh_base_key] = factory.mktemp("fresh")
        return _new_folder(request, "pending")
    tmp_path: Path = request.getfixturevalue("tmp_path")
    return tmp_path


def intercept(item: pytest.Item, flush: Flush) -> bool:
    """Keep the recordings of an extra run; True when this call is one."""
    settings = item.config.stash[settings_key]
    if settings.record_into is not None:
        flush()
        mark_recorded(settings.record_into, golden_nodeid(item, settings))
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
    checked = "in this process, checked against the golden"
    if settings.update:
        checked = "in this process, its recording written as the golden if every run agrees"
    this = Run(extra.runs + 1, checked, context=_context(item, extra))
    return [*state.runs, this]


def _context(item: pytest.Item, extra: Plan) -> tuple[str, ...]:
    """What a report of in-process runs that differ should say about them."""
    lines = []
    if extra.on_update:
        lines.append(update_context(item.config.stash[settings_key]))
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


@dataclasses.dataclass(frozen=True)
class Nondeterminism:
    """A recording that is not the same in every run.

    Attributes:
        report: The failure; None when another recording's report says it all.
        other_runs: The other runs' folders that differ, as ``(folder name, path)``.
    """

    report: Report | None
    other_runs: tuple[tuple[str, Path], ...] = ()

    @property
    def message(self) -> str | None:
        """The failure text."""
        return None if self.report is None else self.report.render()


def find_nondeterminism(
    recordings: Sequence[tuple[str, Path, Tolerance]],
    runs: Sequence[Run],
    *,
    exact: bool = False,
    display: Callable[[Path], str] = str,
    plot: PlotRuns | None = None,
    max_decompressed_size: int = DEFAULT_MAX_DECOMPRESSED_SIZE,
) -> dict[str, Nondeterminism]:
    """Compare each recording across runs.

    Args:
        recordings: ``(name, folder in the checked run, tolerance)``.
        runs: Every run, the checked one with ``dirs=None``.
        exact: The runs must agree exactly, the tolerance's ignored fields
            apart (as under ``--update-goldens``); the report says when they
            differ within the tolerance.
        display: Turns a path into the text shown.
        plot: Draws where two runs part, into the checked run's folder.
        max_decompressed_size: What a compressed recording may expand to
            when read, in bytes.

    Returns:
        Each recording that is not the same in every run.
    """
    ordered = sorted(runs, key=lambda run: run.number)
    failed = next((run for run in ordered if run.failure), None)
    if failed is not None:
        checked = next(run for run in ordered if run.dirs is None)
        how = f"{failed.name}: {failed.note}; {failed.failure}"
        report = failed_run_report(failed.label, checked.label, how=how)
        return {
            name: Nondeterminism(report if index == 0 else None)
            for index, (name, _, _) in enumerate(recordings)
        }
    check = _RunCheck(ordered, exact, display, plot, max_decompressed_size)
    found = {}
    for name, this_dir, tolerance in recordings:
        differs = check.first_difference(name, this_dir, tolerance)
        if differs is not None:
            found[name] = differs
    return found


@dataclasses.dataclass(frozen=True)
class _RunCheck:
    """One recording's runs compared with the first, for :func:`find_nondeterminism`."""

    runs: Sequence[Run]
    exact: bool
    display: Callable[[Path], str]
    plot: PlotRuns | None
    limit: int

    def first_difference(
        self, name: str, this_dir: Path, tolerance: Tolerance
    ) -> Nondeterminism | None:
        first = self.runs[0]
        reference = _folder(first, name, this_dir)
        for other in self.runs[1:]:
            other_dir = _folder(other, name, this_dir)
            kept = tuple(
                (run_dirname(run.number), path)
                for run, path in [(first, reference), (other, other_dir)]
                if run.dirs is not None and path is not None
            )
            if reference is None or other_dir is None:
                missing, present = (first, other) if reference is None else (other, first)
                runs = [f"{first.name}: {first.note}", f"{other.name}: {other.note}"]
                report = unrecorded_run_report(
                    name, missing=missing.label, present=present.label, runs=runs
                )
                return Nondeterminism(report, kept)
            used = exactly(tolerance) if self.exact else tolerance
            try:
                comparison = compare(reference, other_dir, used, max_decompressed_size=self.limit)
            except (GoldenFormatError, UnsafeGoldenPathError) as error:
                return Nondeterminism(unreadable_run_report(error), kept)
            if not comparison.equal:
                within = (
                    self.exact
                    and compare(
                        reference, other_dir, tolerance, max_decompressed_size=self.limit
                    ).equal
                )
                return Nondeterminism(self._report(comparison, other, this_dir, within), kept)
        return None

    def _report(self, comparison: Comparison, other: Run, this_dir: Path, within: bool) -> Report:
        first = self.runs[0]
        notes = [f"{first.name}: {first.note}", f"{other.name}: {other.note}"]
        if _FRESH_NOTE in other.note:
            notes.append(FRESH_HINT)
        notes += [line for run in self.runs for line in run.context]
        evidence = nondeterminism_evidence(comparison, max_decompressed_size=self.limit)
        hints = format_evidence(evidence, golden=first.label, named_clocks=False)
        if within:
            notes += _within_tolerance(comparison, suggest=not evidence)
        notes += hints
        report = nondeterminism_report(
            comparison, first=first.label, second=other.label, notes=notes, display=self.display
        )
        names = (first.label, other.label)
        plot_line = self.plot(comparison, this_dir, names) if self.plot is not None else None
        if plot_line:
            report = report.with_files(plot_line)  # before the fix, as in a golden mismatch
        return report


def _folder(run: Run, name: str, this_dir: Path) -> Path | None:
    if run.dirs is None:
        return this_dir
    path = run.dirs.get(name)
    return path if path is not None and path.is_dir() else None


def _within_tolerance(comparison: Comparison, *, suggest: bool) -> list[str]:
    """Lines for runs that differ only within the test's tolerance: which fields, and the fix."""
    first = next((e.first for e in comparison.differing if e.first is not None), None)
    fields = list(dict.fromkeys(d.field for d in first.differences)) if first else []
    named = ", ".join(escape(field) for field in fields[:_MAX_FIELDS_NAMED])
    more = f" and {len(fields) - _MAX_FIELDS_NAMED} more" if len(fields) > _MAX_FIELDS_NAMED else ""
    verb = "differs" if len(fields) == 1 else "differ"
    lines = [
        "the runs differ within the test's tolerance, but two recordings on one machine must "
        f"agree exactly: {named}{more} {verb}"
    ]
    if suggest and fields:
        lines.append(
            f"if {escape(fields[0])} is no part of the dynamics, leave it out of the comparison "
            f"with @pytest.mark.goldens(ignore=[{python_string(fields[0])}])"
        )
    return lines


def _base(state: _State, request: pytest.FixtureRequest) -> Path:
    if state.base is None:
        state.base = _new_folder(request, "determinism")
    return state.base


@dataclasses.dataclass
class _Folders:
    """The session's folders of extra runs: one per kind, made once; a test's own inside."""

    bases: dict[str, Path] = dataclasses.field(default_factory=dict)
    count: Iterator[int] = dataclasses.field(default_factory=itertools.count)


_folders_key: Final = pytest.StashKey[_Folders]()


def _new_folder(request: pytest.FixtureRequest, kind: str) -> Path:
    """A new folder of this test's, in the session's folder of ``kind`` (``determinism0/test_x3``).

    Not ``tmp_path_factory.mktemp`` for each test: it lists the whole base
    folder to number a new one, and an update of a hundred tests made three
    hundred of them (a fifth of what the update cost beyond recording).
    """
    folders = request.config.stash.setdefault(_folders_key, _Folders())
    base = folders.bases.get(kind)
    if base is None:
        factory: pytest.TempPathFactory = request.getfixturevalue("tmp_path_factory")
        base = folders.bases[kind] = factory.mktemp(kind)
    name = re.sub(r"\W", "_", request.node.name)[:30]
    folder = base / f"{name}{next(folders.count)}"
    folder.mkdir()
    return folder


def _run_subprocesses(
    item: pytest.Item, settings: GoldensSettings, extra: Plan, base: Path, names: Sequence[str]
) -> list[Run]:
    runs: list[Run] = []
    nodeid = golden_nodeid(item, settings)
    for number in range(2, extra.runs + 2):
        fresh = record_in_fresh_pytest(
            item.config,
            [nodeid],
            base / run_dirname(number),
            offset=number - 1,
            as_update=settings.update,
        )
        dirs = fresh.recordings(nodeid, names)
        if dirs is None:
            runs.append(Run(number, fresh.note, {}, fresh.failure, where=_SUBPROCESS_WHERE))
            break
        runs.append(Run(number, fresh.note, dirs, where=_SUBPROCESS_WHERE))
    return runs


def _tail(text: str) -> str:
    lines = text.rstrip().splitlines()
    if len(lines) > _MAX_FAILURE_LINES:
        lines = ["...", *lines[-_MAX_FAILURE_LINES:]]
    return "\n".join(f"    {line}" for line in lines)

"""Session state: what happened to goldens, gathered for the summary.

Results travel on test reports (``report.gym_goldens``), so the summary is the
same whether tests ran in this process or on pytest-xdist workers. The golden
folders tests used travel the same way (``report.gym_goldens_used``); what
each worker collected comes back in its ``workeroutput``, and the stale
goldens verdict is given once, in the main process.

The goldens an update is about to write wait here until the end of the
session (of each worker), for the fresh process of
:mod:`gym_goldens.plugin.pending`; what became of them comes back in the
worker's output too, and a golden the fresh process did not reproduce fails
the session.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import pytest

from gym_goldens.plugin.settings import GoldensSettings, fresh_base_key, golden_nodeid

if TYPE_CHECKING:
    from gym_goldens.plugin.pending import LateResult
    from gym_goldens.plugin.store import PendingGolden

__all__ = [
    "PROTECTED_ATTRIBUTE",
    "REPORT_ATTRIBUTE",
    "SKIPPED_ATTRIBUTE",
    "USED_ATTRIBUTE",
    "GoldensSession",
    "StaleTracker",
    "SummaryReport",
    "relative_golden_dir",
    "session_key",
]

REPORT_ATTRIBUTE: Final = "gym_goldens"
"""The test report attribute that carries ``[[status, golden path], ...]``."""

USED_ATTRIBUTE: Final = "gym_goldens_used"
"""The test report attribute that carries the golden folders a test used,
relative to the goldens dir."""

PROTECTED_ATTRIBUTE: Final = "gym_goldens_protected"
"""The report attribute that carries golden folders, relative to the goldens
dir, under which no golden is stale: the plain golden folder of a test that
keeps variants (the variants of other machines live inside it)."""

SKIPPED_ATTRIBUTE: Final = "gym_goldens_skipped"
"""The report attribute of a skipped or xfailed test that carries its golden
node id: its goldens were not reached, so they are not stale."""

WORKER_OUTPUT_KEY: Final = "gym_goldens"
"""The key of what a pytest-xdist worker sends back in ``workeroutput``."""

LATE_KEY: Final = "gym_goldens_late"
"""The key, in a pytest-xdist worker's ``workeroutput``, of what became of its waiting goldens."""

LEFT_OUT_KEY: Final = "gym_goldens_left_out"
"""The key, in a pytest-xdist worker's ``workeroutput``, of the ids ``registered_envs`` left out."""

REGISTRY_MODULE: Final = "gym_goldens.audit.registry"
"""The module of ``registered_envs``: only a test module that uses it imports it."""


@dataclasses.dataclass
class StaleTracker:
    """What a session saw, to tell which goldens no test used (see :mod:`.stale`).

    Golden folders are kept as POSIX paths relative to the goldens dir, so
    they compare equal across processes.

    Attributes:
        test_files: The collected test files (the file part of node ids);
            their golden folders are looked at.
        dirs: The folders of the test tree collected whole (relative to the
            rootdir, POSIX, ``""`` for the rootdir): a golden folder in theirs
            that no file or folder of the tree maps to is of a deleted test
            file.
        used: The golden folders that tests compared or updated.
        protected: Golden folders whose goldens are not stale: the plain
            golden folders of tests that keep variants (which hold the
            variants of other machines and versions).
        skipped: The golden node ids of skipped and xfailed tests, and of
            the tests ``registered_envs`` left out here: their goldens were
            just not reached.
        deselected: How many tests were deselected.
        partial_reason: Why the run does not cover the collected files, if
            known before the end (for example, tests picked by node id).
    """

    test_files: set[str] = dataclasses.field(default_factory=set)
    dirs: set[str] = dataclasses.field(default_factory=set)
    used: set[str] = dataclasses.field(default_factory=set)
    protected: set[str] = dataclasses.field(default_factory=set)
    skipped: set[str] = dataclasses.field(default_factory=set)
    deselected: int = 0
    partial_reason: str | None = None

    def worker_output(self) -> dict[str, Any]:
        """What a pytest-xdist worker sends back (plain, serialisable data)."""
        return {
            "test_files": sorted(self.test_files),
            "dirs": sorted(self.dirs),
            "skipped": sorted(self.skipped),
            "deselected": self.deselected,
        }

    def merge_worker_output(self, output: dict[str, Any]) -> None:
        """Add what a pytest-xdist worker sent back."""
        self.test_files.update(output.get("test_files", ()))
        self.dirs.update(output.get("dirs", ()))
        self.skipped.update(output.get("skipped", ()))
        self.deselected += int(output.get("deselected", 0))

    def incomplete_reason(self, exitstatus: int) -> str | None:
        """Why no verdict can be given, or None when the run was complete."""
        if exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED:
            # Test modules that skip themselves (a missing env package) collect no test.
            return "no test ran (every test was skipped, or none was collected)"
        if exitstatus != 0:
            return "the run did not pass"
        if self.partial_reason:
            return self.partial_reason
        if self.deselected == 1:
            return "1 test was deselected"
        if self.deselected:
            return f"{self.deselected} tests were deselected"
        if not self.test_files:
            return "no test file was collected"
        return None


def relative_golden_dir(settings: GoldensSettings, path: Path) -> str:
    """A golden folder as a POSIX path relative to the goldens dir."""
    return path.relative_to(settings.goldens_dir).as_posix()


@dataclasses.dataclass
class SummaryReport:
    """What the session did with goldens, as data; the summary hook prints ``lines``."""

    created: list[str] = dataclasses.field(default_factory=list)
    updated: list[str] = dataclasses.field(default_factory=list)
    unchanged: list[str] = dataclasses.field(default_factory=list)
    passed: list[str] = dataclasses.field(default_factory=list)
    failed: list[str] = dataclasses.field(default_factory=list)
    missing: list[str] = dataclasses.field(default_factory=list)
    nondeterministic: list[str] = dataclasses.field(default_factory=list)
    warnings: list[str] = dataclasses.field(default_factory=list)
    stale: list[str] = dataclasses.field(default_factory=list)
    pruned: list[str] = dataclasses.field(default_factory=list)
    notes: list[str] = dataclasses.field(default_factory=list)
    keeps_artifacts: bool = False
    late_failures: list[tuple[str, str, str]] = dataclasses.field(default_factory=list)
    """``(node id, status, failure text)`` of the tests whose goldens were not written at the
    end; the status is ``nondeterministic`` or ``failed``."""
    left_out: dict[str, str] = dataclasses.field(default_factory=dict)
    """The ids ``registered_envs`` left out, with the reason; listed in verbose output."""

    def add(self, status: str, golden: str) -> None:
        """Count one golden under ``status``."""
        getattr(self, status).append(golden)

    def late_entries(self) -> list[tuple[str, str, str]]:
        """``(node id, status, text)`` of each test whose goldens were not written at the end.

        The text says so on its first line, then gives the failure: the
        summary prints it after the node id, the HTML report as the test's entry.
        """
        return [
            (nodeid, status, f"checked after the tests, its golden not written\n{message}")
            for nodeid, status, message in sorted(self.late_failures)
        ]

    @property
    def lines(self) -> list[str]:
        """The summary lines; empty when no golden was touched."""
        counts = [
            (len(self.passed), "matched"),
            (len(self.failed), "mismatched"),
            (len(self.missing), "missing"),
            (len(self.nondeterministic), "nondeterministic"),
            (len(self.created), "created"),
            (len(self.updated), "updated"),
            (len(self.unchanged), "kept"),
        ]
        parts = [f"{count} {label}" for count, label in counts if count]
        lines: list[str] = []
        for nodeid, _, text in self.late_entries():
            lines += [*f"{nodeid}: {text}".splitlines(), ""]
        if parts:
            lines.append("goldens: " + ", ".join(parts))
        for label, paths in [
            ("created", self.created),
            ("updated", self.updated),
            ("nondeterministic", self.nondeterministic),
        ]:
            lines += [f"  {label}: {path}" for path in sorted(paths)]
        if self.unchanged:
            lines += _listed("kept", self.unchanged)
            lines.append(
                "  kept: they still match within the test's tolerance, in this format and storage; "
                "rewrite them anyway with --update-goldens-all"
            )
        if self.missing:
            lines.append("  record the missing goldens with: pytest --update-goldens")
        if (self.failed or self.missing or self.nondeterministic) and not self.keeps_artifacts:
            lines.append(
                "  the recordings and plots of these failures are in pytest's temporary folders, "
                "which it deletes after three more runs: keep them with --goldens-artifacts=DIR"
            )
        lines += self.warnings
        if self.stale:
            count = len(self.stale)
            lines.append(f"stale goldens: {count} (no test of this complete run used them)")
            lines += _listed("stale", self.stale)
            lines.append("  delete them with: pytest --update-goldens --prune-goldens")
        if self.pruned:
            lines.append(f"pruned goldens: {len(self.pruned)} stale goldens deleted")
            lines += _listed("deleted", self.pruned)
        lines += self.notes
        return lines

    @property
    def verbose_lines(self) -> list[str]:
        """The lines added with ``-v``: the ids ``registered_envs`` left out."""
        if not self.left_out:
            return []
        # Loaded only here: this module loads in every pytest run.
        from gym_goldens.present.table import format_left_out

        return format_left_out(self.left_out, by="registered_envs")


def _listed(label: str, paths: Sequence[str], limit: int = 20) -> list[str]:
    shown = sorted(paths)
    lines = [f"  {label}: {path}" for path in shown[:limit]]
    if len(shown) > limit:
        lines.append(f"  ... ({len(shown) - limit} more)")
    return lines


class GoldensSession:
    """The plugin object registered for one pytest session."""

    def __init__(self, config: pytest.Config, settings: GoldensSettings) -> None:
        self.config = config
        self.settings = settings
        self.report = SummaryReport(keeps_artifacts=settings.artifacts_dir is not None)
        self.tracker = StaleTracker()
        self.waiting: list[PendingGolden] = []
        """Goldens about to be written, waiting for the fresh process."""
        """The folder of the fresh process's recordings, made with the first waiting golden."""
        self.deselected: list[str] = []
        """The golden node ids of the tests collected but deselected (``-k``, ``-m``)."""
        self._is_worker = hasattr(config, "workerinput")
        self.tracker.partial_reason = settings.subset
        if settings.update and _running_in_ci():
            self.report.warnings.append(
                "warning: --update-goldens ran with CI set: goldens written in CI are usually a "
                "mistake; regenerate them locally, review the diff and commit it"
            )

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        if self.settings.update and not self._is_worker:
            self._tidy_goldens_dir(at_start=True)

    def _tidy_goldens_dir(self, *, at_start: bool) -> None:
        """Remove dead leftovers of interrupted updates; keep them out of git's way.

        Done by the controlling process of a run that writes goldens, never by
        a pytest-xdist worker: a leftover is removed only when the process
        that wrote it is gone, so no run deletes a file another is writing.
        """
        # Loaded only here: this module loads in every pytest run.
        from gym_goldens.format.files import ensure_gitignore, remove_dead_leftovers
        from gym_goldens.format.layout import GITIGNORE

        goldens_dir = self.settings.goldens_dir
        if not goldens_dir.is_dir():
            return
        try:
            ensure_gitignore(goldens_dir)
        except OSError as error:
            # A read-only folder or a full disk: the tests that write goldens
            # fail and say so; the session itself goes on.
            reason = getattr(error, "reason", None) or error.strerror or str(error)
            note = f"could not write {GITIGNORE} in the goldens dir ({reason})"
            if note not in self.report.notes:
                self.report.notes.append(note)
        if at_start:
            removed = remove_dead_leftovers(goldens_dir)
            if removed:
                self.report.notes.append(
                    f"removed {len(removed)} temporary file{'s' if len(removed) > 1 else ''} "
                    "left by interrupted updates"
                )

    def defer(self, goldens: Sequence[PendingGolden]) -> None:
        """Keep goldens about to be written until the end of the session."""
        self.waiting += goldens

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        for status, golden in getattr(report, REPORT_ATTRIBUTE, ()):
            self.report.add(status, golden)
        self.tracker.used.update(getattr(report, USED_ATTRIBUTE, ()))
        self.tracker.protected.update(getattr(report, PROTECTED_ATTRIBUTE, ()))
        self.tracker.skipped.update(getattr(report, SKIPPED_ATTRIBUTE, ()))

    def pytest_collectstart(self, collector: pytest.Collector) -> None:
        if isinstance(collector, (pytest.Dir, pytest.Package)):
            relative = _collected_whole(collector.path, self.config)
            if relative is not None:
                self.tracker.dirs.add(relative)

    def pytest_deselected(self, items: list[pytest.Item]) -> None:
        self.tracker.deselected += len(items)
        # Tests that exist, though they do not run: a missing golden's renamed self is not theirs.
        self.deselected += [golden_nodeid(item, self.settings) for item in items]

    def pytest_collection_modifyitems(
        self, config: pytest.Config, items: list[pytest.Item]
    ) -> None:
        tests = self.settings.record_tests
        if tests is None:
            return
        # A fresh process that records tests again runs the tests it was given.
        kept = [item for item in items if golden_nodeid(item, self.settings) in tests]
        left = [item for item in items if golden_nodeid(item, self.settings) not in tests]
        if left:
            config.hook.pytest_deselected(items=left)
            items[:] = kept

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        # Golden folders depend on the file part of a node id only; they are
        # worked out when the stale goldens are looked for, if they are.
        self.tracker.test_files.update(item.nodeid.partition("::")[0] for item in session.items)
        if REGISTRY_MODULE in sys.modules:
            from gym_goldens.audit.registry import left_out_in, left_out_nodeids

            self.report.left_out.update(left_out_in(session.items))
            # Like a skipped test's, the goldens of an id left out here are not stale.
            self.tracker.skipped.update(
                left_out_nodeids(session.items, lambda item: golden_nodeid(item, self.settings))
            )

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: object | None) -> None:
        # pytest-xdist: a worker finished and sent back what it collected.
        output = getattr(node, "workeroutput", {}).get(WORKER_OUTPUT_KEY)
        if output:
            self.tracker.merge_worker_output(output)
        self.report.left_out.update(getattr(node, "workeroutput", {}).get(LEFT_OUT_KEY, {}))
        late = getattr(node, "workeroutput", {}).get(LATE_KEY)
        if late:
            from gym_goldens.plugin.pending import LateResult

            self._add_late([LateResult.from_json(result) for result in late])

    @pytest.hookimpl(tryfirst=True)  # before pytest's own, which may remove tmp_path folders
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if self.settings.record_into is not None:
            return  # a fresh process that records tests again: nothing else
        late = self._finish_waiting(interrupted=exitstatus == pytest.ExitCode.INTERRUPTED)
        if self._is_worker:
            output = self.config.workeroutput  # type: ignore[attr-defined]
            output[WORKER_OUTPUT_KEY] = self.tracker.worker_output()
            output[LEFT_OUT_KEY] = self.report.left_out
            output[LATE_KEY] = [result.to_json() for result in late]
            return
        self._add_late(late)
        failed = len(self.report.late_failures)
        if failed:
            self.report.notes.append(
                f"--update-goldens: {failed} test{'s' if failed > 1 else ''} whose goldens were "
                "not written after the tests fail the session"
            )
            session.exitstatus = exitstatus = pytest.ExitCode.TESTS_FAILED
        if self.settings.update:
            self._tidy_goldens_dir(at_start=False)
        self._stale_verdict(session, int(exitstatus))

    def _stale_verdict(self, session: pytest.Session, exitstatus: int) -> None:
        """Find the stale goldens of a complete run; prune them, or fail a strict run."""
        settings = self.settings
        reason = self.tracker.incomplete_reason(exitstatus)
        if reason is not None:
            if settings.strict or settings.prune:
                self.report.notes.append(f"stale goldens not checked: {reason}")
            return
        # Loaded only here: this module loads in every pytest run.
        from gym_goldens.plugin.stale import prune, stale_goldens

        tracker = self.tracker
        found = stale_goldens(
            settings.goldens_dir,
            test_files=tracker.test_files,
            dirs=tracker.dirs,
            rootdir=settings.rootdir,
            used=tracker.used,
            protected=tracker.protected,
            skipped=tracker.skipped,
        )
        stale = found.goldens
        self.report.notes += [
            f"stale goldens: not looked into {settings.display(Path(error.path))}: {error.reason}"
            for error in found.refused
        ]
        if settings.update and settings.prune:
            pruned = prune(settings.goldens_dir, stale)
            self.report.pruned += [
                settings.display(settings.goldens_dir / p) for p in pruned.goldens
            ]
            self.report.notes += [
                f"not pruned: {settings.display(Path(error.path))}: {error.reason}"
                for error in pruned.refused
            ]
            return
        self.report.stale += [settings.display(settings.goldens_dir / p) for p in stale]
        if stale and settings.strict:
            self.report.notes.append(
                f"--goldens-strict: {len(stale)} stale golden{'s' if len(stale) > 1 else ''} "
                "fail the run"
            )
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def _finish_waiting(self, *, interrupted: bool) -> list[LateResult]:
        """Write the goldens that waited, if the fresh process agrees."""
        fresh_base = self.config.stash.get(fresh_base_key, None)
        if not self.waiting or fresh_base is None:
            return []
        if interrupted:
            count = len(self.waiting)
            self.waiting = []
            self.report.notes.append(
                f"{count} golden{'s' if count > 1 else ''} about to be written "
                f"{'were' if count > 1 else 'was'} not: the session was interrupted before a "
                "fresh process recorded them again"
            )
            return []
        # Loaded only here: this module loads in every pytest run.
        from gym_goldens.plugin.pending import finish_pending

        waiting, self.waiting = self.waiting, []
        return finish_pending(self.config, waiting, fresh_base)

    def _add_late(self, late: Sequence[LateResult]) -> None:
        for result in late:
            self.report.add(result.status, result.golden)
            if result.message is not None:
                self.report.late_failures.append((result.nodeid, result.status, result.message))

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if self._is_worker:
            return
        lines = self.report.lines
        if terminalreporter.verbosity > 0:
            lines += self.report.verbose_lines
        if not lines:
            return
        # Loaded here, at the hook, like the rest of the package: a run that
        # touched no golden prints nothing and loads only the wiring.
        from gym_goldens.present.text import printable

        terminalreporter.section("gym-goldens", sep="-", bold=False)
        for line in lines:
            # Folder names come from the goldens dir, as a pull request left it.
            terminalreporter.line(printable(line))


session_key: Final = pytest.StashKey[GoldensSession]()


def _collected_whole(folder: Path, config: pytest.Config) -> str | None:
    """The folder relative to the rootdir, if a command-line path collects all of it.

    pytest also collects the folders on the way to a file given on the
    command line, of which it collects that file only: those are not whole.
    """
    rootdir = config.rootpath
    try:
        relative = folder.relative_to(rootdir).as_posix()
    except ValueError:
        return None  # outside the rootdir: no goldens of its own
    invocation = config.invocation_params.dir
    for arg in config.args:
        given = (invocation / str(arg).partition("::")[0]).resolve()
        if given.is_dir() and (given == folder or given in folder.parents):
            return "" if relative == "." else relative
    return None


def _running_in_ci() -> bool:
    # CI services set CI (GitHub Actions, GitLab, CircleCI, Travis: "true"); "0"/"false" opt out.
    return os.environ.get("CI", "").strip().lower() not in {"", "0", "false", "no"}

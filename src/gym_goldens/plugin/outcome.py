"""The end of one golden test: its checks run, their outcome put on the test report.

After the test body passed, :func:`finish_test` compares (or updates) every
recording of the test, copies failing recordings to ``--goldens-artifacts``
and gathers what the session needs into one :class:`TestOutcome`: the
statuses for the summary, the golden folders for the stale-goldens verdict,
the mismatches for ``--goldens-report``, and the failure text. The outcome
travels on the test report (:meth:`TestOutcome.attach`), so the session sees
the same with and without pytest-xdist. The goldens an update is about to
write go to the session instead, to wait for the fresh process
(:mod:`gym_goldens.plugin.pending`); they are counted when written.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Final

import pytest

from gym_goldens.plugin import repeats
from gym_goldens.plugin.artifacts import save_artifacts
from gym_goldens.plugin.check import CheckResult, TrajectoryChecks
from gym_goldens.plugin.htmlreport import MISMATCH_ATTRIBUTE
from gym_goldens.plugin.renamed import KnownTests
from gym_goldens.plugin.session import (
    PROTECTED_ATTRIBUTE,
    REPORT_ATTRIBUTE,
    USED_ATTRIBUTE,
    relative_golden_dir,
    session_key,
)
from gym_goldens.plugin.settings import golden_nodeid, settings_key
from gym_goldens.present.html import Mismatch
from gym_goldens.present.text import printable

__all__ = ["TestOutcome", "finish_test", "mismatches_of"]

_REPORTED: Final = frozenset({"failed", "missing"})


@dataclasses.dataclass(frozen=True)
class TestOutcome:
    """What the checks of one test found, as the test report carries it.

    Attributes:
        results: ``[status, golden folder as shown]`` of each recording.
        used: The golden folders the test used, relative to the goldens dir.
        protected: Golden folders under which nothing is stale (the plain
            golden folders of recordings kept per variant).
        mismatches: The failed and missing recordings, for the HTML report.
        failure: The failure text of the test, or None when it passed.
    """

    __test__ = False  # not a test class, whatever pytest's collection thinks of its name

    results: list[list[str]]
    used: list[str]
    protected: list[str]
    mismatches: list[dict[str, Any]]
    failure: str | None

    def attach(self, report: pytest.TestReport) -> None:
        """Put the outcome on the test report of the test's call."""
        if self.results:
            setattr(report, REPORT_ATTRIBUTE, self.results)
        if self.used:
            setattr(report, USED_ATTRIBUTE, self.used)
        if self.protected:
            # Other machines' variants of a golden this test used are not stale.
            setattr(report, PROTECTED_ATTRIBUTE, self.protected)
        if self.mismatches:
            setattr(report, MISMATCH_ATTRIBUTE, self.mismatches)


def finish_test(item: pytest.Item, checks: TrajectoryChecks) -> TestOutcome | None:
    """Check the recordings of a test whose body passed.

    Returns:
        The outcome; None for an extra run of a determinism check, whose
        recordings are kept for the real run to compare.
    """
    if repeats.intercept(item, checks.flush):
        return None
    runs = repeats.runs_of(item, checks.flush)
    checked = checks.check(runs, defer=repeats.verifies_fresh(item), known=_known_tests(item))
    # The last guard: whatever a message holds from a golden or an env is
    # printable, wherever it goes (the terminal, report.txt, the HTML page).
    results = [
        dataclasses.replace(result, message=printable(result.message)) if result.message else result
        for result in checked
    ]
    # Goldens about to be written wait for the fresh process; they are
    # counted when written, at the end of the session.
    waiting = [result.pending for result in results if result.pending is not None]
    if waiting:
        item.config.stash[session_key].defer(waiting)
    settings = item.config.stash[settings_key]
    _, notes = save_artifacts(results, settings, item.nodeid)
    failures = [result.message for result in results if result.message] + notes
    return TestOutcome(
        results=[
            [result.status, settings.display(result.golden_dir)]
            for result in results
            if result.pending is None
        ],
        used=[relative_golden_dir(settings, result.golden_dir) for result in results],
        protected=[relative_golden_dir(settings, folder) for folder in checks.variant_families()],
        mismatches=(
            mismatches_of(item.nodeid, results, settings.display)
            if settings.report_dir is not None
            else []
        ),
        failure=printable("\n\n".join(failures)) if failures else None,
    )


def _known_tests(item: pytest.Item) -> KnownTests:
    """The tests of the session in the file of ``item``, for a missing golden."""
    settings = item.config.stash[settings_key]
    session = item.config.stash[session_key]
    file_part = item.nodeid.partition("::")[0]

    def collected() -> list[str]:
        selected = [golden_nodeid(other, settings) for other in item.session.items]
        return [
            nodeid
            for nodeid in [*selected, *session.deselected]
            if nodeid.partition("::")[0] == file_part
        ]

    # Deselected tests were collected: only a run of picked node ids (or --lf) is partial.
    return KnownTests(collected, settings.subset is None, getattr(item, "module", None))


def mismatches_of(
    nodeid: str, results: Iterable[CheckResult], display: Callable[[Path], str]
) -> list[dict[str, Any]]:
    """The report data of a test's failed and missing recordings."""
    found = []
    for result in results:
        if result.status not in _REPORTED or result.message is None:
            continue
        details = [("recording", result.name), ("golden", display(result.golden_dir))]
        if result.actual_dir is not None:
            details.append(("actual recording", display(result.actual_dir)))
        plot_png = note = None
        if result.plot is not None:
            try:
                plot_png = result.plot.read_bytes()
                details.append(("plot", display(result.plot)))
            except OSError as error:
                note = f"the plot {display(result.plot)} could not be read ({error.strerror})"
        elif result.status == "failed" and not result.images:
            note = "no plot: no numeric field diverges, or matplotlib is not installed"
        images = _images(result.images)
        mismatch = Mismatch(
            nodeid, result.status, result.message, tuple(details), plot_png, note, images
        )
        found.append(mismatch.to_json())
    return found


def _images(paths: Iterable[Path]) -> tuple[tuple[str, bytes], ...]:
    """The golden, actual and diff images of a failure, as the page embeds them."""
    try:
        return tuple((path.stem, path.read_bytes()) for path in paths)
    except OSError:
        return ()  # the message names where they should be

"""``--goldens-report=DIR``: one HTML page with every golden mismatch of a session.

``pytest --goldens-report=DIR`` writes ``DIR/index.html``: the artifact a CI
job uploads. Each mismatch shows the failure text and the plot of its
diverging fields, embedded (:mod:`gym_goldens.present.html`).

The data travels on test reports (the ``gym_goldens_mismatches`` attribute,
plain strings), so the page is the same whether tests ran in this process or
on pytest-xdist workers: workers attach it, the controller writes the page.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Final

import pytest

from gym_goldens.errors import GoldenWriteError
from gym_goldens.format.layout import HTML_REPORT
from gym_goldens.present.html import Mismatch, render_page, write_page
from gym_goldens.present.text import printable

__all__ = ["MISMATCH_ATTRIBUTE", "HtmlReport"]

MISMATCH_ATTRIBUTE: Final = "gym_goldens_mismatches"
"""The test report attribute that carries the mismatches of a test, as dicts."""


class HtmlReport:
    """The plugin object behind ``--goldens-report``: gathers, then writes the page.

    Registered on the controller only; on pytest-xdist workers the mismatches
    travel to it on the test reports.

    Args:
        report_dir: The folder that receives ``index.html``.
        display: Turns a path into the text shown.
        late_entries: ``(node id, status, text)`` of the tests whose goldens an
            update did not write at the session's end (a fresh process
            recorded them otherwise): found after every test report, asked
            for when the page is written.
    """

    def __init__(
        self,
        report_dir: Path,
        display: Callable[[Path], str] = str,
        late_entries: Callable[[], Sequence[tuple[str, str, str]]] = tuple,
    ) -> None:
        self.path = report_dir / HTML_REPORT
        self.display = display
        self.late_entries = late_entries
        self.mismatches: list[Mismatch] = []
        self.tests = 0
        self.written = False
        self.error: str | None = None

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when == "call":
            self.tests += 1
        for data in getattr(report, MISMATCH_ATTRIBUTE, ()):
            self.mismatches.append(Mismatch.from_json(data))

    def pytest_sessionfinish(self) -> None:
        # The session's own sessionfinish (tryfirst) has run the fresh process by now.
        self.mismatches += [
            Mismatch(title=nodeid, status=status, message=printable(text))
            for nodeid, status, text in self.late_entries()
        ]
        count = len(self.mismatches)
        noun = "mismatch" if count == 1 else "mismatches"
        now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        page = render_page(
            f"gym-goldens: {count} golden {noun}",
            [f"{self.tests} test{'' if self.tests == 1 else 's'} ran; report written {now}."],
            sorted(self.mismatches, key=lambda m: m.title),
            empty="Every recorded trajectory matched its golden.",
        )
        try:
            write_page(self.path, page)
        except GoldenWriteError as error:
            # A folder where the page goes, a read-only folder: the session's
            # results stand; the summary says why there is no page.
            self.error = f"{self.display(Path(error.path))}: {error.reason}"
            return
        self.written = True

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if self.written:
            terminalreporter.write_sep("-", f"gym-goldens report: {self.display(self.path)}")
        elif self.error is not None:
            terminalreporter.write_sep(
                "-",
                printable(
                    f"gym-goldens report not written: {self.error}; remove what is in the way, "
                    "or give --goldens-report another folder"
                ),
            )

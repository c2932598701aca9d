"""Session state: what happened to goldens, gathered for the summary.

Results travel on test reports (``report.gym_goldens``), so the summary is the
same whether tests ran in this process or on pytest-xdist workers.
"""

from __future__ import annotations

import os
from typing import Final

import pytest

from gym_goldens.report import SummaryReport
from gym_goldens.settings import GoldensSettings

__all__ = ["REPORT_ATTRIBUTE", "GoldensSession", "session_key"]

REPORT_ATTRIBUTE: Final = "gym_goldens"
"""The test report attribute that carries ``[[status, golden path], ...]``."""


class GoldensSession:
    """The plugin object registered for one pytest session."""

    def __init__(self, config: pytest.Config, settings: GoldensSettings) -> None:
        self.config = config
        self.settings = settings
        self.report = SummaryReport()
        if settings.update and _running_in_ci():
            self.report.warnings.append(
                "warning: --update-goldens ran with CI set: goldens written in CI are usually a "
                "mistake; regenerate them locally, review the diff and commit it"
            )

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        for status, golden in getattr(report, REPORT_ATTRIBUTE, ()):
            self.report.add(status, golden)

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if hasattr(self.config, "workerinput"):
            return
        lines = self.report.lines
        if not lines:
            return
        terminalreporter.section("gym-goldens", sep="-", bold=False)
        for line in lines:
            terminalreporter.line(line)


session_key: Final = pytest.StashKey[GoldensSession]()


def _running_in_ci() -> bool:
    # CI services set CI (GitHub Actions, GitLab, CircleCI, Travis: "true"); "0"/"false" opt out.
    return os.environ.get("CI", "").strip().lower() not in {"", "0", "false", "no"}

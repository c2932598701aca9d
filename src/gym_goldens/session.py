"""Session state: what happened to goldens, gathered for the summary.

Results travel on test reports (``report.gym_goldens``), so the summary is the
same whether tests ran in this process or on pytest-xdist workers.
"""

from __future__ import annotations

import dataclasses
from typing import Final

import pytest

from gym_goldens.settings import GoldensSettings

__all__ = ["REPORT_ATTRIBUTE", "GoldensSession", "SummaryReport", "session_key"]

REPORT_ATTRIBUTE: Final = "gym_goldens"
"""The test report attribute that carries ``[[status, golden path], ...]``."""


@dataclasses.dataclass
class SummaryReport:
    """What the session did with goldens, as data; the summary hook prints ``lines``."""

    created: list[str] = dataclasses.field(default_factory=list)
    updated: list[str] = dataclasses.field(default_factory=list)
    unchanged: list[str] = dataclasses.field(default_factory=list)
    passed: list[str] = dataclasses.field(default_factory=list)
    failed: list[str] = dataclasses.field(default_factory=list)
    missing: list[str] = dataclasses.field(default_factory=list)
    warnings: list[str] = dataclasses.field(default_factory=list)

    def add(self, status: str, golden: str) -> None:
        """Count one golden under ``status``."""
        getattr(self, status).append(golden)

    @property
    def lines(self) -> list[str]:
        """The summary lines; empty when no golden was touched."""
        counts = [
            (len(self.passed), "matched"),
            (len(self.failed), "mismatched"),
            (len(self.missing), "missing"),
            (len(self.created), "created"),
            (len(self.updated), "updated"),
            (len(self.unchanged), "unchanged"),
        ]
        parts = [f"{count} {label}" for count, label in counts if count]
        lines: list[str] = []
        if parts:
            lines.append("goldens: " + ", ".join(parts))
        for label, paths in [("created", self.created), ("updated", self.updated)]:
            lines += [f"  {label}: {path}" for path in sorted(paths)]
        if self.missing:
            lines.append("  record the missing goldens with: pytest --update-goldens")
        lines += self.warnings
        return lines


class GoldensSession:
    """The plugin object registered for one pytest session."""

    def __init__(self, config: pytest.Config, settings: GoldensSettings) -> None:
        self.config = config
        self.settings = settings
        self.report = SummaryReport()

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

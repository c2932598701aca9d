"""The terminal summary of a session, as data.

Kept apart from the failure text so that the plugin can build it at start-up
without importing numpy or the comparison.
"""

from __future__ import annotations

import dataclasses

__all__ = ["SummaryReport"]


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

"""Shared fixtures of the project's tests."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _outside_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    """Run every test as on a developer's machine, also when the suite runs in CI.

    With ``CI`` set, pytest prints whole failure messages in its short summary
    and gym-goldens warns about ``--update-goldens``: both would change the
    output that the plugin tests read. Tests of CI behaviour set it themselves.
    """
    monkeypatch.delenv("CI", raising=False)

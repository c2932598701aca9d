"""Shared fixtures of the project's tests."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Final

import pytest

from tests.support import planted


@pytest.fixture(autouse=True, scope="session")
def _temporary_files_in_pytest_folders(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[None]:
    """Keep what the code under test writes to the system temp folder in pytest's own folders.

    ``assert_deterministic`` keeps the recordings of a failed check, and
    ``gym-goldens record`` and the benchmarks' helpers write scratch folders
    there: a run of the suite leaves nothing behind outside the folders
    pytest rotates away. Subprocesses get the folder through ``TMPDIR``.
    """
    folder = str(tmp_path_factory.mktemp("tmp"))
    saved_tempdir, saved_environ = tempfile.tempdir, os.environ.get("TMPDIR")
    tempfile.tempdir = os.environ["TMPDIR"] = folder
    try:
        yield
    finally:
        tempfile.tempdir = saved_tempdir
        if saved_environ is None:
            os.environ.pop("TMPDIR", None)
        else:
            os.environ["TMPDIR"] = saved_environ


@pytest.fixture(autouse=True)
def _outside_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    """Run every test as on a developer's machine, also when the suite runs in CI.

    With ``CI`` set, pytest prints whole failure messages in its short summary
    and gym-goldens warns about ``--update-goldens``: both would change the
    output that the plugin tests read. Tests of CI behaviour set it themselves.
    """
    monkeypatch.delenv("CI", raising=False)


FRESH_PROCESS_OFF: Final = "-o goldens_update_fresh_process=false"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "fresh_process: the test's pytester runs re-record an update's goldens in a fresh process",
    )


@pytest.fixture(autouse=True)
def _updates_in_one_process(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Under ``--update-goldens``, pytester projects compare this process's two recordings only.

    The fresh process that an update starts to re-record the goldens it is
    about to write (one ``python -m pytest``, a second or more) would add
    minutes to the many tests that create goldens to check something else.
    The tests marked ``fresh_process`` (tests/plugin/test_fresh.py) check it.
    """
    if "pytester" not in request.fixturenames or request.node.get_closest_marker("fresh_process"):
        return
    request.getfixturevalue("pytester")  # which empties PYTEST_ADDOPTS when it starts
    monkeypatch.setenv("PYTEST_ADDOPTS", FRESH_PROCESS_OFF)


@pytest.fixture
def planted_package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A folder holding the planted env package (``planted_envs.py``); the current folder.

    It is on ``sys.path``, and inherited by subprocesses through the current
    folder; the package's ids are unregistered afterwards.
    """
    folder = tmp_path / "package"
    folder.mkdir()
    planted.install(folder)
    monkeypatch.chdir(folder)
    monkeypatch.syspath_prepend(str(folder))
    try:
        yield folder
    finally:
        planted.forget()

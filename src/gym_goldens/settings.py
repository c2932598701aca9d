"""The plugin's settings, resolved once per session from options and ini."""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path
from typing import Final

import pytest

from gym_goldens.tolerance import DEFAULT_ATOL, DEFAULT_RTOL

__all__ = ["GoldensSettings", "add_options", "settings_key"]

_GROUP: Final = "gym-goldens"


@dataclasses.dataclass(frozen=True)
class GoldensSettings:
    """Options of one pytest session.

    Attributes:
        goldens_dir: Absolute path of the goldens root.
        update: Whether ``--update-goldens`` was given.
        rtol: Default relative tolerance (ini ``goldens_rtol``).
        atol: Default absolute tolerance (ini ``goldens_atol``).
        rootdir: The session's rootdir.
        invocation_dir: Where pytest was started, for showing paths.
        determinism: Extra runs of each recording test (``--goldens-determinism``).
        determinism_mode: Where they run: ``inprocess`` or ``subprocess``.
        artifacts_dir: Where failing recordings are copied (``--goldens-artifacts``).
        record_into: Set in the subprocess of a cross-process run: record
            there, check nothing (hidden ``--goldens-record-into``).
    """

    goldens_dir: Path
    update: bool
    rtol: float
    atol: float
    rootdir: Path
    invocation_dir: Path
    determinism: int = 0
    determinism_mode: str = "inprocess"
    artifacts_dir: Path | None = None
    record_into: Path | None = None

    def display(self, path: Path | str) -> str:
        """A path as shown to the user: relative to the invocation folder if inside it."""
        target = Path(path)
        try:
            return str(target.relative_to(self.invocation_dir))
        except ValueError:
            return str(target)

    @classmethod
    def from_config(cls, config: pytest.Config) -> GoldensSettings:
        """Resolve the options and ini values of ``config``.

        Raises:
            pytest.UsageError: An ini tolerance is not a non-negative number.
        """
        rootdir = config.rootpath
        invocation_dir = config.invocation_params.dir
        option_dir = config.getoption("goldens_dir")
        if option_dir:
            goldens_dir = (invocation_dir / option_dir).resolve()
        else:
            goldens_dir = (rootdir / str(config.getini("goldens_dir"))).resolve()
        determinism = int(config.getoption("goldens_determinism") or 0)
        if determinism < 0:
            raise pytest.UsageError(f"--goldens-determinism must be 0 or more, got {determinism}")
        artifacts = config.getoption("goldens_artifacts")
        record_into = config.getoption("goldens_record_into")
        return cls(
            goldens_dir=goldens_dir,
            update=bool(config.getoption("update_goldens")),
            rtol=_ini_number(config, "goldens_rtol"),
            atol=_ini_number(config, "goldens_atol"),
            rootdir=rootdir,
            invocation_dir=invocation_dir,
            determinism=determinism,
            determinism_mode=str(config.getoption("goldens_determinism_mode")),
            artifacts_dir=(invocation_dir / artifacts).resolve() if artifacts else None,
            record_into=Path(record_into).resolve() if record_into else None,
        )


settings_key: Final = pytest.StashKey[GoldensSettings]()


def add_options(parser: pytest.Parser) -> None:
    """Register the command-line options and ini values."""
    group = parser.getgroup(_GROUP, "golden trajectories of Gymnasium envs")
    group.addoption(
        "--update-goldens",
        action="store_true",
        dest="update_goldens",
        default=False,
        help="write the recordings of the selected tests as their goldens (create or replace).",
    )
    group.addoption(
        "--goldens-dir",
        dest="goldens_dir",
        default=None,
        metavar="DIR",
        help="folder of the golden recordings (default: ini goldens_dir, 'goldens' in the rootdir).",
    )
    group.addoption(
        "--goldens-determinism",
        dest="goldens_determinism",
        type=int,
        default=0,
        metavar="N",
        help="run each test that records trajectories N more times; all runs must record the same "
        "trajectories (a nondeterministic test fails and never writes a golden).",
    )
    group.addoption(
        "--goldens-determinism-mode",
        dest="goldens_determinism_mode",
        choices=["inprocess", "subprocess"],
        default="inprocess",
        help="where the extra runs happen: 'inprocess' (default; fresh function-scoped fixtures) "
        "or 'subprocess' (a fresh python -m pytest per run, each with another PYTHONHASHSEED, "
        "to catch set-order and global-state leaks).",
    )
    group.addoption(
        "--goldens-artifacts",
        dest="goldens_artifacts",
        default=None,
        metavar="DIR",
        help="copy the actual recordings of mismatching, missing and nondeterministic goldens "
        "into DIR, laid out like the goldens, with a report.txt each (for CI uploads).",
    )
    group.addoption(
        "--goldens-record-into",
        dest="goldens_record_into",
        default=None,
        help=argparse.SUPPRESS,  # internal: the subprocess of a cross-process determinism run
    )
    parser.addini("goldens_dir", help="folder of the golden recordings, relative to the rootdir.", default="goldens")
    parser.addini(
        "goldens_rtol", help=f"default relative tolerance of float fields ({DEFAULT_RTOL:g}).", default=str(DEFAULT_RTOL)
    )
    parser.addini(
        "goldens_atol", help=f"default absolute tolerance of float fields ({DEFAULT_ATOL:g}).", default=str(DEFAULT_ATOL)
    )


def _ini_number(config: pytest.Config, name: str) -> float:
    raw = config.getini(name)
    try:
        value = float(str(raw))
    except ValueError:
        raise pytest.UsageError(f"ini {name} must be a number, got {raw!r}") from None
    if not value >= 0:
        raise pytest.UsageError(f"ini {name} must be a non-negative number, got {raw!r}")
    return value

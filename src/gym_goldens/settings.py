"""The plugin's settings, resolved once per session from options and ini."""

from __future__ import annotations

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
        report_dir: Where ``--goldens-report`` writes its HTML page, or None.
    """

    goldens_dir: Path
    update: bool
    rtol: float
    atol: float
    rootdir: Path
    invocation_dir: Path
    report_dir: Path | None = None

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
        report_option = config.getoption("goldens_report")
        report_dir = (invocation_dir / report_option).resolve() if report_option else None
        return cls(
            goldens_dir=goldens_dir,
            update=bool(config.getoption("update_goldens")),
            rtol=_ini_number(config, "goldens_rtol"),
            atol=_ini_number(config, "goldens_atol"),
            rootdir=rootdir,
            invocation_dir=invocation_dir,
            report_dir=report_dir,
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
        "--goldens-report",
        dest="goldens_report",
        default=None,
        metavar="DIR",
        help="write DIR/index.html: every golden mismatch of the session with its plot.",
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

"""The plugin's settings, resolved once per session from options and ini."""

from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path
from typing import Any, Final

import pytest

from gym_goldens.comparison.defaults import DEFAULT_ATOL, DEFAULT_RTOL
from gym_goldens.format.limits import DEFAULT_MAX_DECOMPRESSED_SIZE, format_size, parse_size

__all__ = [
    "GoldensSettings",
    "add_options",
    "fresh_base_key",
    "golden_nodeid",
    "settings_key",
]

_GROUP: Final = "gym-goldens"
# Written out, as it loads in every pytest run: codec.DEFAULT_MAX_ARRAY_SIZE
# (the codec imports numpy). tests/test_startup.py checks that they agree.
DEFAULT_MAX_ARRAY_SIZE: Final = 4096
# record/frames.IMAGES, written out for the same reason.
IMAGES: Final = ("summary", "frames")


@dataclasses.dataclass(frozen=True)
class GoldensSettings:
    """Options of one pytest session.

    Attributes:
        goldens_dir: Absolute path of the goldens root.
        update: Whether goldens are written (``--update-goldens`` or
            ``--update-goldens-all``).
        rtol: Default relative tolerance (ini ``goldens_rtol``).
        atol: Default absolute tolerance (ini ``goldens_atol``).
        rootdir: The session's rootdir.
        invocation_dir: Where pytest was started, for showing paths.
        max_array_size: Arrays with more elements are stored as a summary
            (ini ``goldens_max_array_size``; None keeps every array in full).
        compress: Write gzip-compressed recording files, ``trajectory.jsonl.gz``
            (ini ``goldens_compress``).
        strict: Whether ``--goldens-strict`` was given: stale goldens fail
            the session.
        prune: Whether ``--prune-goldens`` was given: stale goldens are
            deleted (with ``--update-goldens`` only).
        loadgroup: Whether this is a pytest-xdist worker under ``--dist
            loadgroup``, which appends ``@<group>`` to node ids.
        subset: Why the command line runs only part of the collected test
            files (so no golden may be called stale), or None.
        report_dir: Where ``--goldens-report`` writes its HTML page, or None.
        determinism: Extra runs of each recording test (``--goldens-determinism``).
        determinism_mode: Where they run: ``inprocess`` or ``subprocess``.
        artifacts_dir: Where failing recordings are copied (``--goldens-artifacts``).
        record_into: Set in the subprocess of a cross-process run: record
            there, check nothing (hidden ``--goldens-record-into``).
        update_all: Whether ``--update-goldens-all`` was given: rewrite every
            golden whose bytes are not the fresh recording's.
        update_once: Whether ``--update-goldens-once`` was given: record each
            test once when updating, instead of twice.
        update_fresh: Whether an update re-records the goldens it is about to
            write in a fresh process before writing them (ini
            ``goldens_update_fresh_process``).
        record_tests: Set in the fresh process: the golden node ids of the
            tests it runs (hidden ``--goldens-record-tests``); None elsewhere.
        record_as_update: Set in the fresh process of an update: record as an
            update does (in the current format; a replay without a golden
            records the test's own actions).
        max_decompressed_size: What a compressed golden (or recording) may
            expand to when read, in bytes (ini ``goldens_max_decompressed_size``).
        images: How image-like arrays of obs and info are kept: ``"summary"``
            or ``"frames"`` (ini ``goldens_images``).
        pixels: The default pixel tolerance of frames, by setting:
            ``pixel_atol``, ``max_diff_pixels`` and ``max_diff_pixel_ratio``
            (ini ``goldens_pixel_atol``, ...), those not set left out.
    """

    goldens_dir: Path
    update: bool
    rtol: float
    atol: float
    rootdir: Path
    invocation_dir: Path
    max_array_size: int | None = DEFAULT_MAX_ARRAY_SIZE
    compress: bool = False
    strict: bool = False
    prune: bool = False
    loadgroup: bool = False
    subset: str | None = None
    report_dir: Path | None = None
    determinism: int = 0
    determinism_mode: str = "inprocess"
    artifacts_dir: Path | None = None
    record_into: Path | None = None
    update_all: bool = False
    update_once: bool = False
    update_fresh: bool = True
    record_tests: frozenset[str] | None = None
    record_as_update: bool = False
    max_decompressed_size: int = DEFAULT_MAX_DECOMPRESSED_SIZE
    images: str = "summary"
    pixels: dict[str, float] = dataclasses.field(default_factory=dict)

    def display(self, path: Path | str) -> str:
        """A path as shown to the user: relative to the invocation folder if inside it.

        On one line: a folder a pull request named with a newline prints no
        line of its own.
        """
        # Loaded here: the settings are built at start-up, which loads only the wiring.
        from gym_goldens.present.text import one_line

        target = Path(path)
        try:
            return one_line(str(target.relative_to(self.invocation_dir)))
        except ValueError:
            return one_line(str(target))

    @classmethod
    def from_config(cls, config: pytest.Config) -> GoldensSettings:
        """Resolve the options and ini values of ``config``.

        Raises:
            pytest.UsageError: An ini tolerance is not a non-negative number,
                ``goldens_max_decompressed_size`` is not a size, or
                ``--prune-goldens`` is given without ``--update-goldens``.
        """
        rootdir = config.rootpath
        invocation_dir = config.invocation_params.dir
        option_dir = config.getoption("goldens_dir")
        if option_dir:
            goldens_dir = _own_folder(invocation_dir, option_dir, "--goldens-dir")
        else:
            goldens_dir = _own_folder(rootdir, str(config.getini("goldens_dir")), "ini goldens_dir")
        update_all = bool(config.getoption("update_goldens_all"))
        update = bool(config.getoption("update_goldens")) or update_all
        prune = bool(config.getoption("prune_goldens"))
        if prune and not update:
            raise pytest.UsageError(
                "--prune-goldens deletes stale goldens while updating: use it with --update-goldens"
            )
        report_option = config.getoption("goldens_report")
        report_dir = (
            _own_folder(invocation_dir, report_option, "--goldens-report")
            if report_option
            else None
        )
        determinism = int(config.getoption("goldens_determinism") or 0)
        if determinism < 0:
            raise pytest.UsageError(f"--goldens-determinism must be 0 or more, got {determinism}")
        artifacts = config.getoption("goldens_artifacts")
        return cls(
            goldens_dir=goldens_dir,
            update=update,
            rtol=_ini_number(config, "goldens_rtol"),
            atol=_ini_number(config, "goldens_atol"),
            rootdir=rootdir,
            invocation_dir=invocation_dir,
            max_array_size=_ini_size(config, "goldens_max_array_size"),
            compress=bool(config.getini("goldens_compress")),
            strict=bool(config.getoption("goldens_strict")),
            prune=prune,
            # Set by pytest-xdist on its workers only.
            loadgroup=bool(getattr(config.option, "loadgroup", False)),
            subset=_subset(config),
            report_dir=report_dir,
            determinism=determinism,
            determinism_mode=str(config.getoption("goldens_determinism_mode")),
            artifacts_dir=(
                _own_folder(invocation_dir, artifacts, "--goldens-artifacts") if artifacts else None
            ),
            update_all=update_all,
            update_once=bool(config.getoption("update_goldens_once")),
            update_fresh=bool(config.getini("goldens_update_fresh_process")),
            max_decompressed_size=_ini_limit(config, "goldens_max_decompressed_size"),
            images=_ini_choice(config, "goldens_images", IMAGES),
            pixels=_ini_pixels(config),
            **_fresh_process(config),
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
        help="write the recordings of the selected tests as their goldens: create the missing "
        "ones, rewrite those the recording no longer matches within the test's tolerance; each "
        "test is recorded twice, the goldens about to be written once more in a fresh process, "
        "and a golden is written only if its recordings agree exactly.",
    )
    group.addoption(
        "--update-goldens-all",
        action="store_true",
        dest="update_goldens_all",
        default=False,
        help="like --update-goldens, but also rewrite the goldens that still match within "
        "tolerance (every golden whose bytes are not the fresh recording's).",
    )
    group.addoption(
        "--update-goldens-once",
        action="store_true",
        dest="update_goldens_once",
        default=False,
        help="with --update-goldens: record each test once, in this process alone (for "
        "expensive tests; a nondeterministic env may then get a golden that the next run fails).",
    )
    group.addoption(
        "--goldens-dir",
        dest="goldens_dir",
        default=None,
        metavar="DIR",
        help="folder of the golden recordings "
        "(default: ini goldens_dir, 'goldens' in the rootdir).",
    )
    group.addoption(
        "--goldens-strict",
        action="store_true",
        dest="goldens_strict",
        default=False,
        help="fail the session when a complete run leaves goldens no test used (stale goldens).",
    )
    group.addoption(
        "--prune-goldens",
        action="store_true",
        dest="prune_goldens",
        default=False,
        help="with --update-goldens: delete the goldens no test used, after a complete run.",
    )
    group.addoption(
        "--goldens-report",
        dest="goldens_report",
        default=None,
        metavar="DIR",
        help="write DIR/index.html: every golden mismatch of the session with its plot.",
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
    group.addoption(
        "--goldens-record-tests",
        dest="goldens_record_tests",
        default=None,
        help=argparse.SUPPRESS,  # internal: the tests that subprocess runs (a JSON file)
    )
    parser.addini(
        "goldens_dir",
        help="folder of the golden recordings, relative to the rootdir.",
        default="goldens",
    )
    parser.addini(
        "goldens_rtol",
        help=f"default relative tolerance of float fields ({DEFAULT_RTOL:g}).",
        default=str(DEFAULT_RTOL),
    )
    parser.addini(
        "goldens_atol",
        help=f"default absolute tolerance of float fields ({DEFAULT_ATOL:g}).",
        default=str(DEFAULT_ATOL),
    )
    parser.addini(
        "goldens_max_array_size",
        help=(
            "arrays with more elements are stored as a summary "
            f"({DEFAULT_MAX_ARRAY_SIZE}; 'none': in full)."
        ),
        default=str(DEFAULT_MAX_ARRAY_SIZE),
    )
    parser.addini(
        "goldens_max_decompressed_size",
        help="the most a compressed golden (.jsonl.gz) may expand to when read, such as 512 MiB "
        f"or 4 GiB ({format_size(DEFAULT_MAX_DECOMPRESSED_SIZE)}); a larger one fails its test.",
        default=format_size(DEFAULT_MAX_DECOMPRESSED_SIZE),
    )
    parser.addini(
        "goldens_update_fresh_process",
        type="bool",
        help="--update-goldens re-records the goldens it is about to write in one fresh process "
        "(another PYTHONHASHSEED) and writes those on which both processes agree (true); false "
        "compares the two recordings of this process only.",
        default=True,
    )
    _add_frame_ini(parser)
    parser.addini(
        "goldens_compress",
        type="bool",
        help="write gzip-compressed goldens (.jsonl.gz).",
        default=False,
    )


def _own_folder(base: Path, given: str, setting: str) -> Path:
    """The absolute path of a folder the plugin reads and writes, which must not be a symlink.

    A symlinked ancestor is fine (macOS's /var -> /private/var, a symlinked
    home), but the folder itself may not be one: a symlink committed in its
    place by a pull request would send every read, write and prune of the
    plugin wherever it points.

    Raises:
        pytest.UsageError: The folder is a symlink.
    """
    path = base / given
    if path.name in ("", ".", ".."):
        return path.resolve()
    folder = path.parent.resolve() / path.name
    if folder.is_symlink():
        target = folder.resolve()
        raise pytest.UsageError(
            f"{setting}: {given} is a symlink to {target}; gym-goldens does not follow a "
            "symlinked folder of its own, which a pull request could point anywhere. To use "
            f"that folder, name it itself: {_name_it(setting, target)}"
        )
    return folder


def _name_it(setting: str, target: Path) -> str:
    if setting.startswith("ini "):
        name = setting.removeprefix("ini ")
        return f"set ini {name} = {target}, or pass --goldens-dir={target}"
    return f"{setting}={target}"


def _ini_size(config: pytest.Config, name: str) -> int | None:
    raw = str(config.getini(name)).strip()
    if raw.lower() == "none":
        return None
    try:
        value = int(raw)
    except ValueError:
        value = -1
    if value < 0:
        raise pytest.UsageError(f"ini {name} must be a non-negative int or 'none', got {raw!r}")
    return value


# Each pixel setting of the ini: its help, its type, its largest value (None:
# none) and that in words. Checked here: comparison.pixels would load numpy.
_PIXEL_INI: Final[dict[str, tuple[str, type, float | None, str]]] = {
    "pixel_atol": (
        "the largest difference of a pixel's channel (0-255) that does not make it differ, "
        "for every frame (0).",
        int,
        255,
        "a whole number from 0 to 255",
    ),
    "max_diff_pixels": (
        "how many pixels of a frame may differ beyond pixel_atol (none: no pixel, unless "
        "max_diff_pixel_ratio allows some).",
        int,
        None,
        "a whole number, 0 or more",
    ),
    "max_diff_pixel_ratio": (
        "the fraction (0-1) of a frame's pixels that may differ beyond pixel_atol (none: no "
        "pixel, unless max_diff_pixels allows some).",
        float,
        1.0,
        "a number from 0 to 1",
    ),
}


def _add_frame_ini(parser: pytest.Parser) -> None:
    """The ini values of frames: how images are kept, and the pixel tolerance."""
    parser.addini(
        "goldens_images",
        help="how image-like arrays (uint8, H x W (x 1, 3 or 4)) of obs and info are kept: "
        "'summary' (the default: statistics and a digest, compared exactly) or 'frames' (PNG "
        "files beside the recording, compared pixel by pixel); render frames are always frames.",
        default="summary",
    )
    for name, (meaning, *_) in _PIXEL_INI.items():
        parser.addini(f"goldens_{name}", help=meaning, default="")


def _ini_pixels(config: pytest.Config) -> dict[str, float]:
    """The pixel tolerance settings the ini file gives, checked."""
    found: dict[str, float] = {}
    for name, (_, kind, top, words) in _PIXEL_INI.items():
        raw = str(config.getini(f"goldens_{name}")).strip()
        if not raw:
            continue
        try:
            value: float = kind(raw)
        except ValueError:
            value = -1
        if not (value >= 0 and (top is None or value <= top)):
            raise pytest.UsageError(f"ini goldens_{name} must be {words}, got {raw!r}")
        found[name] = value
    return found


def _ini_choice(config: pytest.Config, name: str, choices: tuple[str, ...]) -> str:
    raw = str(config.getini(name)).strip()
    if raw not in choices:
        raise pytest.UsageError(
            f"ini {name} must be one of {', '.join(map(repr, choices))}, got {raw!r}"
        )
    return raw


def _ini_limit(config: pytest.Config, name: str) -> int:
    try:
        return parse_size(str(config.getini(name)))
    except ValueError as error:
        raise pytest.UsageError(f"ini {name}: {error}") from None


def _fresh_process(config: pytest.Config) -> dict[str, Any]:
    """The settings of a fresh process that records tests again, from its hidden options.

    ``--goldens-record-tests`` names a JSON file: the tests to run, and
    whether they are recorded as an update.
    """
    record_into = config.getoption("goldens_record_into")
    option = config.getoption("goldens_record_tests")
    settings: dict[str, Any] = {"record_into": Path(record_into).resolve() if record_into else None}
    if not option:
        return settings
    try:
        listed = json.loads(Path(option).read_text(encoding="utf-8"))
        settings["record_tests"] = frozenset(str(nodeid) for nodeid in listed["tests"])
        settings["record_as_update"] = bool(listed["as_update"])
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise pytest.UsageError(f"--goldens-record-tests={option}: unreadable ({error})") from None
    return settings


def _subset(config: pytest.Config) -> str | None:
    """Why the command line runs only part of the tests of the collected files."""
    if any("::" in str(arg) for arg in config.args):
        return "tests were picked by node id"
    if config.getoption("collectonly", False):
        return "no test ran (--collect-only)"
    # --lf leaves the tests that passed last time out of collection, without
    # deselecting them; -k, -m, --deselect and --sw deselect and are counted.
    if config.getoption("lf", False):
        return "--lf runs the tests that failed last time"
    return None


def _ini_number(config: pytest.Config, name: str) -> float:
    raw = config.getini(name)
    try:
        value = float(str(raw))
    except ValueError:
        raise pytest.UsageError(f"ini {name} must be a number, got {raw!r}") from None
    if not value >= 0:
        raise pytest.UsageError(f"ini {name} must be a non-negative number, got {raw!r}")
    return value


def golden_nodeid(item: pytest.Item, settings: GoldensSettings) -> str:
    """The node id that names the goldens of ``item``.

    pytest-xdist's ``--dist loadgroup`` appends ``@<group>`` to the node ids
    of grouped tests on its workers; that suffix is dropped, so goldens are
    the same files with and without xdist.
    """
    nodeid = item.nodeid
    if settings.loadgroup:
        groups = {
            str(mark.args[0] if mark.args else mark.kwargs.get("name", "default"))
            for mark in item.iter_markers("xdist_group")
        }
        suffix = "@" + "_".join(sorted(groups))
        if groups and nodeid.endswith(suffix):
            nodeid = nodeid[: -len(suffix)]
    return nodeid


fresh_base_key: Final = pytest.StashKey[Path]()
"""Where the fresh process of ``--update-goldens`` records: the temporary folder the first
test whose golden waits for it makes (:func:`gym_goldens.plugin.repeats.verifies_fresh`)."""

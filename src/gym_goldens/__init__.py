"""pytest-gym-goldens: golden-trajectory regression tests for Gymnasium envs.

The public API is :data:`__all__`; it loads lazily, so that the pytest plugin
costs nothing at start-up for suites that do not use it. The subpackages and
modules below are internal: they may change in any release.

The package, layer by layer from the bottom; each layer uses only those below
it (data flows env -> record -> format -> file, file -> format -> comparison
-> present -> plugin and cli):

- ``errors``: the exceptions, all derived from :class:`GoldensError`.
- ``format/``: the file format.
    - ``layout``: every file and folder name, and golden paths from test ids.
    - ``limits``: what a file may hold (line size, decompressed size).
    - ``fields``: field paths and field patterns (``obs[2]``, ``info.*.time``).
    - ``agents``: multi-agent records: fields keyed by agent, the agent of a path.
    - ``codec``: values to JSON lines and back; array summaries.
    - ``frames``: frames as PNG files: the image-like rule, the PNG codec, references.
    - ``dtypes``: the numpy types of recorded values (the ``dtypes`` field).
    - ``header``: the header record: env, spaces, versions, platform.
    - ``lines``: the lines of a recording file, split into episodes.
    - ``reader``: records, episodes and recordings read back.
    - ``paths``: the one path check: no symlink followed below our folders; a golden resolved once.
    - ``lock``: one update of a golden at a time.
    - ``files``: atomic writes, recordings installed.
- ``record/``: recording envs.
    - ``writer``: the one episode writer: buffer, step line, flush, header.
    - ``frames``: the frames of a recording written as PNG files, by a worker thread.
    - ``single``: :class:`RecordTrajectory`, the wrapper of one env.
    - ``vector``: :class:`RecordVectorTrajectory`, one file per sub-env.
    - ``agents``: PettingZoo envs told apart (without importing it) and described.
    - ``agent_recorders``: the recorder or replay of a PettingZoo env, by its API.
    - ``multiagent``: the recorders of PettingZoo's parallel and AEC envs.
    - ``replay``: :class:`ReplayActions`, a golden's actions and seeds replayed.
    - ``rollouts``: :func:`rollout` and ``gym-goldens record``'s rollouts.
    - ``multiagent_rollouts``: :func:`rollout` of PettingZoo envs, agent by agent.
    - ``multiagent_replay``: a golden's actions replayed to a PettingZoo env.
    - ``fresh``: recordings by a fresh Python process, with another PYTHONHASHSEED.
- ``comparison/``: a recording against its golden.
    - ``defaults``: the default tolerances, those of ``pytest.approx``.
    - ``floats``: the one float rule, for scalars and arrays.
    - ``pixels``: the one pixel rule: two frames compared within a pixel tolerance.
    - ``tolerance``: :class:`Tolerance` and its tree of fields.
    - ``walk``: whether two parsed records match.
    - ``compiled``: the same check compiled for one line layout (speed).
    - ``arrays``: statistics of differing arrays; summaries against arrays.
    - ``frames``: frame references of two records compared, by digest, then by pixels.
    - ``explain``: which fields differ and how (DeepDiff).
    - ``result``: :class:`Comparison`, :class:`Difference`, :class:`Divergence`.
    - ``evidence``: signs of nondeterminism at a divergence: an iteration order, a clock.
    - ``engine``: :func:`compare`, streaming, episode by episode.
- ``present/``: what a user reads and sees.
    - ``report``: failure messages as data, rendered once: mismatch, missing, nondeterministic.
    - ``differences``: one difference in words: values, arrays, types, headers, frames.
    - ``images``: frames as pictures: the diff image, golden/actual/diff side by side, GIFs.
    - ``summary``: ``gym-goldens show``.
    - ``series``: numeric fields over time, golden against actual.
    - ``viz``: plots (matplotlib, optional).
    - ``html``: self-contained HTML pages of mismatches.
    - ``progress``: a progress bar on a terminal.
    - ``verdicts``: the results of ``gym-goldens audit`` as data (made by
      ``audit/``, rendered by ``table``; here, as ``present/`` is below ``audit/``).
    - ``table``: the table of ``gym-goldens audit``, as text and JSON.
    - ``text``: text from files and envs escaped for display.
- ``audit/``: checks of envs themselves.
    - ``determinism``: :func:`assert_deterministic`.
    - ``registry``: :func:`registered_envs`: the registered envs of a package, by glob.
    - ``pettingzoo``: :func:`pettingzoo_envs`: PettingZoo's envs, by family and name.
    - ``survey``: ``gym-goldens audit``: every selected env run three ways and checked.
- ``plugin/``: the pytest plugin's parts.
    - ``settings``: options and ini values, resolved once.
    - ``session``: what a session did with goldens; the summary.
    - ``check``: one test's recordings compared or written.
    - ``outcome``: a test's checks run, their outcome put on its report.
    - ``store``: goldens written under ``--update-goldens``.
    - ``fresh``: tests recorded again by a fresh pytest process.
    - ``pending``: the goldens an update writes once a fresh process agrees.
    - ``variants``: one golden per platform or library version.
    - ``repeats``: ``--goldens-determinism``: a test run again.
    - ``stale``: goldens no test used; pruned.
    - ``renamed``: the stale golden a missing golden may have been, renamed.
    - ``artifacts``: failing recordings copied for CI.
    - ``htmlreport``: ``--goldens-report``.
- ``pytest_plugin``: the entry point: hooks and the fixture, wiring only.
- ``cli/``: the ``gym-goldens`` command, one module per command.
    - ``__init__``: ``main(argv)``; the parser, from the list of commands.
    - ``show``, ``diff``, ``plot``, ``record``, ``audit``: each a command
      (``add_parser(commands)``, ``run(args) -> int``).
    - ``_common``: the command's name, exit codes, usage errors, output.
    - ``_options``: options more than one command takes (tolerances, sizes, fields).
    - ``_recordings``: recordings named on the command line, compared, with a progress bar.
"""

from __future__ import annotations

import importlib
import importlib.metadata
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gym_goldens.audit.determinism import NondeterminismError, assert_deterministic
    from gym_goldens.audit.pettingzoo import pettingzoo_envs
    from gym_goldens.audit.registry import registered_envs
    from gym_goldens.comparison.engine import compare
    from gym_goldens.comparison.result import Comparison, Difference, Divergence, EpisodeComparison
    from gym_goldens.comparison.tolerance import Tolerance
    from gym_goldens.errors import (
        GoldenFormatError,
        GoldensError,
        GoldensWarning,
        UnsupportedFormatVersionError,
    )
    from gym_goldens.format.codec import ArraySummary
    from gym_goldens.format.reader import Episode, Recording, read_recording
    from gym_goldens.record.replay import ReplayActions
    from gym_goldens.record.rollouts import RolloutResult, rollout
    from gym_goldens.record.single import RecordTrajectory
    from gym_goldens.record.vector import RecordVectorTrajectory

__all__ = [
    "ArraySummary",
    "Comparison",
    "Difference",
    "Divergence",
    "Episode",
    "EpisodeComparison",
    "GoldenFormatError",
    "GoldensError",
    "GoldensWarning",
    "NondeterminismError",
    "RecordTrajectory",
    "RecordVectorTrajectory",
    "Recording",
    "ReplayActions",
    "RolloutResult",
    "Tolerance",
    "UnsupportedFormatVersionError",
    "assert_deterministic",
    "compare",
    "pettingzoo_envs",
    "read_recording",
    "registered_envs",
    "rollout",
]

_LOCATIONS = {
    "ArraySummary": "format.codec",
    "Comparison": "comparison.result",
    "Difference": "comparison.result",
    "Divergence": "comparison.result",
    "Episode": "format.reader",
    "EpisodeComparison": "comparison.result",
    "GoldenFormatError": "errors",
    "GoldensError": "errors",
    "GoldensWarning": "errors",
    "NondeterminismError": "audit.determinism",
    "RecordTrajectory": "record.single",
    "RecordVectorTrajectory": "record.vector",
    "Recording": "format.reader",
    "ReplayActions": "record.replay",
    "RolloutResult": "record.rollouts",
    "Tolerance": "comparison.tolerance",
    "UnsupportedFormatVersionError": "errors",
    "assert_deterministic": "audit.determinism",
    "compare": "comparison.engine",
    "pettingzoo_envs": "audit.pettingzoo",
    "read_recording": "format.reader",
    "registered_envs": "audit.registry",
    "rollout": "record.rollouts",
}


def _version() -> str:
    # Looked up on first use: reading the package metadata costs milliseconds
    # at every pytest start-up otherwise.
    try:
        return importlib.metadata.version("pytest-gym-goldens")
    except importlib.metadata.PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "0+unknown"


def __getattr__(name: str) -> Any:
    if name == "__version__":
        version = globals()["__version__"] = _version()
        return version
    module = _LOCATIONS.get(name)
    if module is None:
        raise AttributeError(f"module 'gym_goldens' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"gym_goldens.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])

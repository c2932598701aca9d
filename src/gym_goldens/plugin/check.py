"""The check workflow of one test: record, then compare or update.

:class:`TrajectoryChecks` is what the ``record_trajectory`` fixture hands out:
it wraps each env in :class:`~gym_goldens.record.single.RecordTrajectory` (a vector
env in :class:`~gym_goldens.record.vector.RecordVectorTrajectory`) under the test's
temporary folder and, after the test body passed, compares every
recording with its golden, or writes it as the golden under
``--update-goldens``.
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final, Literal

import gymnasium as gym

from gym_goldens.comparison.engine import compare
from gym_goldens.comparison.evidence import nondeterminism_evidence
from gym_goldens.comparison.result import Comparison
from gym_goldens.comparison.tolerance import PIXEL_KEYS, Tolerance, ToleranceSpec
from gym_goldens.errors import GoldenFormatError, GoldenWriteError, UnsafeGoldenPathError
from gym_goldens.format.codec import ArraySizeSpec
from gym_goldens.format.files import checked_recording_files
from gym_goldens.format.header import FORMAT_VERSION, LEGACY_VERSION, version_to_compare_with
from gym_goldens.format.layout import DIVERGENCE_PLOT, golden_dir_for, safe_segment
from gym_goldens.format.reader import has_episodes, read_header, recording_files, sub_env_dirs
from gym_goldens.plugin.renamed import KnownTests, renamed_goldens
from gym_goldens.plugin.repeats import PlotRuns, Run, find_nondeterminism
from gym_goldens.plugin.settings import GoldensSettings
from gym_goldens.plugin.store import (
    PendingGolden,
    golden_header,
    holds,
    still_matches,
    update_golden,
)
from gym_goldens.plugin.variants import (
    GoldenChoice,
    check_variant_by,
    choose_golden,
    update_target,
    variant_facts,
)
from gym_goldens.present.differences import frames_only
from gym_goldens.present.images import write_frame_diff
from gym_goldens.present.report import (
    RenamedGolden,
    format_comparison,
    format_evidence,
    format_missing,
    format_unreadable,
    update_command,
)
from gym_goldens.present.viz import VizDependencyError, write_divergence_plot
from gym_goldens.record.agents import agent_api, agent_env_name, record_agents, replay_agents
from gym_goldens.record.frames import check_images
from gym_goldens.record.replay import ReplayActions
from gym_goldens.record.single import RecordTrajectory
from gym_goldens.record.vector import RecordVectorTrajectory

__all__ = ["CheckResult", "TrajectoryChecks", "plot_runs", "write_golden"]

Status = Literal[
    "passed",
    "failed",
    "missing",
    "created",
    "updated",
    "unchanged",
    "nondeterministic",
    "pending",
]
_MARKER_KEYS: Final = frozenset(
    {"rtol", "atol", "ignore", "variant_by", "update_once", "images", *PIXEL_KEYS}
)
_RECORDED_MODE: Final = "mode: recorded (the test's own actions)"
_REPLAY_MODE: Final = (
    "mode: replay (the golden's own actions and reset seeds drove the env, "
    "so the dynamics changed, not the policy)"
)


@dataclasses.dataclass(frozen=True)
class CheckResult:
    """The outcome for one recording of a test.

    Attributes:
        name: The recording's name in the test.
        golden_dir: Its golden folder.
        status: What happened to it.
        message: The failure text, for ``failed``, ``missing`` and ``nondeterministic``.
        actual_dir: The actual recording of this run.
        plot: The plot of the diverging fields, when one was written.
        other_runs: Recordings of other runs that differ from it, as
            ``(folder name, path)``, for a nondeterministic result.
        pending: The golden to write once a fresh process agrees, for a
            ``pending`` result (see :mod:`gym_goldens.plugin.pending`).
        images: ``golden.png``, ``actual.png`` and ``diff.png`` of the first
            frame that differs, when one does.
    """

    name: str
    golden_dir: Path
    status: Status
    message: str | None = None
    actual_dir: Path | None = None
    plot: Path | None = None
    other_runs: tuple[tuple[str, Path], ...] = ()
    pending: PendingGolden | None = None
    images: tuple[Path, ...] = ()


_UNSET: Final[Any] = object()


@dataclasses.dataclass
class _Recording:
    name: str
    env: RecordTrajectory[Any, Any] | RecordVectorTrajectory
    tolerance: Tolerance
    replay: bool = False


class TrajectoryChecks:
    """The recordings of one test and their checks.

    Args:
        settings: The session's settings.
        nodeid: The test's node id.
        output_dir: Where the recordings are written (the test's tmp_path).
        marker_kwargs: The arguments of the test's ``goldens`` marker.
    """

    def __init__(
        self,
        settings: GoldensSettings,
        nodeid: str,
        output_dir: Path,
        marker_kwargs: Mapping[str, Any] | None = None,
    ) -> None:
        self.settings = settings
        self.nodeid = nodeid
        self.output_dir = output_dir
        self._recordings: list[_Recording] = []
        marker_kwargs = dict(marker_kwargs or {})
        unknown = set(marker_kwargs) - _MARKER_KEYS
        if unknown:
            raise TypeError(
                f"@pytest.mark.goldens got unknown arguments {sorted(unknown)}; "
                f"it takes {sorted(_MARKER_KEYS)}"
            )
        update_once = marker_kwargs.pop("update_once", False)
        if not isinstance(update_once, bool):
            raise TypeError(
                f"@pytest.mark.goldens(update_once=...) takes True or False, got {update_once!r}"
            )
        self._variant_by: tuple[str, ...] = ()
        if "variant_by" in marker_kwargs:
            self._variant_by = check_variant_by(marker_kwargs.pop("variant_by"))
            variant_facts(self._variant_by)  # an unknown fact fails at setup, not at the check
        self._images = check_images(marker_kwargs.pop("images", settings.images))
        pixels = settings.pixels  # the ini's, under the marker's
        base = Tolerance(rtol=settings.rtol, atol=settings.atol).refine(
            pixel_atol=pixels.get("pixel_atol"),
            max_diff_pixels=pixels.get("max_diff_pixels"),
            max_diff_pixel_ratio=pixels.get("max_diff_pixel_ratio"),
        )
        self._tolerance = base.refine(**marker_kwargs)

    def record(
        self,
        env: gym.Env[Any, Any] | gym.vector.VectorEnv[Any, Any, Any],
        name: str | None = None,
        *,
        rtol: ToleranceSpec | None = None,
        atol: ToleranceSpec | None = None,
        ignore: Iterable[str] = (),
        max_array_size: ArraySizeSpec = _UNSET,
        compress: bool | None = None,
        full_every: int | None = None,
        replay: bool = False,
        render: bool | int = False,
        images: str | None = None,
        pixel_atol: ToleranceSpec | None = None,
        max_diff_pixels: ToleranceSpec | None = None,
        max_diff_pixel_ratio: ToleranceSpec | None = None,
    ) -> gym.Wrapper[Any, Any, Any, Any] | RecordVectorTrajectory:
        """Wrap ``env`` so that its trajectory is recorded and checked.

        A ``gymnasium.vector.VectorEnv`` is wrapped in
        :class:`~gym_goldens.record.vector.RecordVectorTrajectory`. ``max_array_size``
        and ``compress`` default to the ini values ``goldens_max_array_size``
        and ``goldens_compress``. With ``replay=True`` the env is driven by the
        golden's actions and reset arguments instead of the test's (see
        :mod:`gym_goldens.record.replay`). ``render`` records the frames of
        ``env.render()`` (a single env's); ``images`` (by default the marker's,
        else ini ``goldens_images``) keeps image-like arrays of obs and info
        as summaries or as frames; the ``pixel_`` settings are the pixel
        tolerance of frames. The recording is written in the format version
        of its golden's array summaries, so that a golden of an older version
        keeps comparing; ``--update-goldens`` writes the current version.
        """
        __tracebackhide__ = True  # a golden that cannot be replayed: the test's line, not ours
        is_vector = isinstance(env, gym.vector.VectorEnv)
        if not is_vector and not isinstance(env, gym.Env) and agent_api(env) is None:
            raise TypeError(
                f"record_trajectory expects a gymnasium.Env or gymnasium.vector.VectorEnv, got "
                f"{type(env).__name__}; pass the env itself, for example "
                'record_trajectory(gym.make("CartPole-v1")) (or a PettingZoo ParallelEnv or AECEnv)'
            )
        if name is not None and (not isinstance(name, str) or not name.strip()):
            raise ValueError(f"record_trajectory name must be a non-empty string, got {name!r}")
        if replay and is_vector:
            raise ValueError("record_trajectory(replay=True) replays single envs, not vector envs")
        tolerance = self._tolerance.refine(rtol=rtol, atol=atol, ignore=ignore).refine(
            pixel_atol=pixel_atol,
            max_diff_pixels=max_diff_pixels,
            max_diff_pixel_ratio=max_diff_pixel_ratio,
        )
        unique = self._unique_name(name or _default_name(env))
        storage: dict[str, Any] = {
            "max_array_size": (
                self.settings.max_array_size if max_array_size is _UNSET else max_array_size
            ),
            "compress": self.settings.compress if compress is None else compress,
            "full_every": full_every,
            "format_version": (
                FORMAT_VERSION if self._records_update else self._version_of_golden(unique)
            ),
        }
        # The versions of the distributions that name variants go in the header too.
        storage["versions_of"] = self._variant_by
        storage.update(_frame_options(env, render, check_images(images or self._images)))
        wrapped = _recorder(env, self.output_dir / _dir_name(unique), storage)
        self._recordings.append(_Recording(unique, wrapped, tolerance, replay))
        if replay:
            assert not isinstance(wrapped, RecordVectorTrajectory)
            return self._replay(wrapped, unique)
        return wrapped

    @property
    def _records_update(self) -> bool:
        """Whether this run records as an update does (or a fresh process re-recording one)."""
        return self.settings.update or self.settings.record_as_update

    def variant_families(self) -> list[Path]:
        """The plain golden folders of the recordings kept per variant.

        Every variant folder inside one (another machine's or library
        version's) belongs to this test, so none of them is stale.
        """
        if not self._variant_by:
            return []
        return [
            golden_dir_for(self.settings.goldens_dir, self.nodeid, recording.name)
            for recording in self._recordings
        ]

    def flush(self) -> dict[str, Path]:
        """Write what is buffered; return each recording's folder by name."""
        for recording in self._recordings:
            recording.env.flush()
        return {recording.name: recording.env.output_dir for recording in self._recordings}

    def check(
        self, runs: Sequence[Run] = (), *, defer: bool = False, known: KnownTests | None = None
    ) -> list[CheckResult]:
        """Compare every recording with its golden, or update the golden.

        Args:
            runs: Every run of a determinism check, this one included (with
                ``dirs=None``); their recordings must match before any
                golden is compared or written (exactly, under an update).
            defer: Under an update, leave the goldens about to be written
                ``pending``, for a fresh process to record the same first.
            known: The tests of the session: a missing golden names the stale
                goldens it may have been before a rename.
        """
        if runs:
            self.flush()
            found = find_nondeterminism(
                [(r.name, r.env.output_dir, r.tolerance) for r in self._recordings],
                runs,
                exact=self.settings.update,
                display=self.settings.display,
                plot=plot_runs(self.settings),
                max_decompressed_size=self.settings.max_decompressed_size,
            )
            if found:
                results = [
                    CheckResult(
                        recording.name,
                        self._golden(recording.name).path,
                        "nondeterministic",
                        found[recording.name].message,
                        recording.env.output_dir,
                        other_runs=found[recording.name].other_runs,
                    )
                    for recording in self._recordings
                    if recording.name in found
                ]
                if self.settings.update:
                    return results  # a nondeterministic test never writes a golden
                others = [r for r in self._recordings if r.name not in found]
                return results + [self._check_one(recording) for recording in others]
        run = max((run.number for run in runs), default=1)
        return [
            self._check_one(recording, defer=defer, run=run, known=known)
            for recording in self._recordings
        ]

    def close(self) -> None:
        """Close every wrapped env (fixture teardown)."""
        errors: list[BaseException] = []
        for recording in self._recordings:
            try:
                recording.env.close()
            except Exception as exc:  # close the others, then report the first
                errors.append(exc)
        if errors:
            raise errors[0]

    def _check_one(
        self,
        recording: _Recording,
        *,
        defer: bool = False,
        run: int = 1,
        known: KnownTests | None = None,
    ) -> CheckResult:
        recording.env.flush()
        actual_dir = recording.env.output_dir
        choice = self._golden(recording.name)
        golden_dir = choice.path
        display = self.settings.display
        limit = self.settings.max_decompressed_size
        notes = [_REPLAY_MODE if recording.replay else _RECORDED_MODE]
        if self._variant_by:
            notes.append(choice.describe(display))
        if recording.env.episode_count == 0:
            return CheckResult(
                recording.name,
                golden_dir,
                "failed",
                f"nothing recorded: the env recorded as {recording.name!r} was never reset; "
                "call env.reset(seed=...) before stepping it",
            )
        if self.settings.update:
            return self._update(recording, choice, defer=defer, run=run)
        try:
            # Checked before reading: no symlink out of the goldens dir, no
            # folder or empty file where the recording file should be.
            # A vector golden keeps one recording file per sub-env folder.
            safe_files = checked_recording_files(self.settings.goldens_dir, golden_dir)
            if not safe_files and not has_episodes(golden_dir):
                message = format_missing(
                    golden_dir,
                    actual_dir,
                    nodeid=self.nodeid,
                    display=display,
                    renamed=self._renamed(recording, golden_dir, known),
                )
                message = _with_notes(message, notes[1:])
                return CheckResult(recording.name, golden_dir, "missing", message, actual_dir)
            comparison = compare(
                golden_dir, actual_dir, recording.tolerance, max_decompressed_size=limit
            )
        except UnsafeGoldenPathError as error:
            message = _format_refused(
                _displayed(error, display), actual_dir=display(actual_dir), nodeid=self.nodeid
            )
            return CheckResult(recording.name, golden_dir, "failed", message, actual_dir)
        except GoldenFormatError as error:
            shown = _displayed(error, display)
            message = format_unreadable(
                shown, nodeid=self.nodeid, actual_dir=actual_dir, display=display
            )
            return CheckResult(recording.name, golden_dir, "failed", message, actual_dir)
        if comparison.equal:
            return CheckResult(recording.name, golden_dir, "passed")
        return self._mismatch(recording, comparison, golden_dir, notes)

    def _mismatch(
        self, recording: _Recording, comparison: Comparison, golden_dir: Path, notes: list[str]
    ) -> CheckResult:
        """The failure of a recording that left its golden."""
        display, limit = self.settings.display, self.settings.max_decompressed_size
        actual_dir = recording.env.output_dir
        message = format_comparison(
            comparison,
            title="golden mismatch in replay mode" if recording.replay else "golden mismatch",
            nodeid=self.nodeid,
            display=display,
        )
        evidence = nondeterminism_evidence(comparison, max_decompressed_size=limit)
        notes = [*notes, *format_evidence(evidence)]
        if not recording.replay and _actions_differ(comparison):
            notes.append(
                "the actions differ at the first divergence: either the policy changed, or "
                "observations within tolerance fed back into it (a controller that reads them); "
                "to compare the dynamics alone, replay the golden's actions with "
                "record_trajectory(env, replay=True)"
            )
        message = _with_notes(message, notes)
        plot, plot_line = _divergence_plot(comparison, actual_dir, display, limit)
        images, lines = _frame_images(comparison, actual_dir, display)
        if plot_line:
            lines.append(plot_line)
        if lines:
            # Beside the actual recording, before the last line (the fix).
            head, _, fix = message.rpartition("\n")
            message = "\n".join([head, *(f"  {line}" for line in lines), fix])
        if images and _frames_only(comparison):
            plot = None  # it shows the images alone, which the report shows already
        return CheckResult(
            recording.name, golden_dir, "failed", message, actual_dir, plot, images=images
        )

    def _update(
        self, recording: _Recording, choice: GoldenChoice, *, defer: bool, run: int
    ) -> CheckResult:
        """Write the recording as its golden, unless the golden still holds it.

        With ``defer``, a golden about to be written is left ``pending``.
        """
        settings = self.settings
        golden = PendingGolden(
            self.nodeid, recording.name, recording.env.output_dir, choice.path, recording.tolerance
        )
        try:
            if self._variant_by and choice.fallback:
                target = self._variant_target(recording, choice)
                if target is None:
                    return CheckResult(recording.name, choice.plain_path, "unchanged")
                golden = dataclasses.replace(golden, target=target)
            if defer:
                checked_recording_files(settings.goldens_dir, golden.target)
                if holds(
                    golden.actual_dir,
                    golden.target,
                    tolerance=golden.tolerance,
                    rewrite=settings.update_all,
                    max_decompressed_size=settings.max_decompressed_size,
                ):
                    return CheckResult(golden.name, golden.target, "unchanged")
                pending = dataclasses.replace(golden, run=run)
                return CheckResult(
                    golden.name,
                    golden.target,
                    "pending",
                    actual_dir=golden.actual_dir,
                    pending=pending,
                )
        except (GoldenFormatError, UnsafeGoldenPathError) as error:
            return _not_written(error, settings, golden)
        return write_golden(settings, golden)

    def _variant_target(self, recording: _Recording, choice: GoldenChoice) -> Path | None:
        """Where a test kept per variant writes, whose variant has no golden; None: keep it."""
        settings = self.settings
        limit = settings.max_decompressed_size
        # Under --update-goldens-all the plain golden serves another machine
        # only if the values are the same; else within the test's tolerance.
        tolerance = Tolerance(rtol=0.0, atol=0.0) if settings.update_all else recording.tolerance
        plain = choice.plain_path
        checked_recording_files(settings.goldens_dir, plain)
        plain_header = (
            golden_header(plain, max_decompressed_size=limit) if has_episodes(plain) else None
        )
        serves = plain_header is not None and still_matches(
            plain, recording.env.output_dir, tolerance, limit
        )
        where = update_target(choice, self._variant_by, plain_header, serves=serves)
        if where == "kept":
            return None
        return plain if where == "plain" else choice.variant_path

    def _renamed(
        self, recording: _Recording, golden_dir: Path, known: KnownTests | None
    ) -> list[RenamedGolden]:
        """The stale goldens a missing golden may have been, before a rename."""
        if known is None or self._variant_by:
            return []
        return renamed_goldens(
            self.settings.goldens_dir,
            self.nodeid,
            golden_dir,
            recording.env.output_dir,
            recording.tolerance,
            recorded=[other.name for other in self._recordings],
            known=known,
            max_decompressed_size=self.settings.max_decompressed_size,
        )

    def _version_of_golden(self, name: str) -> str:
        """The format version to record ``name`` in: its golden's (see version_to_compare_with)."""
        golden_dir = self._golden(name).path
        try:
            files = checked_recording_files(self.settings.goldens_dir, golden_dir)
            if not files:
                sub_envs = sub_env_dirs(golden_dir)  # checked with the folder
                files = recording_files(sub_envs[0][1]) if sub_envs else []
            header = read_header(files[0]) if files else None
        except (UnsafeGoldenPathError, GoldenFormatError):
            return FORMAT_VERSION  # the check refuses it, and says why
        if not files:
            return FORMAT_VERSION  # no golden yet
        return version_to_compare_with((header or {}).get("version", LEGACY_VERSION))

    def _golden(self, name: str) -> GoldenChoice:
        plain = golden_dir_for(self.settings.goldens_dir, self.nodeid, name)
        if not self._variant_by:
            return GoldenChoice(plain, plain, plain)
        return choose_golden(self.settings.goldens_dir, plain, self._variant_by)

    def _replay(
        self, recorder: RecordTrajectory[Any, Any], name: str
    ) -> gym.Wrapper[Any, Any, Any, Any]:
        __tracebackhide__ = True
        golden_dir = self._golden(name).path
        checked_recording_files(self.settings.goldens_dir, golden_dir)  # refuses unsafe paths
        if not has_episodes(golden_dir):
            if self._records_update:
                return recorder  # nothing to replay yet: record the test's own actions
            raise GoldenFormatError(
                self.settings.display(golden_dir),
                "record_trajectory(env, replay=True) replays a golden, and there is none here; "
                f"record it first with: {update_command(self.nodeid)}",
            )
        limit = self.settings.max_decompressed_size
        if agent_api(recorder) is not None:
            return replay_agents(recorder, golden_dir, max_decompressed_size=limit)
        return ReplayActions(recorder, golden_dir, max_decompressed_size=limit)

    def _unique_name(self, name: str) -> str:
        taken = {recording.name for recording in self._recordings}
        candidate, number = name, 2
        while candidate in taken:
            candidate = f"{name}-{number}"
            number += 1
        return candidate


def write_golden(settings: GoldensSettings, golden: PendingGolden) -> CheckResult:
    """Write a recording as its golden, unless the golden holds it: what an update did."""
    try:
        update = update_golden(
            golden.actual_dir,
            golden.target,
            goldens_dir=settings.goldens_dir,
            tolerance=golden.tolerance,
            rewrite=settings.update_all,
            max_decompressed_size=settings.max_decompressed_size,
        )
    except (GoldenFormatError, UnsafeGoldenPathError, GoldenWriteError) as error:
        return _not_written(error, settings, golden)
    return CheckResult(golden.name, golden.target, update.status)


def _not_written(
    error: GoldenFormatError | UnsafeGoldenPathError | GoldenWriteError,
    settings: GoldensSettings,
    golden: PendingGolden,
) -> CheckResult:
    """The failure of an update that left the golden as it was."""
    display = settings.display
    name, target, actual_dir = golden.name, golden.target, golden.actual_dir
    if isinstance(error, UnsafeGoldenPathError):
        message = _format_refused(
            _displayed(error, display), actual_dir=display(actual_dir), nodeid=golden.nodeid
        )
        return CheckResult(name, target, "failed", message, actual_dir)
    if isinstance(error, GoldenWriteError):
        # A read-only folder, a full disk: nothing of ours to fix, and the
        # golden is as it was (written to a temporary file, never renamed).
        refused = GoldenWriteError(display(Path(error.path)), error.reason)
        message = _format_not_updated(refused, actual_dir=display(actual_dir), fix=_WRITE_FIX)
        return CheckResult(name, target, "failed", message)
    message = _format_not_updated(_displayed(error, display), actual_dir=display(actual_dir))
    return CheckResult(name, target, "failed", message)


def plot_runs(settings: GoldensSettings) -> PlotRuns:
    """How a determinism check draws where two runs part."""

    def plot(comparison: Comparison, folder: Path, sides: tuple[str, str]) -> str | None:
        limit = settings.max_decompressed_size
        return _divergence_plot(comparison, folder, settings.display, limit, sides)[1]

    return plot


def _with_notes(message: str, notes: Sequence[str]) -> str:
    """Put note lines under the first line of a failure message."""
    if not notes:
        return message
    head, _, rest = message.partition("\n")
    return "\n".join([head, *(f"  {note}" for note in notes), *([rest] if rest else [])])


def _actions_differ(comparison: Comparison) -> bool:
    """Whether the actions differ at the first divergence the report shows."""
    first = comparison.differing[0].first if comparison.differing else None
    return first is not None and any(d.path[:1] == ("action",) for d in first.differences)


def _displayed(error: GoldenFormatError, display: Callable[[Path], str]) -> GoldenFormatError:
    """The same error, naming the file as the user sees it (relative when possible)."""
    return type(error)(display(Path(error.path)), error.reason, line=error.line)


def _format_refused(error: Exception, *, actual_dir: str, nodeid: str) -> str:
    return "\n".join(
        [
            f"golden refused: {error}",
            "  nothing was read from or written to it",
            f"  actual recording: {actual_dir}",
            f"  or remove the symlink and record the golden with: {update_command(nodeid)}",
        ]
    )


_NOT_UPDATED_FIX: Final = "fix or remove the golden, then run pytest --update-goldens again"
_WRITE_FIX: Final = (
    "free space or fix the permissions of the goldens dir, then run pytest --update-goldens again"
)


def _format_not_updated(error: Exception, *, actual_dir: str, fix: str = _NOT_UPDATED_FIX) -> str:
    return "\n".join(
        [
            f"golden not updated: {error}",
            "  the golden was left as it is",
            f"  actual recording: {actual_dir}",
            f"  {fix}",
        ]
    )


def _divergence_plot(
    comparison: Comparison,
    actual_dir: Path,
    display: Callable[[Path], str],
    limit: int,
    sides: tuple[str, str] = ("golden", "actual"),
) -> tuple[Path | None, str | None]:
    """Plot the diverging fields next to the actual recording, if matplotlib is installed."""
    try:
        # The plot is ours, not the test's: what matplotlib warns about while
        # drawing (deprecations of its own dependencies, say) is no concern of
        # the suite, and must not fail it under -W error.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            plot = write_divergence_plot(
                comparison,
                actual_dir / DIVERGENCE_PLOT,
                display=display,
                max_decompressed_size=limit,
                sides=sides,
            )
    except VizDependencyError:
        return None, None
    except Exception as error:  # a broken plot must not hide the mismatch
        return None, f"plot: not drawn ({type(error).__name__}: {error})"
    return plot, None if plot is None else f"plot: {display(plot)}"


def _recorder(
    env: Any, output: Path, storage: dict[str, Any]
) -> RecordTrajectory[Any, Any] | RecordVectorTrajectory:
    """The recorder of ``env``: a vector env's, a PettingZoo env's or a single env's."""
    if isinstance(env, gym.vector.VectorEnv):
        return RecordVectorTrajectory(env, output, **storage)
    if agent_api(env) is not None:
        wrapped: RecordTrajectory[Any, Any] = record_agents(env, output, **storage)
        return wrapped
    return RecordTrajectory(env, output, **storage)


def _frame_options(env: Any, render: bool | int, images: str) -> dict[str, Any]:
    """The recorder's ``render`` and ``images``: frames of single envs, images of vector envs too.

    Raises:
        ValueError: ``render`` for a vector or PettingZoo env, or frames of a
            PettingZoo env's images.
    """
    single = isinstance(env, gym.Env)
    if render is not False and not single:
        raise ValueError(
            "record_trajectory(render=...) records the frames of a single gymnasium.Env; "
            "record a sub-env of a vector env (or an agent env's frames) on its own"
        )
    if agent_api(env) is not None:
        if images == "frames":
            raise ValueError(
                'images="frames" keeps the images of Gymnasium envs; a PettingZoo env\'s are '
                'kept as summaries: drop images="frames" (or ini goldens_images) for it'
            )
        return {}
    return {"render": render, "images": images} if single else {"images": images}


def _frame_images(
    comparison: Comparison, actual_dir: Path, display: Callable[[Path], str]
) -> tuple[tuple[Path, ...], list[str]]:
    """Write golden, actual and diff of the first differing frame beside the actual recording."""
    try:
        written = write_frame_diff(comparison, actual_dir)
    except (GoldenFormatError, GoldenWriteError) as error:  # the mismatch stands without them
        return (), [f"frames: not written ({error})"]
    if written is None:
        return (), []
    return written, [f"{path.name}: {display(path)}" for path in written]


def _frames_only(comparison: Comparison) -> bool:
    """Whether frames alone differ at the first divergence (so its plot is their images)."""
    first = comparison.differing[0].first if comparison.differing else None
    return first is not None and frames_only(first.differences, first.event) is not None


def _default_name(env: gym.Env[Any, Any] | gym.vector.VectorEnv[Any, Any, Any]) -> str:
    if agent_api(env) is not None:
        return agent_env_name(env)
    spec = env.spec
    if spec is not None and spec.id:
        return spec.id
    return type(env.unwrapped).__name__


def _dir_name(name: str) -> str:
    return safe_segment(name)

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
from gym_goldens.format.layout import DIVERGENCE_PLOT, golden_dir_for, safe_segment
from gym_goldens.format.paths import GoldenFolder, resolve_golden, resolve_recording
from gym_goldens.plugin.renamed import KnownTests, renamed_goldens
from gym_goldens.plugin.repeats import Nondeterminism, PlotRuns, Run, find_nondeterminism
from gym_goldens.plugin.settings import GoldensSettings
from gym_goldens.plugin.store import PendingGolden, holds, still_matches, update_golden
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
    format_evidence,
    mismatch_report,
    missing_report,
    not_updated_report,
    nothing_recorded_report,
    refused_report,
    unreadable_report,
    update_command,
)
from gym_goldens.present.viz import VizDependencyError, write_divergence_plot
from gym_goldens.record.agent_recorders import record_agents, replay_agents
from gym_goldens.record.agents import agent_api, agent_env_name
from gym_goldens.record.frames import check_images
from gym_goldens.record.replay import ReplayActions
from gym_goldens.record.single import RecordTrajectory
from gym_goldens.record.vector import RecordVectorTrajectory

__all__ = [
    "CheckResult",
    "TrajectoryChecks",
    "nondeterministic_result",
    "plot_runs",
    "write_golden",
]

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
        _check_recordable(env, name, replay=replay)
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
            # The versions of the distributions that name variants go in the header too.
            "versions_of": self._variant_by,
        }
        storage.update(_frame_options(env, render, check_images(images or self._images)))
        wrapped = _wrap(env, self.output_dir / _dir_name(unique), storage)
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
                    nondeterministic_result(
                        recording.name,
                        self._golden(recording.name).path,
                        recording.env.output_dir,
                        found[recording.name],
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
        choice = self._golden(recording.name)
        if recording.env.episode_count == 0:
            message = nothing_recorded_report(recording.name).render()
            return CheckResult(recording.name, choice.path, "failed", message)
        if self.settings.update:
            return self._update(recording, choice, defer=defer, run=run)
        return self._compare(recording, choice, known)

    def _compare(
        self, recording: _Recording, choice: GoldenChoice, known: KnownTests | None
    ) -> CheckResult:
        """The recording against its golden: passed, failed, or the golden missing."""
        golden_dir, actual_dir = choice.path, recording.env.output_dir
        display = self.settings.display
        variant = choice.describe(display) if self._variant_by else None
        limit = self.settings.max_decompressed_size
        try:
            # Checked before reading: no symlink out of the goldens dir, no
            # folder or empty file where the recording file should be.
            golden = self._resolved(golden_dir)
            if not golden.recorded:
                return self._missing(recording, golden_dir, variant, known)
            comparison = compare(
                golden, actual_dir, recording.tolerance, max_decompressed_size=limit
            )
        except UnsafeGoldenPathError as error:
            shown = display(actual_dir)
            report = refused_report(
                _displayed(error, display), actual_dir=shown, nodeid=self.nodeid
            )
            return CheckResult(recording.name, golden_dir, "failed", report.render(), actual_dir)
        except GoldenFormatError as error:
            report = unreadable_report(
                _displayed(error, display),
                nodeid=self.nodeid,
                actual_dir=actual_dir,
                display=display,
            )
            return CheckResult(recording.name, golden_dir, "failed", report.render(), actual_dir)
        if comparison.equal:
            return CheckResult(recording.name, golden_dir, "passed")
        return self._mismatch(recording, comparison, golden_dir, variant)

    def _missing(
        self,
        recording: _Recording,
        golden_dir: Path,
        variant: str | None,
        known: KnownTests | None,
    ) -> CheckResult:
        """The failure of a recording whose golden was never recorded."""
        actual_dir = recording.env.output_dir
        report = missing_report(
            golden_dir,
            actual_dir,
            nodeid=self.nodeid,
            display=self.settings.display,
            renamed=self._renamed(recording, golden_dir, known),
        )
        if variant is not None:
            report = report.with_notes(variant)
        return CheckResult(recording.name, golden_dir, "missing", report.render(), actual_dir)

    def _mismatch(
        self,
        recording: _Recording,
        comparison: Comparison,
        golden_dir: Path,
        variant: str | None,
    ) -> CheckResult:
        """The failure of a recording that left its golden."""
        display, limit = self.settings.display, self.settings.max_decompressed_size
        actual_dir = recording.env.output_dir
        evidence = nondeterminism_evidence(comparison, max_decompressed_size=limit)
        report = mismatch_report(
            comparison,
            replay=recording.replay,
            nodeid=self.nodeid,
            display=display,
            variant=variant,
            hints=format_evidence(evidence),
        )
        plot, plot_line = _divergence_plot(comparison, actual_dir, display, limit)
        images, lines = _frame_images(comparison, actual_dir, display)
        if plot_line:
            lines.append(plot_line)
        report = report.with_files(*lines)  # beside the actual recording, before the fix
        if images and _frames_only(comparison):
            plot = None  # it shows the images alone, which the report shows already
        return CheckResult(
            recording.name, golden_dir, "failed", report.render(), actual_dir, plot, images=images
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
        limit = settings.max_decompressed_size
        try:
            actual = resolve_recording(golden.actual_dir, max_decompressed_size=limit)
            if self._variant_by and choice.fallback:
                target = self._variant_target(recording, choice, actual)
                if target is None:
                    return CheckResult(recording.name, choice.plain_path, "unchanged")
                golden = dataclasses.replace(golden, target=target)
            if defer:
                if holds(
                    actual,
                    self._resolved(golden.target),
                    tolerance=golden.tolerance,
                    rewrite=settings.update_all,
                    max_decompressed_size=limit,
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

    def _variant_target(
        self, recording: _Recording, choice: GoldenChoice, actual: GoldenFolder
    ) -> Path | None:
        """Where a test kept per variant writes, whose variant has no golden; None: keep it."""
        settings = self.settings
        # Under --update-goldens-all the plain golden serves another machine
        # only if the values are the same; else within the test's tolerance.
        tolerance = Tolerance(rtol=0.0, atol=0.0) if settings.update_all else recording.tolerance
        plain = self._resolved(choice.plain_path)
        serves = plain.header is not None and still_matches(
            plain, actual, tolerance, settings.max_decompressed_size
        )
        where = update_target(choice, self._variant_by, plain.header, serves=serves)
        if where == "kept":
            return None
        return choice.plain_path if where == "plain" else choice.variant_path

    def _resolved(self, golden_dir: Path) -> GoldenFolder:
        """A golden folder of this test, resolved once: checked against the path rules."""
        __tracebackhide__ = True
        settings = self.settings
        limit = settings.max_decompressed_size
        return resolve_golden(settings.goldens_dir, golden_dir, max_decompressed_size=limit)

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
        if not self._resolved(golden_dir).recorded:  # refuses unsafe paths
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
    shown = display(actual_dir)
    if isinstance(error, UnsafeGoldenPathError):
        report = refused_report(_displayed(error, display), actual_dir=shown, nodeid=golden.nodeid)
        return CheckResult(name, target, "failed", report.render(), actual_dir)
    if isinstance(error, GoldenWriteError):
        # A read-only folder, a full disk: nothing of ours to fix, and the
        # golden is as it was (written to a temporary file, never renamed).
        refused = GoldenWriteError(display(Path(error.path)), error.reason)
        report = not_updated_report(refused, actual_dir=shown, not_written=True)
        return CheckResult(name, target, "failed", report.render())
    report = not_updated_report(_displayed(error, display), actual_dir=shown)
    return CheckResult(name, target, "failed", report.render())


def nondeterministic_result(
    name: str, golden_dir: Path, actual_dir: Path, found: Nondeterminism
) -> CheckResult:
    """The failure of a recording that differs between the runs of a determinism check."""
    return CheckResult(
        name, golden_dir, "nondeterministic", found.message, actual_dir, other_runs=found.other_runs
    )


def plot_runs(settings: GoldensSettings) -> PlotRuns:
    """How a determinism check draws where two runs part."""

    def plot(comparison: Comparison, folder: Path, sides: tuple[str, str]) -> str | None:
        limit = settings.max_decompressed_size
        return _divergence_plot(comparison, folder, settings.display, limit, sides)[1]

    return plot


def _displayed(
    error: GoldenFormatError | UnsafeGoldenPathError, display: Callable[[Path], str]
) -> GoldenFormatError | UnsafeGoldenPathError:
    """The same error, naming the file as the user sees it (relative when possible)."""
    shown = display(Path(error.path))
    if isinstance(error, UnsafeGoldenPathError):
        return UnsafeGoldenPathError(shown, error.reason)
    return type(error)(shown, error.reason, line=error.line)


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


def _check_recordable(env: object, name: str | None, *, replay: bool) -> None:
    """Refuse what ``record_trajectory`` cannot record, in the test's words."""
    __tracebackhide__ = True
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


def _wrap(
    env: Any, output: Path, storage: dict[str, Any]
) -> RecordTrajectory[Any, Any] | RecordVectorTrajectory:
    """The recorder of ``env``: single, vector or PettingZoo."""
    if isinstance(env, gym.vector.VectorEnv):
        return RecordVectorTrajectory(env, output, **storage)
    if agent_api(env) is not None:  # a PettingZoo env
        return record_agents(env, output, **storage)
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

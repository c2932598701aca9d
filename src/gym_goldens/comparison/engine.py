"""Comparing a recording with its golden, within tolerance.

The comparison streams: the two files are read line by line, split into
episodes at their header lines and paired by episode index, so memory stays
flat however long the rollout. Lines that are the same bytes are equal without
being parsed, and files that are the same bytes are not even split into
lines. Only lines that differ are parsed and compared field by field with
:class:`~gym_goldens.comparison.tolerance.Tolerance`: by a check compiled for
their layout (:mod:`gym_goldens.comparison.compiled`) where the two lines share
one, else by the walk (:mod:`gym_goldens.comparison.walk`); frames whose
digests differ are compared by their pixels first
(:mod:`gym_goldens.comparison.frames`). The first differing
record of each episode is kept, and explained (:mod:`gym_goldens.comparison.explain`)
when a report asks which fields differ.

Example:
    >>> import gymnasium as gym, tempfile
    >>> from gym_goldens import RecordTrajectory, compare
    >>> def record(path):
    ...     env = RecordTrajectory(gym.make("Pendulum-v1"), path)
    ...     env.action_space.seed(0)
    ...     _ = env.reset(seed=0)
    ...     for _ in range(20):
    ...         _ = env.step(env.action_space.sample())
    ...     env.close()
    >>> golden, actual = tempfile.mkdtemp(), tempfile.mkdtemp()
    >>> record(golden); record(actual)
    >>> compare(golden, actual).equal
    True
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, Final, NamedTuple

import orjson

from gym_goldens.comparison import compiled
from gym_goldens.comparison.arrays import array_deltas
from gym_goldens.comparison.compiled import SKELETON_DROPPED, SKELETON_KINDS, Check, skeleton
from gym_goldens.comparison.explain import explain, header_differences
from gym_goldens.comparison.frames import FramePairs, holds_frames
from gym_goldens.comparison.result import (
    MAX_KEPT_EPISODES,
    Comparison,
    Difference,
    Divergence,
    EpisodeComparison,
    Explanation,
)
from gym_goldens.comparison.tolerance import Tolerance, ToleranceNode
from gym_goldens.comparison.walk import values_match
from gym_goldens.errors import GoldenFormatError
from gym_goldens.format.codec import duplicated_key
from gym_goldens.format.fields import format_path
from gym_goldens.format.files import same_bytes
from gym_goldens.format.limits import DEFAULT_MAX_DECOMPRESSED_SIZE
from gym_goldens.format.lines import count_episodes, iter_episodes
from gym_goldens.format.paths import GoldenFolder, resolve_recording
from gym_goldens.format.reader import parse_record, pre_release_reason

__all__ = ["compare", "skeleton"]

_MAX_HEADERS: Final = 64
_MAX_LAYOUTS: Final = 512
# The lines of first divergences kept to be explained on demand, and the
# headers of differing episodes kept for their report, in bytes: those of the
# first differing episode are always kept, later ones while under this.
_MAX_KEPT_BYTES: Final = 64 * 1024 * 1024


def compare(
    golden: str | Path | GoldenFolder,
    actual: str | Path | GoldenFolder,
    tolerance: Tolerance | None = None,
    *,
    progress: Callable[[EpisodeComparison], None] | None = None,
    max_decompressed_size: int = DEFAULT_MAX_DECOMPRESSED_SIZE,
) -> Comparison:
    """Compare a recording with its golden.

    Args:
        golden: A recording folder or a trajectory file (or the folder
            resolved, see :func:`~gym_goldens.format.paths.resolve_golden`).
        actual: A recording folder or a trajectory file, of the same kind.
            The recordings of vector envs are compared sub-env by sub-env.
        tolerance: Float tolerances and ignored fields; the defaults if None.
        progress: Called with each episode's comparison as it is done.
        max_decompressed_size: What the compressed files of each recording
            (of each sub-env) may expand to, in bytes: 1 GiB by default. A
            file past it is refused; plain files are bounded by their size.

    Returns:
        The comparison; ``comparison.equal`` is the verdict.

    Raises:
        GoldenFormatError: A file cannot be read or holds a bad record. The
            message names the file and line.
        UnsafeGoldenPathError: A symlink inside a recording folder.
    """
    limit = max_decompressed_size
    comparer = _Comparer(tolerance or Tolerance(), progress=progress, max_decompressed_size=limit)
    return comparer.compare(_resolved(golden, limit), _resolved(actual, limit))


def _resolved(recording: str | Path | GoldenFolder, limit: int) -> GoldenFolder:
    """A recording as :func:`compare` reads it: resolved once, here at the edge, if need be."""
    if isinstance(recording, GoldenFolder):
        return recording
    return resolve_recording(Path(recording), max_decompressed_size=limit)


class _Comparer:
    """One comparison: its tolerance tree, and what it keeps between episodes.

    Args:
        tolerance: The comparison's tolerance.
        progress: Called with each episode's comparison.
        compile_checks: Whether lines of one layout are compared by a
            compiled check (the benchmark turns it off to measure it).
        max_decompressed_size: What the compressed files of a recording may
            expand to, in bytes.
    """

    def __init__(
        self,
        tolerance: Tolerance,
        *,
        progress: Callable[[EpisodeComparison], None] | None = None,
        compile_checks: bool = True,
        max_decompressed_size: int = DEFAULT_MAX_DECOMPRESSED_SIZE,
    ) -> None:
        self.tolerance = tolerance
        self.max_decompressed_size = max_decompressed_size
        self.root = tolerance.tree()
        self.frames = FramePairs(self.root, max_decompressed_size)
        self.progress = progress
        self.compile_checks = compile_checks
        # Parsed header lines by their bytes: the episodes of a recording mostly
        # repeat one header, and a header costs as much to parse as a few steps.
        self.headers: dict[bytes, dict[str, Any]] = {}
        # The compiled check of each layout met, None where it has none; kept
        # across episodes, whose lines mostly share a few layouts.
        self.checks: dict[bytes, Check | None] = {}
        self.kept_bytes = 0
        self.diverged = False  # whether a divergence was found yet

    def compare(self, golden: GoldenFolder, actual: GoldenFolder) -> Comparison:
        kept = _KeptEpisodes()
        if golden.envs or actual.envs:
            self._compare_vector(golden.envs, actual.envs, kept)
        else:
            for episode in self._compare_files(golden.files, actual.files):
                kept.add(episode)
        return Comparison(
            golden.path,
            actual.path,
            self.tolerance,
            tuple(kept.episodes),
            kept.count,
            kept.differing,
        )

    def _compare_vector(
        self,
        golden_envs: Sequence[GoldenFolder],
        actual_envs: Sequence[GoldenFolder],
        kept: _KeptEpisodes,
    ) -> None:
        """Pair sub-env folders by index, then their episodes by index."""
        golden_by_env = {env.env: env.files for env in golden_envs if env.env is not None}
        actual_by_env = {env.env: env.files for env in actual_envs if env.env is not None}
        for env in sorted(golden_by_env.keys() | actual_by_env.keys()):
            golden_files, actual_files = golden_by_env.get(env, ()), actual_by_env.get(env, ())
            for episode in self._compare_files(golden_files, actual_files):
                kept.add(dataclasses.replace(episode, env=env))

    def _compare_files(
        self, golden_files: Sequence[Path], actual_files: Sequence[Path]
    ) -> Iterator[EpisodeComparison]:
        """Pair the episodes of two recordings by index and compare each pair."""
        if (
            len(golden_files) == len(actual_files) == 1
            and golden_files[0].name == actual_files[0].name
            and same_bytes(golden_files[0], actual_files[0])
        ):
            # Byte-identical: every episode matches, counted without parsing.
            limit = self.max_decompressed_size
            for index in range(count_episodes(golden_files[0], max_decompressed_size=limit)):
                yield self._report(EpisodeComparison(index, golden_files[0], actual_files[0]))
            return
        pairs = itertools.zip_longest(
            iter_episodes(golden_files, max_decompressed_size=self.max_decompressed_size),
            iter_episodes(actual_files, max_decompressed_size=self.max_decompressed_size),
        )
        for index, (golden, actual) in enumerate(pairs):
            if golden is None or actual is None:
                present = golden or actual
                assert present is not None
                steps = _count_steps(present[1])
                episode = EpisodeComparison(
                    index,
                    golden[0] if golden else None,
                    actual[0] if actual else None,
                    golden_steps=steps if golden else 0,
                    actual_steps=steps if actual else 0,
                    differing_records=steps + 1,
                )
            else:
                episode = self._compare_episode(index, golden, actual)
            yield self._report(episode)

    def _report(self, episode: EpisodeComparison) -> EpisodeComparison:
        if self.progress is not None:
            self.progress(episode)
        return episode

    def _compare_episode(
        self, index: int, golden_episode: _EpisodeLines, actual_episode: _EpisodeLines
    ) -> EpisodeComparison:
        golden, golden_lines = golden_episode
        actual, actual_lines = actual_episode
        golden_header, golden_size, golden_next = self._read_header(golden, golden_lines)
        actual_header, actual_size, actual_next = self._read_header(actual, actual_lines)
        found_in_header = _header_differences(golden, golden_header, actual_header)
        if golden_header is None and golden_next:  # format 1.0 wrote episodes without one
            raise GoldenFormatError(golden, pre_release_reason("1.0"))
        # zip_longest, not zip: zip would drop the first line of the longer file.
        pairs = itertools.zip_longest(
            itertools.chain(golden_next, golden_lines), itertools.chain(actual_next, actual_lines)
        )
        common = self._compare_records((golden, actual), pairs)
        golden_extra, actual_extra, first = _unpaired(common, pairs)
        differs = first is not None or bool(found_in_header)
        keep_headers = differs and self._keep(golden_size + actual_size)
        return EpisodeComparison(
            index,
            golden,
            actual,
            golden_steps=max(common.records + golden_extra - 1, 0),
            actual_steps=max(common.records + actual_extra - 1, 0),
            differing_records=common.differing + golden_extra + actual_extra,
            first=first,
            header_differences=found_in_header,
            # Headers are kept for the report of differing episodes only, so that
            # memory does not grow with the number of matching episodes.
            golden_header=golden_header if keep_headers else None,
            actual_header=actual_header if keep_headers else None,
        )

    def _compare_records(self, files: tuple[Path, Path], pairs: Iterator[_Pair]) -> _Common:
        """Compare the records of an episode pair by pair, until one side runs out.

        The loop over every line pair: what runs per line is written out in
        it, the rest is called. Lines that are the same bytes are equal; a
        pair of another layout (skeleton) than the compiled checks know is
        compared by :meth:`_match`.
        """
        records = differing = 0
        types = _NumpyTypes(self.root)
        first: Divergence | None = None
        checks = self.checks
        # The layout of the last line a check compared, and its check: most lines
        # have the layout of the line before, which is compared, not hashed.
        recent, recent_check = b"", None
        loads, kinds, numerals = orjson.loads, SKELETON_KINDS, SKELETON_DROPPED
        for golden_item, actual_item in pairs:
            if golden_item is None or actual_item is None:
                return _Common(records, differing, first, golden_item, actual_item)
            records += 1
            golden_raw, actual_raw = golden_item[1], actual_item[1]
            if golden_raw == actual_raw:
                if types.differ:
                    differing += types.after_same_line(golden_raw)
                continue
            layout = golden_raw.translate(kinds, numerals)  # skeleton(), written out
            same_types = layout == actual_raw.translate(kinds, numerals)
            matches = check = None
            if same_types:
                check = recent_check if layout == recent else checks.get(layout)
            if check is not None:
                # Checks are compiled for skeletons of untagged step records only:
                # lines of such a skeleton need no other check than being JSON.
                try:
                    golden_record, actual_record = loads(golden_raw), loads(actual_raw)
                except orjson.JSONDecodeError:
                    pass
                else:
                    matches = check(golden_record, actual_record)
                    recent, recent_check = layout, check
            if matches is None:
                matches, golden_record, actual_record = self._match(
                    files, golden_item, actual_item, layout, same_types=same_types
                )
            if matches:
                if types.differ:
                    differing += types.after(golden_record, actual_record)
                continue
            types.after(golden_record, actual_record)
            differing += 1
            _check_keys(files[0], golden_item, files[1], actual_item)
            if first is None:
                first = self._divergence((files[0], *golden_item), (files[1], *actual_item))
        return _Common(records, differing, first, None, None)

    def _match(
        self,
        files: tuple[Path, Path],
        golden_item: tuple[int, bytes],
        actual_item: tuple[int, bytes],
        layout: bytes,
        *,
        same_types: bool,
    ) -> tuple[bool, dict[str, Any], dict[str, Any]]:
        """Parse and compare two record lines no compiled check has decided.

        Returns:
            Whether they match, and the two records.
        """
        golden, actual = files
        golden_record, actual_record, fast = _parse_pair(
            golden_item, actual_item, golden, actual, same_types=same_types
        )
        if not fast and holds_frames(golden_item[1], actual_item[1]):
            self.frames.settle(golden_record, actual_record, files, golden_item[0])
        root = self.root
        try:
            if same_types and fast and self.compile_checks and layout not in self.checks:
                # Lines of one skeleton share a layout: a check compiled
                # for it compares them without walking them.
                if len(self.checks) >= _MAX_LAYOUTS:
                    self.checks.clear()
                check = compiled.check_for(layout, golden_record, root)
                self.checks[layout] = check
                if check is not None:
                    matches = check(golden_record, actual_record)
                    if matches is not None:
                        return matches, golden_record, actual_record
            matches = values_match(golden_record, actual_record, root, same_types=same_types)
        except RecursionError:
            raise GoldenFormatError(golden, "JSON nested too deeply", line=golden_item[0]) from None
        return matches, golden_record, actual_record

    def _divergence(self, golden: _Line, actual: _Line) -> Divergence:
        """The first differing record of an episode, its lines kept to be explained.

        The first divergence of the comparison, the one every report shows,
        is explained at once, so that a record too deep to explain is
        reported by the comparison itself; later ones when they are asked.
        """
        path, number, raw = golden
        golden_record = parse_record(raw, path, number)
        first_of_all = not self.diverged
        self.diverged = True
        explainer = None
        if self._keep(len(raw) + len(actual[2]), first=first_of_all):
            explainer = _Explainer(golden, actual, self.root, self.frames)
        divergence = Divergence(
            event=str(golden_record.get("event")),
            t=golden_record.get("t"),
            golden_line=number,
            actual_line=actual[1],
            explain=explainer,
        )
        if first_of_all:
            divergence.differences  # noqa: B018 - worked out now, see above
        return divergence

    def _keep(self, size: int, *, first: bool = False) -> bool:
        """Whether what the report of a differing episode needs (``size`` bytes of lines) is kept.

        The first of each kind is always kept, later ones while under a budget:
        memory does not grow with the number of differing episodes, however
        large their lines.
        """
        if not first and self.kept_bytes and self.kept_bytes + size > _MAX_KEPT_BYTES:
            return False
        self.kept_bytes += max(size, 1)
        return True

    def _read_header(
        self, path: Path, lines: Iterator[tuple[int, bytes]]
    ) -> tuple[dict[str, Any] | None, int, list[tuple[int, bytes]]]:
        """Take the header off the front of ``lines``: the header, its size, what else was read."""
        headers = self.headers
        for number, raw in lines:
            record = headers.get(raw)
            if record is not None:
                return record, len(raw), []
            record = parse_record(raw, path, number)
            if record["event"] == "header":
                if len(headers) >= _MAX_HEADERS:
                    headers.clear()
                headers[raw] = record
                return record, len(raw), []
            return None, 0, [(number, raw)]
        return None, 0, []


class _KeptEpisodes:
    """The episodes a comparison keeps, and the counts of all of them.

    Every episode is counted; the first :data:`MAX_KEPT_EPISODES` are kept,
    and the first :data:`MAX_KEPT_EPISODES` that differ, so that memory does
    not grow with the number of episodes (a golden of millions of them).
    """

    __slots__ = ("count", "differing", "episodes")

    def __init__(self) -> None:
        self.episodes: list[EpisodeComparison] = []
        self.count = 0
        self.differing = 0

    def add(self, episode: EpisodeComparison) -> None:
        equal = episode.equal
        if self.count < MAX_KEPT_EPISODES or (not equal and self.differing < MAX_KEPT_EPISODES):
            self.episodes.append(episode)
        self.count += 1
        self.differing += not equal


_EpisodeLines = tuple[Path, Iterator[tuple[int, bytes]]]
_Line = tuple[Path, int, bytes]
"""A line of a recording: its file, its number and its bytes."""
_Pair = tuple["tuple[int, bytes] | None", "tuple[int, bytes] | None"]
"""The lines of the two sides at one place of an episode; None past the end of one."""


class _Common(NamedTuple):
    """What the records the two sides of an episode have in common came to."""

    records: int
    differing: int
    first: Divergence | None
    # The first line of the side that goes on after the other ran out, if any.
    golden_left: tuple[int, bytes] | None
    actual_left: tuple[int, bytes] | None


def _header_differences(
    golden: Path, golden_header: dict[str, Any] | None, actual_header: dict[str, Any] | None
) -> tuple[Difference, ...]:
    """How the headers of two episodes differ; nothing when one has none."""
    if golden_header is None or actual_header is None:
        return ()
    try:
        if golden_header != actual_header:
            return header_differences(golden_header, actual_header)
    except RecursionError:
        raise GoldenFormatError(golden, "JSON nested too deeply", line=1) from None
    return ()


def _unpaired(common: _Common, pairs: Iterator[_Pair]) -> tuple[int, int, Divergence | None]:
    """The records of the side that goes on after the other ran out: how many on each side.

    Also the episode's first divergence: the first differing common record,
    else the record after the last common one, where the lengths part.
    """
    golden_extra = actual_extra = 0
    if common.golden_left is not None:
        golden_extra = 1 + sum(1 for _ in pairs)
    elif common.actual_left is not None:
        actual_extra = 1 + sum(1 for _ in pairs)
    first = common.first
    if first is None and (golden_extra or actual_extra):
        first = Divergence(
            event="step",
            t=max(common.records - 1, 0) + 1,
            golden_line=common.golden_left[0] if common.golden_left is not None else None,
            actual_line=common.actual_left[0] if common.actual_left is not None else None,
        )
    return golden_extra, actual_extra, first


def _parse_pair(
    golden_item: tuple[int, bytes],
    actual_item: tuple[int, bytes],
    golden: Path,
    actual: Path,
    *,
    same_types: bool,
) -> tuple[dict[str, Any], dict[str, Any], bool]:
    """Parse two record lines; and whether both are untagged step records (``fast``).

    parse_record, inlined for the common case: a step record without tags is
    what parse_record would return. Anything else, including invalid JSON,
    goes through parse_record for its checks and messages.
    """
    golden_number, golden_raw = golden_item
    actual_number, actual_raw = actual_item
    try:
        golden_record = orjson.loads(golden_raw)
        actual_record = orjson.loads(actual_raw)
        # Subscripting with a str fails for anything but a dict. Lines with
        # the same skeleton have the same event, the same type of "t" and the
        # same tags: checking one checks both.
        fast = (
            golden_record["event"] == "step"
            and type(golden_record["t"]) is int
            and golden_raw.find(b'"$') < 0
            and (
                same_types
                or (
                    actual_record["event"] == "step"
                    and type(actual_record["t"]) is int
                    and actual_raw.find(b'"$') < 0
                )
            )
        )
    except (orjson.JSONDecodeError, TypeError, KeyError, IndexError):
        fast = False
    if not fast:
        golden_record = parse_record(golden_raw, golden, golden_number)
        actual_record = parse_record(actual_raw, actual, actual_number)
    return golden_record, actual_record, fast


class _Explainer:
    """Works out the differing fields of a first divergence, from its two lines."""

    __slots__ = ("actual", "frames", "golden", "root")

    def __init__(
        self, golden: _Line, actual: _Line, root: ToleranceNode, frames: FramePairs
    ) -> None:
        self.golden = golden
        self.actual = actual
        self.root = root
        self.frames = frames

    def __call__(self) -> Explanation:
        golden_record = parse_record(self.golden[2], self.golden[0], self.golden[1])
        actual_record = parse_record(self.actual[2], self.actual[0], self.actual[1])
        frames: list[Difference] = []
        if holds_frames(self.golden[2], self.actual[2]):
            files = (self.golden[0], self.actual[0])
            frames = self.frames.settle(
                golden_record, actual_record, files, self.golden[1], hide_differing=True
            )
        try:
            found = [*explain(golden_record, actual_record, self.root), *frames]
        except RecursionError:
            raise GoldenFormatError(
                self.golden[0], "JSON nested too deeply", line=self.golden[1]
            ) from None
        deltas = array_deltas(golden_record, actual_record, [d.path for d in found], self.root)
        return tuple(found), deltas


class _NumpyTypes:
    """Whether the numpy types of the two sides differ at the record being compared.

    A step record carries ``dtypes`` only where its types differ from the
    step before, so a record without them has the types of the last one
    with them. Once the two sides' types part (they write other ``dtypes``,
    or one side writes them and the other does not: its types changed, the
    other's did not), every record after differs, whatever its values, until
    both write the same types again.

    Attributes:
        differ: Whether the types differ at the last record seen.
    """

    __slots__ = ("differ", "root")

    def __init__(self, root: ToleranceNode) -> None:
        self.root = root
        self.differ = False

    def after_same_line(self, raw: bytes) -> int:
        """A line both sides share, while the types differ: 1 if they still do."""
        if b'"dtypes":' in raw:
            try:
                record = orjson.loads(raw)
            except orjson.JSONDecodeError:  # identical lines are equal, whatever they hold
                record = None
            if isinstance(record, dict) and record.get("dtypes") is not None:
                self.differ = False
        return int(self.differ)

    def after(self, golden: dict[str, Any], actual: dict[str, Any]) -> int:
        """Two parsed records: 1 if they differ by the types they have."""
        golden_types, actual_types = golden.get("dtypes"), actual.get("dtypes")
        if golden_types is not None or actual_types is not None:
            self.differ = (
                golden_types is None
                or actual_types is None
                or not values_match({"dtypes": golden_types}, {"dtypes": actual_types}, self.root)
            )
        return int(self.differ)


def _check_keys(
    golden: Path, golden_item: tuple[int, bytes], actual: Path, actual_item: tuple[int, bytes]
) -> None:
    """Refuse a differing record that names a key twice: it may have hidden a field.

    Raises:
        GoldenFormatError: One of the two lines names a key twice in one object.
    """
    for path, (number, raw) in ((golden, golden_item), (actual, actual_item)):
        where = duplicated_key(raw)
        if where is not None:
            raise GoldenFormatError(
                path,
                f"the key {format_path(where)!r} is named twice in one object: a reader "
                "keeps one of the values, so the other fields of the record may go unchecked; a "
                "recorder never writes a key twice, so this file was edited: record it again",
                line=number,
            )


def _count_steps(lines: Iterator[tuple[int, bytes]]) -> int:
    count = 0
    for _, raw in lines:
        if b'"event":"step"' in raw:
            count += 1
    return count

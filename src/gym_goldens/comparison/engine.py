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
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Final

import orjson

from gym_goldens.comparison import compiled
from gym_goldens.comparison.arrays import array_deltas
from gym_goldens.comparison.explain import explain, header_differences
from gym_goldens.comparison.frames import FramePairs, holds_frames
from gym_goldens.comparison.result import (
    Comparison,
    Difference,
    Divergence,
    EpisodeComparison,
    Explanation,
)
from gym_goldens.comparison.tolerance import Tolerance, ToleranceNode
from gym_goldens.comparison.walk import values_match
from gym_goldens.errors import GoldenFormatError
from gym_goldens.format.header import LEGACY_VERSION
from gym_goldens.format.limits import DEFAULT_MAX_DECOMPRESSED_SIZE
from gym_goldens.format.lines import count_episodes, iter_episodes
from gym_goldens.format.reader import parse_record, recording_files, sub_env_dirs

__all__ = ["compare", "skeleton"]

_NUMERALS: Final = b"0123456789+-"
_MAX_HEADERS: Final = 64
# Skeletons: digits and signs out, "e" as "." (every float has one of them,
# no int has either), so that the values of one field share a skeleton.
_KINDS: Final = bytes.maketrans(b"eE", b"..")
_CHUNK: Final = 1 << 20
# The lines of first divergences kept to be explained on demand, in bytes:
# the first differing episode is always kept, later ones while under this.
_MAX_KEPT_BYTES: Final = 64 * 1024 * 1024


def compare(
    golden: str | Path,
    actual: str | Path,
    tolerance: Tolerance | None = None,
    *,
    progress: Callable[[EpisodeComparison], None] | None = None,
    max_decompressed_size: int = DEFAULT_MAX_DECOMPRESSED_SIZE,
) -> Comparison:
    """Compare a recording with its golden.

    Args:
        golden: A recording folder or a trajectory file.
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
    """
    return _Comparer(
        tolerance or Tolerance(), progress=progress, max_decompressed_size=max_decompressed_size
    ).compare(Path(golden), Path(actual))


def skeleton(line: bytes) -> bytes:
    """The layout of a record line: the line without its digits and signs, ``e`` as ``.``.

    Two lines of one skeleton hold values of the same types wherever both
    have one: the same structure, keys and strings (but for digits, signs and
    ``e``/``.``), literals and, in the same places, numbers of the same kind
    (an int has no ``.`` or ``e``, a float always has one). The one blur of
    structure, ``[7]`` against ``[]``, is a length, which the checks compare.
    Two lines that differ only in their numbers, the common case, share one.

    Example:
        >>> skeleton(b'{"obs":[1.5,-2e-05],"t":3}')
        b'{"obs":[.,.],"t":}'
    """
    return line.translate(_KINDS, _NUMERALS)


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
        self.kept_bytes = 0

    def compare(self, golden: Path, actual: Path) -> Comparison:
        golden_envs, actual_envs = sub_env_dirs(golden), sub_env_dirs(actual)
        if golden_envs or actual_envs:
            episodes = self._compare_vector(golden_envs, actual_envs)
        else:
            episodes = tuple(self._compare_files(recording_files(golden), recording_files(actual)))
        return Comparison(golden, actual, self.tolerance, episodes)

    def _compare_vector(
        self, golden_envs: list[tuple[int, Path]], actual_envs: list[tuple[int, Path]]
    ) -> tuple[EpisodeComparison, ...]:
        """Pair sub-env folders by index, then their episodes by index."""
        golden_by_env, actual_by_env = dict(golden_envs), dict(actual_envs)
        episodes: list[EpisodeComparison] = []
        for env in sorted(golden_by_env.keys() | actual_by_env.keys()):
            golden_env, actual_env = golden_by_env.get(env), actual_by_env.get(env)
            golden_files = recording_files(golden_env) if golden_env else []
            actual_files = recording_files(actual_env) if actual_env else []
            episodes += (
                dataclasses.replace(episode, env=env)
                for episode in self._compare_files(golden_files, actual_files)
            )
        return tuple(episodes)

    def _compare_files(
        self, golden_files: list[Path], actual_files: list[Path]
    ) -> Iterator[EpisodeComparison]:
        """Pair the episodes of two recordings by index and compare each pair."""
        if (
            len(golden_files) == len(actual_files) == 1
            and golden_files[0].name == actual_files[0].name
            and _same_bytes(golden_files[0], actual_files[0])
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

    # One loop over every line pair, inlined for speed: hence its length.
    def _compare_episode(  # noqa: PLR0915
        self, index: int, golden_episode: _EpisodeLines, actual_episode: _EpisodeLines
    ) -> EpisodeComparison:
        golden, golden_lines = golden_episode
        actual, actual_lines = actual_episode
        golden_header, golden_next = self._read_header(golden, golden_lines)
        actual_header, actual_next = self._read_header(actual, actual_lines)
        found_in_header: tuple[Difference, ...] = ()
        if golden_header is not None and actual_header is not None:
            try:
                if golden_header != actual_header:
                    found_in_header = header_differences(golden_header, actual_header)
            except RecursionError:
                raise GoldenFormatError(golden, "JSON nested too deeply", line=1) from None
        # Goldens of format 1.0 have no dtypes: compare what they hold.
        legacy = str((golden_header or {}).get("version", LEGACY_VERSION)) == LEGACY_VERSION

        root = self.root
        records = differing = 0
        types = _NumpyTypes(root)
        first: Divergence | None = None
        golden_rest = itertools.chain(golden_next, golden_lines)
        actual_rest = itertools.chain(actual_next, actual_lines)
        # zip_longest, not zip: zip would drop the first line of the longer file.
        pairs = itertools.zip_longest(golden_rest, actual_rest)
        golden_item: tuple[int, bytes] | None = None
        actual_item: tuple[int, bytes] | None = None
        loads = orjson.loads
        checks: dict[bytes, Any] = {}  # this episode's share of the compiled checks
        for golden_item, actual_item in pairs:
            if golden_item is None or actual_item is None:
                break
            records += 1
            golden_number, golden_raw = golden_item
            actual_raw = actual_item[1]
            if golden_raw == actual_raw:
                if types.differ:
                    differing += types.after_same_line(golden_raw)
                continue
            layout = skeleton(golden_raw)
            same_types = layout == skeleton(actual_raw)
            matches = None
            check = checks.get(layout) if same_types else None
            if check is not None:
                # Checks are compiled for skeletons of untagged step records only:
                # lines of such a skeleton need no other check than being JSON.
                try:
                    golden_record = loads(golden_raw)
                    actual_record = loads(actual_raw)
                except orjson.JSONDecodeError:
                    pass
                else:
                    matches = check(golden_record, actual_record)
                    if matches:
                        if types.differ:
                            differing += types.after(golden_record, actual_record)
                        continue
            if matches is None:
                golden_record, actual_record, fast = _parse_pair(
                    golden_item, actual_item, golden, actual, same_types=same_types
                )
                if legacy:
                    actual_record.pop("dtypes", None)
                if not fast and holds_frames(golden_raw, actual_raw):
                    files = (golden, actual)
                    self.frames.settle(golden_record, actual_record, files, golden_number)
                try:
                    if same_types and fast and self.compile_checks and layout not in checks:
                        # Lines of one skeleton share a layout: a check compiled
                        # for it compares them without walking them.
                        check = checks[layout] = compiled.check_for(
                            layout, golden_record, root, legacy=legacy
                        )
                        if check is not None:
                            matches = check(golden_record, actual_record)
                    if matches is None:
                        matches = values_match(
                            golden_record, actual_record, root, same_types=same_types
                        )
                except RecursionError:
                    raise GoldenFormatError(
                        golden, "JSON nested too deeply", line=golden_number
                    ) from None
                if matches:
                    if types.differ:
                        differing += types.after(golden_record, actual_record)
                    continue
            if not legacy:
                types.after(golden_record, actual_record)
            differing += 1
            if first is None:
                first = self._divergence(
                    (golden, *golden_item), (actual, *actual_item), legacy=legacy
                )
        else:
            golden_item = actual_item = None

        # One side ran out: the other's item is its first record without a counterpart.
        golden_extra = actual_extra = 0
        if golden_item is not None:
            golden_extra = 1 + sum(1 for _ in pairs)
        elif actual_item is not None:
            actual_extra = 1 + sum(1 for _ in pairs)
        if first is None and (golden_extra or actual_extra):
            # The record after the last common one is where the lengths part.
            first = Divergence(
                event="step",
                t=max(records - 1, 0) + 1,
                golden_line=golden_item[0] if golden_item is not None else None,
                actual_line=actual_item[0] if actual_item is not None else None,
            )
        differs = first is not None or bool(found_in_header)
        return EpisodeComparison(
            index,
            golden,
            actual,
            golden_steps=max(records + golden_extra - 1, 0),
            actual_steps=max(records + actual_extra - 1, 0),
            differing_records=differing + golden_extra + actual_extra,
            first=first,
            header_differences=found_in_header,
            # Headers are kept for the report of differing episodes only, so that
            # memory does not grow with the number of matching episodes.
            golden_header=golden_header if differs else None,
            actual_header=actual_header if differs else None,
        )

    def _divergence(self, golden: _Line, actual: _Line, *, legacy: bool) -> Divergence:
        """The first differing record of an episode, its lines kept to be explained.

        The first divergence of the comparison, the one every report shows,
        is explained at once, so that a record too deep to explain is
        reported by the comparison itself; later ones when they are asked.
        """
        path, number, raw = golden
        golden_record = parse_record(raw, path, number)
        size = len(raw) + len(actual[2])
        explainer = None
        first_of_all = not self.kept_bytes
        if first_of_all or self.kept_bytes + size <= _MAX_KEPT_BYTES:
            self.kept_bytes += size
            explainer = _Explainer(golden, actual, self.root, legacy, self.frames)
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

    def _read_header(
        self, path: Path, lines: Iterator[tuple[int, bytes]]
    ) -> tuple[dict[str, Any] | None, list[tuple[int, bytes]]]:
        """Take the header off the front of ``lines``; return what else was read."""
        headers = self.headers
        for number, raw in lines:
            record = headers.get(raw)
            if record is not None:
                return record, []
            record = parse_record(raw, path, number)
            if record["event"] == "header":
                if len(headers) >= _MAX_HEADERS:
                    headers.clear()
                headers[raw] = record
                return record, []
            return None, [(number, raw)]
        return None, []


_EpisodeLines = tuple[Path, Iterator[tuple[int, bytes]]]
_Line = tuple[Path, int, bytes]
"""A line of a recording: its file, its number and its bytes."""


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

    __slots__ = ("actual", "frames", "golden", "legacy", "root")

    def __init__(
        self, golden: _Line, actual: _Line, root: ToleranceNode, legacy: bool, frames: FramePairs
    ) -> None:
        self.golden = golden
        self.actual = actual
        self.root = root
        self.legacy = legacy
        self.frames = frames

    def __call__(self) -> Explanation:
        golden_record = parse_record(self.golden[2], self.golden[0], self.golden[1])
        actual_record = parse_record(self.actual[2], self.actual[0], self.actual[1])
        if self.legacy:
            actual_record.pop("dtypes", None)
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


def _count_steps(lines: Iterator[tuple[int, bytes]]) -> int:
    count = 0
    for _, raw in lines:
        if b'"event":"step"' in raw:
            count += 1
    return count


def _same_bytes(first: Path, second: Path) -> bool:
    try:
        if first.stat().st_size != second.stat().st_size:
            return False
        with open(first, "rb") as one, open(second, "rb") as two:
            while True:
                chunk = one.read(_CHUNK)
                if chunk != two.read(_CHUNK):
                    return False
                if not chunk:
                    return True
    except OSError:
        return False

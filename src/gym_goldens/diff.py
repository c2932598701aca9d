"""Comparing a recording with its golden, within tolerance.

The comparison streams: the two files are read line by line, split into
episodes at their header lines and paired by episode index, so memory stays
flat however long the rollout. Lines that are the same bytes are equal without
being parsed, and files that are the same bytes are not even split into
lines. Only lines that differ are parsed and compared
field by field with :class:`~gym_goldens.tolerance.Tolerance`; for the first
differing record of each episode every differing field is listed.

Example:
    >>> import gymnasium as gym, tempfile
    >>> from gym_goldens import RecordTrajectory, compare
    >>> def record(path):
    ...     env = RecordTrajectory(gym.make("CartPole-v1"), path)
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
import math
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Final, Literal

import orjson

from gym_goldens.arrays import ArrayDelta, array_deltas, summary_matches
from gym_goldens.compiled import Check, compile_check
from gym_goldens.errors import GoldenFormatError
from gym_goldens.header import INFORMATIONAL_FIELDS, LEGACY_VERSION
from gym_goldens.reader import (
    count_episodes,
    iter_episodes,
    parse_record,
    recording_files,
    sub_env_dirs,
)
from gym_goldens.tolerance import Tolerance, _Node

__all__ = ["Comparison", "Difference", "Divergence", "EpisodeComparison", "compare", "format_path"]

DifferenceKind = Literal["value", "type", "length", "missing", "extra"]

_INF: Final = math.inf
_NUMERALS: Final = b"0123456789+-"
_MAX_DIFFERENCES: Final = 20
_MAX_CHECKS: Final = 512
_MAX_HEADERS: Final = 64
# Compiled checks by tolerance tree and skeleton (the tree is kept to tell a
# reused id apart).
_CHECKS: dict[tuple[int, bool, bytes], tuple[_Node, Check | None]] = {}
# Skeletons: digits and signs out, "e" as "." (every float has one of them,
# no int has either), so that the values of one field share a skeleton.
_KINDS: Final = bytes.maketrans(b"eE", b"..")
_UNSET: Final = object()
_CHUNK: Final = 1 << 20
_EXACT: Final = Tolerance(rtol=0.0, atol=0.0)
_NOT_COMPARED: Final = INFORMATIONAL_FIELDS | {"event", "format", "version"}


@dataclasses.dataclass(frozen=True)
class Difference:
    """One field that differs.

    Attributes:
        path: Where, such as ``("obs", 2)`` or ``("info", "x_velocity")``.
        kind: ``value`` (out of tolerance), ``type`` (a change of type),
            ``length`` (a list of another length: golden and actual hold the
            lengths), ``missing`` (in the golden only) or ``extra`` (in the
            actual recording only).
        golden: The golden's value.
        actual: The actual value.
        rtol: The relative tolerance that applied, for floats.
        atol: The absolute tolerance that applied, for floats.
    """

    path: tuple[str | int, ...]
    kind: DifferenceKind
    golden: Any
    actual: Any
    rtol: float | None = None
    atol: float | None = None

    @property
    def field(self) -> str:
        """The path as text: ``obs[2]``, ``info.x_velocity``."""
        return format_path(self.path)

    @property
    def allowed(self) -> float | None:
        """The largest difference the tolerance allowed here, for floats."""
        if self.rtol is None or self.atol is None or not isinstance(self.golden, float):
            return None
        return self.atol + self.rtol * abs(self.golden)


@dataclasses.dataclass(frozen=True)
class Divergence:
    """The first record of an episode that differs.

    Attributes:
        event: ``reset`` or ``step``.
        t: The step number (None for the reset record).
        golden_line: Its line in the golden file (None when missing there).
        actual_line: Its line in the actual file (None when missing there).
        differences: The fields that differ, at most 20; empty when the
            record is missing on one side (see ``golden_line``/``actual_line``).
        arrays: For each array held in full on both sides that contains a
            difference: how many elements differ and by how much.
    """

    event: str
    t: int | None
    golden_line: int | None
    actual_line: int | None
    differences: tuple[Difference, ...]
    arrays: tuple[ArrayDelta, ...] = ()


@dataclasses.dataclass(frozen=True)
class EpisodeComparison:
    """The comparison of one pair of episodes.

    Attributes:
        index: The episode number.
        golden_path: The golden file that holds the episode (None when the
            golden has fewer episodes).
        actual_path: The actual file that holds it (None when the actual has
            fewer episodes).
        golden_steps: Steps in the golden episode (None when not counted
            because the files were identical).
        actual_steps: Steps in the actual episode (likewise).
        differing_records: Records that differ or have no counterpart.
        first: The first differing record, or None.
        header_differences: Differences of the compared header fields.
        golden_header: The golden's header record, when the episode differs.
        actual_header: The actual header record, when the episode differs.
        env: The sub-env index, in the recording of a vector env.
    """

    index: int
    golden_path: Path | None
    actual_path: Path | None
    golden_steps: int | None = None
    actual_steps: int | None = None
    differing_records: int = 0
    first: Divergence | None = None
    header_differences: tuple[Difference, ...] = ()
    golden_header: dict[str, Any] | None = None
    actual_header: dict[str, Any] | None = None
    env: int | None = None

    @property
    def equal(self) -> bool:
        """Whether the episode matches within tolerance."""
        return (
            self.golden_path is not None
            and self.actual_path is not None
            and self.first is None
            and not self.header_differences
        )


@dataclasses.dataclass(frozen=True)
class Comparison:
    """The result of :func:`compare`.

    Attributes:
        golden: The golden folder or file.
        actual: The actual folder or file.
        tolerance: The tolerance used.
        episodes: One entry per episode index present on either side.
    """

    golden: Path
    actual: Path
    tolerance: Tolerance
    episodes: tuple[EpisodeComparison, ...]

    @property
    def equal(self) -> bool:
        """Whether every episode matches."""
        return all(episode.equal for episode in self.episodes)

    def __bool__(self) -> bool:
        return self.equal

    @property
    def differing(self) -> list[EpisodeComparison]:
        """The episodes that do not match."""
        return [episode for episode in self.episodes if not episode.equal]


def compare(
    golden: str | Path,
    actual: str | Path,
    tolerance: Tolerance | None = None,
    *,
    progress: Callable[[EpisodeComparison], None] | None = None,
) -> Comparison:
    """Compare a recording with its golden.

    Args:
        golden: A recording folder or a trajectory file.
        actual: A recording folder or a trajectory file, of the same kind.
            The recordings of vector envs are compared sub-env by sub-env.
        tolerance: Float tolerances and ignored fields; the defaults if None.
        progress: Called with each episode's comparison as it is done.

    Returns:
        The comparison; ``comparison.equal`` is the verdict.

    Raises:
        GoldenFormatError: A file cannot be read or holds a bad record. The
            message names the file and line.
    """
    tolerance = tolerance or Tolerance()
    golden_path, actual_path = Path(golden), Path(actual)
    root = tolerance.tree()
    golden_envs, actual_envs = sub_env_dirs(golden_path), sub_env_dirs(actual_path)
    if golden_envs or actual_envs:
        return Comparison(
            golden_path, actual_path, tolerance, _compare_vector(golden_envs, actual_envs, root)
        )
    episodes = []
    for episode in _compare_files(recording_files(golden_path), recording_files(actual_path), root):
        episodes.append(episode)
        if progress is not None:
            progress(episode)
    return Comparison(golden_path, actual_path, tolerance, tuple(episodes))


def _compare_files(
    golden_files: list[Path], actual_files: list[Path], root: _Node
) -> Iterator[EpisodeComparison]:
    """Pair the episodes of two recordings by index and compare each pair."""
    if (
        len(golden_files) == len(actual_files) == 1
        and golden_files[0].name == actual_files[0].name
        and _same_bytes(golden_files[0], actual_files[0])
    ):
        # Byte-identical: every episode matches, counted without parsing.
        for index in range(count_episodes(golden_files[0])):
            yield EpisodeComparison(index, golden_files[0], actual_files[0])
        return
    pairs = itertools.zip_longest(iter_episodes(golden_files), iter_episodes(actual_files))
    # Parsed header lines by their bytes: the episodes of a recording mostly
    # repeat one header, and a header costs as much to parse as a few steps.
    headers: dict[bytes, dict[str, Any]] = {}
    for index, (g, a) in enumerate(pairs):
        yield _compare_episode(index, g, a, root, headers)


def _compare_vector(
    golden_envs: list[tuple[int, Path]], actual_envs: list[tuple[int, Path]], root: _Node
) -> tuple[EpisodeComparison, ...]:
    """Pair sub-env folders by index, then their episodes by index."""
    golden_by_env, actual_by_env = dict(golden_envs), dict(actual_envs)
    episodes: list[EpisodeComparison] = []
    for env in sorted(golden_by_env.keys() | actual_by_env.keys()):
        golden_env, actual_env = golden_by_env.get(env), actual_by_env.get(env)
        golden_files = recording_files(golden_env) if golden_env else []
        actual_files = recording_files(actual_env) if actual_env else []
        for episode in _compare_files(golden_files, actual_files, root):
            episodes.append(dataclasses.replace(episode, env=env))
    return tuple(episodes)


def format_path(path: tuple[str | int, ...]) -> str:
    """Write a field path as text.

    Example:
        >>> format_path(("info", "joints", 2, "angle"))
        'info.joints[2].angle'
    """
    text = ""
    for segment in path:
        if isinstance(segment, int):
            text += f"[{segment}]"
        else:
            text += f".{segment}" if text else str(segment)
    return text


_EpisodeLines = tuple[Path, Iterator[tuple[int, bytes]]]


def _compare_episode(
    index: int,
    golden: _EpisodeLines | None,
    actual: _EpisodeLines | None,
    root: _Node,
    headers: dict[bytes, dict[str, Any]],
) -> EpisodeComparison:
    if golden is None or actual is None:
        present = golden or actual
        assert present is not None
        steps = _count_steps(present[1])
        return EpisodeComparison(
            index,
            golden[0] if golden else None,
            actual[0] if actual else None,
            golden_steps=steps if golden else 0,
            actual_steps=steps if actual else 0,
            differing_records=steps + 1,
        )
    return _compare_lines(index, golden, actual, root, headers)


# One loop over every line pair, inlined for speed: hence its length.
def _compare_lines(  # noqa: PLR0915
    index: int,
    golden_episode: _EpisodeLines,
    actual_episode: _EpisodeLines,
    root: _Node,
    headers: dict[bytes, dict[str, Any]],
) -> EpisodeComparison:
    golden, golden_lines = golden_episode
    actual, actual_lines = actual_episode
    golden_header, golden_next = _read_header(golden, golden_lines, headers)
    actual_header, actual_next = _read_header(actual, actual_lines, headers)
    header_differences: tuple[Difference, ...] = ()
    if golden_header is not None and actual_header is not None:
        try:
            if golden_header != actual_header:
                header_differences = _header_differences(golden_header, actual_header)
        except RecursionError:
            raise GoldenFormatError(golden, "JSON nested too deeply", line=1) from None
    # Goldens of format 1.0 have no dtypes: compare what they hold.
    legacy = str((golden_header or {}).get("version", LEGACY_VERSION)) == LEGACY_VERSION

    records = differing = 0
    first: Divergence | None = None
    golden_rest = itertools.chain(golden_next, golden_lines)
    actual_rest = itertools.chain(actual_next, actual_lines)
    # zip_longest, not zip: zip would drop the first line of the longer file.
    pairs = itertools.zip_longest(golden_rest, actual_rest)
    golden_item: tuple[int, bytes] | None = None
    actual_item: tuple[int, bytes] | None = None
    loads = orjson.loads
    checks: dict[bytes, Any] = {}  # this episode's share of _CHECKS
    for golden_item, actual_item in pairs:
        if golden_item is None or actual_item is None:
            break
        records += 1
        golden_number, golden_raw = golden_item
        actual_number, actual_raw = actual_item
        if golden_raw == actual_raw:
            continue
        skeleton = golden_raw.translate(_KINDS, _NUMERALS)
        same_types = skeleton == actual_raw.translate(_KINDS, _NUMERALS)  # see _same_types
        matches = None
        check = checks.get(skeleton) if same_types else None
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
                    continue
        if matches is None:
            # parse_record, inlined for the common case: a step record without
            # tags is what parse_record would return. Anything else, including
            # invalid JSON, goes through parse_record for its checks and messages.
            try:
                golden_record = loads(golden_raw)
                actual_record = loads(actual_raw)
                # Subscripting with a str fails for anything but a dict. Lines
                # with the same skeleton have the same event, the same type of
                # "t" and the same tags: checking one checks both.
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
            if legacy:
                actual_record.pop("dtypes", None)
            try:
                if same_types:
                    if fast and skeleton not in checks:
                        # Lines of one skeleton share a layout: a check compiled
                        # for it compares them without walking them.
                        check = checks[skeleton] = _check_for(skeleton, golden_record, root, legacy)
                        if check is not None:
                            matches = check(golden_record, actual_record)
                    if matches is None:
                        matches = _close(golden_record, actual_record, root)
                else:
                    matches = _equal(golden_record, actual_record, root)
            except RecursionError:
                raise GoldenFormatError(
                    golden, "JSON nested too deeply", line=golden_number
                ) from None
            if matches:
                continue
        differing += 1
        if first is None:
            first = _divergence(
                golden_record, actual_record, root, path=golden, lines=(golden_item, actual_item)
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
            differences=(),
        )
    differs = first is not None or bool(header_differences)
    return EpisodeComparison(
        index,
        golden,
        actual,
        golden_steps=max(records + golden_extra - 1, 0),
        actual_steps=max(records + actual_extra - 1, 0),
        differing_records=differing + golden_extra + actual_extra,
        first=first,
        header_differences=header_differences,
        # Headers are kept for the report of differing episodes only, so that
        # memory does not grow with the number of matching episodes.
        golden_header=golden_header if differs else None,
        actual_header=actual_header if differs else None,
    )


def _divergence(
    golden_record: dict[str, Any],
    actual_record: dict[str, Any],
    root: _Node,
    *,
    path: Path,
    lines: tuple[tuple[int, bytes], tuple[int, bytes]],
) -> Divergence:
    """The first differing record of an episode, with every field that differs."""
    # DeepDiff lists the differing paths, once per episode.
    from gym_goldens.explain import explain

    try:
        found = explain(golden_record, actual_record, root)
    except RecursionError:
        raise GoldenFormatError(path, "JSON nested too deeply", line=lines[0][0]) from None
    return Divergence(
        event=str(golden_record.get("event")),
        t=golden_record.get("t"),
        golden_line=lines[0][0],
        actual_line=lines[1][0],
        differences=tuple(found),
        arrays=array_deltas(golden_record, actual_record, [d.path for d in found], root),
    )


def _read_header(
    path: Path, lines: Iterator[tuple[int, bytes]], headers: dict[bytes, dict[str, Any]]
) -> tuple[dict[str, Any] | None, list[tuple[int, bytes]]]:
    """Take the header off the front of ``lines``; return what else was read.

    ``headers`` holds the headers parsed so far, by their line's bytes.
    """
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


def _header_differences(golden: dict[str, Any], actual: dict[str, Any]) -> tuple[Difference, ...]:
    golden_compared = {k: v for k, v in golden.items() if k not in _NOT_COMPARED}
    actual_compared = {k: v for k, v in actual.items() if k not in _NOT_COMPARED}
    found: list[Difference] = []
    _explain(golden_compared, actual_compared, _EXACT.tree(), (), found)
    return tuple(found)


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


def _float_matches(golden: float, actual: float, node: _Node) -> bool:
    if golden == actual:
        return True
    difference = abs(actual - golden)
    if difference <= node.atol + node.rtol * abs(golden):
        return difference != _INF
    return math.isnan(golden) and math.isnan(actual)  # NaN matches NaN


def _equal(golden: Any, actual: Any, node: _Node) -> bool:
    """Whether two parsed values match; the hot loop of every comparison.

    ``==`` is no shortcut for containers: ``[0] == [0.0]`` and ``[1] ==
    [True]`` in Python, yet a change of type is a difference.
    """
    if node.ignored:
        return True
    kind = type(golden)
    if kind is not type(actual):
        return summary_matches(golden, actual)
    if kind is float:
        return _float_matches(golden, actual, node)
    if kind is list:
        if len(golden) != len(actual):
            return False
        if node.leaf:
            return _items_equal(zip(golden, actual, strict=False), node)
        pairs = enumerate(zip(golden, actual, strict=False))
        return all(_equal(g, a, node.child(i)) for i, (g, a) in pairs)
    if kind is dict:
        if node.leaf:
            if golden.keys() != actual.keys():
                return False
            values = map(actual.__getitem__, golden)
            return _items_equal(zip(golden.values(), values, strict=False), node)
        for key in golden.keys() | actual.keys():
            child = node.child(key)
            if child.ignored:
                continue
            if key not in golden or key not in actual:
                return False
            if not _equal(golden[key], actual[key], child):
                return False
        return True
    return bool(golden == actual)


def _items_equal(pairs: Iterator[tuple[Any, Any]], node: _Node) -> bool:
    """:func:`_equal` for the items of a container under a leaf node (not ignored).

    Under a leaf node every descendant has the same tolerance, so nested
    containers go on a stack rather than through a call each, and floats are
    checked inline, as in :func:`_float_matches`: calls would cost more than
    the checks.
    """
    rtol, atol = node.rtol, node.atol
    stack = [pairs]
    push = stack.append
    while stack:
        for g, a in stack.pop():
            kind = type(g)
            if kind is not type(a):
                if summary_matches(g, a):
                    continue
                return False
            if kind is float:
                if g != a:
                    difference = abs(a - g)
                    if difference <= atol + rtol * abs(g):
                        if difference == _INF:
                            return False
                    elif g == g or a == a:  # noqa: PLR0124 - NaN matches NaN
                        return False
            elif kind is list:
                if len(g) != len(a):
                    return False
                if g:
                    push(zip(g, a, strict=False))
            elif kind is dict:
                if g.keys() != a.keys():
                    return False
                if g:
                    push(zip(g.values(), map(a.__getitem__, g), strict=False))
            elif g != a:
                return False
    return True


def _check_for(
    skeleton: bytes, template: dict[str, Any], root: _Node, legacy: bool
) -> Check | None:
    """The compiled check of a skeleton, kept for the episodes that follow."""
    key = (id(root), legacy, skeleton)
    found = _CHECKS.get(key)
    if found is not None and found[0] is root:
        return found[1]
    # A legacy golden's actual dtypes are dropped: their layouts differ.
    check = None if legacy and "dtypes" in template else compile_check(template, root)
    if len(_CHECKS) >= _MAX_CHECKS:
        _CHECKS.clear()
    _CHECKS[key] = (root, check)
    return check


def _same_types(golden_raw: bytes, actual_raw: bytes) -> bool:
    """Whether two lines hold values of the same types wherever both have one.

    Their *skeletons* are compared: the lines with digits and signs taken out
    and ``e`` read as ``.``. Two JSON lines have the same skeleton only if
    they have the same structure, keys and strings (but for digits, signs and
    ``e``/``.``), literals and, in the same places, numbers of the same kind:
    an int has no ``.`` or ``e``, a float always has one. The one blur of
    structure, ``[7]`` against ``[]``, is a length, which :func:`_close`
    checks, and strings and keys are compared in full. Two lines that differ
    only in their numbers, the common case, pass.
    """
    return golden_raw.translate(_KINDS, _NUMERALS) == actual_raw.translate(_KINDS, _NUMERALS)


def _close(golden: Any, actual: Any, node: _Node) -> bool:
    """:func:`_equal` for values whose types are known to agree (see :func:`_same_types`).

    Then ``==`` is a sound shortcut (``0 == 0.0`` cannot happen), so equal
    fields and subtrees are passed over in C and only the rest is walked.
    """
    if node.ignored or golden == actual:
        return True
    kind = type(golden)
    if kind is float:
        return _float_matches(golden, actual, node)
    if kind is list:
        if len(golden) != len(actual):
            return False
        if not node.leaf:
            pairs = enumerate(zip(golden, actual, strict=False))
            return all(_close(g, a, node.child(i)) for i, (g, a) in pairs)
        items: Iterator[tuple[Any, Any]] = zip(golden, actual, strict=False)
    elif kind is dict:
        if not node.leaf:
            for key in golden.keys() | actual.keys():
                child = node.child(key)
                if child.ignored:
                    continue
                if key not in golden or key not in actual:
                    return False
                if not _close(golden[key], actual[key], child):
                    return False
            return True
        if golden.keys() != actual.keys():
            return False
        items = zip(golden.values(), map(actual.__getitem__, golden), strict=False)
    else:
        return False
    rtol, atol = node.rtol, node.atol
    stack = [items]
    push = stack.append
    while stack:
        for g, a in stack.pop():
            if g == a:
                continue
            kind = type(g)
            if kind is float:
                difference = abs(a - g)
                if difference <= atol + rtol * abs(g):
                    if difference == _INF:
                        return False
                elif g == g or a == a:  # noqa: PLR0124 - NaN matches NaN
                    return False
            elif kind is list:
                if len(g) != len(a):
                    return False
                push(zip(g, a, strict=False))
            elif kind is dict:
                if g.keys() != a.keys():
                    return False
                push(zip(g.values(), map(a.__getitem__, g), strict=False))
            else:
                return False
    return True


def _explain(
    golden: Any,
    actual: Any,
    node: _Node,
    path: tuple[str | int, ...],
    found: list[Difference],
) -> None:
    """Append the differences between two values; agrees with :func:`_equal`."""
    if node.ignored or len(found) >= _MAX_DIFFERENCES:
        return
    kind = type(golden)
    if kind is not type(actual):
        if not summary_matches(golden, actual):
            found.append(Difference(path, "type", golden, actual))
    elif kind is float:
        if not _float_matches(golden, actual, node):
            found.append(Difference(path, "value", golden, actual, node.rtol, node.atol))
    elif kind is list:
        if len(golden) != len(actual):
            found.append(Difference(path, "length", len(golden), len(actual)))
            return
        for i, (g, a) in enumerate(zip(golden, actual, strict=True)):
            _explain(g, a, node.child(i), (*path, i), found)
    elif kind is dict:
        for key in [*golden, *(k for k in actual if k not in golden)]:
            child = node.child(key)
            if child.ignored or len(found) >= _MAX_DIFFERENCES:
                continue
            if key not in actual:
                found.append(Difference((*path, key), "missing", golden[key], None))
            elif key not in golden:
                found.append(Difference((*path, key), "extra", None, actual[key]))
            else:
                _explain(golden[key], actual[key], child, (*path, key), found)
    elif golden != actual:
        found.append(Difference(path, "value", golden, actual))

"""Reading recordings and goldens back: records, episodes, recordings.

A *recording* is a folder holding ``trajectory.jsonl``, or that file alone.
The file holds one episode after another, each opening with its header
record. The recording of a vector env is a folder with one sub-folder per
sub-env (``env_0/``, ``env_1/``, ...), each a recording of its own. Files may
be gzip-compressed (``.jsonl.gz``). Until the first release only the newest
format reads: an older one is refused, with the command that rewrites it.

Every reader streams: :func:`iter_records` and :func:`episode_lines` go
through a file episode by episode (see :mod:`gym_goldens.format.lines`), and
a :class:`Recording` reads its episodes on demand. Readers of whole
recordings take ``max_decompressed_size``: what the compressed files of the
recording may expand to, 1 GiB by default (:mod:`gym_goldens.format.limits`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import gzip
import itertools
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, Final

from gym_goldens.errors import GoldenFormatError, UnsupportedFormatVersionError
from gym_goldens.format.agents import episode_ended
from gym_goldens.format.codec import decode_line
from gym_goldens.format.header import (
    FORMAT_NAME,
    FORMAT_VERSION,
    OLDEST_READ_VERSION,
    header_problem,
)
from gym_goldens.format.layout import (
    RECORDING_FILE_GLOBS,
    TRAJECTORY_NAME,
    is_recording_file_name,
    is_trajectory_file_name,
    sub_env_index,
)
from gym_goldens.format.limits import DEFAULT_MAX_DECOMPRESSED_SIZE
from gym_goldens.format.lines import iter_episodes, iter_lines

__all__ = [
    "Episode",
    "Lines",
    "Recording",
    "Return",
    "add_reward",
    "count_episode_records",
    "count_records",
    "episode_lines",
    "find_recordings",
    "iter_records",
    "missing_episode",
    "no_recording_reason",
    "parse_record",
    "pre_release_reason",
    "read_header",
    "read_order",
    "read_recording",
    "recording_files",
    "sub_env_dirs",
]

Lines = Iterator[tuple[int, bytes]]
"""``(line number, line)`` pairs of a recording file."""

Return = float | tuple[float, ...]
"""An episode's summed reward: a float, or one per objective for a vector reward."""

_EVENTS: Final = frozenset({"header", "reset", "step"})
_VERSION: Final = tuple(int(part) for part in FORMAT_VERSION.split("."))
_OLDEST: Final = tuple(int(part) for part in OLDEST_READ_VERSION.split("."))
_COUNT_CHUNK: Final = 1 << 20


def recording_files(path: str | Path) -> list[Path]:
    """The files of a recording, in order: a folder's ``trajectory.jsonl``.

    A file given itself is its own recording. Empty when the folder holds
    none.

    Raises:
        GoldenFormatError: The path does not exist, the folder holds episode
            files of a pre-release format (``episode_00000.jsonl``), or its
            recording file is not a regular file. (A folder holding both
            ``trajectory.jsonl`` and ``trajectory.jsonl.gz`` gives the plain one.)
    """
    folder = Path(path)
    if folder.is_file():
        return [folder]
    if not folder.is_dir():
        raise GoldenFormatError(folder, "no such file or folder")
    found = [entry for entry in folder.iterdir() if is_recording_file_name(entry.name)]
    trajectories = read_order(folder, found)
    for file in trajectories:
        if not file.is_file():
            raise GoldenFormatError(
                file, "expected a recording file, found a folder or other entry"
            )
    return trajectories


def read_order(folder: Path, found: Iterable[Path]) -> list[Path]:
    """Of the recording files found in ``folder``, those that are read, in order.

    Its ``trajectory.jsonl``; where both compressions lie, the plain one.

    Raises:
        GoldenFormatError: The episode files of a pre-release format are among them.
    """
    found = list(found)
    trajectories = [path for path in found if is_trajectory_file_name(path.name)]
    if len(trajectories) < len(found):
        raise GoldenFormatError(folder, pre_release_reason("1.0"))
    if len(trajectories) > 1:
        # Both compressions: an update killed between installing one and
        # removing the other. Each is a whole golden; the plain one is read
        # (see format.layout), and the next update removes the other.
        trajectories = [path for path in trajectories if path.name == TRAJECTORY_NAME]
    return trajectories


def pre_release_reason(version: object) -> str:
    """Why a recording of an older, pre-release format is refused, and the fix.

    Until the first release only the newest format reads (see docs/format.md).
    """
    return (
        f"recorded by a pre-release format ({version}): rewrite it with pytest --update-goldens-all"
    )


def sub_env_dirs(path: str | Path) -> list[tuple[int, Path]]:
    """The ``(index, folder)`` of each sub-env of a vector recording, in order.

    Empty for the recording of a single env (or a folder that does not exist).
    """
    folder = Path(path)
    if not folder.is_dir():
        return []
    found = []
    for entry in folder.iterdir():
        index = sub_env_index(entry.name)
        if index is not None and entry.is_dir():
            found.append((index, entry))
    return sorted(found)


def read_header(
    path: str | Path, *, max_decompressed_size: int = DEFAULT_MAX_DECOMPRESSED_SIZE
) -> dict[str, Any] | None:
    """The header record of a file's first episode, or None when it has none.

    Raises:
        GoldenFormatError: The file cannot be read or its first record is bad.
    """
    file_path = Path(path)
    for number, raw in iter_lines(file_path, max_decompressed_size=max_decompressed_size):
        record = parse_record(raw, file_path, number)
        return record if record["event"] == "header" else None
    return None


def parse_record(raw: bytes, path: Path, line: int) -> dict[str, Any]:
    """Parse and check one record line.

    Raises:
        GoldenFormatError: Invalid JSON, or not a record of a known event.
    """
    try:
        value = decode_line(raw, path=path, line=line)
    except RecursionError:
        raise GoldenFormatError(path, "JSON nested too deeply", line=line) from None
    if not isinstance(value, dict):
        raise GoldenFormatError(
            path, f"expected a JSON object (a record), found {type(value).__name__}", line=line
        )
    event = value.get("event")
    if event not in _EVENTS:
        raise GoldenFormatError(
            path, f'expected "event" to be "header", "reset" or "step", found {event!r}', line=line
        )
    if event == "step" and not isinstance(value.get("t"), int):
        raise GoldenFormatError(path, 'a step record needs an integer "t"', line=line)
    if event == "header":
        check_header(value, path, line)
    return value


def check_header(header: dict[str, Any], path: Path, line: int) -> None:
    """Refuse a header of another format or version, or with a field of a wrong type."""
    if header.get("format") != FORMAT_NAME:
        raise GoldenFormatError(
            path, f"expected format {FORMAT_NAME!r}, found {header.get('format')!r}", line=line
        )
    version = header.get("version")
    try:
        number = tuple(int(part) for part in str(version).split("."))
    except ValueError:
        raise GoldenFormatError(path, f"unreadable format version {version!r}", line=line) from None
    if number > _VERSION:
        raise UnsupportedFormatVersionError(
            path,
            f"format version {version} is newer than this gym-goldens reads ({FORMAT_VERSION}); "
            "upgrade pytest-gym-goldens",
            line=line,
        )
    if number < _OLDEST:
        raise UnsupportedFormatVersionError(path, pre_release_reason(version), line=line)
    problem = header_problem(header)
    if problem is not None:
        raise GoldenFormatError(
            path,
            f"{problem}: the recorder never writes that, so this header was edited; "
            "record it again",
            line=line,
        )


@dataclasses.dataclass(frozen=True)
class Episode:
    """One episode, read in full.

    Attributes:
        index: The episode number (of its sub-env, in a vector recording).
        path: The file that holds it.
        header: The header record, or None for files without one.
        records: The reset and step records, in order.
        env: The sub-env index in a vector recording, else None.
        line: The line of the file where the episode starts.
    """

    index: int
    path: Path
    header: dict[str, Any] | None
    records: list[dict[str, Any]]
    env: int | None = None
    line: int = 1

    @property
    def steps(self) -> list[dict[str, Any]]:
        """The step records."""
        return [record for record in self.records if record["event"] == "step"]

    @property
    def complete(self) -> bool:
        """Whether the episode ended (its last step terminated or truncated; no agent left)."""
        last = self.records[-1] if self.records else None
        return bool(last and last["event"] == "step" and episode_ended(last))

    @property
    def total_reward(self) -> Return:
        """The summed reward of the episode's steps, of every agent (see :func:`add_reward`)."""
        total: Return = 0.0
        for record in self.steps:
            reward = record.get("reward")
            for value in reward.values() if isinstance(reward, dict) else (reward,):
                total = add_reward(total, value)
        return total


def add_reward(total: Return, reward: Any) -> Return:
    """``total`` plus one step's reward: the one rule for summing rewards.

    A number adds to a float; a flat vector of numbers (a list, or a numpy
    array as a multi-objective env returns it) adds element by element, and
    turns a float total into one per objective. Anything else (a bool, None,
    a nested or mismatched vector, a number beyond float range) is left out.

    Example:
        >>> add_reward(add_reward(0.0, [1.0, -0.5]), [2, -0.5])
        (3.0, -1.0)
    """
    if hasattr(reward, "tolist"):  # a numpy scalar or array: Python numbers
        reward = reward.tolist()
    try:
        if isinstance(reward, int | float) and not isinstance(reward, bool):
            if isinstance(total, tuple):
                return tuple(part + reward for part in total)
            return total + reward
        if (
            isinstance(reward, list | tuple)
            and reward
            and all(isinstance(x, int | float) and not isinstance(x, bool) for x in reward)
        ):
            if isinstance(total, tuple):
                if len(total) != len(reward):
                    return total
                return tuple(part + x for part, x in zip(total, reward, strict=True))
            return tuple(total + x for x in reward)
    except OverflowError:  # an int past float range, from a file
        return total
    return total


@dataclasses.dataclass(frozen=True)
class Recording:
    """A recording: its episodes, read on demand.

    Attributes:
        path: The folder or single file.
        files: The recording files, in order (of every sub-env, sub-env by
            sub-env, in a vector recording).
        envs: The recordings of the sub-envs of a vector recording, by
            index; empty for a single env.
        episode_count: The number of episodes (over every sub-env).
        max_decompressed_size: What its compressed files may expand to when
            read, in bytes.
    """

    path: Path
    files: list[Path]
    envs: tuple[Recording, ...] = ()
    episode_count: int = 0
    max_decompressed_size: int = DEFAULT_MAX_DECOMPRESSED_SIZE

    def __len__(self) -> int:
        return self.episode_count

    def __iter__(self) -> Iterator[Episode]:
        if self.envs:
            for number, sub in enumerate(self.envs):
                for episode in sub:
                    yield dataclasses.replace(episode, env=number)
            return
        episodes = iter_episodes(self.files, max_decompressed_size=self.max_decompressed_size)
        for index, (path, lines) in enumerate(episodes):
            yield _read_episode(path, lines, index)

    def __getitem__(self, index: int) -> Episode:
        if self.envs:
            raise TypeError(
                "a vector recording is indexed by sub-env first: use recording.envs[i][episode]"
            )
        position = index + len(self) if index < 0 else index
        if 0 <= position < len(self):
            for episode in itertools.islice(self, position, None):
                return episode
        raise IndexError(f"episode {index} of a recording of {len(self)} episodes")

    @property
    def is_vector(self) -> bool:
        """Whether this is the recording of a vector env."""
        return bool(self.envs)


def read_recording(
    path: str | Path, *, max_decompressed_size: int = DEFAULT_MAX_DECOMPRESSED_SIZE
) -> Recording:
    """Open a recording folder or a single recording file.

    Example:
        >>> import gymnasium as gym, tempfile
        >>> from gym_goldens import RecordTrajectory
        >>> out = tempfile.mkdtemp()
        >>> env = RecordTrajectory(gym.make("FrozenLake-v1"), out)
        >>> _ = env.reset(seed=0); _ = env.step(1); env.close()
        >>> episode = read_recording(out)[0]
        >>> [record["event"] for record in episode.records]
        ['reset', 'step']

    Args:
        path: A recording folder or a recording file.
        max_decompressed_size: What the compressed files of each recording
            (of each sub-env) may expand to, in bytes.

    Raises:
        GoldenFormatError: The path does not exist or a file cannot be read.
    """
    target = Path(path)
    limit = max_decompressed_size
    if target.is_file():
        return _recording(target, [target], limit)
    if not target.is_dir():
        raise GoldenFormatError(target, "no such file or folder")
    subs = sub_env_dirs(target)
    if subs:
        _check_sub_env_indices(target, [index for index, _ in subs])
        envs = tuple(_recording(folder, recording_files(folder), limit) for _, folder in subs)
        return Recording(
            target,
            [file for env in envs for file in env.files],
            envs,
            sum(env.episode_count for env in envs),
            limit,
        )
    return _recording(target, recording_files(target), limit)


def _recording(path: Path, files: list[Path], limit: int) -> Recording:
    count = sum(1 for _ in iter_episodes(files, max_decompressed_size=limit))
    return Recording(path, files, episode_count=count, max_decompressed_size=limit)


def _check_sub_env_indices(folder: Path, indices: list[int]) -> None:
    if indices != list(range(len(indices))):
        raise GoldenFormatError(
            folder,
            f"expected sub-env folders env_0 to env_{len(indices) - 1}, found env_"
            + ", env_".join(str(i) for i in indices),
        )


def _read_episode(path: Path, lines: Iterator[tuple[int, bytes]], index: int) -> Episode:
    """Parse the lines of one episode of ``path``."""
    header: dict[str, Any] | None = None
    records: list[dict[str, Any]] = []
    first = 0
    for number, raw in lines:
        first = first or number
        record = parse_record(raw, path, number)
        # split_episodes starts an episode at each header: only the first line can be one.
        if record["event"] == "header":
            header = record
        else:
            records.append(record)
    return Episode(index, path, header, records, line=first or 1)


def iter_records(
    path: Path,
    lines: Iterable[tuple[int, bytes]] | None = None,
    *,
    max_decompressed_size: int = DEFAULT_MAX_DECOMPRESSED_SIZE,
) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line number, record)`` for the records of a recording file.

    Args:
        path: The file.
        lines: Some of its lines, such as one episode's from
            :func:`episode_lines`; by default every line of the file.
        max_decompressed_size: Without ``lines``: what the file may expand
            to, when compressed.
    """
    if lines is None:
        lines = iter_lines(path, max_decompressed_size=max_decompressed_size)
    for number, raw in lines:
        yield number, parse_record(raw, path, number)


def episode_lines(
    path: str | Path, episode: int, *, max_decompressed_size: int = DEFAULT_MAX_DECOMPRESSED_SIZE
) -> tuple[Path, Lines] | None:
    """The file holding episode ``episode`` of a recording, and that episode's lines.

    Only header lines are looked at on the way to the episode: the records of
    the episodes before it are not parsed.

    Args:
        path: A recording folder or a recording file; episodes are numbered
            from 0 in the order of the file.
        episode: The episode number.
        max_decompressed_size: What the compressed files of the recording
            may expand to, together, in bytes.

    Returns:
        ``(file, lines)``, with ``lines`` yielding ``(line number, line)``;
        None when the recording has no such episode.

    Raises:
        GoldenFormatError: The recording cannot be read.
    """
    if episode < 0:
        return None
    files = recording_files(path)
    episodes = iter_episodes(files, max_decompressed_size=max_decompressed_size)
    for found in itertools.islice(episodes, episode, None):
        return found
    return None


def missing_episode(
    path: str | Path, episode: int, *, max_decompressed_size: int = DEFAULT_MAX_DECOMPRESSED_SIZE
) -> GoldenFormatError:
    """The error for an episode that a recording does not have, naming those it has."""
    files = recording_files(path)
    if not files:
        return GoldenFormatError(path, no_recording_reason(path))
    count = sum(1 for _ in iter_episodes(files, max_decompressed_size=max_decompressed_size))
    has = {0: "no episodes", 1: "only episode 0"}.get(count, f"episodes 0 to {count - 1}")
    return GoldenFormatError(path, f"there is no episode {episode}; this recording has {has}")


def find_recordings(root: str | Path) -> list[Path]:
    """The folders under ``root`` (itself included) that hold a recording file.

    A recording file is ``trajectory.jsonl`` (or ``.jsonl.gz``). Each
    sub-env folder of a vector recording (``env_0``, ...) is a recording.

    Raises:
        GoldenFormatError: ``root`` is not a folder, or a folder below it
            holds the episode files of a pre-release format.
    """
    folder = Path(root)
    if not folder.is_dir():
        raise GoldenFormatError(folder, "expected a folder of recordings")
    found = {
        path.parent
        for pattern in RECORDING_FILE_GLOBS
        for path in folder.rglob(pattern)
        if path.is_file()
    }
    return sorted(path for path in found if recording_files(path))


def no_recording_reason(path: str | Path) -> str:
    """Why a folder is not a recording, and what to give instead."""
    if sub_env_dirs(path):
        return (
            "no recording file (trajectory.jsonl) in this folder: it holds the recording of a "
            "vector env; give one of its sub-env folders (env_0, env_1, ...)"
        )
    return "no recording file (trajectory.jsonl) in this folder; is this a recording folder?"


def count_episode_records(
    files: Sequence[Path], *, max_decompressed_size: int = DEFAULT_MAX_DECOMPRESSED_SIZE
) -> Iterator[int]:
    """Yield the number of records of each episode of a recording's files, without parsing them.

    The files are read as the counts are asked for: nothing is kept per
    episode. A file that cannot be read ends the counts (reading it for real
    reports the problem).
    """
    episodes = iter_episodes(files, max_decompressed_size=max_decompressed_size)
    with contextlib.suppress(GoldenFormatError):
        for _, lines in episodes:
            yield sum(1 for _ in lines)


def count_records(
    files: Sequence[Path], *, max_decompressed_size: int = DEFAULT_MAX_DECOMPRESSED_SIZE
) -> int:
    """Count the lines (records) of recording files quickly, without parsing them.

    Compressed files are counted up to ``max_decompressed_size`` bytes in all,
    past which reading them for real refuses them.
    """
    count = 0
    left = max_decompressed_size
    for path in files:
        compressed = path.name.endswith(".gz")
        try:
            handle = gzip.open(path, "rb") if compressed else open(path, "rb")  # noqa: SIM115
            with handle:
                while (not compressed or left > 0) and (chunk := handle.read(_COUNT_CHUNK)):
                    count += chunk.count(b"\n")
                    if compressed:
                        left -= len(chunk)
        except (OSError, EOFError):
            continue  # reading it for real reports the problem
    return count

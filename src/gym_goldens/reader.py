"""Reading recordings and goldens back.

A *recording* is a folder holding ``trajectory.jsonl``, or that file alone.
The file holds one episode after another, each opening with its header
record. The recording of a vector env is a folder with one sub-folder per
sub-env (``env_0/``, ``env_1/``, ...), each a recording of its own. Files may
be gzip-compressed (``.jsonl.gz``). Folders of format 1 (a file per episode,
``episode_00000.jsonl``, ...) and files without a header record still read.
"""

from __future__ import annotations

import bisect
import dataclasses
import gzip
import itertools
import operator
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any, Final

import orjson

from gym_goldens.codec import decode_line
from gym_goldens.errors import GoldenFormatError, UnsupportedFormatVersionError
from gym_goldens.header import FORMAT_NAME, FORMAT_VERSION

__all__ = [
    "Episode",
    "Recording",
    "count_episodes",
    "has_episodes",
    "is_recording_file_name",
    "is_sub_env_dir_name",
    "iter_episodes",
    "iter_lines",
    "read_header",
    "read_recording",
    "recording_files",
    "split_episodes",
    "sub_env_dirs",
]

_TRAJECTORY_NAME: Final = re.compile(r"^trajectory\.jsonl(\.gz)?$")
_EPISODE_NAME: Final = re.compile(r"^episode_(\d+)\.jsonl(\.gz)?$")
_HEADER_MARK: Final = b'"event":"header"'
# split_episodes reads lines it is given in batches of this many.
_BATCH_LINES: Final = 4096
_RAW: Final = operator.itemgetter(1)
_LINES: Final = operator.itemgetter(0)

_SUB_ENV_NAME: Final = re.compile(r"^env_(\d+)$")
# A line is one record; with the default array summaries records are a few kB.
# The cap bounds the memory a damaged or hostile file can take while read.
_MAX_LINE_BYTES: Final = 16 * 1024 * 1024
_READ_CHUNK: Final = 1 << 20
_EVENTS: Final = frozenset({"header", "reset", "step"})
_SUPPORTED_MAJOR: Final = int(FORMAT_VERSION.split(".")[0])


def recording_files(path: str | Path) -> list[Path]:
    """The files of a recording, in order: a folder's ``trajectory.jsonl``.

    A file given itself is its own recording. A folder of format 1 gives its
    episode files instead, in episode order. Empty when the folder holds
    neither.

    Raises:
        GoldenFormatError: The path does not exist, or the folder holds both
            a compressed and a plain trajectory file, or both layouts, two
            files claim the same episode, or an entry with such a name is
            not a regular file.
    """
    folder = Path(path)
    if folder.is_file():
        return [folder]
    if not folder.is_dir():
        raise GoldenFormatError(folder, "no such file or folder")
    trajectories: list[Path] = []
    found: dict[int, Path] = {}
    for entry in folder.iterdir():
        if _TRAJECTORY_NAME.match(entry.name):
            trajectories.append(entry)
            continue
        match = _EPISODE_NAME.match(entry.name)
        if match is None:
            continue
        index = int(match.group(1))
        if index in found:
            raise GoldenFormatError(
                entry, f"episode {index} is also stored as {found[index].name}; keep one of them"
            )
        found[index] = entry
    if len(trajectories) > 1:
        raise GoldenFormatError(
            folder, "holds both trajectory.jsonl and trajectory.jsonl.gz; keep one of them"
        )
    if trajectories and found:
        raise GoldenFormatError(
            folder,
            f"holds both {trajectories[0].name} and episode files of format 1 (such as "
            f"{found[min(found)].name}); keep one: delete the episode files, or record again",
        )
    files = trajectories or [found[i] for i in sorted(found)]
    for file in files:
        if not file.is_file():
            raise GoldenFormatError(
                file, "expected a recording file, found a folder or other entry"
            )
    return files


def is_recording_file_name(name: str) -> bool:
    """Whether ``name`` is that of a recording file, of this format or of format 1."""
    return bool(_TRAJECTORY_NAME.match(name) or _EPISODE_NAME.match(name))


def is_sub_env_dir_name(name: str) -> bool:
    """Whether ``name`` is that of a sub-env's folder in a vector recording (``env_<i>``)."""
    return _SUB_ENV_NAME.match(name) is not None


def sub_env_dirs(path: str | Path) -> list[tuple[int, Path]]:
    """The ``(index, folder)`` of each sub-env of a vector recording, in order.

    Empty for the recording of a single env (or a folder that does not exist).
    """
    folder = Path(path)
    if not folder.is_dir():
        return []
    found = []
    for entry in folder.iterdir():
        match = _SUB_ENV_NAME.match(entry.name)
        if match is not None and entry.is_dir():
            found.append((int(match.group(1)), entry))
    return sorted(found)


def has_episodes(path: str | Path) -> bool:
    """Whether ``path`` is a recording folder holding a recording file."""
    folder = Path(path)
    if not folder.is_dir():
        return False
    subs = sub_env_dirs(folder)
    if subs:
        return any(recording_files(sub) for _, sub in subs)
    return bool(recording_files(folder))


def read_header(path: str | Path) -> dict[str, Any] | None:
    """The header record of a file's first episode, or None when it has none.

    Raises:
        GoldenFormatError: The file cannot be read or its first record is bad.
    """
    file_path = Path(path)
    for number, raw in iter_lines(file_path):
        record = parse_record(raw, file_path, number)
        return record if record["event"] == "header" else None
    return None


def iter_lines(path: str | Path) -> Iterator[tuple[int, bytes]]:
    """Yield ``(line_number, line)`` for the non-empty lines of a file.

    Line endings (LF or CRLF) are removed, a UTF-8 byte-order mark is skipped,
    and a line longer than 16 MiB is refused after reading at most 16 MiB (and
    one read chunk) of it, so a damaged file cannot exhaust memory. A last line
    without its newline that is not valid JSON is reported as cut short: that
    is how a file ends when the process writing it died mid-write.

    Raises:
        GoldenFormatError: The file cannot be read, a line is too long, or
            the last line is cut short.
    """
    # Chained in C: the generator below runs once per chunk, not per line.
    return itertools.chain.from_iterable(map(_LINES, _line_blocks(Path(path))))


_Block = tuple[Iterable[tuple[int, bytes]], list[int] | None]
"""Lines read in one go, and the indices of those holding the header mark
(None when not worked out: the episode split then looks at every line)."""


def _line_blocks(file_path: Path, chunk_size: int | None = None) -> Iterator[_Block]:
    read_size = chunk_size or _READ_CHUNK
    try:
        if file_path.name.endswith(".gz"):
            handle: gzip.GzipFile | IO[bytes] = gzip.open(file_path, "rb")  # noqa: SIM115 - closed below
        else:
            handle = open(file_path, "rb")  # noqa: SIM115 - closed below
    except OSError as exc:
        raise GoldenFormatError(file_path, f"cannot open ({exc.strerror or exc})") from None
    with handle:
        number = 1  # the number of the next line to yield
        try:
            # Reading big chunks and splitting them costs far less per line
            # than readline(); the lines of a chunk are yielded from a list.
            head = handle.read(3)
            # A UTF-8 byte-order mark is skipped; anything else starts line 1.
            first_read = b"" if head == b"\xef\xbb\xbf" else head
            # The unfinished line read so far: pieces holding no newline.
            pending: list[bytes] = []
            pending_size = 0
            while True:
                chunk = handle.read(read_size)
                if first_read:
                    chunk, first_read = first_read + chunk, b""
                if not chunk:
                    break
                if b"\n" not in chunk:
                    pending.append(chunk)
                    pending_size += len(chunk)
                    if pending_size > _MAX_LINE_BYTES:
                        raise GoldenFormatError(file_path, _TOO_LONG, line=number)
                    continue
                # Only the first line can hold earlier chunks, so only it can be
                # too long; it is checked before the chunks are joined.
                if pending_size + chunk.find(b"\n") > _MAX_LINE_BYTES:
                    raise GoldenFormatError(file_path, _TOO_LONG, line=number)
                lines = chunk.split(b"\n")
                head_line = lines[0]
                if pending:
                    # Joined to the first line only: joining the whole chunk
                    # would copy it, page faults and all.
                    lines[0] = b"".join([*pending, lines[0]])
                    pending, pending_size = [], 0
                rest = lines.pop()
                if rest:
                    pending, pending_size = [rest], len(rest)
                yield _block(lines, number, chunk, second_line=len(head_line) + 1)
                number += len(lines)
            if pending:
                last = b"".join(pending).rstrip(b"\r")
                if last:
                    _check_last_line(last, file_path, number)
                    yield [(number, last)], None
        except (OSError, EOFError, gzip.BadGzipFile) as exc:
            raise GoldenFormatError(file_path, f"cannot read ({exc})", line=number) from None


def _block(lines: list[bytes], number: int, chunk: bytes, *, second_line: int) -> _Block:
    """The block of the complete lines of a read, the first numbered ``number``.

    ``lines[0]`` may hold earlier reads as well; the others are ``chunk``'s
    from offset ``second_line`` on.
    """
    # b"" in lines, not b"\n\n" in chunk: a tenth of the time.
    if b"\r" in chunk or b"" in lines or b"\r" in lines[0]:
        # Empty lines or CRLF endings: not what the recorder writes, so this
        # slower filter only runs for files edited by hand.
        stripped = [(number + i, line.rstrip(b"\r")) for i, line in enumerate(lines)]
        return [(n, line) for n, line in stripped if line], None
    marked = [0] if _HEADER_MARK in lines[0] else []
    marked += _marked_lines(chunk, len(lines), start=second_line)
    return zip(itertools.count(number), lines), marked


def _marked_lines(chunk: bytes, line_count: int, *, start: int) -> list[int]:
    """The indices of the lines of a chunk that hold the header mark.

    Searched in the chunk at once from ``start``, the offset where its second
    line starts, up to the end of line ``line_count - 1``: a call per line
    would cost more than the rest of the split, and headers are a few lines
    in thousands.
    """
    found: list[int] = []
    line = 1  # the index of the line that starts at ``start``
    while (offset := chunk.find(_HEADER_MARK, start)) >= 0:
        line += chunk.count(b"\n", start, offset)
        if line >= line_count:
            break
        found.append(line)
        end = chunk.find(b"\n", offset)
        if end < 0:
            break
        line, start = line + 1, end + 1
    return found


_TOO_LONG: Final = (
    "line is longer than 16 MiB; a recording's records are far shorter, so this file is damaged"
)


def _check_last_line(line: bytes, path: Path, number: int) -> None:
    try:
        orjson.loads(line)
    except orjson.JSONDecodeError as exc:
        raise GoldenFormatError(
            path,
            f"invalid JSON at column {exc.colno}: {exc.msg}; the last line is cut short (no "
            "newline): the file ends mid-record, as when the process writing it crashed; the "
            "episodes before it are intact, record this one again",
            line=number,
        ) from None


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
    """Refuse a header from another format or a newer major version."""
    if header.get("format") != FORMAT_NAME:
        raise GoldenFormatError(
            path, f"expected format {FORMAT_NAME!r}, found {header.get('format')!r}", line=line
        )
    version = header.get("version")
    try:
        major = int(str(version).split(".")[0])
    except ValueError:
        raise GoldenFormatError(path, f"unreadable format version {version!r}", line=line) from None
    if major > _SUPPORTED_MAJOR:
        raise UnsupportedFormatVersionError(
            path,
            f"format version {version} is newer than this gym-goldens reads ({FORMAT_VERSION}); "
            "upgrade pytest-gym-goldens",
            line=line,
        )


def _is_header_line(raw: bytes) -> bool:
    """Whether a line is a header record, the first line of an episode."""
    if raw.find(_HEADER_MARK) < 0:
        return False
    # An info dict may hold {"event": "header"} too: parse to be sure (rare).
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return False
    return type(value) is dict and value.get("event") == "header"


def split_episodes(
    lines: Iterable[tuple[int, bytes]],
) -> Iterator[Iterator[tuple[int, bytes]]]:
    """Split the lines of a file into episodes, each opening with its header.

    Lazy, like ``itertools.groupby``: each episode's lines are read as they
    are consumed, so read an episode before asking for the next one (which
    skips what is left of it); ``list(split_episodes(...))`` gives exhausted
    iterators. A file without header records is one episode.
    """
    iterator = iter(lines)
    batches = iter(lambda: list(itertools.islice(iterator, _BATCH_LINES)), [])
    return _split_blocks(zip(batches, itertools.repeat(None)))


def iter_episodes(
    files: Iterable[Path],
) -> Iterator[tuple[Path, Iterator[tuple[int, bytes]]]]:
    """Yield ``(file, lines)`` for each episode of the files of a recording, in order."""
    for path in files:
        for lines in _split_blocks(_line_blocks(Path(path))):
            yield path, lines


def count_episodes(path: str | Path) -> int:
    """The number of episodes in a recording file, without parsing its records."""
    return sum(1 for _ in _split_blocks(_line_blocks(Path(path))))


def _split_blocks(blocks: Iterable[_Block]) -> Iterator[Iterator[tuple[int, bytes]]]:
    """split_episodes over blocks of lines (as _line_blocks reads them)."""
    cursor = _EpisodeCursor(iter(blocks))
    while cursor.next_episode():
        yield itertools.chain.from_iterable(cursor.pieces(cursor.episode))


class _EpisodeCursor:
    """Where the splitting of a file into episodes stands.

    The header lines of a block are found among the lines that hold the
    header mark (given with the block, else found by a scan in C of each
    line), by a parse of those few, so an episode's lines are handed out as
    slices of blocks: nothing runs in Python per line.
    """

    __slots__ = ("_blocks", "at_start", "block", "episode", "heads", "position")

    def __init__(self, blocks: Iterator[_Block]) -> None:
        self._blocks = blocks
        self.block: list[tuple[int, bytes]] = []
        self.heads: list[int] = []  # the indices of the header lines of the block
        self.position = 0
        self.episode = -1  # the episode handed out last
        # Whether position is still the first line of that episode (a header,
        # which must not count as the start of the next one).
        self.at_start = False

    def _load(self) -> bool:
        """Move on to the next non-empty block; False at the end of the file."""
        for block, marked in self._blocks:
            lines = block if type(block) is list else list(block)
            if lines:
                candidates: Iterable[int]
                if marked is None:
                    raws = map(_RAW, lines)
                    holds_mark = map(bytes.__contains__, raws, itertools.repeat(_HEADER_MARK))
                    candidates = itertools.compress(itertools.count(), holds_mark)
                else:
                    candidates = marked
                self.block = lines
                self.heads = [index for index in candidates if _is_header_line(lines[index][1])]
                self.position = 0
                return True
        self.block, self.heads, self.position = [], [], 0
        return False

    def next_episode(self) -> bool:
        """Move to the start of the next episode, skipping what is left of this one."""
        if self.episode < 0:
            found = self._load()
        else:
            found = True
            search = bisect.bisect_right if self.at_start else bisect.bisect_left
            while True:
                index = search(self.heads, self.position)
                if index < len(self.heads):
                    self.position = self.heads[index]
                    break
                if not self._load():
                    found = False
                    break
                search = bisect.bisect_left
        if found:
            self.episode += 1
            self.at_start = True
        return found

    def pieces(self, episode: int) -> Iterator[list[tuple[int, bytes]]]:
        """The lines of ``episode``, as slices of blocks; nothing once it is left."""
        while episode == self.episode:
            block, start = self.block, self.position
            search = bisect.bisect_right if self.at_start else bisect.bisect_left
            index = search(self.heads, start)
            self.at_start = False
            if index < len(self.heads):
                end = self.heads[index]
                self.position = end
                if end > start:
                    yield block[start:end]
                return
            self.position = len(block)
            if start < len(block):
                yield block[start:]
            if episode != self.episode or not self._load():
                return


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
        """Whether the episode ended (its last step terminated or truncated)."""
        last = self.records[-1] if self.records else None
        return bool(
            last and last["event"] == "step" and (last.get("terminated") or last.get("truncated"))
        )

    @property
    def total_reward(self) -> float:
        """The sum of the scalar rewards of the episode's steps."""
        total = 0.0
        for record in self.steps:
            reward = record.get("reward")
            if isinstance(reward, (int, float)) and not isinstance(reward, bool):
                total += reward
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
    """

    path: Path
    files: list[Path]
    envs: tuple[Recording, ...] = ()
    episode_count: int = 0

    def __len__(self) -> int:
        return self.episode_count

    def __iter__(self) -> Iterator[Episode]:
        if self.envs:
            for number, sub in enumerate(self.envs):
                for episode in sub:
                    yield dataclasses.replace(episode, env=number)
            return
        for index, (path, lines) in enumerate(iter_episodes(self.files)):
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


def read_recording(path: str | Path) -> Recording:
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

    Raises:
        GoldenFormatError: The path does not exist or a file cannot be read.
    """
    target = Path(path)
    if target.is_file():
        return _recording(target, [target])
    if not target.is_dir():
        raise GoldenFormatError(target, "no such file or folder")
    subs = sub_env_dirs(target)
    if subs:
        _check_sub_env_indices(target, [index for index, _ in subs])
        envs = tuple(_recording(folder, recording_files(folder)) for _, folder in subs)
        return Recording(
            target,
            [file for env in envs for file in env.files],
            envs,
            sum(env.episode_count for env in envs),
        )
    return _recording(target, recording_files(target))


def _recording(path: Path, files: list[Path]) -> Recording:
    return Recording(path, files, episode_count=sum(count_episodes(file) for file in files))


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

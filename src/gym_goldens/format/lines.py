"""The lines of a recording file, and where its episodes start.

A recording file holds one episode after another, each opening with its
header line. The file is read in 1 MiB chunks, split into lines in C, and
split into episodes where the header lines are: a search of each chunk finds
them, so nothing runs in Python per line. Gzip-compressed files
(``.jsonl.gz``) read the same way. A line longer than 16 MiB is refused after
reading at most 16 MiB of it, so a damaged file cannot exhaust memory.
"""

from __future__ import annotations

import bisect
import gzip
import itertools
import operator
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Final

import orjson

from gym_goldens.errors import GoldenFormatError

__all__ = [
    "HEADER_MARK",
    "count_episodes",
    "iter_episodes",
    "iter_lines",
    "split_episodes",
]

HEADER_MARK: Final = b'"event":"header"'
"""The bytes every header line holds (and, rarely, an info dict too)."""

# split_episodes reads lines it is given in batches of this many.
_BATCH_LINES: Final = 4096
_RAW: Final = operator.itemgetter(1)
_LINES: Final = operator.itemgetter(0)
# A line is one record; with the default array summaries records are a few kB.
# The cap bounds the memory a damaged or hostile file can take while read.
_MAX_LINE_BYTES: Final = 16 * 1024 * 1024
_READ_CHUNK: Final = 1 << 20


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
    marked = [0] if HEADER_MARK in lines[0] else []
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
    while (offset := chunk.find(HEADER_MARK, start)) >= 0:
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


def _is_header_line(raw: bytes) -> bool:
    """Whether a line is a header record, the first line of an episode."""
    if raw.find(HEADER_MARK) < 0:
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
                    holds_mark = map(bytes.__contains__, raws, itertools.repeat(HEADER_MARK))
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

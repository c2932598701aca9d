"""The lines of a recording file, and where its episodes start.

A recording file holds one episode after another, each opening with its
header line. The file is read in 1 MiB chunks, split into lines in C, and
split into episodes where the header lines are: a search of each chunk finds
them, so nothing runs in Python per line; runs of blank lines are skipped by
a regex in C. Gzip-compressed files (``.jsonl.gz``) read the same way. Any
file reads in bounded time and memory (:mod:`gym_goldens.format.limits`): a
line longer than 16 MiB is refused after reading at most 16 MiB of it, and a
compressed file is refused once it has expanded past its limit (1 GiB by
default).
"""

from __future__ import annotations

import bisect
import gzip
import itertools
import operator
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Final

import orjson

from gym_goldens.errors import GoldenFormatError
from gym_goldens.format.limits import (
    DEFAULT_MAX_DECOMPRESSED_SIZE,
    MAX_LINE_BYTES,
    DecompressionBudget,
    format_size,
)

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
_READ_CHUNK: Final = 1 << 20


def iter_lines(
    path: str | Path, *, max_decompressed_size: int = DEFAULT_MAX_DECOMPRESSED_SIZE
) -> Iterator[tuple[int, bytes]]:
    """Yield ``(line_number, line)`` for the non-empty lines of a file.

    Line endings (LF or CRLF) are removed, a UTF-8 byte-order mark is skipped,
    and a line longer than 16 MiB is refused after reading at most 16 MiB (and
    one read chunk) of it, so a damaged file cannot exhaust memory. A last line
    without its newline that is not valid JSON is reported as cut short: that
    is how a file ends when the process writing it died mid-write.

    Args:
        path: The file; a name ending in ``.gz`` is read through gzip.
        max_decompressed_size: The most a compressed file may expand to, in
            bytes (1 GiB by default); a plain file is bounded by its size.

    Raises:
        GoldenFormatError: The file cannot be read, a line is too long, the
            last line is cut short, or a compressed file expands past
            ``max_decompressed_size``.
    """
    blocks = _line_blocks(Path(path), budget=DecompressionBudget(max_decompressed_size))
    # Chained in C: the generator below runs once per chunk, not per line.
    return itertools.chain.from_iterable(map(_LINES, blocks))


class _Numbered:
    """Lines numbered from ``number`` on, numbered only as they are read.

    The split of a file hands out slices of it: a line's ``(number, line)``
    is made as it is consumed, and is gone by the next, so that a read block
    does not hold a pair for each of its thousands of lines.
    """

    __slots__ = ("lines", "number")

    def __init__(self, number: int, lines: list[bytes]) -> None:
        self.number = number
        self.lines = lines

    def __iter__(self) -> Iterator[tuple[int, bytes]]:
        return zip(itertools.count(self.number), self.lines)


_Block = tuple[Iterable[tuple[int, bytes]], list[int] | None]
"""Lines read in one go, and the indices of those holding the header mark
(None when not worked out: the episode split then looks at every line)."""


def _line_blocks(
    file_path: Path, chunk_size: int | None = None, *, budget: DecompressionBudget | None = None
) -> Iterator[_Block]:
    read_size = chunk_size or _READ_CHUNK
    compressed = file_path.name.endswith(".gz")
    if budget is None:
        budget = DecompressionBudget(DEFAULT_MAX_DECOMPRESSED_SIZE)
    try:
        if compressed:
            handle: gzip.GzipFile | IO[bytes] = gzip.open(file_path, "rb")  # noqa: SIM115 - closed below
            budget.files += 1
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
            if compressed:
                budget.spend(len(head), file_path)
            # A UTF-8 byte-order mark is skipped; anything else starts line 1.
            first_read = b"" if head == b"\xef\xbb\xbf" else head
            # The unfinished line read so far: pieces holding no newline.
            pending: list[bytes] = []
            pending_size = 0
            while True:
                chunk = handle.read(read_size)
                if compressed:
                    # Counted as it is read: a bomb is stopped at the limit,
                    # having cost no more than a file of that size would.
                    budget.spend(len(chunk), file_path)
                if first_read:
                    chunk, first_read = first_read + chunk, b""
                if not chunk:
                    break
                first_end = chunk.find(b"\n")
                if first_end < 0:
                    pending.append(chunk)
                    pending_size += len(chunk)
                    if pending_size > MAX_LINE_BYTES:
                        raise GoldenFormatError(file_path, _TOO_LONG, line=number)
                    continue
                # Only the first line can hold earlier chunks, so only it can be
                # too long; it is checked before the chunks are joined.
                if pending_size + first_end > MAX_LINE_BYTES:
                    raise GoldenFormatError(file_path, _TOO_LONG, line=number)
                block, number, rest = _block(chunk, pending, number, first_end)
                pending, pending_size = ([rest], len(rest)) if rest else ([], 0)
                yield block
            if pending:
                last = b"".join(pending).rstrip(b"\r")
                if last:
                    _check_last_line(last, file_path, number)
                    yield [(number, last)], None
        except (OSError, EOFError, gzip.BadGzipFile) as exc:
            raise GoldenFormatError(file_path, f"cannot read ({exc})", line=number) from None


def _block(
    chunk: bytes, pending: list[bytes], number: int, first_end: int
) -> tuple[_Block, int, bytes]:
    """The complete lines of a read, the first numbered ``number``.

    Args:
        chunk: What was read; it holds a newline, at ``first_end`` first.
        pending: What earlier reads held of its first line.
        number: The number of its first line.
        first_end: Where its first line ends.

    Returns:
        The block, the number of the line after it, and what follows the
        chunk's last newline (the start of a line).
    """
    lines: list[bytes] = []
    if not (b"\r" in chunk or (first_end == 0 and (not pending or pending[-1].endswith(b"\r")))):
        # At most a piece per 16 bytes: a recorded line is longer, and a run
        # of blank lines must not become a list of a million empty pieces.
        most = len(chunk) // _SHORTEST_LINE + 1
        lines = chunk.split(b"\n", most)
        if len(lines) > most and b"\n" in lines[-1]:
            lines = []
    # A blank line is an empty piece between the first and the last; looked
    # for in the split, which costs a tenth of a search of the chunk for "\n\n"
    # (CPython's two-byte search stumbles on every newline).
    if not lines or b"" in lines[1:-1]:
        # Blank lines or CRLF endings: not what the recorder writes (files
        # edited by hand), read without a split of every line.
        first = chunk[:first_end]
        if pending:
            first = b"".join([*pending, first])
        last_end = chunk.rfind(b"\n")
        found, after = _sparse_lines(chunk, first, number, first_end, last_end)
        return (found, None), after, chunk[last_end + 1 :]
    head_line = lines[0]
    if pending:
        # Joined to the first line only: joining the whole chunk would copy
        # it, page faults and all.
        lines[0] = b"".join([*pending, lines[0]])
    rest = lines.pop()
    marked = [0] if HEADER_MARK in lines[0] else []
    marked += _marked_lines(chunk, len(lines), start=len(head_line) + 1)
    return (_Numbered(number, lines), marked), number + len(lines), rest


# Fewer bytes a line, on average over a read, than any line the recorders write:
# such a read holds blank lines, and is read by _sparse_lines.
_SHORTEST_LINE: Final = 16
# A run of blank lines (CRLF ones too; one character class, which the regex engine
# repeats without memory per character), and the end of a line before a blank one.
_BLANK_RUN: Final = re.compile(rb"[\r\n]*\n")
_BEFORE_BLANK: Final = re.compile(rb"\n\r*\n")
_CR: Final = b"\r"


def _sparse_lines(
    chunk: bytes, first: bytes, number: int, first_end: int, last_end: int
) -> tuple[list[tuple[int, bytes]], int]:
    """The non-blank lines of a chunk that holds blank lines or CRs, line endings stripped.

    Runs of blank lines are skipped by one regex match each and the lines
    between them are split in C, so that nothing runs in Python per blank
    line: a file of a billion blank lines reads as fast as its bytes.

    Args:
        chunk: What was read.
        first: The chunk's first line, with what earlier reads held of it.
        number: The number of that line.
        first_end: Where the first line ends in ``chunk`` (its newline).
        last_end: Where the chunk's last complete line ends.

    Returns:
        The ``(number, line)`` of each non-blank line, and the number of the
        line after the chunk's last complete one.
    """
    found: list[tuple[int, bytes]] = []
    first = first.rstrip(_CR)
    if first:
        found.append((number, first))
    line, position, stop = number + 1, first_end + 1, last_end + 1
    while position < stop:
        blank = _BLANK_RUN.match(chunk, position, stop)
        if blank is not None:
            line += chunk.count(b"\n", position, blank.end())
            position = blank.end()
            continue
        # The lines up to the next blank one (or to the chunk's last newline).
        after = _BEFORE_BLANK.search(chunk, position, stop)
        end = after.start() if after is not None else last_end
        lines = chunk[position:end].split(b"\n")
        if _CR in chunk:
            lines = list(map(bytes.rstrip, lines, itertools.repeat(_CR)))
        found += zip(itertools.count(line), lines)
        line += len(lines)
        position = end + 1
    return found, line


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
    f"line is longer than {format_size(MAX_LINE_BYTES)}; a recording's records are far "
    "shorter, so this file is damaged"
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
    files: Iterable[Path], *, max_decompressed_size: int = DEFAULT_MAX_DECOMPRESSED_SIZE
) -> Iterator[tuple[Path, Iterator[tuple[int, bytes]]]]:
    """Yield ``(file, lines)`` for each episode of the files of a recording, in order.

    ``max_decompressed_size`` bounds what the compressed files expand to, all
    together (see :func:`iter_lines`).
    """
    budget = DecompressionBudget(max_decompressed_size)
    for path in files:
        for lines in _split_blocks(_line_blocks(Path(path), budget=budget)):
            yield path, lines


def count_episodes(
    path: str | Path, *, max_decompressed_size: int = DEFAULT_MAX_DECOMPRESSED_SIZE
) -> int:
    """The number of episodes in a recording file, without parsing its records."""
    blocks = _line_blocks(Path(path), budget=DecompressionBudget(max_decompressed_size))
    return sum(1 for _ in _split_blocks(blocks))


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

    __slots__ = ("_blocks", "at_start", "block", "episode", "heads", "position", "size")

    def __init__(self, blocks: Iterator[_Block]) -> None:
        self._blocks = blocks
        self.block: _Numbered | list[tuple[int, bytes]] = []
        self.size = 0  # the number of lines of the block
        self.heads: list[int] = []  # the indices of the header lines of the block
        self.position = 0
        self.episode = -1  # the episode handed out last
        # Whether position is still the first line of that episode (a header,
        # which must not count as the start of the next one).
        self.at_start = False

    def _load(self) -> bool:
        """Move on to the next non-empty block; False at the end of the file."""
        for lines, marked in self._blocks:
            block = lines if isinstance(lines, _Numbered | list) else list(lines)
            raws = block.lines if isinstance(block, _Numbered) else list(map(_RAW, block))
            if raws:
                candidates: Iterable[int]
                if marked is None:
                    holds_mark = map(bytes.__contains__, raws, itertools.repeat(HEADER_MARK))
                    candidates = itertools.compress(itertools.count(), holds_mark)
                else:
                    candidates = marked
                self.block, self.size = block, len(raws)
                self.heads = [index for index in candidates if _is_header_line(raws[index])]
                self.position = 0
                return True
        self.block, self.size, self.heads, self.position = [], 0, [], 0
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

    def pieces(self, episode: int) -> Iterator[Iterable[tuple[int, bytes]]]:
        """The lines of ``episode``, as slices of blocks; nothing once it is left."""
        while episode == self.episode:
            size, start = self.size, self.position
            search = bisect.bisect_right if self.at_start else bisect.bisect_left
            index = search(self.heads, start)
            self.at_start = False
            if index < len(self.heads):
                end = self.heads[index]
                self.position = end
                if end > start:
                    yield self._slice(start, end)
                return
            self.position = size
            if start < size:
                yield self._slice(start, size)
            if episode != self.episode or not self._load():
                return

    def _slice(self, start: int, end: int) -> Iterable[tuple[int, bytes]]:
        """The ``(number, line)`` of the block's lines from ``start`` to ``end``."""
        block = self.block
        if isinstance(block, _Numbered):
            return zip(itertools.count(block.number + start), block.lines[start:end])
        return block[start:end]

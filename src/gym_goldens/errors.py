"""Exceptions raised by gym-goldens.

Every error derives from :class:`GoldensError` and from the builtin that fits
it best, so callers can catch either. Messages say what was expected, what was
found, and how to fix it.
"""

from __future__ import annotations

__all__ = [
    "GoldenFormatError",
    "GoldenWriteError",
    "GoldensError",
    "GoldensWarning",
    "UnrecordableValueError",
    "UnsafeGoldenPathError",
    "UnsupportedFormatVersionError",
]


class GoldensError(Exception):
    """Base class of every error raised by gym-goldens."""


class GoldenFormatError(GoldensError, ValueError):
    """A recording or golden file cannot be read.

    Attributes:
        path: The file that could not be read.
        line: The 1-based line number of the problem, if it is tied to one line.
    """

    def __init__(self, path: object, reason: str, *, line: int | None = None) -> None:
        self.path = str(path)
        self.line = line
        self.reason = reason
        where = self.path if line is None else f"{self.path}:{line}"
        super().__init__(f"{where}: {reason}")


class UnsupportedFormatVersionError(GoldenFormatError):
    """A file was written by a newer, incompatible version of the format."""


class UnsafeGoldenPathError(GoldensError, ValueError):
    """A path leads outside our folders (through a symlink), so it is refused.

    Such a golden is neither read nor written. Not a :class:`GoldenFormatError`:
    the file may be perfectly readable, and it is not read.

    Attributes:
        path: The path refused (the symlink met, or the path that leaves the root).
        reason: Why, and the fix.
    """

    def __init__(self, path: object, reason: str) -> None:
        self.path = str(path)
        self.reason = reason
        super().__init__(f"{self.path}: {reason}")


class GoldenWriteError(GoldensError, OSError):
    """A golden (or a recording) could not be written: the file system refused.

    A read-only folder, a full disk, a file in use: the old file, if any, is
    left as it was.

    Attributes:
        path: The file or folder that could not be written.
        reason: What the file system said.
    """

    def __init__(self, path: object, reason: str) -> None:
        self.path = str(path)
        self.reason = reason
        super().__init__(f"{self.path}: {reason}")


class UnrecordableValueError(GoldensError, ValueError):
    """A value an env returned cannot be recorded, and no file could read it back.

    Nested deeper than a recording holds, holding itself, holding a string
    that UTF-8 cannot write, or making a record longer than a reader accepts:
    the message names the field and the limit. Nothing of that record is
    written; what was recorded before it is.
    """


class GoldensWarning(UserWarning):
    """A value was recorded in a lossy way (for example, an unsupported type)."""

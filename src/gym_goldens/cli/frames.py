"""``gym-goldens frames``: a recording's frames exported as PNG files, an episode as a GIF.

The frames are read as a golden is (:func:`~gym_goldens.format.frames.read_frame`:
references inside the recording's ``frames`` folder, no link followed, sizes
checked before decoding, the decoded bytes counted against
``--max-decompressed-size``) and written again by
:func:`~gym_goldens.format.frames.encode_png`, each file atomically in the
folder ``--out``, which may not be a symlink or a file. ``show`` lists the
frame fields (:func:`frame_fields`).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Final

import numpy as np

from gym_goldens.cli._common import EXIT_OK, Subcommands, UsageError, display, print_lines
from gym_goldens.cli._options import add_limit_option
from gym_goldens.cli._recordings import files_of
from gym_goldens.format.files import atomic_write_bytes
from gym_goldens.format.frames import (
    FRAME_TAG,
    FRAMES_DIR,
    StoredFrame,
    encode_png,
    format_shape,
    frame_filename,
    frames_in,
)
from gym_goldens.format.layout import safe_segment
from gym_goldens.format.limits import DecompressionBudget
from gym_goldens.format.lines import iter_episodes
from gym_goldens.format.reader import parse_record
from gym_goldens.present.images import MIN_GIF_FPS, write_gif
from gym_goldens.present.text import counted, escape

__all__ = [
    "MAX_FRAME_FIELDS",
    "Episodes",
    "FrameField",
    "add_parser",
    "check_out_folder",
    "frame_fields",
    "run",
]

_MARKER: Final = b'"' + FRAME_TAG.encode() + b'"'
MAX_FRAME_FIELDS: Final = 100
"""How many fields with frames ``show`` lists, in the order they first appear; the rest counted."""
# How many names (of fields, of episodes, of shapes) an error or a line lists before "...".
_LISTED: Final = 12
# The longest field name a line shows; a longer one is cut, with "...".
_MAX_NAME: Final = 48
_DEFAULT_FPS: Final = 30.0
_EXPORT_REFUSAL: Final = (
    "the frames read decode to more than {limit}, the limit for what a recording may expand "
    "to; choose fewer frames (an episode, a field) or, for a real recording, raise the limit "
    "with --max-decompressed-size"
)
# What a frame chosen costs beyond its pixels, in bytes of the limit: it is kept
# (its reference, about a KiB) until it is exported, to a file of its own.
_FRAME_COST: Final = 4096
_NO_FRAMES: Final = (
    "it was recorded without frames; record them with record_trajectory(env, render=True) or "
    'images="frames"'
)


@dataclasses.dataclass(frozen=True)
class Frame:
    """A frame of a recording: where it is in the trajectory, and its file."""

    episode: int
    t: int
    field: str
    stored: StoredFrame


@dataclasses.dataclass
class Episodes:
    """The episodes frames were met in, met in order: how many, and the first few."""

    count: int = 0
    first: list[int] = dataclasses.field(default_factory=list)
    last: int | None = None

    def add(self, episode: int) -> None:
        """Count ``episode``, unless it is the last one counted."""
        if episode == self.last:
            return
        self.last = episode
        self.count += 1
        if len(self.first) < _LISTED:
            self.first.append(episode)

    def listed(self) -> str:
        """``0, 1, 2`` (the first few, and how many more)."""
        return _listed([str(number) for number in self.first], self.count)


@dataclasses.dataclass
class FrameField:
    """A field that holds frames: how many, of which shapes, in how many episodes.

    What it keeps is bounded: the first :data:`_LISTED` shapes, and the episodes counted.
    """

    field: str
    count: int = 0
    shapes: set[tuple[int, ...]] = dataclasses.field(default_factory=set)
    more_shapes: bool = False
    episodes: Episodes = dataclasses.field(default_factory=Episodes)

    def add(self, frame: Frame) -> None:
        """Count ``frame``."""
        self.count += 1
        shape = frame.stored.ref.shape
        if len(self.shapes) < _LISTED:
            self.shapes.add(shape)
        elif shape not in self.shapes:
            self.more_shapes = True
        self.episodes.add(frame.episode)

    def describe(self) -> str:
        """``26 frames, 48x64x3, in 1 episode``."""
        shapes = ", ".join(format_shape(shape) for shape in sorted(self.shapes))
        more = ", ..." if self.more_shapes else ""
        return (
            f"{counted(self.count, 'frame')}, {shapes}{more}, "
            f"in {counted(self.episodes.count, 'episode')}"
        )

    def name(self) -> str:
        """The field, escaped and cut to a line's share."""
        return _short(escape(self.field))


def iter_frames(path: Path, limit: int) -> Iterator[Frame]:
    """The frames of the recording ``path``, in its order; only lines with frames are parsed.

    Raises:
        GoldenFormatError: The recording cannot be read, or a reference is not valid.
    """
    for episode, (file, lines) in enumerate(
        iter_episodes(files_of(path), max_decompressed_size=limit)
    ):
        for number, raw in lines:
            if _MARKER not in raw:
                continue
            record = parse_record(raw, file, number)
            t = record.get("t", 0)
            step = t if type(t) is int and t >= 0 else 0
            for field, ref in frames_in(record, path=file, line=number):
                yield Frame(episode, step, field, StoredFrame(file.parent, ref))


def frame_fields(path: Path, limit: int) -> tuple[list[FrameField], bool]:
    """The fields of a recording that hold frames, in the order they first appear.

    The first :data:`MAX_FRAME_FIELDS`, and whether there are more.
    """
    fields: dict[str, FrameField] = {}
    more = False
    for frame in iter_frames(path, limit):
        found = fields.get(frame.field)
        if found is None and len(fields) >= MAX_FRAME_FIELDS:
            more = True
            continue
        if found is None:
            found = fields[frame.field] = FrameField(frame.field)
        found.add(frame)
    return list(fields.values()), more


def add_parser(commands: Subcommands) -> argparse.ArgumentParser:
    """The parser of ``frames``."""
    frames = commands.add_parser(
        "frames",
        help="export a recording's frames as PNG files, an episode as a GIF",
        description="Write the frames of RECORDING (a recording folder or trajectory file) as "
        "PNG files into --out, named by episode, step and field (e00000_t000012_render.png); "
        "with --gif, each episode's frames of each field as an animated GIF too "
        "(e00000_render.gif). Exit 0 when written, 2 when the recording has no such frames or "
        "cannot be read.",
    )
    frames.add_argument(
        "path", type=Path, metavar="RECORDING", help="a recording folder or trajectory file"
    )
    frames.add_argument(
        "--episode", type=int, metavar="N", help="only episode N (numbered from 0); default all"
    )
    frames.add_argument(
        "--field", metavar="F", help="only the field F (render, obs, obs.image...); default all"
    )
    frames.add_argument(
        "--out", type=Path, required=True, metavar="DIR", help="the folder to write into"
    )
    frames.add_argument(
        "--gif", action="store_true", help="also write each episode as an animated GIF"
    )
    frames.add_argument(
        "--fps",
        type=float,
        default=_DEFAULT_FPS,
        metavar="X",
        help=f"the GIF's frames a second (default {_DEFAULT_FPS:g})",
    )
    add_limit_option(frames)
    return frames


def run(args: argparse.Namespace) -> int:
    """Write the chosen frames, and the GIFs; print what was written."""
    path: Path = args.path
    if not args.fps >= MIN_GIF_FPS:
        raise UsageError(
            f"--fps must be at least {MIN_GIF_FPS:.3g} (a GIF shows a frame for 655 s at most), "
            f"got {args.fps:g}"
        )
    budget = DecompressionBudget(args.max_decompressed_size, _EXPORT_REFUSAL)
    chosen = _chosen(path, args.episode, args.field, budget)
    _refuse_frames_folder(args.out, path, chosen)
    out = check_out_folder(args.out, "--out")
    lines: list[str] = []
    for (episode, field), frames in chosen.items():
        pictures = []
        for frame in frames:
            pixels = _export(frame, out, budget)
            if args.gif:  # a GIF needs the episode's frames at once; nothing is kept without
                pictures.append(pixels)
        first, last = (_name(frame) for frame in (frames[0], frames[-1]))
        lines.append(
            f"episode {episode}, {_short(escape(field))}: {counted(len(frames), 'frame')} -> "
            f"{display(out / first)}" + (f" ... {last}" if len(frames) > 1 else "")
        )
        if args.gif:
            gif = out / f"e{episode:05d}_{safe_segment(field)}.gif"
            _write_gif(gif, pictures, args.fps, field, episode)
            lines.append(f"  gif: {display(gif)}")
    print_lines(lines)
    return EXIT_OK


def check_out_folder(out: Path, option: str) -> Path:
    """The folder ``out`` to write into, made if missing: refused if it is a link or a file.

    Raises:
        UsageError: ``out`` is a symlink or no folder.
    """
    if out.is_symlink():
        raise UsageError(
            f"{option} {out} is a symlink; images are written through no link: give the folder "
            "itself"
        )
    if out.exists() and not out.is_dir():
        raise UsageError(f"{option} {out} is a file; give a folder to write the images into")
    out.mkdir(parents=True, exist_ok=True)
    return out


def _refuse_frames_folder(
    out: Path, path: Path, chosen: dict[tuple[int, str], list[Frame]]
) -> None:
    """Refuse an ``out`` that is the ``frames`` folder of a recording read.

    Exported files are named as the recording names its frames, so there an
    export would replace the recording's own files (with other pixels, for a
    line that names another step's frame).

    Raises:
        UsageError: ``out`` is such a folder, by any name.
    """
    if not out.is_dir():
        return
    folders = {frame.stored.folder for frames in chosen.values() for frame in frames}
    for folder in sorted(folders):
        frames = folder / FRAMES_DIR
        if frames.is_dir() and os.path.samefile(out, frames):
            raise UsageError(
                f"--out {display(out)} is the frames folder of the recording {display(path)}; "
                "exporting there would replace the recording's own frames: give another folder"
            )


def _chosen(
    path: Path, episode: int | None, field: str | None, budget: DecompressionBudget
) -> dict[tuple[int, str], list[Frame]]:
    """The frames asked for, by episode and field; an error naming what exists when none are.

    Each frame chosen is spent on ``budget`` (:data:`_FRAME_COST`), so that
    what is kept stays within the limit however many frames a recording names.
    """
    chosen: dict[tuple[int, str], list[Frame]] = {}
    names: list[str] = []  # the first fields met, for the error
    more_names = False
    episodes = Episodes()  # of the field asked for, or of every field
    for frame in iter_frames(path, budget.limit):
        if frame.field not in names:
            more_names = more_names or len(names) == _LISTED
            names += [frame.field][: _LISTED - len(names)]
        if field is not None and frame.field != field:
            continue
        episodes.add(frame.episode)
        if episode is None or frame.episode == episode:
            budget.spend(_FRAME_COST, frame.stored.path)
            chosen.setdefault((frame.episode, frame.field), []).append(frame)
    if chosen:
        return chosen
    if not names:
        raise UsageError(f"{path}: no frames in this recording; {_NO_FRAMES}")
    if not episodes.count:
        raise UsageError(
            f"{path}: no frames of the field {_short(escape(field or ''))!r}; the fields with "
            "frames are " + _listed(names, None if more_names else len(names))
        )
    of = f" of {_short(escape(field))}" if field is not None else ""
    raise UsageError(
        f"{path}: episode {episode} has no frames{of}; the episodes with frames are "
        + episodes.listed()
    )


def _listed(names: Sequence[str], total: int | None) -> str:
    """The first names, escaped, and how many more of ``total`` (None: more, not counted)."""
    shown = ", ".join(_short(escape(name)) for name in names[:_LISTED])
    if total is None:
        return shown + " and more"
    return shown + (f" and {total - _LISTED:,} more" if total > _LISTED else "")


def _short(name: str) -> str:
    return name if len(name) <= _MAX_NAME else name[: _MAX_NAME - 3] + "..."


def _export(frame: Frame, out: Path, budget: DecompressionBudget) -> np.ndarray[Any, Any]:
    """Read a frame (checked) and write it into ``out``; its pixels."""
    pixels = frame.stored.read(budget)
    atomic_write_bytes(out / _name(frame), encode_png(pixels))
    return pixels


def _name(frame: Frame) -> str:
    """The file of an exported frame: that of the recording, without its folder."""
    return frame_filename(frame.episode, frame.t, frame.field).partition("/")[2]


def _write_gif(
    gif: Path, pictures: list[np.ndarray[Any, Any]], fps: float, field: str, episode: int
) -> None:
    try:
        write_gif(gif, pictures, fps)
    except ValueError as error:
        raise UsageError(
            f"cannot write {_short(escape(field))} of episode {episode} as one GIF: {error}"
        ) from None

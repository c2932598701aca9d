"""Frames as PNG files: the image-like rule, the codec, references and hostile files."""

from __future__ import annotations

import io
import os
import tracemalloc
import warnings
import zlib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from PIL import Image

from gym_goldens.errors import GoldenFormatError, UnsafeGoldenPathError
from gym_goldens.format.codec import ArraySummary
from gym_goldens.format.frames import (
    _PIXELS_PER_RUN,
    FRAMES_DIR,
    PNG_COMPRESS_LEVEL,
    PNG_COMPRESS_TYPE,
    FrameRef,
    _colour_table,
    _paletted,
    _run_bounds,
    check_frame_file,
    decode_png,
    encode_png,
    frame_digest,
    frame_filename,
    frame_path,
    is_image_like,
    read_frame,
)
from gym_goldens.format.limits import MAX_FRAME_PIXELS, DecompressionBudget
from gym_goldens.present.report import format_unreadable
from tests.support.frames import cartpole_frames, png_chunk, png_chunks, pong_frame

SIGNATURE = b"\x89PNG\r\n\x1a\n"


def noise(shape: tuple[int, ...], seed: int = 0) -> np.ndarray[Any, Any]:
    return np.random.default_rng(seed).integers(0, 256, shape, dtype=np.uint8)


def ihdr(width: int, height: int, depth: int = 8, colour_type: int = 2) -> bytes:
    size = width.to_bytes(4, "big") + height.to_bytes(4, "big")
    body = size + bytes([depth, colour_type, 0, 0, 0])
    return png_chunk(b"IHDR", body)


# --- the image-like rule -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (np.zeros((210, 160, 3), np.uint8), True),
        (np.zeros((84, 84), np.uint8), True),
        (np.zeros((84, 84, 1), np.uint8), True),
        (np.zeros((64, 64, 4), np.uint8), True),
        (np.zeros((8, 8), np.uint8), True),
        (np.zeros((7, 7, 3), np.uint8), False),  # MiniGrid's view: symbols, not a picture
        (np.zeros((8, 7), np.uint8), False),
        (np.zeros((84, 84, 2), np.uint8), False),
        (np.zeros((4, 84, 84), np.uint8), False),  # stacked frames, channels first
        (np.zeros(4096, np.uint8), False),
        (np.zeros((2, 64, 64, 3), np.uint8), False),
        (np.zeros((84, 84), np.float32), False),
        (np.zeros((84, 84), np.int8), False),
        (np.zeros((84, 84), bool), False),
        (np.zeros((4097, 4096), np.uint8), False),  # past the pixel limit: summarised
        ([[0] * 16] * 16, False),
        (b"\x00" * 256, False),
    ],
)
def test_the_image_like_rule(value: object, expected: bool) -> None:
    assert is_image_like(value) is expected


def test_the_largest_image_like_array_is_at_the_pixel_limit() -> None:
    assert is_image_like(np.zeros((MAX_FRAME_PIXELS // 4096, 4096), np.uint8))
    assert not is_image_like(np.zeros((MAX_FRAME_PIXELS // 4096 + 1, 4096), np.uint8))


# --- the codec -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("shape", "mode"),
    [((30, 40), "L"), ((30, 40, 1), "L"), ((30, 40, 3), "RGB"), ((30, 40, 4), "RGBA")],
)
def test_a_frame_is_a_png_of_its_mode(shape: tuple[int, ...], mode: str) -> None:
    frame = noise(shape)
    with Image.open(io.BytesIO(encode_png(frame))) as image:
        assert (image.format, image.mode, image.size) == ("PNG", mode, (40, 30))
        assert np.array_equal(np.asarray(image).reshape(shape), frame)


def test_encoding_is_deterministic_with_no_time_or_text_chunk() -> None:
    frame = pong_frame(12)
    first, second = encode_png(frame), encode_png(frame.copy())
    assert first == second
    chunks = png_chunks(first)
    assert chunks[0] == b"IHDR"
    assert chunks[-1] == b"IEND"
    assert set(chunks) == {b"IHDR", b"PLTE", b"IDAT", b"IEND"}  # Pong's few colours: a palette
    for metadata in (b"tIME", b"tEXt", b"iTXt", b"zTXt", b"pHYs", b"gAMA", b"iCCP"):
        assert metadata not in first


def test_a_frame_that_is_a_view_encodes_as_its_pixels() -> None:
    base = noise((40, 60, 3))
    view = base[::2, ::3]
    assert not view.flags.c_contiguous
    assert np.array_equal(decode_png(encode_png(view), path="view.png"), view)
    assert encode_png(view) == encode_png(np.ascontiguousarray(view))


@settings(max_examples=60, deadline=None)
@given(
    frame=st.tuples(
        st.integers(8, 40), st.integers(8, 40), st.sampled_from([None, 1, 3, 4])
    ).flatmap(
        lambda dims: hnp.arrays(np.uint8, dims[:2] if dims[2] is None else (*dims[:2], dims[2]))
    )
)
def test_frames_round_trip_exactly(frame: np.ndarray[Any, Any]) -> None:
    data = encode_png(frame)
    decoded = decode_png(data, path="frame.png", expected_shape=frame.shape)
    assert decoded.shape == frame.shape
    assert decoded.dtype == np.uint8
    assert np.array_equal(decoded, frame)
    assert frame_digest(decoded) == frame_digest(frame)
    assert encode_png(decoded) == data


def test_an_rgba_frame_keeps_the_colour_of_transparent_pixels() -> None:
    frame = noise((16, 16, 4))
    frame[..., 3] = 0
    assert np.array_equal(decode_png(encode_png(frame), path="a.png"), frame)


def test_cartpole_renders_round_trip(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    frames = cartpole_frames(3)
    assert frames[0].shape == (400, 600, 3)
    assert not np.array_equal(frames[0], frames[2])  # the pole moved
    for frame in frames:
        assert is_image_like(frame)
        assert np.array_equal(decode_png(encode_png(frame), path="cartpole.png"), frame)


def test_a_gray_frame_without_its_shape_reads_as_height_by_width() -> None:
    frame = noise((20, 24, 1))
    assert decode_png(encode_png(frame), path="g.png").shape == (20, 24)


@pytest.mark.parametrize(
    "value",
    [np.zeros((7, 7, 3), np.uint8), np.zeros((16, 16), np.float32), [[1, 2], [3, 4]]],
    ids=["small", "float", "list"],
)
def test_encoding_refuses_what_is_not_image_like(value: Any) -> None:
    with pytest.raises(ValueError, match="expected an image-like array"):
        encode_png(value)


# --- palette PNGs -------------------------------------------------------------------------------


def painted(colours: int, shape: tuple[int, int] = (32, 40), seed: int = 0) -> np.ndarray[Any, Any]:
    """An RGB frame of exactly ``colours`` colours, each pixel one of them at random."""
    generator = np.random.default_rng(seed)
    palette = generator.permutation(1 << 24)[:colours]
    chosen = np.concatenate(
        [np.arange(colours), generator.integers(0, colours, shape[0] * shape[1])]
    )
    keys = palette[chosen[: shape[0] * shape[1]]]
    channels = [(keys >> shift) & 255 for shift in (16, 8, 0)]
    return np.stack(channels, axis=-1).astype(np.uint8).reshape(*shape, 3)


def palette_of(data: bytes) -> list[tuple[int, ...]]:
    with Image.open(io.BytesIO(data)) as image:
        assert image.mode == "P"
        palette = image.getpalette()
    assert palette is not None
    return [tuple(palette[index : index + 3]) for index in range(0, len(palette), 3)]


def test_a_frame_of_at_most_256_colours_is_an_exact_palette_png() -> None:
    frame = pong_frame(12)
    data = encode_png(frame)
    assert png_chunks(data) == [b"IHDR", b"PLTE", b"IDAT", b"IEND"]
    # The palette is the frame's colours, sorted: a function of the pixels alone.
    assert palette_of(data) == sorted({tuple(colour) for colour in frame.reshape(-1, 3).tolist()})
    decoded = decode_png(data, path="p.png", expected_shape=frame.shape)
    assert decoded.shape == frame.shape
    assert np.array_equal(decoded, frame)
    assert len(data) < len(encode_png(np.dstack([frame, np.full(frame.shape[:2], 255, np.uint8)])))


@pytest.mark.parametrize(
    ("colours", "mode"), [(1, "P"), (2, "P"), (17, "P"), (256, "P"), (257, "RGB")]
)
def test_a_palette_png_holds_up_to_256_colours(colours: int, mode: str) -> None:
    frame = painted(colours)
    assert len({tuple(colour) for colour in frame.reshape(-1, 3).tolist()}) == colours
    data = encode_png(frame)
    with Image.open(io.BytesIO(data)) as image:
        assert image.mode == mode
    assert np.array_equal(decode_png(data, path="p.png", expected_shape=frame.shape), frame)
    assert encode_png(frame.copy()) == data


def test_the_same_colours_elsewhere_give_the_same_palette() -> None:
    first, second = pong_frame(3), pong_frame(50)
    assert not np.array_equal(first, second)
    assert palette_of(encode_png(first)) == palette_of(encode_png(second))
    assert encode_png(np.ascontiguousarray(second[::-1])) != encode_png(second)


def test_a_gray_or_rgba_frame_of_few_colours_keeps_its_mode() -> None:
    for shape, mode in (((16, 16), "L"), ((16, 16, 4), "RGBA")):
        frame = np.zeros(shape, np.uint8)
        frame[4:8] = 200
        with Image.open(io.BytesIO(encode_png(frame))) as image:
            assert image.mode == mode


@settings(max_examples=60, deadline=None)
@given(
    colours=st.integers(1, 300),
    height=st.integers(8, 30),
    width=st.integers(8, 30),
    seed=st.integers(0, 1000),
)
def test_few_colour_frames_round_trip_exactly(
    colours: int, height: int, width: int, seed: int
) -> None:
    frame = painted(min(colours, height * width), (height, width), seed)
    data = encode_png(frame)
    decoded = decode_png(data, path="frame.png", expected_shape=frame.shape)
    assert np.array_equal(decoded, frame)
    assert frame_digest(decoded) == frame_digest(frame)
    assert encode_png(decoded) == data


def palette_png(
    indices: np.ndarray[Any, Any], palette: bytes, *, depth: int = 8, extra: bytes = b""
) -> bytes:
    """A hand-made palette PNG (colour type 3) of 8-bit ``indices``, unfiltered."""
    height, width = indices.shape
    rows = b"".join(b"\x00" + bytes(row) for row in indices.tolist())
    data = SIGNATURE + ihdr(width, height, depth=depth, colour_type=3)
    if palette:
        data += png_chunk(b"PLTE", palette)
    return data + extra + png_chunk(b"IDAT", zlib.compress(rows)) + png_chunk(b"IEND", b"")


def test_a_hand_made_palette_png_reads_as_its_rgb_pixels() -> None:
    indices = np.arange(16 * 16, dtype=np.uint8).reshape(16, 16) % 3
    data = palette_png(indices, bytes([10, 20, 30, 40, 50, 60, 70, 80, 90]))
    pixels = decode_png(data, path="p.png", expected_shape=(16, 16, 3))
    assert pixels.tolist()[0][:3] == [[10, 20, 30], [40, 50, 60], [70, 80, 90]]


def test_a_palette_png_whose_pixels_index_past_its_palette_is_refused() -> None:
    indices = np.zeros((16, 16), np.uint8)
    indices[5, 7] = 3  # the palette has 3 colours: 0, 1 and 2
    data = palette_png(indices, bytes(range(9)))
    with pytest.raises(GoldenFormatError, match="past its palette of 3 colours") as caught:
        decode_png(data, path="frames/e00000_t000001_render.png", expected_shape=(16, 16, 3))
    assert str(caught.value).startswith("frames/e00000_t000001_render.png: ")


@pytest.mark.parametrize(
    ("palette", "extra", "reason"),
    [
        (b"", b"", "no palette"),
        (bytes(range(9)), png_chunk(b"tRNS", b"\x00"), "transparency"),
    ],
    ids=["no-PLTE", "tRNS"],
)
def test_a_palette_png_unlike_those_written_is_refused(
    palette: bytes, extra: bytes, reason: str
) -> None:
    data = palette_png(np.zeros((16, 16), np.uint8), palette, extra=extra)
    with pytest.raises(GoldenFormatError, match=reason):
        decode_png(data, path="p.png", expected_shape=(16, 16, 3))


@pytest.mark.parametrize("expected", [(16, 16), (16, 16, 1), (16, 16, 4)])
def test_a_palette_png_where_gray_or_rgba_is_expected_is_refused(
    expected: tuple[int, ...],
) -> None:
    data = encode_png(painted(4, (16, 16)))
    with pytest.raises(GoldenFormatError, match="the PNG holds a 16x16x3 frame"):
        decode_png(data, path="p.png", expected_shape=expected)


def test_a_16_bit_palette_png_is_refused() -> None:
    data = palette_png(np.zeros((16, 16), np.uint8), bytes(3), depth=16)
    with pytest.raises(GoldenFormatError, match="bit depth 16, colour type 3"):
        decode_png(data, path="p.png", expected_shape=(16, 16, 3))


def spec_png(frame: np.ndarray[Any, Any]) -> bytes:
    """The PNG the module's docstring specifies for an RGB frame, made without the encoder's code.

    The palette is the frame's own colours sorted by red, green then blue
    (``np.unique`` of its rows: exactly those, none more), each pixel the index of its colour.
    """
    colours, indices = np.unique(frame.reshape(-1, 3), axis=0, return_inverse=True)
    if len(colours) > 256:
        image = Image.fromarray(frame)
    else:
        height, width = frame.shape[:2]
        image = Image.frombytes("P", (width, height), indices.astype(np.uint8).tobytes())
        image.putpalette(colours.tobytes())
    buffer = io.BytesIO()
    image.save(
        buffer,
        format="PNG",
        compress_level=PNG_COMPRESS_LEVEL,
        compress_type=PNG_COMPRESS_TYPE,
        optimize=False,
    )
    return buffer.getvalue()


def from_runs(
    palette: np.ndarray[Any, Any], runs: list[tuple[int, int]], shape: tuple[int, int]
) -> np.ndarray[Any, Any]:
    """An RGB frame of ``shape`` filled row after row by ``(colour, length)`` runs, repeated."""
    choices = np.repeat([colour for colour, _ in runs], [length for _, length in runs])
    return palette[np.resize(choices, shape[0] * shape[1])].reshape(*shape, 3)


def keyed_palette(keys: list[int]) -> np.ndarray[Any, Any]:
    """An ``N x 3`` palette of the 24-bit colours ``keys``."""
    wide = np.array(keys, np.int64)
    return np.stack([wide >> 16, wide >> 8 & 255, wide & 255], axis=-1).astype(np.uint8)


def blocks(colours: list[int], shape: tuple[int, int] = (48, 64)) -> np.ndarray[Any, Any]:
    """A flat frame (few runs): the 24-bit ``colours`` in bands of rows, each in one at least.

    There must be no more colours than rows.
    """
    rows = np.arange(shape[0]) * len(colours) // shape[0]
    pixels = keyed_palette(colours)[rows]
    return np.ascontiguousarray(np.repeat(pixels[:, None], shape[1], axis=1))


def speckled(frame: np.ndarray[Any, Any], seed: int = 0) -> np.ndarray[Any, Any]:
    """``frame`` with its pixels shuffled: the same colours in as many runs as pixels, nearly."""
    flat = frame.reshape(-1, 3)
    return flat[np.random.default_rng(seed).permutation(len(flat))].reshape(frame.shape)


BASE = list(range(0x101010, 0x101010 + 40 * 0x010203, 0x010203))  # 40 colours
SEQUENCES = {
    # The palette stays; the pixels move.
    "stays": [pong_frame(t) for t in range(0, 60, 6)],
    # A colour comes with each frame; then one goes with each (from the end, then the start).
    "grows": [blocks(BASE[:count]) for count in range(1, 12)],
    "shrinks": [blocks(BASE[:count]) for count in range(12, 0, -1)]
    + [blocks(BASE[first:12]) for first in range(1, 12)],
    # A colour in the middle of the palette leaves, then comes back.
    "a hole": [blocks(BASE[:10]), blocks(BASE[:4] + BASE[5:10]), blocks(BASE[:10])],
    # Each frame's colours are all new.
    "changes": [blocks(BASE[start : start + 8]) for start in range(0, 40, 8)],
    # Through the palette's limit (256 colours, indices 0 to 255) and back.
    "256": [blocks([*range(count)], (257, 32)) for count in (255, 256, 257, 256, 2, 256)],
}


@pytest.mark.parametrize("speckle", [False, True], ids=["runs", "speckled"])
@pytest.mark.parametrize("sequence", SEQUENCES)
def test_a_sequence_of_frames_gives_the_specified_pngs(sequence: str, speckle: bool) -> None:
    # Frame after frame, as the recorder's worker encodes them: what was encoded before
    # never shows in a frame's palette, which holds exactly its own colours.
    frames = [speckled(frame) if speckle else frame for frame in SEQUENCES[sequence]]
    for frame in frames:
        data = encode_png(frame)
        assert data == spec_png(frame)
        assert np.array_equal(decode_png(data, path="f.png", expected_shape=frame.shape), frame)


def run_bounds(frame: np.ndarray[Any, Any], *, limit: int | None = None) -> list[int] | None:
    """The encoder's run bounds of an RGB frame as a list; ``None`` past ``limit`` runs.

    The limit is the encoder's (one run in ``_PIXELS_PER_RUN`` pixels) unless given.
    """
    flat = np.ascontiguousarray(frame).reshape(-1)
    bounds = _run_bounds(flat, flat.size // (3 * _PIXELS_PER_RUN) if limit is None else limit)
    return None if bounds is None else bounds.tolist()


def reference_bounds(frame: np.ndarray[Any, Any]) -> list[int]:
    """Where each run of one colour starts, then the pixel count, by comparing whole pixels."""
    flat = frame.reshape(-1, 3)
    changes = np.flatnonzero(np.any(flat[1:] != flat[:-1], axis=1)) + 1
    return [0, *changes.tolist(), len(flat)]


def test_the_sequences_take_both_ways_to_a_palette() -> None:
    # Their frames have few runs of one colour: the palette comes from the runs. Speckled,
    # those of two colours or more have many: the palette is counted.
    for frames in SEQUENCES.values():
        for frame in frames:
            flat = frame.reshape(-1, 3)
            assert run_bounds(frame) == reference_bounds(frame)
            many = len(np.unique(flat, axis=0)) > 1
            assert (run_bounds(speckled(frame)) is None) is many


def test_cartpole_renders_give_the_specified_pngs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    # The anti-aliased pole's colours come and go from one frame to the next.
    for frame in cartpole_frames(12):
        assert encode_png(frame) == spec_png(frame)


@settings(max_examples=80, deadline=None)
@given(
    colours=st.lists(st.integers(0, (1 << 24) - 1), min_size=1, max_size=300, unique=True),
    frames=st.lists(
        st.tuples(
            st.lists(st.tuples(st.integers(0, 299), st.integers(1, 90)), min_size=1, max_size=40),
            st.integers(8, 40),
            st.integers(8, 40),
            st.booleans(),
        ),
        min_size=1,
        max_size=4,
    ),
)
def test_frames_of_runs_give_the_specified_pngs(
    colours: list[int], frames: list[tuple[list[tuple[int, int]], int, int, bool]]
) -> None:
    # Frames of some of the colours, one after another; speckled, most have many runs.
    palette = keyed_palette(colours)
    for runs, height, width, speckle in frames:
        picked = [(colour % len(colours), length) for colour, length in runs]
        frame = from_runs(palette, picked, (height, width))
        if speckle:
            frame = speckled(frame)
        data = encode_png(frame)
        assert data == spec_png(frame)
        assert np.array_equal(decode_png(data, path="f.png", expected_shape=frame.shape), frame)


@pytest.mark.parametrize("shape", [(8, 8), (9, 8), (8, 13), (11, 15), (16, 16)])
def test_a_change_of_any_channel_at_any_pixel_is_a_run_of_its_own(shape: tuple[int, int]) -> None:
    # The runs are found 8 bytes at a time, then byte by byte, and the bytes past the last
    # whole word on their own: a change of one bit of one channel shows wherever it is,
    # at every byte of a word, in the frame's last bytes and at its last pixel.
    base = np.full((*shape, 3), (40, 80, 120), np.uint8)
    count = shape[0] * shape[1]
    for pixel in range(count):
        for channel in range(3):
            frame = base.copy()
            frame.reshape(-1, 3)[pixel, channel] ^= 1
            assert run_bounds(frame, limit=count) == reference_bounds(frame), (pixel, channel)
            assert encode_png(frame) == spec_png(frame), (pixel, channel)
    # Two pixels changed together, next to each other and apart: one run, or three.
    for pixel in range(count - 1):
        frame = base.copy()
        frame.reshape(-1, 3)[pixel : pixel + 2] = (1, 2, 3)
        assert run_bounds(frame, limit=count) == reference_bounds(frame), pixel
        assert encode_png(frame) == spec_png(frame), pixel


def test_a_frame_at_any_address_gives_the_specified_png() -> None:
    # The frame's bytes are read as 64- and 32-bit words at any offset: a frame at an odd
    # address, read-only (as an env may hand it over) or a view gives the same PNG.
    frame = pong_frame(7)
    expected = spec_png(frame)
    for offset in range(1, 8):
        unaligned = np.frombuffer(bytes(offset) + frame.tobytes(), np.uint8, offset=offset)
        assert not unaligned.flags.writeable
        assert encode_png(unaligned.reshape(frame.shape)) == expected
    wider = np.zeros((210, 161, 3), np.uint8)
    wider[:, 1:] = frame
    assert encode_png(wider[:, 1:]) == expected


def test_frames_of_several_kinds_in_turn_give_the_specified_pngs() -> None:
    # One thread encodes frames of other sizes, modes and palettes in turn, as a recorder
    # storing obs and render frames does: its kept palette image never shows in another's
    # PNG, whether the palette comes, goes, stays the same or changes with the size.
    gradient = np.zeros((20, 300, 3), np.uint8)
    gradient[..., 0] = np.arange(300) % 256
    gradient[..., 1] = np.arange(300) // 256
    assert len(np.unique(gradient.reshape(-1, 3), axis=0)) == 300
    gray = np.repeat(np.arange(16, dtype=np.uint8) * 16, 32).reshape(16, 32)
    rgba = np.dstack([pong_frame(4), np.full((210, 160), 200, np.uint8)])
    kinds = [
        pong_frame(0),
        pong_frame(1),  # the same palette, other pixels
        blocks(BASE[:5], (210, 160)),  # the same size, five other colours
        pong_frame(2),
        blocks(BASE[:5], (48, 64)),  # the same palette at another size
        gradient,  # past 256 colours: RGB
        gray,
        rgba,
        pong_frame(3)[:, :, :1],  # gray, H x W x 1
        speckled(blocks(BASE[:9])),  # many runs: the counted way
        blocks(BASE[:9]),
        pong_frame(5),
    ]
    for frame in [*kinds, *kinds[::-1], *kinds[::2], *kinds[1::2]]:
        data = encode_png(frame)
        if frame.ndim == 3 and frame.shape[2] == 3:
            assert data == spec_png(frame)
        assert np.array_equal(decode_png(data, path="f.png", expected_shape=frame.shape), frame)


def test_the_palette_image_is_one_a_thread_whatever_the_frames() -> None:
    # Kept for the frames of one size: another size replaces it, and it is not another
    # thread's.
    first = _paletted(pong_frame(0))
    assert _paletted(pong_frame(1)) is first
    other = _paletted(blocks(BASE[:4]))
    assert other is not first
    assert _paletted(blocks(BASE[4:8])) is other
    with ThreadPoolExecutor(1) as pool:
        assert pool.submit(_paletted, blocks(BASE[:4])).result() is not other


def test_ale_pong_frames_give_the_specified_pngs() -> None:
    pytest.importorskip(
        "ale_py", reason="ale-py runs the Atari games and is not installed: pip install ale-py"
    )
    import ale_py

    gym.register_envs(ale_py)
    env = gym.make("ALE/Pong-v5")
    try:
        frame, _ = env.reset(seed=0)
        env.action_space.seed(0)
        frames = [frame]
        while len(frames) < 150:
            frame, *_ = env.step(env.action_space.sample())
            frames.append(frame)
    finally:
        env.close()
    for frame in frames:
        assert encode_png(frame) == spec_png(frame)


def test_many_cartpole_renders_give_the_specified_pngs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    # Episodes of a pole that falls: its anti-aliased colours (6 to over 100) come and go.
    frames = cartpole_frames(40, seed=3)
    expected = [spec_png(frame) for frame in frames]
    assert [encode_png(frame) for frame in frames] == expected
    assert [encode_png(frame) for frame in frames[::-3]] == expected[::-3]


def test_two_threads_encoding_at_once_give_the_specified_pngs() -> None:
    frames = [
        frame
        for start in range(0, 40, 4)
        for frame in (blocks(BASE[start : start + 9]), speckled(blocks(BASE[start : start + 7])))
    ]
    expected = [spec_png(frame) for frame in frames]
    with ThreadPoolExecutor(2) as pool:
        for _ in range(5):
            # Each thread gets frames of other colours than the other's, in another order.
            assert list(pool.map(encode_png, frames)) == expected
            assert list(pool.map(encode_png, frames[::-1])) == expected[::-1]


# --- the digest ----------------------------------------------------------------------------------


def test_the_digest_is_of_the_pixels_not_of_the_bytes() -> None:
    frame = pong_frame(3)
    buffer = io.BytesIO()
    Image.fromarray(frame).save(buffer, format="PNG", compress_level=9, optimize=True)
    other_bytes = buffer.getvalue()
    assert other_bytes != encode_png(frame)
    assert frame_digest(decode_png(other_bytes, path="p.png")) == frame_digest(frame)


def test_the_digest_is_that_of_the_array_summary() -> None:
    frame = pong_frame(5)
    assert frame_digest(frame) == ArraySummary.of(frame).digest
    moved = pong_frame(6)
    assert frame_digest(moved) != frame_digest(frame)


# --- file names and references -------------------------------------------------------------------


def test_frame_files_are_named_by_episode_step_and_field() -> None:
    assert frame_filename(0, 12, "render") == "frames/e00000_t000012_render.png"
    assert frame_filename(2, 0, "obs.pixels") == "frames/e00002_t000000_obs.pixels.png"
    assert frame_filename(123456, 1234567, "info.frame") == (
        "frames/e123456_t1234567_info.frame.png"
    )


@pytest.mark.parametrize(
    "field", ["obs/../../x", "../x", "a\x1b[31mb", "obs[0]", ".hidden", "con", "a b\\c", "x" * 300]
)
def test_awkward_fields_give_safe_names_that_read_back(field: str) -> None:
    name = frame_filename(1, 2, field)
    assert check_frame_file(name, source="trajectory.jsonl") == name
    folder, file = name.split("/")
    assert folder == FRAMES_DIR
    assert file.startswith("e00001_t000002_")
    assert ".." not in Path(name).parts
    assert file.isprintable()


def test_distinct_fields_never_share_a_file() -> None:
    fields = ["obs.a", "obs/a", "obs%2Fa", "obs.A", "info.frame", "info/frame", "x" * 300]
    fields.append("x" * 301)
    assert len({frame_filename(0, 1, field) for field in fields}) == len(fields)


@pytest.mark.parametrize(
    "file",
    [
        "../trajectory.jsonl",
        "frames/../../../etc/passwd",
        "/etc/passwd",
        "frames//e00000_t000000_x.png",
        "frames/sub/e00000_t000000_x.png",
        "frames\\e00000_t000000_x.png",
        "frames/e00000_t000000_x\x1b[2J.png",
        "frames/e00000_t000000_x\n.png",
        "frames/e00000_t000000_x.png/",
        "frames/.e00000_t000000_x.png",
        "frames/e00000_t000000_x.gif",
        "C:/frames/e00000_t000000_x.png",
        "other/e00000_t000000_x.png",
        "",
        None,
        ["frames/e00000_t000000_x.png"],
    ],
)
def test_a_reference_outside_the_frames_folder_is_refused(file: object) -> None:
    with pytest.raises(GoldenFormatError, match="a frame reference names the file") as caught:
        check_frame_file(file, source="goldens/t/trajectory.jsonl")
    message = str(caught.value)
    assert message.startswith("goldens/t/trajectory.jsonl: ")
    assert "\x1b" not in message
    assert "\n" not in message


def test_a_reference_round_trips_through_json() -> None:
    frame = pong_frame(12)
    ref = FrameRef.of(frame, episode=0, step=12, field="render")
    assert ref.file == "frames/e00000_t000012_render.png"
    assert ref.shape == (210, 160, 3)
    content = ref.to_json()
    assert content == {"digest": frame_digest(frame), "file": ref.file, "shape": [210, 160, 3]}
    assert FrameRef.from_json(content, path="t.jsonl") == ref
    assert FrameRef.from_json({**content, "later": 1}, path="t.jsonl") == ref


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"digest": "abc"}, "no valid digest"),
        ({"digest": None}, "no valid digest"),
        ({"digest": "A" * 32}, "no valid digest"),
        ({"shape": [210, 160, 2]}, "no valid shape"),
        ({"shape": [210]}, "no valid shape"),
        ({"shape": [210, True]}, "no valid shape"),
        ({"shape": [210, 0]}, "no valid shape"),
        ({"shape": [210, 160.0]}, "no valid shape"),
        ({"shape": "210x160"}, "no valid shape"),
        ({"file": "../x.png"}, "names the file"),
    ],
)
def test_a_damaged_reference_is_refused(change: dict[str, Any], reason: str) -> None:
    content = {**FrameRef.of(pong_frame(), episode=0, step=0, field="render").to_json(), **change}
    with pytest.raises(GoldenFormatError, match=reason) as caught:
        FrameRef.from_json(content, path="t.jsonl", line=4)
    assert str(caught.value).startswith("t.jsonl")


def test_a_reference_that_is_no_object_is_refused() -> None:
    with pytest.raises(GoldenFormatError, match="must be an object"):
        FrameRef.from_json(["frames/e00000_t000000_render.png"], path="t.jsonl")


# --- hostile PNG files ---------------------------------------------------------------------------


def test_a_png_claiming_huge_dimensions_is_refused_before_decoding() -> None:
    # A valid header (with its CRC) claiming 100000 x 100000 RGB pixels: 30 GB decoded.
    bomb = SIGNATURE + ihdr(100_000, 100_000) + png_chunk(b"IDAT", zlib.compress(b""))
    bomb += png_chunk(b"IEND", b"")
    budget = DecompressionBudget(1 << 30)
    with pytest.raises(GoldenFormatError, match="refused before decoding") as caught:
        decode_png(bomb, path="frames/e00000_t000000_render.png", budget=budget)
    assert "100,000 x 100,000 pixels" in str(caught.value)
    assert str(caught.value).startswith("frames/e00000_t000000_render.png: ")
    assert budget.left == budget.limit  # nothing was counted, so nothing was decoded


def test_a_png_past_pillows_own_limit_is_refused_too() -> None:
    bomb = SIGNATURE + ihdr(20_000, 20_000) + png_chunk(b"IEND", b"")
    with pytest.raises(GoldenFormatError, match="Pillow's pixel limit"):
        decode_png(bomb, path="x.png", max_pixels=10**9)


def test_decoded_bytes_are_spent_on_the_budget() -> None:
    data = encode_png(pong_frame())
    budget = DecompressionBudget(1 << 20)
    decode_png(data, path="a.png", budget=budget)
    assert budget.limit - budget.left == 210 * 160 * 3
    budget = DecompressionBudget(210 * 160 * 3 - 1)
    with pytest.raises(GoldenFormatError, match="the limit"):
        decode_png(data, path="a.png", budget=budget)


@pytest.mark.parametrize("cut", [4, 20, 40, 120, -13, -1])
def test_a_truncated_png_is_a_clean_error(cut: int) -> None:
    data = encode_png(noise((32, 32, 3)))[:cut]
    with pytest.raises(GoldenFormatError, match="cut short") as caught:
        decode_png(data, path="frames/e00000_t000001_render.png", expected_shape=(32, 32, 3))
    assert str(caught.value).startswith("frames/e00000_t000001_render.png: ")


@pytest.mark.parametrize(
    "data",
    [b"", b'{"event": "header"}\n', b"GIF89a" + b"\x00" * 64, b"\x89PNG\r\n"],
    ids=["empty", "json", "gif", "signature-only"],
)
def test_a_file_that_is_no_png_is_a_clean_error(data: bytes) -> None:
    with pytest.raises(GoldenFormatError, match=r"expected a PNG file|cut short"):
        decode_png(data, path="x.png")


@pytest.mark.parametrize(
    "idat",
    [b"not zlib at all", zlib.compress(b"\x00" * 10), zlib.compress(b"\x09" * 2000)],
    ids=["not-zlib", "too-few-rows", "bad-filter-type"],
)
def test_a_png_with_damaged_pixel_data_is_a_clean_error(idat: bytes) -> None:
    data = SIGNATURE + ihdr(32, 20, colour_type=0) + png_chunk(b"IDAT", idat)
    data += png_chunk(b"IEND", b"")
    with pytest.raises(GoldenFormatError, match="the PNG is cut short or damaged"):
        decode_png(data, path="x.png")


def test_a_png_with_a_damaged_header_is_refused() -> None:
    data = bytearray(encode_png(noise((16, 16))))
    data[17] ^= 0xFF  # the width, under the header's CRC
    with pytest.raises(GoldenFormatError, match="bad CRC"):
        decode_png(bytes(data), path="x.png")


def test_a_png_of_another_shape_than_the_reference_is_refused() -> None:
    data = encode_png(noise((100, 80, 3)))
    for expected in [(210, 160, 3), (100, 80, 4), (100, 80), (80, 100, 3)]:
        with pytest.raises(GoldenFormatError, match="the PNG holds a 100x80x3 frame"):
            decode_png(data, path="x.png", expected_shape=expected)


@pytest.mark.parametrize(
    ("mode", "array"),
    [("LA", np.zeros((16, 16, 2), np.uint8))],
)
def test_a_png_of_another_kind_of_image_is_refused(mode: str, array: Any) -> None:
    buffer = io.BytesIO()
    image = Image.fromarray(array[..., 0] if array.ndim == 3 else array).convert(mode)
    image.save(buffer, format="PNG")
    with pytest.raises(GoldenFormatError, match="expected an 8-bit gray, RGB or RGBA PNG"):
        decode_png(buffer.getvalue(), path="x.png")


def test_a_16_bit_png_is_refused() -> None:
    buffer = io.BytesIO()
    Image.fromarray(np.zeros((16, 16), np.uint16)).save(buffer, format="PNG")
    with pytest.raises(GoldenFormatError, match="bit depth 16"):
        decode_png(buffer.getvalue(), path="x.png")


def test_the_failure_says_golden_unreadable_with_the_file() -> None:
    path = "goldens/test_x/render/frames/e00000_t000003_render.png"
    with pytest.raises(GoldenFormatError) as caught:
        decode_png(encode_png(noise((16, 16)))[:-20], path=path)
    message = format_unreadable(caught.value, nodeid="tests/test_x.py::test_x")
    assert message.startswith(f"golden unreadable: {path}: the PNG is cut short")


# --- reading a recording's frame -----------------------------------------------------------------


def stored(tmp_path: Path, frame: np.ndarray[Any, Any], field: str = "render") -> FrameRef:
    ref = FrameRef.of(frame, episode=0, step=3, field=field)
    path = tmp_path / ref.file
    path.parent.mkdir(exist_ok=True)
    path.write_bytes(encode_png(frame))
    return ref


def test_a_frame_reads_back_from_its_recording(tmp_path: Path) -> None:
    frame = pong_frame(3)
    ref = stored(tmp_path, frame)
    assert np.array_equal(read_frame(tmp_path, ref), frame)
    gray = noise((20, 20, 1))
    assert read_frame(tmp_path, stored(tmp_path, gray, "obs")).shape == (20, 20, 1)


def test_a_symlinked_frame_is_refused(tmp_path: Path) -> None:
    secret = tmp_path / "secret.png"
    secret.write_bytes(encode_png(pong_frame()))
    recording = tmp_path / "recording"
    (recording / FRAMES_DIR).mkdir(parents=True)
    ref = FrameRef.of(pong_frame(), episode=0, step=0, field="render")
    (recording / ref.file).symlink_to(secret)
    with pytest.raises(UnsafeGoldenPathError, match="is a symlink"):
        read_frame(recording, ref)


def test_a_symlinked_frames_folder_is_refused(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    recording = tmp_path / "recording"
    recording.mkdir()
    (recording / FRAMES_DIR).symlink_to(elsewhere, target_is_directory=True)
    ref = FrameRef.of(pong_frame(), episode=0, step=0, field="render")
    (elsewhere / Path(ref.file).name).write_bytes(encode_png(pong_frame()))
    with pytest.raises(UnsafeGoldenPathError, match="is a symlink"):
        read_frame(recording, ref)
    with pytest.raises(UnsafeGoldenPathError):
        frame_path(recording, ref.file)


def test_a_missing_frame_is_a_clean_error(tmp_path: Path) -> None:
    ref = FrameRef.of(pong_frame(), episode=0, step=0, field="render")
    with pytest.raises(GoldenFormatError, match="the frame file is missing") as caught:
        read_frame(tmp_path, ref)
    assert str(tmp_path / ref.file) in str(caught.value)


def test_a_folder_in_place_of_a_frame_is_a_clean_error(tmp_path: Path) -> None:
    ref = FrameRef.of(pong_frame(), episode=0, step=0, field="render")
    (tmp_path / ref.file).mkdir(parents=True)
    with pytest.raises(GoldenFormatError, match=r"found a folder|cannot open"):
        read_frame(tmp_path, ref)


def test_a_frame_file_larger_than_its_png_can_be_is_not_read(tmp_path: Path) -> None:
    frame = noise((16, 16))
    ref = stored(tmp_path, frame)
    with open(tmp_path / ref.file, "ab") as handle:
        handle.truncate(10 << 20)  # 10 MiB of zeros after a 16x16 frame
    with pytest.raises(GoldenFormatError, match="more than a PNG of its frame can"):
        read_frame(tmp_path, ref)


def test_a_frame_whose_pixels_changed_is_refused(tmp_path: Path) -> None:
    ref = stored(tmp_path, pong_frame(3))
    (tmp_path / ref.file).write_bytes(encode_png(pong_frame(4)))  # same shape, other pixels
    with pytest.raises(GoldenFormatError, match="do not match the digest"):
        read_frame(tmp_path, ref)


def test_a_frame_of_another_shape_than_its_reference_is_refused(tmp_path: Path) -> None:
    ref = stored(tmp_path, pong_frame(3))
    (tmp_path / ref.file).write_bytes(encode_png(noise((105, 80, 3))))
    with pytest.raises(GoldenFormatError, match="105x80x3 frame, the recording gives 210x160x3"):
        read_frame(tmp_path, ref)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes on this system")
def test_a_named_pipe_in_place_of_a_frame_does_not_hang(tmp_path: Path) -> None:
    ref = FrameRef.of(pong_frame(), episode=0, step=0, field="render")
    (tmp_path / FRAMES_DIR).mkdir()
    os.mkfifo(tmp_path / ref.file)
    with pytest.raises(GoldenFormatError, match="found a folder or other entry"):
        read_frame(tmp_path, ref)


# --- files made to get past the header's checks --------------------------------------------------


def rgb_rows(width: int, height: int) -> bytes:
    return zlib.compress((b"\x00" + bytes(3 * width)) * height)


def test_a_second_header_cannot_change_the_kind_of_image() -> None:
    # Pillow decodes by the last IHDR before the pixels: a palette image behind a gray header.
    indices = np.zeros((8, 8), np.uint8)
    palette = palette_png(indices, bytes([1, 2, 3]))
    data = SIGNATURE + ihdr(24, 8, colour_type=0) + palette[8:]
    with pytest.raises(GoldenFormatError, match="does not decode as its header says"):
        decode_png(data, path="p.png", expected_shape=(8, 24))


def test_a_second_header_claiming_more_pixels_is_refused_before_decoding() -> None:
    data = (
        SIGNATURE
        + ihdr(8, 8)
        + ihdr(1500, 1500)
        + png_chunk(b"IDAT", rgb_rows(1500, 1500))
        + png_chunk(b"IEND", b"")
    )
    tracemalloc.start()
    try:
        with pytest.raises(GoldenFormatError, match="does not decode as its header says"):
            decode_png(data, path="p.png", expected_shape=(8, 8, 3))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1_000_000  # the 6.75 MB of pixels the second header claims were never decoded


@pytest.mark.parametrize(
    "chunk",
    [png_chunk(b"iCCP", b""), png_chunk(b"iCCP", b"name"), png_chunk(b"acTL", b"\x00" * 8)],
    ids=["empty-iCCP", "name-only-iCCP", "acTL-after-IDAT"],
)
def test_a_chunk_pillow_stumbles_on_is_a_clean_error(chunk: bytes) -> None:
    data = (
        SIGNATURE
        + ihdr(8, 8)
        + png_chunk(b"IDAT", rgb_rows(8, 8))
        + chunk
        + png_chunk(b"IEND", b"")
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a suite run with -W error, as many CI jobs are
        with pytest.raises(GoldenFormatError, match="cut short or damaged"):
            decode_png(data, path="p.png", expected_shape=(8, 8, 3))


def test_a_palette_frame_reads_as_a_read_only_array() -> None:
    pixels = decode_png(encode_png(painted(4, (16, 16))), path="p.png")
    assert not pixels.flags.writeable


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_process_never_writes_the_parents_colour_table() -> None:
    # The parent's table, made before the fork; the child encodes other colours into its own.
    encode_png(painted(3, (16, 16), seed=1))
    table = _colour_table()
    before = table[:4096].copy()
    child = os.fork()
    if child == 0:  # pragma: no cover - the child
        try:
            _colour_table()[:4096] = 255
        finally:
            os._exit(0)
    os.waitpid(child, 0)
    np.testing.assert_array_equal(table[:4096], before)

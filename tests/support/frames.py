"""Real frames for the tests of frames, pixel comparisons and images.

``pong_frame`` draws an Atari-like frame with numpy (the colours and layout of
Pong: a brown field between grey walls, two paddles, a ball, the scores);
``cartpole_frames`` renders Gymnasium's CartPole (pygame, headless).
``png_chunks`` lists a PNG file's chunks and ``png_chunk`` makes one, for
hand-made hostile files.
"""

from __future__ import annotations

import zlib
from typing import Any

import gymnasium as gym
import numpy as np

FIELD = (144, 72, 17)
WALL = (236, 236, 236)
LEFT = (213, 130, 74)
RIGHT = (92, 186, 92)
BALL = (236, 236, 236)


def pong_frame(t: int = 0) -> np.ndarray[Any, Any]:
    """A 210x160x3 Pong-like frame at time ``t``: the ball and the paddles move with it."""
    frame = np.zeros((210, 160, 3), np.uint8)
    frame[:] = FIELD
    frame[24:34] = WALL  # the top wall
    frame[194:210] = WALL  # the bottom wall
    for digit, (x, colour) in enumerate(((36, LEFT), (116, RIGHT))):
        # Score digits as blocks: one bar per point, up to 9.
        for bar in range((t // 40 + digit) % 10):
            frame[2:20, x + bar * 2 : x + bar * 2 + 1] = colour
    left_y = 40 + (t * 3) % 130
    right_y = 150 - (t * 2) % 100
    frame[left_y : left_y + 16, 16:20] = LEFT
    frame[right_y : right_y + 16, 140:144] = RIGHT
    ball_y, ball_x = 40 + (t * 5) % 148, 24 + (t * 7) % 112
    frame[ball_y : ball_y + 4, ball_x : ball_x + 2] = BALL
    return frame


def cartpole_frames(count: int, *, seed: int = 0) -> list[np.ndarray[Any, Any]]:
    """``count`` frames of CartPole rendered as ``rgb_array`` (400x600x3), after reset and steps.

    Set ``SDL_VIDEODRIVER=dummy`` first (``monkeypatch.setenv``): pygame then
    needs no display, as on a CI runner.
    """
    env = gym.make("CartPole-v1", render_mode="rgb_array")
    try:
        env.reset(seed=seed)
        frames = [env.render()]
        while len(frames) < count:
            _, _, terminated, truncated, _ = env.step(len(frames) % 2)
            frames.append(env.render())
            if terminated or truncated:
                env.reset(seed=seed + len(frames))
        return [np.asarray(frame) for frame in frames]
    finally:
        env.close()


def png_chunks(data: bytes) -> list[bytes]:
    """The types of the chunks of a PNG file, in order (``[b"IHDR", b"IDAT", b"IEND"]``)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    types, index = [], 8
    while index < len(data):
        length = int.from_bytes(data[index : index + 4], "big")
        types.append(data[index + 4 : index + 8])
        index += 12 + length
    return types


def png_chunk(kind: bytes, body: bytes) -> bytes:
    """One PNG chunk, with a valid CRC."""
    return len(body).to_bytes(4, "big") + kind + body + zlib.crc32(kind + body).to_bytes(4, "big")

"""Real frames for the tests of frames, pixel comparisons and images.

``pong_frame`` draws an Atari-like frame with numpy (the colours and layout of
Pong: a brown field between grey walls, two paddles, a ball, the scores);
``cartpole_frames`` renders Gymnasium's CartPole (pygame, headless).
``png_chunks`` lists a PNG file's chunks and ``png_chunk`` makes one, for
hand-made hostile files.
"""

from __future__ import annotations

import inspect
import zlib
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

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


def needs_renderer() -> None:
    """Skip the test where pygame, which Gymnasium's classic envs render with, is not installed."""
    pytest.importorskip(
        "pygame",
        reason='pygame draws Gymnasium\'s frames and is not installed: pip install -e ".[envs]"',
    )


def cartpole_frames(count: int, *, seed: int = 0) -> list[np.ndarray[Any, Any]]:
    """``count`` frames of CartPole rendered as ``rgb_array`` (400x600x3), after reset and steps.

    Set ``SDL_VIDEODRIVER=dummy`` first (``monkeypatch.setenv``): pygame then
    needs no display, as on a CI runner. Skips the test where pygame is missing.
    """
    needs_renderer()
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


class PaintedEnv(gym.Env[Any, int]):
    """A square crossing a 48x64 field, drawn with numpy: frames without pygame, fast.

    ``render()`` gives the 48x64x3 frame (3,072 pixels) and the observation
    is the square's position; with ``image_obs`` the observation is
    ``{"image": frame, "position": ...}`` and info holds a 16x16 gray
    ``"minimap"``.

    Args:
        render_mode: ``"rgb_array"``, or None (the env then renders nothing).
        patch: ``(from_step, rows, cols, value)``: from that step on, every
            frame gets ``value`` added (wrapping) in ``rows`` x ``cols``, as
            a changed renderer would draw it.
        image_obs: Whether the observation holds the frame.
        length: Steps until the episode terminates.
    """

    metadata = {"render_modes": ["rgb_array"], "render_fps": 30}  # noqa: RUF012

    def __init__(
        self,
        render_mode: str | None = "rgb_array",
        *,
        patch: tuple[int, slice, slice, int] | None = None,
        image_obs: bool = False,
        length: int = 25,
    ) -> None:
        self.render_mode = render_mode
        self.patch = patch
        self.image_obs = image_obs
        self.length = length
        self.action_space = gym.spaces.Discrete(2)
        position = gym.spaces.Box(0, 63, (2,), np.int64)
        self.observation_space: gym.Space[Any] = (
            gym.spaces.Dict(
                {"image": gym.spaces.Box(0, 255, (48, 64, 3), np.uint8), "position": position}
            )
            if image_obs
            else position
        )
        self.t = 0
        self.position = np.zeros(2, np.int64)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict[str, Any]]:
        super().reset(seed=seed)
        self.t = 0
        self.position = self.np_random.integers(0, 40, size=2)
        return self._obs(), self._info()

    def step(self, action: int) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        self.t += 1
        self.position = (self.position + np.array((1, 2 if action else 1))) % (40, 56)
        return self._obs(), 1.0, self.t >= self.length, False, self._info()

    def render(self) -> Any:
        return self.draw() if self.render_mode == "rgb_array" else None

    def draw(self) -> np.ndarray[Any, Any]:
        """The frame of the env as it is now."""
        frame = np.empty((48, 64, 3), np.uint8)
        frame[:] = FIELD
        frame[::8, :] = WALL  # a grid, so that there is something to see
        row, col = (int(v) for v in self.position)
        frame[row : row + 8, col : col + 8] = LEFT
        if self.patch is not None and self.t >= self.patch[0]:
            _, rows, cols, value = self.patch
            frame[rows, cols] += np.uint8(value)
        return frame

    def _obs(self) -> Any:
        if not self.image_obs:
            return self.position.copy()
        return {"image": self.draw(), "position": self.position.copy()}

    def _info(self) -> dict[str, Any]:
        if not self.image_obs:
            return {}
        minimap = np.zeros((16, 16), np.uint8)
        minimap[int(self.position[0]) // 4, int(self.position[1]) // 4] = 255
        return {"minimap": minimap}


# A pytester test file that records PaintedEnv: PATCH changes its frames from a
# step on (a renderer that changed), MARKER and KWARGS set the goldens' options.
PAINTED_TEST = """
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

FIELD, WALL, LEFT = <colours>
PATCH = <patch>

<painted_env>

<marker>
def test_painted(record_trajectory):
    env = record_trajectory(PaintedEnv(patch=PATCH<env_kwargs>), "Painted"<kwargs>)
    env.reset(seed=0)
    for t in range(<steps>):
        env.step(t % 2)
"""


def painted_test(
    *,
    patch: str = "None",
    marker: str = "",
    kwargs: str = ", render=True",
    env_kwargs: str = "",
    steps: int = 20,
) -> str:
    """The source of a test that records :class:`PaintedEnv` (see ``PAINTED_TEST``)."""
    knobs = {
        "<colours>": repr((FIELD, WALL, LEFT)),
        "<patch>": patch,
        "<marker>": marker,
        "<env_kwargs>": env_kwargs,
        "<kwargs>": kwargs,
        "<steps>": str(steps),
        "<painted_env>": inspect.getsource(PaintedEnv),
    }
    source = PAINTED_TEST
    for knob, value in knobs.items():
        source = source.replace(knob, value)
    return source

"""Golden frames: what env.render() draws, and image observations, kept as PNG files.

Rendering runs headless: pygame (CartPole) needs no display for rgb_array
frames; CI sets SDL_VIDEODRIVER=dummy (and MUJOCO_GL=egl for MuJoCo) all the same.
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces


# CartPole's pole and cart are drawn antialiased by pygame: another pygame or
# SDL may shade a few edge pixels otherwise. A channel may be off by 16, and
# 0.1% of the 240,000 pixels may differ more.
@pytest.mark.goldens(pixel_atol=16, max_diff_pixel_ratio=0.001)
def test_cartpole_frames(record_trajectory):
    pytest.importorskip("pygame", reason="CartPole draws with pygame: pip install pygame-ce")
    # A frame at the reset, every 10th step and the last: frames/e00000_t000010_render.png, ...
    env = record_trajectory(gym.make("CartPole-v1", render_mode="rgb_array"), render=10)
    obs, _ = env.reset(seed=0)
    for _ in range(30):
        obs, _, terminated, truncated, _ = env.step(int(obs[2] + 0.5 * obs[3] > 0))
        if terminated or truncated:
            break


class Bouncer(gym.Env):
    """A ball bouncing in a 48x64 box, drawn with numpy: the observation is the picture."""

    observation_space = spaces.Box(0, 255, (48, 64, 3), dtype=np.uint8)
    action_space = spaces.Discrete(3)  # nudge the ball up, not at all, or down

    def __init__(self, render_mode="rgb_array"):
        self.render_mode = render_mode

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.position = self.np_random.uniform((4, 4), (40, 56))
        self.velocity = self.np_random.uniform(-2, 2, size=2)
        return self.render(), {"speed": float(np.hypot(*self.velocity))}

    def step(self, action):
        self.velocity[0] += action - 1
        self.position += self.velocity
        for axis, top in enumerate((42, 58)):
            if not 0 <= self.position[axis] <= top:
                self.velocity[axis] *= -1
                self.position[axis] = np.clip(self.position[axis], 0, top)
        return self.render(), 0.0, False, False, {"speed": float(np.hypot(*self.velocity))}

    def render(self):
        frame = np.full((48, 64, 3), (20, 24, 48), dtype=np.uint8)
        frame[:, ::16] = (60, 60, 90)  # a grid behind the ball
        row, col = self.position.astype(int)
        frame[row : row + 6, col : col + 6] = (250, 200, 40)
        return frame


def test_bouncer_frames(record_trajectory):
    # The image observations are frames too (images="frames"), beside the rendered ones.
    env = record_trajectory(Bouncer(), "Bouncer", images="frames", render=5)
    env.action_space.seed(1)
    env.reset(seed=1)
    for _ in range(20):
        env.step(env.action_space.sample())

"""Golden trajectories of a vector env and of an env with image observations."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces


@pytest.mark.parametrize("mode", ["NextStep", "SameStep"])
def test_cartpole_vector(record_trajectory, mode):
    # Each sub-env's episodes are recorded in a folder of its own: CartPole-v1/env_0/, ...
    envs = record_trajectory(
        gym.make_vec(
            "CartPole-v1",
            num_envs=2,
            vectorization_mode="sync",
            vector_kwargs={"autoreset_mode": gym.vector.AutoresetMode(mode)},
        )
    )
    envs.action_space.seed(0)
    envs.reset(seed=0)
    for _ in range(40):
        envs.step(envs.action_space.sample())


class Checkerboard(gym.Env):
    """A 64x64 RGB frame with a moving square: an image env without a renderer."""

    observation_space = spaces.Dict(
        {
            "image": spaces.Box(0, 255, (64, 64, 3), dtype=np.uint8),
            "position": spaces.Box(0, 63, (2,), dtype=np.int64),
        }
    )
    action_space = spaces.Discrete(4)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.position = self.np_random.integers(0, 56, size=2)
        return self._obs(), {"action_mask": np.ones(4, dtype=np.int8)}

    def step(self, action):
        moves = np.array([[0, 1], [1, 0], [0, -1], [-1, 0]])
        self.position = np.clip(self.position + moves[action], 0, 56)
        return self._obs(), float(self.position.sum()) / 112.0, False, False, {}

    def _obs(self):
        image = np.zeros((64, 64, 3), dtype=np.uint8)
        image[::8, ::8] = 40  # a faint grid
        row, column = self.position
        image[row : row + 8, column : column + 8] = (255, 128, 0)
        return {"image": image, "position": self.position.copy()}


def test_checkerboard_images(record_trajectory):
    # The 12,288-element frames are stored as summaries (dtype, shape, digest, statistics).
    env = record_trajectory(Checkerboard(), "Checkerboard")
    env.action_space.seed(3)
    env.reset(seed=3)
    for _ in range(30):
        env.step(env.action_space.sample())

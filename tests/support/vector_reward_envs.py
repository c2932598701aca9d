"""Registers an env whose reward is a vector, as an env package of one's own would.

Importing this module registers ``VectorReward/Chain-v0``:
:class:`tests.support.envs.MultiObjectiveEnv`, a chain walk rewarded with
``[distance, energy]``. ``gym-goldens audit --import
tests.support.vector_reward_envs`` and the audit's fresh process import it.
"""

from __future__ import annotations

from typing import Final

import gymnasium as gym

CHAIN: Final = "VectorReward/Chain-v0"
"""The id of the two-objective chain walk."""

if CHAIN not in gym.registry:
    gym.register(id=CHAIN, entry_point="tests.support.envs:MultiObjectiveEnv")

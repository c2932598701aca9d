"""Header descriptions of spaces and vector envs."""

from __future__ import annotations

import importlib.metadata
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces

from gym_goldens.format.header import (
    INFORMATIONAL_FIELDS,
    describe_space,
    describe_vector_env,
    recorded_versions,
    software_versions,
    versions_change,
)


def test_every_space_is_described() -> None:
    space = spaces.Dict(
        {
            "box": spaces.Box(-1.0, 1.0, (2,), dtype=np.float32),
            "discrete": spaces.Discrete(3, start=-1),
            "multi_discrete": spaces.MultiDiscrete([2, 3]),
            "multi_binary": spaces.MultiBinary(4),
            "text": spaces.Text(5, min_length=1, charset="ba"),
            "tuple": spaces.Tuple((spaces.Discrete(2),)),
            "sequence": spaces.Sequence(spaces.Discrete(2), stack=True),
            "graph": spaces.Graph(spaces.Box(0, 1, (1,)), None),
            "one_of": spaces.OneOf((spaces.Discrete(2), spaces.Discrete(3))),
        }
    )
    described = describe_space(space)["spaces"]
    assert {key: item["type"] for key, item in described.items()} == {
        "box": "Box",
        "discrete": "Discrete",
        "multi_discrete": "MultiDiscrete",
        "multi_binary": "MultiBinary",
        "text": "Text",
        "tuple": "Tuple",
        "sequence": "Sequence",
        "graph": "Graph",
        "one_of": "OneOf",
    }
    assert described["discrete"]["start"] == -1
    assert described["text"]["charset"] == "ab"
    assert described["sequence"]["stack"] is True
    assert "edge_space" not in described["graph"]
    assert described["one_of"]["spaces"][1]["n"] == 3


def test_uniform_image_bounds_are_one_number() -> None:
    image = describe_space(spaces.Box(0, 255, (210, 160, 3), dtype=np.uint8))
    assert (image["low"], image["high"]) == (0, 255)
    small = describe_space(spaces.Box(-2.0, 2.0, (1,), dtype=np.float32))
    assert small["low"].tolist() == [-2.0]  # as format 1.0 wrote it


def test_vector_env_description() -> None:
    envs = gym.make_vec(
        "CartPole-v1",
        num_envs=3,
        vectorization_mode="sync",
        vector_kwargs={"autoreset_mode": gym.vector.AutoresetMode.SAME_STEP},
    )
    described = describe_vector_env(envs)
    assert described["vector"] == {"num_envs": 3, "autoreset_mode": "SameStep"}
    assert described["vectorization_mode"] == "sync"
    assert described["observation_space"]["shape"] == [4]
    assert described["env"]["id"] == "CartPole-v1"
    assert "vectorization_mode" in INFORMATIONAL_FIELDS
    assert "vector" not in INFORMATIONAL_FIELDS
    envs.close()


class _SuiteEnv(gym.Env[np.ndarray, int]):
    """An env of a test suite: its module belongs to no installed distribution."""

    observation_space = spaces.Box(-1.0, 1.0, (1,), dtype=np.float32)
    action_space = spaces.Discrete(2)


def test_versions_name_the_software_that_shapes_a_recording() -> None:
    versions = recorded_versions(gym.make("CartPole-v1"))
    assert set(versions) >= {"python", "gymnasium", "numpy", "pytest-gym-goldens"}
    assert versions["gymnasium"] == importlib.metadata.version("gymnasium")
    # Distributions named for variants come in too; unknown names and platform facts do not.
    extra = recorded_versions(gym.make("CartPole-v1"), ["orjson", "machine", "no-such-dist"])
    assert extra == {**versions, "orjson": importlib.metadata.version("orjson")}


def test_an_env_of_a_test_suite_adds_no_version() -> None:
    assert recorded_versions(_SuiteEnv()) == software_versions()


def test_the_distribution_that_provides_a_third_party_env_is_named() -> None:
    highway_env = pytest.importorskip(
        "highway_env", reason="highway-env is not installed: pip install -e '.[envs]'"
    )
    gym.register_envs(highway_env)
    versions = recorded_versions(gym.make("highway-fast-v0"))
    assert versions["highway-env"] == importlib.metadata.version("highway-env")


def test_a_classic_control_header_names_no_mujoco() -> None:
    # Installed or not, MuJoCo shapes no Pendulum: its version is no part of the header.
    assert "mujoco" not in recorded_versions(gym.make("Pendulum-v1"))


def test_a_mujoco_env_names_mujoco() -> None:
    pytest.importorskip("mujoco", reason="mujoco is not installed: pip install -e '.[envs]'")
    versions = recorded_versions(gym.make("Hopper-v5"))
    assert versions["mujoco"] == importlib.metadata.version("mujoco")


_RENDERED_ENV = """
import os

os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
import gymnasium as gym
import numpy as np
import pygame
from gymnasium import spaces


class RenderedEnv(gym.Env):
    observation_space = spaces.Box(-1.0, 1.0, (1,), dtype=np.float32)
    action_space = spaces.Discrete(2)
"""


def test_the_distributions_an_env_module_imports_are_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The module of an env (here of a test suite, of no distribution) imports
    # pygame: whichever distribution installed pygame's files (pygame or
    # pygame-ce, which CarRacing switched to) is named, with its version.
    pytest.importorskip("pygame", reason="pygame is not installed")
    (tmp_path / "rendered_env.py").write_text(_RENDERED_ENV)
    monkeypatch.syspath_prepend(str(tmp_path))
    import rendered_env  # type: ignore[import-not-found]

    versions = recorded_versions(rendered_env.RenderedEnv())
    named = {"pygame", "pygame-ce"} & set(versions)
    assert named
    assert all(versions[name] == importlib.metadata.version(name) for name in named)
    assert set(versions) - named == set(software_versions())


def test_versions_named_on_one_side_only_are_added_or_removed() -> None:
    golden = {"python": "3.11.7", "gymnasium": "1.1.1", "pygame": "2.6.1", "numpy": "2.3.0"}
    actual = {"python": "3.11.7", "gymnasium": "1.4.0", "pygame-ce": "2.5.8", "numpy": "2.3.0"}
    change = versions_change(golden, actual)
    assert change.changed == (("gymnasium", "1.1.1", "1.4.0"),)
    assert change.added == (("pygame-ce", "2.5.8"),)
    assert change.removed == (("pygame", "2.6.1"),)
    assert not versions_change(golden, dict(golden))

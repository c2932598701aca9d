"""The planted env package (``planted_envs.py``) put where a test can import it, and taken away."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Final

import gymnasium as gym

SOURCE: Final = Path(__file__).with_name("planted_envs.py")
"""The package's source, copied into each test's folder."""

NAMESPACES: Final = ("Sound", "Planted", "Loading", "Dying")
"""The namespaces of the ids it registers."""


def install(folder: Path) -> Path:
    """Copy the package into ``folder`` as ``planted_envs.py``."""
    target = folder / "planted_envs.py"
    shutil.copyfile(SOURCE, target)
    return target


def forget() -> None:
    """Unregister the package's ids and drop the module, as if it had never been imported.

    Gymnasium's registry outlives a test: without this, ids of one test's
    package would be seen by the next, and importing the package again would
    warn that each id is overridden.
    """
    for env_id in [env_id for env_id in gym.registry if env_id.split("/")[0] in NAMESPACES]:
        del gym.registry[env_id]
    sys.modules.pop("planted_envs", None)

"""Golden variants: one golden per software version or platform.

Some envs give slightly different numbers on another CPU or library version
(MuJoCo across versions, AVX-512, float summation order). Rather than loosen
the tolerance, a test can keep one golden per value of the facts that matter::

    @pytest.mark.goldens(variant_by=["mujoco", "machine"])

The variant golden lives in a folder inside the plain golden folder, named
after the facts: ``<golden>/mujoco=3.1.2,machine=x86_64/trajectory.jsonl``.
When no golden exists for the current variant, the plain golden is used, if
there is one. ``--update-goldens`` writes the variant golden, unless the plain
golden exists and already matches, so variants appear only where they differ.

Facts: ``python``, ``python_implementation``, ``system`` and ``machine`` (as
in every recording's header), and the version of any installed distribution,
such as ``gymnasium``, ``numpy`` or ``mujoco``.
"""

from __future__ import annotations

import dataclasses
import importlib.metadata
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from gym_goldens.errors import GoldenFormatError
from gym_goldens.format.header import platform_facts, software_versions
from gym_goldens.format.layout import variant_dir
from gym_goldens.format.reader import has_episodes

__all__ = ["GoldenChoice", "check_variant_by", "choose_golden", "variant_facts", "variant_label"]


def variant_facts(names: Sequence[str]) -> dict[str, str]:
    """The value of each named fact on this machine, in the order given.

    Raises:
        ValueError: A name is neither a platform fact nor an installed distribution.
    """
    known = {**software_versions(), **platform_facts()}
    facts: dict[str, str] = {}
    for name in names:
        value = known.get(name)
        if value is None:
            try:
                value = importlib.metadata.version(name)
            except importlib.metadata.PackageNotFoundError:
                raise ValueError(
                    f"@pytest.mark.goldens(variant_by=...) names {name!r}, which is neither a "
                    f"platform fact ({', '.join(sorted(known))}) nor an installed distribution; "
                    "check the spelling"
                ) from None
        facts[name] = value
    return facts


def check_variant_by(value: Any) -> tuple[str, ...]:
    """Validate the marker's ``variant_by``: a fact name or a list of them.

    Raises:
        TypeError: It is not a string or a list of non-empty strings.
    """
    names = [value] if isinstance(value, str) else value
    if not isinstance(names, (list, tuple)) or not all(isinstance(n, str) and n for n in names):
        raise TypeError(
            "@pytest.mark.goldens(variant_by=...) takes a list of fact names, "
            f'such as ["mujoco", "machine"], got {value!r}'
        )
    return tuple(dict.fromkeys(names))


def variant_label(facts: dict[str, str]) -> str:
    """The variant as text and folder name: ``mujoco=3.1.2,machine=x86_64``."""
    return ",".join(f"{name}={value}" for name, value in facts.items())


@dataclasses.dataclass(frozen=True)
class GoldenChoice:
    """The golden a recording is compared with.

    Attributes:
        path: The golden folder compared with (or to be created).
        variant_path: The folder of this machine's variant; where updates go.
        label: The variant, ``mujoco=3.1.2,machine=x86_64``.
        fallback: Whether ``path`` is the plain golden, for lack of a variant one.
    """

    path: Path
    variant_path: Path
    label: str
    fallback: bool

    def describe(self, display: Any = str) -> str:
        """One line for failure messages."""
        if self.fallback:
            return (
                f"golden variant: {self.label} has no golden of its own, so the plain golden "
                f"was used (create the variant with --update-goldens)"
            )
        return f"golden variant: {self.label} ({display(self.variant_path)})"


def choose_golden(plain: Path, names: Sequence[str]) -> GoldenChoice:
    """The golden for this machine: the variant if recorded, else the plain one.

    Args:
        plain: The plain golden folder (from :func:`gym_goldens.format.layout.golden_dir_for`).
        names: The facts that name the variant.
    """
    label = variant_label(variant_facts(names))
    variant = variant_dir(plain, label)
    if not _has_golden(variant) and _has_golden(plain):
        return GoldenChoice(plain, variant, label, fallback=True)
    return GoldenChoice(variant, variant, label, fallback=False)


def _has_golden(folder: Path) -> bool:
    """Whether ``folder`` holds a recording (of a single or a vector env)."""
    try:
        return has_episodes(folder)
    except GoldenFormatError:
        # A damaged golden is still a golden: the check reports what is wrong.
        return True

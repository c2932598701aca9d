"""Golden variants: one golden per software version or platform.

Some envs give slightly different numbers on another CPU or library version
(MuJoCo across versions, AVX-512, float summation order). Rather than loosen
the tolerance, a test can keep one golden per value of the facts that matter::

    @pytest.mark.goldens(variant_by=["mujoco", "machine"])

The first ``--update-goldens`` writes the plain golden, which serves every
machine. A variant golden lives in a folder inside the plain golden folder,
named after the facts: ``<golden>/mujoco=3.1.2,machine=x86_64/trajectory.jsonl``,
and appears only where a machine's recording differs beyond tolerance from
the plain golden (:func:`update_target`). A recording is compared with its
machine's variant golden if there is one, else with the plain golden.

Facts: ``python``, ``python_implementation``, ``system`` and ``machine`` (as
in every recording's header), and the version of any installed distribution,
such as ``gymnasium``, ``numpy`` or ``mujoco``.
"""

from __future__ import annotations

import dataclasses
import importlib.metadata
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final, Literal

from gym_goldens.errors import GoldenFormatError, UnsafeGoldenPathError
from gym_goldens.format.header import platform_facts, software_versions
from gym_goldens.format.layout import variant_dir
from gym_goldens.format.paths import ensure_inside, resolve_golden
from gym_goldens.present.text import one_line

__all__ = [
    "GoldenChoice",
    "check_variant_by",
    "choose_golden",
    "update_target",
    "variant_facts",
    "variant_label",
]


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


# How many variant folders a message lists before "and N more".
_LISTED: Final = 12


@dataclasses.dataclass(frozen=True)
class GoldenChoice:
    """The golden a recording is compared with.

    Attributes:
        path: The golden folder compared with (or to be created).
        plain_path: The plain golden folder.
        variant_path: The folder of this machine's variant golden.
        label: This machine's variant, ``mujoco=3.1.2,machine=x86_64``; empty
            for a test without variants.
        fallback: Whether ``path`` is the plain golden, this machine's variant
            having no golden of its own.
        variants: The variant goldens that exist (their folder names).
    """

    path: Path
    plain_path: Path
    variant_path: Path
    label: str = ""
    fallback: bool = False
    variants: tuple[str, ...] = ()

    def describe(self, display: Any = str) -> str:
        """One line for failure messages: the golden used, and the variants there are."""
        # Folder names as a pull request left them: escaped, and the first few.
        names = ", ".join(one_line(name) for name in self.variants[:_LISTED]) or "none"
        more = len(self.variants) - _LISTED
        others = names + (f" and {more:,} more" if more > 0 else "")
        if not self.fallback:
            return (
                f"golden variant: {self.label} ({display(self.variant_path)}; variants: {others})"
            )
        return (
            f"golden variant: {self.label} has no golden of its own, so the plain golden serves "
            f"(variants: {others})"
        )


def choose_golden(goldens_dir: Path, plain: Path, names: Sequence[str]) -> GoldenChoice:
    """The golden for this machine: its variant's if recorded, else the plain one.

    Only folders inside ``goldens_dir`` are looked into.

    Args:
        goldens_dir: The goldens root.
        plain: The plain golden folder (from :func:`gym_goldens.format.layout.golden_dir_for`).
        names: The facts that name the variant.
    """
    label = variant_label(variant_facts(names))
    variant = variant_dir(plain, label)
    variants = tuple(
        entry.name
        for entry in sorted(_folders(goldens_dir, plain))
        if "=" in entry.name and _has_golden(goldens_dir, entry)
    )
    if _has_golden(goldens_dir, variant):
        return GoldenChoice(variant, plain, variant, label, fallback=False, variants=variants)
    return GoldenChoice(plain, plain, variant, label, fallback=True, variants=variants)


UpdateTarget = Literal["plain", "variant", "kept"]


def update_target(
    choice: GoldenChoice, names: Sequence[str], plain_header: dict[str, Any] | None, *, serves: bool
) -> UpdateTarget:
    """Where ``--update-goldens`` writes the recording of a test kept per variant.

    - This machine's variant golden, when it has one;
    - else the plain golden, when there is none yet (the first update), or
      when the plain golden was recorded on this very variant (its own
      results changed);
    - else nowhere when the plain golden still serves (``serves``: the
      recording matches it within tolerance), and a new variant golden when
      it does not.

    Args:
        choice: The golden chosen for this machine.
        names: The facts that name the variant.
        plain_header: The header of the plain golden's first episode (None
            when there is no plain golden).
        serves: Whether the recording matches the plain golden within tolerance.
    """
    if not choice.fallback:
        return "variant"
    if plain_header is None:
        return "plain"
    if serves:
        return "kept"
    recorded = {**(plain_header.get("versions") or {}), **(plain_header.get("platform") or {})}
    here = variant_facts(names)
    # A fact the plain golden's header does not name (an older golden) does
    # not make it another machine's.
    if all(recorded.get(name, value) == value for name, value in here.items()):
        return "plain"
    return "variant"


def _folders(goldens_dir: Path, plain: Path) -> list[Path]:
    try:
        ensure_inside(goldens_dir, plain)
    except (GoldenFormatError, UnsafeGoldenPathError):
        return []  # the check refuses it, with the reason
    if not plain.is_dir():
        return []
    return [entry for entry in plain.iterdir() if entry.is_dir() and not entry.is_symlink()]


def _has_golden(goldens_dir: Path, folder: Path) -> bool:
    """Whether ``folder`` holds a recording (of a single or a vector env)."""
    try:
        return resolve_golden(goldens_dir, folder).recorded
    except (GoldenFormatError, UnsafeGoldenPathError):
        # A damaged golden, or one that leads out of the goldens dir, is still
        # a golden: the check reports what is wrong with it.
        return True

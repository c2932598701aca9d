"""PettingZoo's envs, selected by family and name: :func:`pettingzoo_envs`.

PettingZoo keeps each env in a module of its family's package, named with its
version: ``pettingzoo.classic.rps_v2``, ``pettingzoo.butterfly.pistonball_v6``.
An env is named here as PettingZoo's own tests name it, ``family/module``
(``classic/rps_v2``), and patterns are globs on that name.

The families are listed without being imported (their folders are read), and
only the env modules of the families a pattern names are imported, one by
one. ``pettingzoo.utils.all_modules`` is never imported: it imports every
family, and so needs every extra. Each env module is sorted as
:func:`~gym_goldens.audit.registry.registered_envs` sorts ids:

- it imports: a ``pytest.param`` of the module;
- an optional dependency is missing (a family's extra, such as ``pymunk``
  for ``butterfly``, or OpenSpiel for Hanabi): a param with a skip mark
  and the reason, which names the extra to install;
- any other error: a param whose module raises it again when the test uses
  it, so that the test fails, never skips.
"""

from __future__ import annotations

import fnmatch
import importlib
import importlib.util
import pkgutil
import re
import warnings
from collections.abc import Iterable, Sequence
from typing import Any, Final

import pytest

from gym_goldens.audit.registry import (
    NoRegisteredEnvsError,
    RegisteredEnv,
    RegisteredEnvs,
    Selection,
    missing_dependency,
)

__all__ = ["UnimportableEnv", "make_pettingzoo_env", "pettingzoo_envs", "select_pettingzoo"]

_INSTALL: Final = "pip install 'pytest-gym-goldens[pettingzoo]'"
# PettingZoo's own name for an env module: a name and a version.
_ENV_MODULE: Final = re.compile(r"[a-z][a-z0-9_]*_v[0-9]+")
# Dependencies an env module does not import, but its env needs when it is
# made: the module a test would miss, and how to install it (PettingZoo's
# own all_modules checks these the same way).
_MADE_NEEDS: Final = {"hanabi": ("pyspiel", "pip install open_spiel (Python 3.11 or newer)")}


class UnimportableEnv:
    """The value of an env module that fails to import: using it raises the import error.

    Attributes:
        name: The env's name, ``family/module``.
        error: The error its import raised.
    """

    def __init__(self, name: str, error: BaseException) -> None:
        self.name = name
        self.error = error

    def __getattr__(self, attribute: str) -> Any:
        raise ImportError(
            f"PettingZoo's env {self.name} failed to import: "
            f"{type(self.error).__name__}: {self.error}"
        ) from self.error

    def __repr__(self) -> str:
        return f"UnimportableEnv({self.name!r})"


def pettingzoo_envs(*patterns: str, exclude: Iterable[str] = ()) -> RegisteredEnvs:
    """PettingZoo's env modules that match, as ``pytest.param`` values for parametrize.

    Each value is the env's module, whose ``env()`` and (for most)
    ``parallel_env()`` make the env; its test id is its name,
    ``family/module``. Patterns are case-sensitive globs on that name.

    Args:
        *patterns: Globs such as ``"classic/*"`` or ``"butterfly/pistonball_v6"``;
            none selects every env of every family.
        exclude: Globs of names to leave out.

    Returns:
        A list of ``pytest.param`` values, sorted by name: an env whose
        family's extra is missing is skipped with the reason.

    Raises:
        NoRegisteredEnvsError: No env matches: a parametrization over
            nothing would make the goldens of the envs stale.
        pytest.skip.Exception: PettingZoo is not installed: the test module
            is skipped, with the reason.

    Example:
        A golden test of every classic game::

            @pytest.mark.parametrize("env_module", pettingzoo_envs("classic/*"))
            def test_classic(record_trajectory, env_module):
                rollout(record_trajectory(env_module.env()), seed=0, steps=100)
    """
    __tracebackhide__ = True
    pytest.importorskip("pettingzoo", reason=f"pettingzoo is not installed: {_INSTALL}")
    return RegisteredEnvs([_param(name) for name in _matching(patterns, exclude)], {})


def select_pettingzoo(*patterns: str, exclude: Iterable[str] = ()) -> Selection:
    """PettingZoo's envs that match, sorted as ``gym-goldens audit`` takes them.

    Each env's module is imported: ``ok``, ``skip`` (an extra is missing,
    with the reason) or ``error`` (any other import error), as
    :func:`pettingzoo_envs` sorts them; its ``id`` is its name, ``family/module``.

    Raises:
        NoRegisteredEnvsError: PettingZoo is not installed, or no env matches.
    """
    if importlib.util.find_spec("pettingzoo") is None:
        raise NoRegisteredEnvsError(f"pettingzoo is not installed: {_INSTALL}")
    envs = []
    for name in _matching(patterns, exclude):
        _, env = _import_env(name)
        envs.append(env)
    return Selection(envs=tuple(envs), left_out=())


def make_pettingzoo_env(name: str) -> Any:
    """A new env of ``name`` (``classic/rps_v2``): its module's ``env()``, the AEC env."""
    return _env_module(name).env()


def _env_module(name: str) -> Any:
    family, _, module_name = name.partition("/")
    with warnings.catch_warnings():
        # PettingZoo 1.27 deprecates importing env modules in favour of its registry.
        warnings.simplefilter("ignore", DeprecationWarning)
        return importlib.import_module(f"pettingzoo.{family}.{module_name}")


def _matching(patterns: Sequence[str], exclude: Iterable[str]) -> list[str]:
    """The names that match a pattern and no exclude pattern, sorted; at least one."""
    excluded = [exclude] if isinstance(exclude, str) else list(exclude)
    wanted = list(patterns) or ["*"]
    names = sorted(
        name
        for family in _families()
        if any(fnmatch.fnmatchcase(family, p.partition("/")[0]) for p in wanted)
        for name in _env_names(family)
        if any(fnmatch.fnmatchcase(name, p) for p in wanted)
        and not any(fnmatch.fnmatchcase(name, p) for p in excluded)
    )
    if not names:
        raise NoRegisteredEnvsError(_no_match(wanted, excluded))
    return names


def _families() -> list[str]:
    """PettingZoo's subpackages, read from its folder; none of them is imported."""
    import pettingzoo  # an optional extra: imported once a test module asks for its envs

    return sorted(
        module.name
        for module in pkgutil.iter_modules(pettingzoo.__path__)
        if module.ispkg and module.name not in ("utils", "test", "env_registry")
    )


def _env_names(family: str) -> list[str]:
    """The env modules of a family, as ``family/module``, read from its folder."""
    spec = importlib.util.find_spec(f"pettingzoo.{family}")
    folders = spec.submodule_search_locations if spec is not None else None
    if not folders:
        return []
    return [
        f"{family}/{module.name}"
        for module in pkgutil.iter_modules(folders)
        if not module.ispkg and _ENV_MODULE.fullmatch(module.name)
    ]


def _param(name: str) -> Any:
    """The param of one env module: the module, or a skip with the reason, or its error."""
    module, env = _import_env(name)
    if env.kind == "skip":
        return pytest.param(name, id=name, marks=[pytest.mark.skip(reason=env.reason or "")])
    return pytest.param(module, id=name)


def _import_env(name: str) -> tuple[Any, RegisteredEnv]:
    """An env's module imported (or what stands for it) and how it sorts: ok, skip or error."""
    family, _, module_name = name.partition("/")
    where = f"pettingzoo.{family}.{module_name}"
    try:
        module = _env_module(name)
    except Exception as error:
        reason = missing_dependency(error)
        if reason is None:
            broken = UnimportableEnv(name, error)
            return broken, RegisteredEnv(name, where, "error", f"{type(error).__name__}: {error}")
        return None, RegisteredEnv(
            name, where, "skip", f"{reason}; pip install 'pettingzoo[{family}]'"
        )
    reason = _missing_when_made(module_name)
    if reason is not None:
        return None, RegisteredEnv(name, where, "skip", reason)
    return module, RegisteredEnv(name, where, "ok")


def _missing_when_made(module_name: str) -> str | None:
    needs = _MADE_NEEDS.get(module_name.rpartition("_v")[0])
    if needs is None or importlib.util.find_spec(needs[0]) is not None:
        return None
    return f"{needs[0]} is not installed; {needs[1]}"


def _no_match(patterns: Sequence[str], excluded: Sequence[str]) -> str:
    counts = {family: len(_env_names(family)) for family in _families()}
    families = ", ".join(f"{family} ({count})" for family, count in counts.items() if count)
    what = ", ".join(repr(p) for p in patterns)
    if excluded:
        what += f" and no exclude pattern ({', '.join(repr(p) for p in excluded)})"
    return (
        f"no PettingZoo env matches {what}; envs are named family/module, such as "
        f"classic/rps_v2, and selected by globs, such as classic/*; the families with envs, "
        f"and how many: {families}"
    )

"""The registered envs of a package, selected by glob: :func:`registered_envs`.

Gymnasium 1.x registers an installed package's envs only when the package is
imported, so the modules named are imported first. Then each id of the
registry that matches is sorted into one of four kinds, by loading its entry
point (the module and class, or the callable, that ``gym.make`` would call)
without making an env:

- ``ok``: the entry point loads.
- ``skip``: an optional dependency is missing (gymnasium's
  ``DependencyNotInstalled``, or a ``ModuleNotFoundError`` for a module that
  is not installed at all).
- ``left out``: a deprecated or legacy id whose entry point cannot load:
  gymnasium's placeholders for ids it no longer provides (``_raise_...``,
  such as the MuJoCo ``-v2``/``-v3`` ids and the gym compatibility shims),
  an id that is out of date (a newer version is registered) and lacks a
  dependency, and an id registered for ``gymnasium.make_vec`` only.
- ``error``: anything else; the package is broken, and a test of the id
  must fail (``gym.make`` raises the same error again), never be skipped.

An env may check a dependency only when it is made; a test of
:func:`registered_envs` that meets a missing dependency is skipped then
(:func:`skip_missing_dependency`, called by the plugin).

:func:`registered_envs` turns them into ``pytest.param`` values, and
``gym-goldens audit`` (:mod:`gym_goldens.audit.survey`) audits them.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import importlib
import importlib.util
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Final, Literal

import gymnasium as gym
import pytest
from _pytest.mark.structures import ParameterSet
from gymnasium.envs.registration import EnvSpec, load_env_creator

from gym_goldens.errors import GoldensError

__all__ = [
    "NoRegisteredEnvsError",
    "RegisteredEnv",
    "RegisteredEnvs",
    "Selection",
    "left_out_in",
    "left_out_nodeids",
    "missing_dependency",
    "registered_envs",
    "select_envs",
    "skip_missing_dependency",
]

Kind = Literal["ok", "skip", "left out", "error"]
"""What loading an id's entry point showed (see the module docstring)."""

_MAX_LISTED: Final = 8
# Gymnasium registers ids it no longer provides with entry points of this
# name, which only raise an ImportError that says where the env went.
_PLACEHOLDER_PREFIX: Final = "_raise_"


class NoRegisteredEnvsError(GoldensError, LookupError):
    """No registered env id matches, or every id that matches is left out.

    A parametrization over nothing would make every golden of the package
    look stale (and ``--prune-goldens`` would delete them), so it is an error.
    """


@dataclasses.dataclass(frozen=True)
class RegisteredEnv:
    """A registered env id and what loading its entry point showed.

    Attributes:
        id: The env id, namespace included (``Planted/Walker-v0``).
        entry_point: The spec's entry point as text (``module:Class``).
        kind: ``ok``, ``skip``, ``left out`` or ``error``.
        reason: Why it is skipped, left out or broken; None when ``ok``.
    """

    id: str
    entry_point: str
    kind: Kind
    reason: str | None = None


@dataclasses.dataclass(frozen=True)
class Selection:
    """The ids that match, sorted.

    Attributes:
        envs: The ids to test or audit (``ok``, ``skip`` and ``error``).
        left_out: The deprecated or legacy ids that cannot load.
    """

    envs: tuple[RegisteredEnv, ...]
    left_out: tuple[RegisteredEnv, ...]


class RegisteredEnvs(list[ParameterSet]):
    """The ``pytest.param`` values of :func:`registered_envs`.

    A list, so ``@pytest.mark.parametrize`` takes it as it is; it also keeps
    the ids left out, which the plugin lists in verbose output.

    Attributes:
        left_out: Each id left out, with the reason.
    """

    left_out: dict[str, str]

    def __init__(self, params: Iterable[ParameterSet], left_out: Mapping[str, str]) -> None:
        super().__init__(params)
        self.left_out = dict(left_out)

    @classmethod
    def of(cls, selection: Selection) -> RegisteredEnvs:
        """A param per id of ``selection``, those to skip marked so; the ids left out kept."""
        params = [
            pytest.param(env.id, id=env.id, marks=[pytest.mark.skip(reason=env.reason or "")])
            if env.kind == "skip"
            else pytest.param(env.id, id=env.id)
            for env in selection.envs
        ]
        return cls(params, {env.id: env.reason or "" for env in selection.left_out})

    @property
    def ids(self) -> frozenset[str]:
        """The test ids of the values (each the env id)."""
        return frozenset(str(param.id) for param in self)


def registered_envs(
    *patterns: str,
    exclude: Iterable[str] = (),
    entry_point: str | None = None,
    import_modules: Iterable[str] = (),
) -> RegisteredEnvs:
    """The registered env ids that match, as ``pytest.param`` values for parametrize.

    The ids that match a pattern (and the entry-point pattern) and no ``exclude``
    pattern come sorted, each its own test id. Patterns are case-sensitive
    globs (``*``, ``?``, ``[...]``) on the whole id, namespace included.

    No env is made here, but each id's entry point is loaded:

    - a missing optional dependency gives the id a skip mark with the reason
      (and a test that meets one when it makes the env is skipped too);
    - a deprecated or legacy id whose entry point cannot load is left out,
      and listed with its reason in verbose output (``pytest -v``);
    - any other error is left for the test to meet: its ``gym.make`` raises
      it again, and the test fails.

    Args:
        *patterns: Globs on env ids, such as ``"MiniGrid-*"`` or
            ``"Planted/*"``; none selects every id.
        exclude: Globs on env ids to leave out.
        entry_point: A glob on the spec's entry point (``module:Class``),
            such as ``"gymnasium.envs.classic_control*"`` for a family.
        import_modules: Modules to import first, which register the envs
            (gymnasium 1.x registers a package's envs when it is imported).

    Returns:
        A list of ``pytest.param`` values.

    Raises:
        NoRegisteredEnvsError: No id matches, every id that matches is left
            out, or a module cannot be imported. Raised while the test module
            is collected, so it is a collection error: an empty
            parametrization would make the package's goldens stale.

    Example:
        A golden test of every classic-control env::

            @pytest.mark.parametrize(
                "env_id", registered_envs(entry_point="gymnasium.envs.classic_control*")
            )
            def test_classic_control(record_trajectory, env_id):
                rollout(record_trajectory(gym.make(env_id)), seed=0, steps=200)

        >>> [param.id for param in registered_envs("CartPole-*")]
        ['CartPole-v0', 'CartPole-v1']
    """
    __tracebackhide__ = True
    selection = select_envs(
        *patterns,
        exclude=exclude,
        entry_point=entry_point,
        import_modules=import_modules,
        spell_imports=lambda modules: f"import_modules={list(modules)!r}",
    )
    return RegisteredEnvs.of(selection)


def select_envs(
    *patterns: str,
    exclude: Iterable[str] = (),
    entry_point: str | None = None,
    import_modules: Iterable[str] = (),
    spell_imports: Callable[[Sequence[str]], str] = lambda modules: f"import {', '.join(modules)}",
) -> Selection:
    """Import the modules, then sort every id that matches into its kind.

    The arguments are those of :func:`registered_envs`; ``spell_imports``
    writes the modules to import as the caller's user would write them
    (``import_modules=[...]``, ``--import ...``), for the error message.

    Raises:
        NoRegisteredEnvsError: See :func:`registered_envs`.
    """
    __tracebackhide__ = True
    modules = [import_modules] if isinstance(import_modules, str) else list(import_modules)
    excluded = [exclude] if isinstance(exclude, str) else list(exclude)
    _import_registering(modules)
    registry: Mapping[str, EnvSpec] = gym.envs.registry
    chosen = _matching(registry, patterns, excluded, entry_point)
    if not chosen:
        raise NoRegisteredEnvsError(
            _no_match(
                patterns,
                excluded=excluded,
                entry_point=entry_point,
                modules=modules,
                registry=registry,
                spell_imports=spell_imports,
            )
        )
    sorted_envs = [_classify(spec, registry) for spec in chosen]
    selection = Selection(
        envs=tuple(env for env in sorted_envs if env.kind != "left out"),
        left_out=tuple(env for env in sorted_envs if env.kind == "left out"),
    )
    if not selection.envs:
        listed = "; ".join(f"{env.id}: {env.reason}" for env in selection.left_out[:_MAX_LISTED])
        raise NoRegisteredEnvsError(
            f"every registered env id that matches {_describe(patterns, entry_point)} is left out, "
            f"as deprecated or legacy ids whose entry points cannot load: {listed}"
        )
    return selection


def _import_registering(modules: Iterable[str]) -> None:
    """Import the modules that register envs (gymnasium 1.x registers them on import).

    Raises:
        NoRegisteredEnvsError: A module cannot be imported.
    """
    for name in modules:
        try:
            importlib.import_module(name)
        except Exception as error:
            raise NoRegisteredEnvsError(
                f"cannot import {name!r}, the module that should register the envs: "
                f"{type(error).__name__}: {error}; install it, or check the name"
            ) from error


def _matching(
    registry: Mapping[str, EnvSpec],
    patterns: Sequence[str],
    excluded: Sequence[str],
    entry_point: str | None,
) -> list[EnvSpec]:
    """The specs, sorted by id, whose id matches a pattern and no excluded one, and whose
    entry point matches ``entry_point``."""
    return [
        spec
        for env_id, spec in sorted(registry.items())
        if (not patterns or any(fnmatch.fnmatchcase(env_id, p) for p in patterns))
        and not any(fnmatch.fnmatchcase(env_id, p) for p in excluded)
        and (entry_point is None or fnmatch.fnmatchcase(_entry_point_text(spec), entry_point))
    ]


def missing_dependency(error: BaseException) -> str | None:
    """Why ``error`` means a missing optional dependency; None when it does not.

    Gymnasium's ``DependencyNotInstalled`` does, and so does a
    ``ModuleNotFoundError`` for a module whose top-level package is not
    installed; a module missing inside an installed package is a bug.
    """
    if isinstance(error, gym.error.DependencyNotInstalled):
        return _first_line(error)
    if isinstance(error, ModuleNotFoundError) and _not_installed(error.name):
        return f"{error.name} is not installed ({error})"
    return None


def left_out_in(items: Iterable[pytest.Item]) -> dict[str, str]:
    """The ids that :func:`registered_envs` left out of these items' parametrizations.

    Used by the plugin, which lists them in verbose output.
    """
    found: dict[str, str] = {}
    for values in {id(v): v for item in items for v in _registered_envs_of(item)}.values():
        found.update(values.left_out)
    return found


def left_out_nodeids(
    items: Iterable[pytest.Item], nodeid_of: Callable[[pytest.Item], str]
) -> set[str]:
    """The node ids the tests of the ids :func:`registered_envs` left out would have.

    An id left out on this machine (deprecated, or lacking a dependency here)
    may have a golden recorded on another machine, which is not stale: the
    plugin treats these node ids as those of skipped tests. Each is the node
    id of a test of the same function, with the id left out in place of the
    test's own env id.

    Args:
        items: The collected tests.
        nodeid_of: The node id that names a test's goldens.
    """
    found: set[str] = set()
    for item in items:
        callspec = getattr(item, "callspec", None)
        idlist = list(getattr(callspec, "_idlist", ()))
        for values in _registered_envs_of(item):
            own = [i for i, part in enumerate(idlist) if part in values.ids]
            nodeid = nodeid_of(item)
            suffix = f"[{'-'.join(idlist)}]"
            if len(own) != 1 or not values.left_out or not nodeid.endswith(suffix):
                continue  # not told apart: the goldens are judged as they are
            head = nodeid[: -len(suffix)]
            for env_id in values.left_out:
                parts = [*idlist[: own[0]], env_id, *idlist[own[0] + 1 :]]
                found.add(f"{head}[{'-'.join(parts)}]")
    return found


def skip_missing_dependency(item: pytest.Item, error: BaseException) -> None:
    """Skip a test of :func:`registered_envs` that met a missing optional dependency.

    No env is made at collection, so a dependency that an env checks only
    when it is made (MiniGrid's WFC envs need networkx) is met by the test;
    it is skipped with the reason, as it would have been at collection.
    Returns for any other error, or a test not parametrized by
    :func:`registered_envs`.

    Raises:
        pytest.skip.Exception: The test is skipped.
    """
    reason = missing_dependency(error)
    if reason is not None and _registered_envs_of(item):
        raise pytest.skip.Exception(reason, _use_item_location=True) from error


def _registered_envs_of(item: pytest.Item) -> list[RegisteredEnvs]:
    found = []
    for mark in item.iter_markers("parametrize"):
        values = mark.args[1] if len(mark.args) > 1 else mark.kwargs.get("argvalues")
        if isinstance(values, RegisteredEnvs):
            found.append(values)
    return found


def _classify(spec: EnvSpec, registry: Mapping[str, EnvSpec]) -> RegisteredEnv:
    """Load the entry point of ``spec`` (making no env) and say what it showed."""
    text = _entry_point_text(spec)
    point = spec.entry_point
    if point is None:
        return RegisteredEnv(
            spec.id, text, "left out", "registered for gymnasium.make_vec only (no entry_point)"
        )
    if callable(point):
        if _is_placeholder(point):
            try:
                # A placeholder makes nothing: it only raises, saying where the env went.
                point()
            except Exception as error:
                return RegisteredEnv(spec.id, text, "left out", _first_line(error))
        return RegisteredEnv(spec.id, text, "ok")
    try:
        load_env_creator(point)
    except Exception as error:
        missing = missing_dependency(error)
        if missing is None:
            return RegisteredEnv(spec.id, text, "error", _error_text(error))
    else:
        return RegisteredEnv(spec.id, text, "ok")
    newer = _newer_version(spec, registry)
    if newer is not None:
        return RegisteredEnv(
            spec.id, text, "left out", f"out of date ({newer} is registered); {missing}"
        )
    return RegisteredEnv(spec.id, text, "skip", missing)


def _entry_point_text(spec: EnvSpec) -> str:
    point = spec.entry_point
    if point is None or isinstance(point, str):
        return point or ""
    module = getattr(point, "__module__", None) or "?"
    name = getattr(point, "__qualname__", None) or getattr(point, "__name__", repr(point))
    return f"{module}:{name}"


def _is_placeholder(point: Callable[..., Any]) -> bool:
    module = getattr(point, "__module__", None) or ""
    name = getattr(point, "__name__", "")
    return module.split(".")[0] == "gymnasium" and name.startswith(_PLACEHOLDER_PREFIX)


def _not_installed(module: str | None) -> bool:
    """Whether ``module``'s top-level package is missing (not merely a submodule of it)."""
    if not module:
        return False
    top = module.split(".")[0]
    try:
        return importlib.util.find_spec(top) is None
    except (ImportError, ValueError):
        return False


def _newer_version(spec: EnvSpec, registry: Mapping[str, EnvSpec]) -> str | None:
    """The id of the newest version of ``spec``'s env, if newer than ``spec``."""
    if spec.version is None:
        return None
    newer = [
        other
        for other in registry.values()
        if other.namespace == spec.namespace
        and other.name == spec.name
        and other.version is not None
        and other.version > spec.version
    ]
    if not newer:
        return None
    return max(newer, key=lambda other: other.version or 0).id


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def _error_text(error: BaseException) -> str:
    return f"its entry point failed to load: {type(error).__name__}: {_first_line(error)}"


def _describe(patterns: Sequence[str], entry_point: str | None) -> str:
    text = ", ".join(repr(p) for p in patterns) if patterns else "any id"
    if entry_point is not None:
        text += f" with an entry point matching {entry_point!r}"
    return text


def _no_match(
    patterns: Sequence[str],
    *,
    excluded: Sequence[str],
    entry_point: str | None,
    modules: Sequence[str],
    registry: Mapping[str, EnvSpec],
    spell_imports: Callable[[Sequence[str]], str],
) -> str:
    what = _describe(patterns, entry_point)
    if excluded:
        what += f" and no exclude pattern ({', '.join(repr(p) for p in excluded)})"
    after = f" after importing {', '.join(modules)}" if modules else ""
    lines = [f"no registered env id matches {what}{after} ({len(registry)} ids are registered)"]
    folded = [
        env_id
        for env_id in sorted(registry)
        if any(fnmatch.fnmatchcase(env_id.lower(), p.lower()) for p in patterns)
    ]
    if folded:
        shown = ", ".join(folded[:_MAX_LISTED]) + (", ..." if len(folded) > _MAX_LISTED else "")
        lines.append(
            f"  patterns are case-sensitive; these ids match when case is ignored: {shown}"
        )
    if not modules:
        guess = _guess_module(patterns)
        example = spell_imports([guess or "<the package>"])
        lines.append(
            "  gymnasium registers an env package's ids only when the package is imported: "
            f"name the package that registers them, as in {example}"
        )
    return "\n".join(lines)


def _guess_module(patterns: Sequence[str]) -> str | None:
    """An installed module named like a pattern's prefix (``MiniGrid-*`` -> ``minigrid``)."""
    for pattern in patterns:
        match = re.match(r"[A-Za-z][A-Za-z0-9_]*", pattern)
        if match is None:
            continue
        name = match.group(0).lower()
        try:
            if importlib.util.find_spec(name) is not None:
                return name
        except (ImportError, ValueError):
            continue
    return None

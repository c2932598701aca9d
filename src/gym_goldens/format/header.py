"""The header record: what produced a recording.

Each episode of a recording opens with a header that describes the env (spec, wrapper
stack, spaces), how the episode was reset (seed and options), and the software
and platform that recorded it. Spaces are compared; versions and platform are
informational and shown beside a mismatch, never compared. The headers of the
sub-envs of a vector env also describe the vector env (``vector``: number of sub-envs,
the sub-env's index and the autoreset mode, compared; ``vectorization_mode``,
informational).
"""

from __future__ import annotations

import base64
import csv
import dataclasses
import functools
import hashlib
import importlib.metadata
import inspect
import json
import platform
import sys
import types
from collections.abc import Iterable, Iterator, Mapping
from importlib.metadata import Distribution
from pathlib import Path, PurePosixPath
from typing import Any, Final, cast

import gymnasium as gym
import orjson
from gymnasium import spaces

__all__ = [
    "FORMAT_NAME",
    "FORMAT_VERSION",
    "INFORMATIONAL_FIELDS",
    "VersionsChange",
    "describe_env",
    "describe_space",
    "describe_vector_env",
    "header_problem",
    "json_kind",
    "platform_facts",
    "recorded_versions",
    "software_versions",
    "used_distributions",
    "versions_change",
]

FORMAT_NAME: Final = "gym-goldens"
FORMAT_VERSION: Final = "2.3"
"""``major.minor``: the one version written until the first release (see docs/format.md,
versioning)."""

OLDEST_READ_VERSION: Final = "2.1"
"""The oldest version read: 2.2 only added fields (frames) and 2.3 a kind of frame file
(palette PNGs), so a file of 2.1 or 2.2 is a file of 2.3 and no code of its own reads it;
an older one is refused with the command that rewrites it."""

INFORMATIONAL_FIELDS: Final = frozenset(
    {"versions", "platform", "reset", "env", "wrappers", "storage", "vectorization_mode"}
)
"""Header fields that are shown beside a mismatch but never compared."""

# The JSON type of each field a header may hold (all are optional: older
# headers have fewer), and of the items of those that hold several.
_FIELD_KINDS: Final[dict[str, tuple[type, type | None]]] = {
    "observation_space": (dict, None),
    "action_space": (dict, None),
    "vector": (dict, None),
    "env": (dict, None),
    "wrappers": (list, str),
    "reset": (dict, None),
    "versions": (dict, str),
    "platform": (dict, str),
    "storage": (dict, None),
    "vectorization_mode": (str, None),
}
_KIND_WORDS: Final[dict[type, str]] = {dict: "an object", list: "an array", str: "a string"}


def header_problem(header: Mapping[str, Any]) -> str | None:
    """What is wrong with the fields of a header record read from a file, or None.

    Every field is checked for the JSON type the recorder writes (an object
    of strings for ``versions`` and ``platform``, an array of strings for
    ``wrappers``), so that what reads, shows or compares a header can rely
    on it. The one check of header fields: the reader makes it of every header.

    Example:
        >>> header_problem({"event": "header", "platform": "x"})
        'expected "platform" to be an object of strings, found a string'
    """
    for name, (kind, item_kind) in _FIELD_KINDS.items():
        if name not in header:
            continue
        value = header[name]
        wanted = _KIND_WORDS[kind]
        if item_kind is not None:
            wanted += f" of {_KIND_WORDS[item_kind].split()[-1]}s"
        if type(value) is not kind:
            return f'expected "{name}" to be {wanted}, found {json_kind(value)}'
        if item_kind is not None:
            items = cast("Iterable[Any]", value.values() if isinstance(value, dict) else value)
            odd = next((item for item in items if type(item) is not item_kind), _NONE)
            if odd is not _NONE:
                return f'expected "{name}" to be {wanted}, found one holding {json_kind(odd)}'
    return None


_NONE: Final = object()


def json_kind(value: object) -> str:
    """The JSON type of a parsed value, in words: ``an object``, ``a number``, ``null``...

    Example:
        >>> json_kind([1]), json_kind(None), json_kind(2.5), json_kind({"a": [1]})
        ('an array', 'null', 'a number', 'an object')
    """
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return "a tagged value"  # a tag the reader decoded: {"$bytes": ...}, {"$array": ...}


_UNIFORM_BOUND_SIZE: Final = 16
_VERSIONED_PACKAGES: Final = ("gymnasium", "numpy", "pytest-gym-goldens")
# Modules an env's modules import that shape no trajectory: the test runner
# (which loads an env defined in a test file) and the standard library's
# typing backport (which gymnasium.core imports).
_NOT_SHAPING: Final = frozenset({"pytest", "_pytest", "pluggy", "py", "typing_extensions"})


def describe_space(space: gym.Space[Any]) -> dict[str, Any]:
    """Describe a space by its type, dtype, shape and parameters.

    Example:
        >>> from gymnasium.spaces import Discrete
        >>> describe_space(Discrete(3, start=1))
        {'type': 'Discrete', 'dtype': 'int64', 'shape': [], 'n': 3, 'start': 1}
    """
    description: dict[str, Any] = {"type": type(space).__name__}
    if space.dtype is not None:
        description["dtype"] = str(space.dtype)
    if space.shape is not None:
        description["shape"] = list(space.shape)
    if isinstance(space, spaces.Box):
        description["low"] = _bound(space.low)
        description["high"] = _bound(space.high)
    elif isinstance(space, spaces.Discrete):
        description["n"] = int(space.n)
        description["start"] = int(space.start)
    elif isinstance(space, spaces.MultiDiscrete):
        description["nvec"] = space.nvec
        description["start"] = space.start
    elif isinstance(space, spaces.MultiBinary):
        description["n"] = space.n
    elif isinstance(space, spaces.Dict):
        description["spaces"] = {key: describe_space(sub) for key, sub in space.spaces.items()}
    elif isinstance(space, (spaces.Tuple, spaces.OneOf)):
        description["spaces"] = [describe_space(sub) for sub in space.spaces]
    elif isinstance(space, spaces.Text):
        description["min_length"] = space.min_length
        description["max_length"] = space.max_length
        description["charset"] = "".join(sorted(space.character_set))
    elif isinstance(space, spaces.Sequence):
        description["feature_space"] = describe_space(space.feature_space)
        description["stack"] = space.stack
    elif isinstance(space, spaces.Graph):
        description["node_space"] = describe_space(space.node_space)
        if space.edge_space is not None:
            description["edge_space"] = describe_space(space.edge_space)
    return description


def _bound(bound: Any) -> Any:
    # An image's bounds are one number repeated: write the number, not a summary.
    if bound.size > _UNIFORM_BOUND_SIZE and (bound == bound.flat[0]).all():
        return bound.flat[0]
    return bound


def describe_env(env: gym.Env[Any, Any], *, versions_of: Iterable[str] = ()) -> dict[str, Any]:
    """The parts of the header that do not change between episodes.

    Args:
        env: The env.
        versions_of: Distributions whose versions are recorded besides the
            usual ones and the env's own (see :func:`recorded_versions`).
    """
    wrappers: list[str] = []
    inner: Any = env
    while isinstance(inner, gym.Wrapper):
        wrappers.append(type(inner).__name__)
        inner = inner.env
    return {
        "env": _describe_spec(env),
        "wrappers": wrappers,
        "observation_space": describe_space(env.observation_space),
        "action_space": describe_space(env.action_space),
        "versions": recorded_versions(env, versions_of),
        "platform": platform_facts(),
    }


def recorded_versions(env: Any, versions_of: Iterable[str] = ()) -> dict[str, str]:
    """The ``versions`` header field: what software shaped the recording of ``env``.

    Python's version, gymnasium's, numpy's and this package's; the versions
    of the distributions whose modules the env uses (:func:`used_distributions`:
    the env's own, such as highway-env or minigrid, and those its modules
    import, such as mujoco or pygame-ce); and those named in ``versions_of``
    that are installed.
    """
    versions = dict(software_versions())
    for name in [*used_distributions(env), *versions_of]:
        version = _distribution_version(name)
        if version is not None:
            versions[name] = version
    return versions


def used_distributions(env: Any) -> list[str]:
    """The installed distributions whose modules ``env`` uses, sorted.

    The modules are those of the classes of the env, of its wrappers and of
    their bases (and of the first sub-env of a vector env, and of the spec's
    entry point), and the modules these import at their top: the modules,
    classes and functions among their globals. Each is mapped to the
    distribution that installed its file (``packages_distributions``, and the
    files of the candidates: pygame and pygame-ce both provide ``pygame``).
    The standard library, pytest, typing_extensions and a module of no
    distribution (a test suite's, a script's) add nothing.

    Imports made inside functions (gymnasium's classic control imports
    pygame when it renders) are not seen: the modules an env's code names at
    its top are the same whatever ran before, so a golden's header does not
    depend on the order tests ran in, as the modules new in ``sys.modules``
    would; and it costs a walk of a few module dictionaries, once per recorder.
    """
    found: set[str] = set()
    for module in sorted(_env_modules(env)):
        for used in _referenced_modules(module):
            found.update(_module_distributions(used))
    return sorted(found)


def _env_modules(env: Any) -> set[str]:
    """The modules of the classes of ``env``, its wrappers, its first sub-env and their bases."""
    modules: set[str] = set()
    pending, seen = [env], set()
    while pending:
        current = pending.pop()
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        modules.update(cls.__module__ for cls in type(current).__mro__)
        if isinstance(current, (gym.Wrapper, gym.vector.VectorWrapper)):
            pending.append(current.env)
        pending += list(getattr(current, "envs", None) or ())[:1]  # a sub-env of a vector env
        entry_point = getattr(getattr(current, "spec", None), "entry_point", None)
        if isinstance(entry_point, str):
            modules.add(entry_point.partition(":")[0])
        elif callable(entry_point):
            modules.add(getattr(entry_point, "__module__", "") or "")
    modules.discard("")
    return modules


@functools.cache
def _referenced_modules(name: str) -> frozenset[str]:
    """``name`` and the modules of the modules, classes and functions among its globals."""
    module = sys.modules.get(name)
    if module is None:
        return frozenset({name})
    found = {name}
    for value in list(vars(module).values()):
        if isinstance(value, types.ModuleType):
            found.add(value.__name__)
        elif isinstance(value, (type, types.FunctionType, types.BuiltinFunctionType)):
            owner = getattr(value, "__module__", None)
            if isinstance(owner, str):
                found.add(owner)
    return frozenset(found)


@functools.cache
def _module_distributions(name: str) -> tuple[str, ...]:
    """The distributions that installed the file of the module ``name``; empty for none."""
    top = name.partition(".")[0]
    if top in sys.stdlib_module_names or top in _NOT_SHAPING or top == "__main__":
        return ()
    candidates = _distributions_of(top)
    file = getattr(sys.modules.get(name), "__file__", None)
    if not candidates or not isinstance(file, str):
        return ()
    return _installed_by(candidates, Path(file).resolve())


def _installed_by(candidates: Mapping[str, Distribution], file: Path) -> tuple[str, ...]:
    """Those of ``candidates`` whose recorded files hold ``file``; by hash when several do."""
    listed: list[tuple[str, str | None]] = []
    for name in sorted(candidates):
        for entry in _entries_for(candidates[name], file):
            listed.append((name, entry))
    if len({name for name, _ in listed}) > 1:
        digest = _file_digest(file)
        same = [name for name, recorded in listed if recorded == digest]
        if same:
            return tuple(sorted(set(same)))
    return tuple(sorted({name for name, _ in listed}))


def _entries_for(distribution: Distribution, file: Path) -> Iterator[str | None]:
    """The recorded hash (or None) of each entry of ``distribution`` that is ``file``."""
    try:
        base = Path(str(distribution.locate_file(""))).resolve()
        relative = file.relative_to(base).as_posix()
    except (ValueError, OSError):
        return
    for path, recorded in _recorded_files(distribution, file.name):
        if path == relative:
            yield recorded


def _recorded_files(distribution: Distribution, named: str) -> Iterator[tuple[str, str | None]]:
    """The files of ``distribution`` whose name ends with ``named``, with their sha256, if any.

    Read from its ``RECORD`` as text: ``Distribution.files`` makes an object
    of every line (numpy's thousands), which costs a golden suite 0.1 s once.
    A distribution without ``RECORD`` (an egg) takes that way.
    """
    text = _read_text(distribution, "RECORD")
    if text is None:
        for entry in distribution.files or ():
            recorded = entry.hash
            sha256 = recorded.value if recorded is not None and recorded.mode == "sha256" else None
            yield entry.as_posix(), sha256
        return
    lines = (line for line in text.splitlines() if named in line)
    for row in csv.reader(lines):
        if row and row[0]:
            mode, _, value = (row[1] if len(row) > 1 else "").partition("=")
            yield PurePosixPath(row[0]).as_posix(), value if mode == "sha256" and value else None


@functools.cache
def _distributions_of(top: str) -> Mapping[str, Distribution]:
    """The installed distributions that provide the top-level module ``top``, by name.

    The first of a name on ``sys.path`` is kept, as ``importlib.metadata.distribution``
    finds it.
    """
    found: dict[str, Distribution] = {}
    for distribution in _top_level_names().get(top, ()):
        name = distribution.metadata["Name"]
        if isinstance(name, str):
            found.setdefault(name, distribution)
    return found


@functools.cache
def _top_level_names() -> Mapping[str, list[Distribution]]:
    """The installed distributions by the top-level names they provide.

    What ``importlib.metadata.packages_distributions`` tells: the names a
    distribution's ``top_level.txt`` declares, else the top-level names of
    its files. That function reads every distribution's name (an email
    parser's work) and makes an object of every line of every file list:
    some 0.15 s once per process in a large environment, most of what a
    golden suite of 100 short tests pays beyond stepping its envs. This reads
    the file lists as text, and names only the distributions asked for.
    """
    found: dict[str, list[Distribution]] = {}
    for distribution in importlib.metadata.distributions():
        declared = (_read_text(distribution, "top_level.txt") or "").split()
        for name in set(declared) or _file_top_names(distribution):
            found.setdefault(name, []).append(distribution)
    return found


def _file_top_names(distribution: Distribution) -> set[str]:
    """The top-level names of the files of ``distribution``, as importlib.metadata infers them."""
    text = _read_text(distribution, "RECORD")
    if text is None:
        paths = [entry.as_posix() for entry in distribution.files or ()]
    else:
        lines = text.splitlines()
        paths = [line.partition(",")[0] for line in lines if not line.startswith('"')]
        paths += [row[0] for row in csv.reader(line for line in lines if line.startswith('"'))]
    # A folder's name, else a module's (``top.py``, ``top.cpython-311-x86_64-linux-gnu.so``).
    names = {path.partition("/")[0] for path in paths if "/" in path}
    odd = [path for path in paths if "/" not in path or path.startswith(("/", "./"))]
    for path in odd:
        parts = PurePosixPath(path).parts
        names.add(parts[0] if len(parts) > 1 else inspect.getmodulename(path) or path)
    return {name for name in names if name and "." not in name}


def _file_digest(file: Path) -> str | None:
    """The urlsafe base64 SHA-256 of ``file``, as a wheel's RECORD writes it."""
    try:
        digest = hashlib.sha256(file.read_bytes()).digest()
    except OSError:
        return None
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def _read_text(distribution: Distribution, name: str) -> str | None:
    try:
        return distribution.read_text(name)
    except (OSError, UnicodeDecodeError):
        return None


@functools.cache
def _installed_distributions() -> tuple[Distribution, ...]:
    return tuple(importlib.metadata.distributions())


@functools.cache
def _distribution_version(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


@dataclasses.dataclass(frozen=True)
class VersionsChange:
    """How the ``versions`` of two headers differ.

    Attributes:
        changed: ``(name, golden's version, actual version)`` of the software both name.
        added: ``(name, version)`` of the software only the actual recording names.
        removed: ``(name, version)`` of the software only the golden names.
    """

    changed: tuple[tuple[str, Any, Any], ...] = ()
    added: tuple[tuple[str, Any], ...] = ()
    removed: tuple[tuple[str, Any], ...] = ()

    def __bool__(self) -> bool:
        return bool(self.changed or self.added or self.removed)


def versions_change(golden: Mapping[str, Any], actual: Mapping[str, Any]) -> VersionsChange:
    """The software a recording was made with that a golden was not, and back.

    Example:
        >>> change = versions_change({"numpy": "2.3.0", "pygame": "2.6.1"}, {"numpy": "2.4.1"})
        >>> change.changed, change.added, change.removed
        ((('numpy', '2.3.0', '2.4.1'),), (), (('pygame', '2.6.1'),))
    """
    return VersionsChange(
        changed=tuple(
            (name, golden[name], actual[name])
            for name in sorted(golden.keys() & actual.keys())
            if golden[name] != actual[name]
        ),
        added=tuple((name, actual[name]) for name in sorted(actual.keys() - golden.keys())),
        removed=tuple((name, golden[name]) for name in sorted(golden.keys() - actual.keys())),
    )


def describe_vector_env(env: Any, *, versions_of: Iterable[str] = ()) -> dict[str, Any]:
    """The static header parts of the sub-env episodes of a ``VectorEnv``.

    The spaces are those of one sub-env; ``vector`` is completed with the
    sub-env's ``index`` by the recorder. ``versions_of`` as for :func:`describe_env`.
    """
    wrappers: list[str] = []
    inner: Any = env
    while isinstance(inner, gym.vector.VectorWrapper):
        wrappers.append(type(inner).__name__)
        inner = inner.env
    mode = env.metadata.get("autoreset_mode")
    return {
        "env": _describe_spec(env),
        "wrappers": wrappers,
        "observation_space": describe_space(env.single_observation_space),
        "action_space": describe_space(env.single_action_space),
        "vector": {
            "num_envs": int(env.num_envs),
            "autoreset_mode": getattr(mode, "value", mode if mode is None else str(mode)),
        },
        # Informational: sync and async give the same trajectories, a vector env
        # of its own (such as CartPoleVectorEnv) may not; a mismatch shows it.
        "vectorization_mode": _vectorization_mode(inner),
        "versions": recorded_versions(env, versions_of),
        "platform": platform_facts(),
    }


def _vectorization_mode(unwrapped: Any) -> str:
    spec = getattr(unwrapped, "spec", None)
    mode = spec.kwargs.get("vectorization_mode") if spec is not None else None
    if mode is not None:
        return str(getattr(mode, "value", mode))
    if isinstance(unwrapped, gym.vector.SyncVectorEnv):
        return "sync"
    if isinstance(unwrapped, gym.vector.AsyncVectorEnv):
        return "async"
    # A vector env of its own (such as CartPoleVectorEnv): name its class.
    return f"{type(unwrapped).__module__}.{type(unwrapped).__qualname__}"


def _describe_spec(env: Any) -> dict[str, Any]:
    spec = env.spec
    if spec is None:
        unwrapped = env.unwrapped
        return {"id": None, "class": f"{type(unwrapped).__module__}.{type(unwrapped).__qualname__}"}
    try:
        described: dict[str, Any] = orjson.loads(spec.to_json())
    except Exception:  # any kwarg that fails to serialise falls back to the id
        described = {"id": spec.id, "kwargs": _stringify(spec.kwargs)}
    return described


def _stringify(kwargs: Mapping[str, Any]) -> dict[str, str]:
    return {str(key): type(value).__name__ for key, value in kwargs.items()}


@functools.cache
def software_versions() -> dict[str, str]:
    """Versions of Python and of the packages that shape a recording."""
    versions = {"python": platform.python_version()}
    for package in _VERSIONED_PACKAGES:
        try:
            versions[package] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            continue
    return versions


@functools.cache
def platform_facts() -> dict[str, str]:
    """The platform a recording was made on: system, machine, Python implementation."""
    return {
        "system": platform.system(),
        "machine": platform.machine(),
        "python_implementation": sys.implementation.name,
    }

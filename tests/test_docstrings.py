"""The examples in the package's docstrings run, and say what they print."""

from __future__ import annotations

import doctest
import importlib
import pkgutil
import warnings

import pytest

import gym_goldens

MODULES = sorted(
    module.name
    for module in pkgutil.walk_packages(gym_goldens.__path__, prefix="gym_goldens.")
    if not module.name.endswith("__main__")
)


# Optional extras that a module imports at its top, loaded only for their envs.
OPTIONAL = frozenset({"pettingzoo"})


@pytest.mark.parametrize("name", MODULES)
def test_the_examples_of_a_module_run(name: str) -> None:
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as error:
        if (error.name or "").split(".")[0] not in OPTIONAL:
            raise
        pytest.skip(f"{error.name} is not installed: {name} needs it")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an example that warns is a bad example
        result = doctest.testmod(module, verbose=False, report=True)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples of {name} failed"

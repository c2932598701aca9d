"""The dependency bounds in pyproject.toml and the oldest releases CI tests against."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
# Tools that check the code, not code the tests run: any release will do.
_TOOLS = {"ruff", "mypy"}
# The extras the oldest-releases run installs; the others (the docs site, the
# third-party envs and the benchmarks' peers) are installed with the newest.
_TESTED_EXTRAS = ("viz", "dev")


def _lower_bounds() -> dict[str, str]:
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+; one Python is enough here
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    project = pyproject["project"]
    requirements = [*pyproject["build-system"]["requires"], *project["dependencies"]]
    for name in _TESTED_EXTRAS:
        extra = project["optional-dependencies"][name]
        requirements += [r for r in extra if not r.startswith(project["name"])]
    bounds = {}
    for requirement in requirements:
        match = re.fullmatch(r"([A-Za-z0-9_.-]+)>=([0-9.]+)", requirement)
        assert match, f"{requirement!r}: give every dependency a lower bound, as name>=version"
        bounds[match[1].lower()] = match[2]
    return {name: version for name, version in bounds.items() if name not in _TOOLS}


def _pins() -> dict[str, str]:
    pins = {}
    for line in (ROOT / ".ci" / "oldest-supported.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, version = line.split("==")
            pins[name.lower()] = version
    return pins


def _release(version: str) -> tuple[int, ...]:
    parts = [int(part) for part in version.split(".")]
    return tuple(parts + [0] * (3 - len(parts)))


def test_ci_tests_the_oldest_release_each_lower_bound_accepts() -> None:
    bounds = _lower_bounds()
    pins = _pins()
    assert sorted(pins) == sorted(bounds)
    for name, bound in bounds.items():
        assert _release(pins[name]) == _release(bound), (
            f"{name}: pyproject.toml accepts {bound}, CI tests {pins[name]}"
        )

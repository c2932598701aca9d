"""The pytest plugin costs nothing heavy at start-up.

An installed plugin loads in every pytest run of the user's environment, with
or without golden tests, so importing it must not import gymnasium, numpy,
deepdiff or matplotlib. Checked in a fresh interpreter (this one has them).
"""

from __future__ import annotations

import subprocess
import sys

import pytest

HEAVY = ("gymnasium", "numpy", "deepdiff", "matplotlib", "orjson")

_PROBE = """
import sys
import {module}
print(",".join(sorted(name for name in {heavy!r} if name in sys.modules)))
"""


@pytest.mark.parametrize("module", ["gym_goldens", "gym_goldens.pytest_plugin"])
def test_importing_the_plugin_loads_nothing_heavy(module: str) -> None:
    probe = _PROBE.format(module=module, heavy=HEAVY)
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == ""


def test_a_pytest_run_without_golden_tests_loads_nothing_heavy(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(
        f"""
        import sys

        def pytest_collection_finish(session):
            loaded = sorted(name for name in {HEAVY!r} if name in sys.modules)
            plugin = "gym_goldens.pytest_plugin" in sys.modules
            print("plugin loaded:", plugin, "heavy modules:", ",".join(loaded) or "none")
        """
    )
    pytester.makepyfile("def test_one():\n    assert 1 + 1 == 2\n")
    result = pytester.runpytest_subprocess("--collect-only", "-q", "-s")
    result.stdout.fnmatch_lines(["plugin loaded: True heavy modules: none"])

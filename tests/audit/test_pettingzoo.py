"""pettingzoo_envs(): PettingZoo's envs by family and name, as pytest params."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from types import ModuleType

import pytest

pytest.importorskip("pettingzoo", reason="pettingzoo is not installed: pip install pettingzoo")

from gym_goldens import pettingzoo_envs
from gym_goldens.audit.pettingzoo import UnimportableEnv
from gym_goldens.audit.registry import NoRegisteredEnvsError, RegisteredEnvs


def _by_id(params: RegisteredEnvs) -> dict[str, object]:
    return {param.id: param for param in params}


def _skip_reason(param: object) -> str | None:
    marks = [mark for mark in param.marks if mark.name == "skip"]  # type: ignore[attr-defined]
    return marks[0].kwargs["reason"] if marks else None


def test_a_family_gives_its_env_modules_by_name() -> None:
    params = _by_id(pettingzoo_envs("classic/*"))
    assert {"classic/rps_v2", "classic/connect_four_v3", "classic/tictactoe_v3"} <= set(params)
    assert all(name.startswith("classic/") for name in params)
    assert list(params) == sorted(params)
    rps = params["classic/rps_v2"].values[0]  # type: ignore[attr-defined]
    assert isinstance(rps, ModuleType)
    assert rps.__name__ == "pettingzoo.classic.rps_v2"
    assert _skip_reason(params["classic/rps_v2"]) is None
    assert callable(rps.parallel_env)


def test_an_env_whose_extra_is_missing_is_skipped_with_the_reason() -> None:
    (param,) = pettingzoo_envs("classic/chess_v6")
    if importlib.util.find_spec("chess") is not None:
        assert _skip_reason(param) is None
        pytest.skip("python-chess is installed here: nothing is missing")
    reason = _skip_reason(param)
    assert reason is not None
    assert reason.startswith("chess is not installed")
    assert reason.endswith("pip install 'pettingzoo[classic]'")


def test_patterns_and_excludes_select_across_families() -> None:
    params = _by_id(
        pettingzoo_envs("classic/rps_v2", "butterfly/*", exclude=["butterfly/pistonball_*"])
    )
    assert "classic/rps_v2" in params
    assert "butterfly/cooperative_pong_v6" in params
    assert "butterfly/pistonball_v6" not in params
    assert "classic/go_v5" not in params


def test_nothing_matching_is_an_error_that_names_the_families() -> None:
    with pytest.raises(NoRegisteredEnvsError, match=r"no PettingZoo env matches 'rps_v2'") as info:
        pettingzoo_envs("rps_v2")
    assert "classic (" in str(info.value)
    with pytest.raises(NoRegisteredEnvsError, match="no exclude pattern"):
        pettingzoo_envs("classic/rps_v2", exclude=["classic/*"])


def test_an_env_module_that_fails_to_import_fails_its_test_when_used() -> None:
    broken = UnimportableEnv("classic/broken_v1", RuntimeError("boom"))
    with pytest.raises(ImportError, match=r"broken_v1 failed to import: RuntimeError: boom"):
        broken.env()


def test_only_the_families_named_are_imported_and_never_all_modules() -> None:
    probe = (
        "import sys\n"
        "from gym_goldens import pettingzoo_envs\n"
        "pettingzoo_envs('classic/rps_v2')\n"
        "print(sorted(m for m in sys.modules if m.startswith(('pettingzoo.butterfly', "
        "'pettingzoo.sisl', 'pettingzoo.atari', 'pettingzoo.utils.all_modules', "
        "'pettingzoo.classic.connect_four'))))\n"
    )
    result = subprocess.run(
        [sys.executable, "-W", "error", "-c", probe], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"

"""Ray is an optional extra: pinned in requirements-ray.txt and pyproject's ``ray`` extra, installed with the
dev tools, absent from the runtime requirements the Blender extension's wheels come from; without it,
``--ray`` stops with one line naming the install command."""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

import pytest

from akd_blender.core.job.ray_jobs import RAY_REQUIREMENT, RayMissing, import_ray

ROOT = Path(__file__).resolve().parents[2]


def _requirements(name: str) -> list[str]:
    lines = (ROOT / name).read_text().splitlines()
    return [line.split("#")[0].strip() for line in lines if line.split("#")[0].strip()]


def test_ray_is_a_pinned_extra_and_not_a_runtime_requirement():
    assert _requirements("requirements-ray.txt") == [RAY_REQUIREMENT]
    assert "-r requirements-ray.txt" in _requirements("requirements-dev.txt")  # `make setup` (CI) installs it
    assert not any(line.lower().startswith("ray") for line in _requirements("requirements.txt"))  # `make wheels` reads this
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert extras["ray"] == [RAY_REQUIREMENT]


def test_a_missing_ray_names_the_install_command(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # what `import ray` meets in a Python without it
    with pytest.raises(RayMissing, match=r"pip install 'ray==\d+\.\d+\.\d+'") as err:
        import_ray()
    assert err.value.exit_code == 2

"""Shared test fixtures: where the shared assets are."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("AKD_SHARED", ROOT.parent / "shared"))
ASSETS = SHARED / "assets"
ASSET_FILES = {name: ASSETS / name / f"{name}.gltf" for name in ("Fox", "CesiumMan", "RiggedFigure", "RiggedSimple")}


@pytest.fixture(scope="session")
def assets() -> dict[str, Path]:
    missing = [str(p) for p in ASSET_FILES.values() if not p.is_file()]
    if missing:
        pytest.fail(f"shared assets missing: {missing} (set AKD_SHARED)")
    return ASSET_FILES

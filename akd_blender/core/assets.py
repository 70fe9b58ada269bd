"""Where the package and its shipped assets (weights, phrase tables) lie on disk."""

from __future__ import annotations

from pathlib import Path

__all__ = ["PACKAGE_DIR", "ASSETS_DIR"]

PACKAGE_DIR = Path(__file__).resolve().parents[1]  # akd_blender/
ASSETS_DIR = PACKAGE_DIR / "assets"

"""akd_blender.core imports in a Python where Blender's modules cannot be imported."""

from __future__ import annotations

import pkgutil
import subprocess
import sys
from pathlib import Path

import akd_blender.core

ROOT = Path(__file__).resolve().parents[2]

BLOCKER = """
import importlib.abc, sys
class NoBlender(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] in {'bpy', 'mathutils', 'bmesh', 'addon_utils', 'bpy_extras'}:
            raise ImportError(f'{name} is blocked in this test')
sys.meta_path.insert(0, NoBlender())
import importlib
for name in sys.argv[1:]:
    importlib.import_module(name)
assert 'bpy' not in sys.modules
print('ok', len(sys.argv) - 1)
"""


def core_modules() -> list[str]:
    names = ["akd_blender", "akd_blender.core"]
    for info in pkgutil.walk_packages(akd_blender.core.__path__, "akd_blender.core."):
        if not info.name.endswith("__main__"):
            names.append(info.name)
    return names


def test_every_core_module_imports_without_blender():
    modules = core_modules()
    assert "akd_blender.core.kinematics" in modules
    result = subprocess.run([sys.executable, "-c", BLOCKER, *modules], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == f"ok {len(modules)}"


def test_the_blocker_really_blocks():
    result = subprocess.run(
        [sys.executable, "-c", BLOCKER, "akd_blender.blender.io"], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert result.returncode != 0 and "bpy is blocked" in result.stderr

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
    assert "akd_blender.core.character.kinematics" in modules
    result = subprocess.run([sys.executable, "-c", BLOCKER, *modules], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == f"ok {len(modules)}"


def test_the_blocker_really_blocks():
    result = subprocess.run(
        [sys.executable, "-c", BLOCKER, "akd_blender.blender.character.io"], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert result.returncode != 0 and "bpy is blocked" in result.stderr


FORBIDDEN = ("bpy", "mathutils", "bmesh", "addon_utils", "bpy_extras", "akd_blender.blender")


def imported_names(path: Path, package: str) -> list[tuple[int, str]]:
    """(line, absolute module name) of every import statement in ``path``, at any depth (inside
    functions too), relative imports resolved against ``package``."""
    import ast

    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            found.append((node.lineno, module))
            found += [(node.lineno, f"{module}.{alias.name}") for alias in node.names]
    return found


def core_imports_of_blender() -> list[str]:
    """``file:line module`` for each import in akd_blender/core of Blender or of akd_blender.blender."""
    core = ROOT / "akd_blender" / "core"
    bad = []
    for path in sorted(core.rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        package = ".".join(parts if path.name == "__init__.py" else parts[:-1])
        package = package.removesuffix(".__init__")
        for line, module in imported_names(path, package):
            if any(module == f or module.startswith(f + ".") for f in FORBIDDEN):
                bad.append(f"{path.relative_to(ROOT)}:{line} {module}")
    return bad


def test_no_core_source_imports_blender_at_any_depth():
    assert core_imports_of_blender() == []


def test_the_source_scan_finds_imports_inside_functions(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text("def f():\n    from ...blender.cli.judge import main\n    import bpy\n")
    names = [m for _, m in imported_names(sample, "akd_blender.core.video_models")]
    assert "akd_blender.blender.cli.judge" in names and "bpy" in names
